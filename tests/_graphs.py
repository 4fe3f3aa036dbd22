"""A compact text form of a backward graph, shared by the op tests."""

from __future__ import annotations

from typing import Any

import gradviz


def sig(t: gradviz.Tensor) -> str:
    """The graph behind ``t``: ``Name(child, ...)``, ``Acc`` for a leaf, ``None`` for no edge."""
    root = t.grad_fn
    if root is None:
        return "None"
    out: list[str] = []
    stack: list[Any] = [root]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
            continue
        if item is None:
            out.append("None")
            continue
        name = item.name()
        if name == "torch::autograd::AccumulateGrad":
            out.append("Acc")
            continue
        kids = [n for n, _ in item.next_functions]
        out.append(name + ("(" if kids else ""))
        if kids:
            stack.append(")")
            for i, k in enumerate(reversed(kids)):
                stack.append(k)
                if i < len(kids) - 1:
                    stack.append(", ")
    return "".join(out)
