"""The other engines' own structures as trace data: MXNet's explicit gradient graph.

The engines (``gradviz.engines``, a lower layer) build their schedules from live nodes and know
nothing of traces (docs/architecture.md). This module turns MXNet's ``GradientGraph`` into the
plain-data ``BackwardGraph`` every renderer draws, and gives :mod:`gradviz.engines.mxnet` its
``gradient_graph`` (installed on import, as the render layer installs the trace's displays).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from gradviz.autograd.graph import Node
from gradviz.engines import mxnet
from gradviz.engines.mxnet import GradientGraph
from gradviz.tensor import Tensor
from gradviz.trace.model import BackwardGraph, NodeInfo, SavedInfo

__all__ = ["gradient_graph", "gradient_graph_model"]


def gradient_graph_model(graph: GradientGraph, node_id: Callable[[Node], str],
                         tensor_id: Callable[[Tensor], str]) -> BackwardGraph:
    """MXNet's gradient graph as plain data: a ``BackwardGraph`` of ``NodeInfo``s.

    Each node's ``next_functions`` point where its outputs are read (``[None, 0]``: nowhere,
    or into a variable's ``.grad``); ``sequence_nr`` is its position in the execution order;
    ``saved`` holds its attributes as constants: ``node`` (the backward-graph node id it is
    about), ``slot``, ``ref_count`` (readers of each output), and ``grad_req``, ``shape``,
    ``num_args`` where they apply. ``_copy`` nodes name their leaf in ``variable``.
    """

    # A buffer has one reader here (pass::Gradient sends every gradient to one place;
    # aggregation nodes do the fanning in), so one next_functions entry per output. (The one
    # exception, a variable listed twice in grad(), is drawn with its last reader.)
    readers = {e: [gn.id, i] for gn in graph.order for i, e in enumerate(gn.inputs)}
    nodes: dict[str, NodeInfo] = {}
    for pos, gn in enumerate(graph.order):
        attrs: dict[str, Any] = {}
        attrs["node"] = node_id(gn.node)
        if gn.op != "backward":
            attrs["slot"] = gn.slot
        attrs["ref_count"] = [0 if e is None else graph.ref_count.get(e, 0)
                              for e in gn.outputs]
        attrs.update(gn.attrs)
        kind = "engine"
        if gn.op == "backward":
            kind = "custom" if hasattr(gn.node, "_forward_cls") else "op"
        nodes[gn.id] = NodeInfo(
            id=gn.id, name=gn.name, kind=kind, sequence_nr=pos,
            next_functions=[list(readers.get(e, [None, 0])) if e is not None else [None, 0]
                            for e in gn.outputs],
            variable=tensor_id(gn.node.variable) if gn.op == "_copy" else None,
            saved=[SavedInfo(name=k, value={"const": v}) for k, v in attrs.items()],
            num_outputs=len(gn.inputs))
    roots = [[gn.id, 0] for gn in graph.order if gn.op.startswith("_head_grad")]
    return BackwardGraph(nodes=nodes, roots=roots, tensors={})


def gradient_graph(heads: Tensor | Sequence[Tensor], variables: Sequence[Tensor] | None = None,
                   head_grads: Any = None) -> BackwardGraph:
    """The gradient graph ``mx.backward`` (or ``mx.grad``, with ``variables``) would run, as
    plain data, without running it (``gradviz.engines.mxnet.gradient_graph``).

    Node ids are ``g0, g1, ...`` in execution order; backward-graph node ids in the attributes
    and leaf ids are those :func:`gradviz.graph_of` would give.

    Example:
        >>> import gradviz
        >>> from gradviz.engines import mxnet as mx
        >>> x = mx.attach_grad(gradviz.tensor([1.0, 2.0]))
        >>> with mx.record():
        ...     y = (x * x).sum()
        >>> [n.name for n in mx.gradient_graph(y).nodes.values()]
        ['_head_grad_ones', 'SumBackward0', 'MulBackward0', '_aggregate_sum', '_copy']
    """
    from gradviz.trace.recorder import Recorder

    rec = Recorder(values="none")  # only for its ids: the same ones graph_of gives
    model = gradient_graph_model(mxnet.plan(heads, variables, head_grads), rec.node_id,
                                 rec.tensor_id)
    model.tensors = {n.variable: rec.tensors[n.variable] for n in model.nodes.values()
                     if n.variable is not None}
    return model


mxnet.gradient_graph = gradient_graph
