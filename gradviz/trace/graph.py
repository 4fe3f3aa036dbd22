"""``graph_of(tensor)``: the backward-graph model of a live tensor, without tracing.

This is what torchviz's ``make_dot`` walks; here the walk is iterative (a million-node chain is
fine) and the result is plain data that any renderer can draw.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from gradviz.tensor import Tensor
from gradviz.trace.model import BackwardGraph


def graph_of(*tensors: Tensor, values: str = "none") -> BackwardGraph:
    """The backward graph reachable from ``tensors``' ``grad_fn`` as a :class:`BackwardGraph`.

    Leaves (``AccumulateGrad.variable``) are described in ``graph.tensors``; their names are
    the tensors' ``name`` or ``t0, t1, ...``.

    Example:
        >>> import gradviz
        >>> x = gradviz.ones(2, requires_grad=True)
        >>> g = graph_of((x * 2).sum())
        >>> sorted(n.name for n in g.nodes.values())
        ['AccumulateGrad', 'MulBackward0', 'SumBackward0']
    """
    from gradviz.trace.naming import user_frame
    from gradviz.trace.recorder import Recorder
    from gradviz.trace.torch_source import is_torch_tensor, torch_graph_of

    if tensors and all(is_torch_tensor(t) for t in tensors):  # real PyTorch (torch_source.py)
        return torch_graph_of(*tensors, values=values)
    rec = Recorder(values=values)
    roots = []
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(f"graph_of() takes tensors, got {type(t).__name__}")
        tid = rec._tensor(t)
        if t.grad_fn is not None:
            roots.append([rec.tensors[tid].grad_fn, t._output_nr])
    frame = user_frame(2)
    if frame is not None:  # leaves without a .name get the caller's variable names
        rec._name_from_frame(frame)
    return BackwardGraph(nodes=dict(rec.nodes), roots=roots, tensors=dict(rec.tensors))


def graph_with_ids(tensors: Sequence[Any], values: str = "none"
                   ) -> tuple[BackwardGraph, Callable[[Any], str | None]]:
    """:func:`graph_of` for gradviz or torch tensors, and a function giving the graph's id of
    a live tensor (None if it is not in the graph): how ``make_dot`` names ``params``."""
    from gradviz.trace.recorder import Recorder
    from gradviz.trace.torch_source import TorchSource, is_torch_tensor

    rec = Recorder(values=values)
    src = TorchSource(rec) if any(is_torch_tensor(t) for t in tensors) else None
    roots = []
    for t in tensors:
        if src is not None and is_torch_tensor(t):
            tid = src.tensor_id(t)
            nr = int(t.output_nr) if t.grad_fn is not None else 0
        elif isinstance(t, Tensor):
            tid, nr = rec.tensor_id(t), t._output_nr
        else:
            raise TypeError(f"expected tensors, got {type(t).__name__}")
        if rec.tensors[tid].grad_fn is not None:
            roots.append([rec.tensors[tid].grad_fn, nr])
    graph = BackwardGraph(nodes=dict(rec.nodes), roots=roots, tensors=dict(rec.tensors))
    return graph, rec.known_tensor_id


__all__ = ["graph_of", "graph_with_ids"]
