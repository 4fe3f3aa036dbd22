"""``graph_of(tensor)``: the backward-graph model of a live tensor, without tracing.

This is what torchviz's ``make_dot`` walks; here the walk is iterative (a million-node chain is
fine) and the result is plain data that any renderer can draw.
"""

from __future__ import annotations

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
    from gradviz.trace.recorder import Trace, user_frame

    rec = Trace(values=values)
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


__all__ = ["graph_of"]
