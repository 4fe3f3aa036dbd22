"""Backward graphs for the tests: every node behind a result, and a compact text form."""

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


def graph_nodes(out: Any) -> list:
    """Every node reachable from the ``grad_fn`` of ``out`` (a gradviz or torch tensor, or a tuple
    of them), each once, by an iterative walk of ``next_functions``."""
    outs = out if isinstance(out, tuple) else (out,)
    stack = [o.grad_fn for o in outs if getattr(o, "grad_fn", None) is not None]
    seen: dict[int, Any] = {}
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen[id(node)] = node
        stack.extend(n for n, _ in node.next_functions)
    return list(seen.values())
