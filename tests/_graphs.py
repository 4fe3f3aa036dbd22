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


def execution_order(loss: Any) -> list[tuple[str, int | None, tuple]]:
    """Run ``loss.backward()`` (gradviz or torch) and return the nodes in the order the engine
    ran them: ``(name, sequence_nr, next_functions as (name, input_nr) pairs)``, with
    ``None`` for an ``AccumulateGrad``'s number (its UINT64_MAX is not a creation order). The
    order is read with a pre-hook on every node (the hook runs as its node is about to run)."""
    def short(node: Any) -> str | None:
        return None if node is None else node.name().replace("torch::autograd::", "")

    ran: list[tuple[str, int | None, tuple]] = []

    def record(node: Any) -> Any:
        def hook(grad_outputs: Any) -> None:
            seq = None if short(node) == "AccumulateGrad" else node._sequence_nr()
            ran.append((short(node), seq, tuple((short(n), i) for n, i in node.next_functions)))
        return hook

    handles = [n.register_prehook(record(n)) for n in graph_nodes(loss)]
    loss.backward()
    for h in handles:
        h.remove()
    return ran
