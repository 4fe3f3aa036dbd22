"""MXNet's imperative autograd: record, build the *gradient graph*, count references, run it.

A model of ``Imperative::Backward`` (``src/imperative/imperative.cc``) and nnvm's
``pass::Gradient`` over gradviz's graph. Read it top to bottom; ``docs/engines.md`` puts it next
to the PyTorch and SINGA engines.

Where the PyTorch engine discovers its schedule while it runs (a ready queue), MXNet first writes
the whole backward computation down as a graph of its own, then runs that graph in a fixed order:

1. **Recording.** Only what runs inside :func:`record` is in MXNet's graph. Variables are marked
   with :func:`attach_grad` and a ``grad_req``: ``"write"`` (overwrite ``.grad``), ``"add"``
   (accumulate) or ``"null"`` (no gradient).
2. **Head gradients.** One node per head: the given gradient (``_head_grad``) or ones
   (``_head_grad_ones``), whatever the head's shape.
3. **The gradient graph** (``pass::Gradient``). Walk the forward graph in reverse topological
   order. For each forward node, *aggregate* the gradients its outputs received: none -> a
   ``_zeros`` node, one -> itself, several -> an ``_aggregate_sum`` node (MXNet's
   ``ElementWiseSum``); then add one backward node (``MulBackward0`` ...) that reads them and
   makes one gradient per input. Each variable's aggregated gradient goes through a ``_copy``
   node into its gradient buffer, as its ``grad_req`` says.
4. **Schedule and reference counts.** The execution order is a depth-first post-order from the
   variables' ``_copy`` nodes (MXNet's ``IndexedGraph``), which also drops every node no output
   needs. Each gradient buffer's reference count is the number of nodes that read it.
5. **Run** (``RunGraph``): each node in order; after it, every buffer whose count reached zero is
   freed, and a backward node frees its saved forward values unless ``retain_graph``.
6. **Clear history** unless ``retain_graph``: the graph is no longer "in a computational graph",
   so differentiating it again fails with MXNet's message.

gradviz keeps PyTorch's defaults outside this module: plain gradviz code records as usual.
:func:`record` switches gradviz's grad mode on (and :func:`pause` off) for its block, and marks
the nodes created inside it as MXNet's graph; :func:`backward` refuses heads recorded outside.

Hooks (``register_hook``, ``retain_grad``) are PyTorch features and are not run by this engine.
"""

from __future__ import annotations

import functools
import operator
import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gradviz.autograd import events
from gradviz.autograd.events import observer, watchers
from gradviz.autograd.grad_mode import _state as _grad_state
from gradviz.autograd.graph import NO_EDGE, AccumulateGrad, GraphRoot, Node, gradient_edge
from gradviz.tensor import Tensor

__all__ = ["record", "pause", "train_mode", "predict_mode", "is_recording", "is_training",
           "set_recording", "set_training", "attach_grad", "grad_req", "backward", "grad",
           "build_gradient_graph", "plan", "GradientGraph", "GradNode", "MXNetError",
           "NOT_IN_GRAPH", "NO_INPUTS"]

NOT_IN_GRAPH = (
    "Cannot differentiate node because it is not in a computational graph. You need to set "
    "is_recording to true or use autograd.record() to save computational graphs for backward. "
    "If you want to differentiate the same graph twice, you need to pass retain_graph=True to "
    "backward.")
NO_INPUTS = "There are no inputs in computation graph that require gradients."
GRAD_REQS = ("write", "add", "null")


class MXNetError(RuntimeError):
    """What a failed ``CHECK`` in MXNet's C++ raises (``mxnet.base.MXNetError``)."""


# -- recording and training flags ------------------------------------------------------------------
class _MXState(threading.local):
    # Thread-local, as MXNet's is_recording_/is_train_; both start False, as in MXNet.
    recording = False
    training = False
    grad_before = True  # gradviz's grad mode when set_recording(True) began recording


_state = _MXState()
# MXNet's AGInfo: the nodes recorded under record() whose history no backward has cleared.
_recorded: weakref.WeakSet[Node] = weakref.WeakSet()
_lock = threading.Lock()
_recording_threads = 0


class _MarkRecorded(events.Observer):
    """The observer that tells MXNet's graph apart: every node made while recording is in it."""

    def op(self, name: str, node: Node | None, inputs: tuple, outputs: tuple, kwargs: dict,
           inplace: bool, function: bool = False) -> None:
        if _state.recording and node is not None:
            _recorded.add(node)


_mark_recorded = _MarkRecorded()


def _set_recording_flag(flag: bool) -> None:
    # The marking observer is registered only while some thread records, so plain gradviz code
    # keeps its free, unwatched hot path.
    global _recording_threads
    if flag == _state.recording:
        return
    _state.recording = flag
    with _lock:
        _recording_threads += 1 if flag else -1
        if flag and _recording_threads == 1:
            events.add_observer(_mark_recorded)
        elif not flag and _recording_threads == 0:
            events.remove_observer(_mark_recorded)


def is_recording() -> bool:
    """Whether operations are recorded into MXNet's graph in this thread.

    Example:
        >>> with record():
        ...     is_recording()
        True
    """
    return _state.recording


def is_training() -> bool:
    """Whether this thread is in training mode (what ``train_mode=`` sets; Dropout reads it).

    Example:
        >>> with record():
        ...     is_training()
        True
    """
    return _state.training


def set_recording(is_recording: bool) -> bool:
    """Turn recording on or off; returns the previous state.

    Turning it on also turns gradviz's grad mode on; turning it off gives gradviz back the grad
    mode it had before (so plain gradviz code keeps PyTorch's semantics). Values computed while
    it is off are not in MXNet's graph either way.

    Example:
        >>> prev = set_recording(True)
        >>> is_recording(), set_recording(prev), is_recording()
        (True, True, False)
    """
    prev = _state.recording
    flag = bool(is_recording)
    if flag and not prev:
        _state.grad_before = _grad_state.enabled
        _grad_state.enabled = True
    elif prev and not flag:
        _grad_state.enabled = _state.grad_before
    _set_recording_flag(flag)
    return prev


def set_training(train_mode: bool) -> bool:
    """Set training (True) or predicting (False) mode; returns the previous state.

    Example:
        >>> prev = set_training(True)
        >>> is_training(), set_training(prev)
        (True, True)
    """
    prev = _state.training
    _state.training = bool(train_mode)
    return prev


class _RecordingStateScope:
    """``with record():`` and friends: set the flags on entry, put them back on exit.

    ``record`` turns gradviz's grad mode on and ``pause`` turns it off for the block; on exit
    it is restored to what it was, so code after the block keeps PyTorch's semantics.
    """

    def __init__(self, is_record: bool | None, train_mode: bool | None) -> None:
        self._enter_is_record = is_record
        self._enter_train_mode = train_mode
        self._prev_is_record = False
        self._prev_train_mode = False
        self._prev_grad = True

    def __enter__(self) -> None:
        self._prev_grad = _grad_state.enabled
        if self._enter_is_record is not None:
            self._prev_is_record = _state.recording
            _set_recording_flag(self._enter_is_record)
            _grad_state.enabled = self._enter_is_record
        if self._enter_train_mode is not None:
            self._prev_train_mode = set_training(self._enter_train_mode)

    def __exit__(self, *exc: object) -> None:
        if self._enter_is_record is not None:
            _set_recording_flag(self._prev_is_record)
            _grad_state.enabled = self._prev_grad
        if self._enter_train_mode is not None:
            set_training(self._prev_train_mode)


def record(train_mode: bool = True) -> _RecordingStateScope:
    """A scope in which operations are recorded for :func:`backward` (``autograd.record``).

    Example:
        >>> import gradviz
        >>> x = attach_grad(gradviz.tensor([1.0, 2.0]))
        >>> with record():
        ...     y = (x * x).sum()
        >>> backward(y); x.grad
        tensor([2., 4.])
    """
    return _RecordingStateScope(True, train_mode)


def pause(train_mode: bool = False) -> _RecordingStateScope:
    """A scope inside :func:`record` in which nothing is recorded (``autograd.pause``).

    Example:
        >>> import gradviz
        >>> x = attach_grad(gradviz.ones(2))
        >>> with record():
        ...     with pause():
        ...         z = x * 2
        >>> z.requires_grad
        False
    """
    return _RecordingStateScope(False, train_mode)


def train_mode() -> _RecordingStateScope:
    """A scope in training mode, recording unchanged.

    Example:
        >>> with train_mode():
        ...     is_training(), is_recording()
        (True, False)
    """
    return _RecordingStateScope(None, True)


def predict_mode() -> _RecordingStateScope:
    """A scope in predicting mode, recording unchanged.

    Example:
        >>> with record(), predict_mode():
        ...     is_training(), is_recording()
        (False, True)
    """
    return _RecordingStateScope(None, False)


# -- variables -----------------------------------------------------------------------------------
# id(tensor) -> (weak reference, grad_req). Keyed by id: Tensor's == is elementwise.
_grad_reqs: dict[int, tuple[weakref.ref, str]] = {}


def attach_grad(x: Tensor, grad_req: str = "write") -> Tensor:
    """Mark ``x`` as a variable with a zero gradient buffer in ``x.grad`` (``NDArray.attach_grad``).

    A tensor that was some op's output becomes a fresh leaf, as MXNet's ``MarkVariables`` makes
    it. A gradviz leaf created with ``requires_grad=True`` counts as ``attach_grad(x, "write")``.

    Args:
        x: a floating point tensor.
        grad_req: ``"write"`` (backward overwrites ``.grad``), ``"add"`` (adds to it) or
            ``"null"`` (``backward`` leaves it alone).

    Returns:
        ``x`` itself (MXNet returns None; returning ``x`` lets you write it in one line).

    Example:
        >>> import gradviz
        >>> w = attach_grad(gradviz.ones(2), grad_req="add")
        >>> w.grad, grad_req(w)
        (tensor([0., 0.]), 'add')
    """
    if grad_req not in GRAD_REQS:
        raise ValueError(f"grad_req must be one of {', '.join(GRAD_REQS)}; got {grad_req!r}")
    if x.grad_fn is not None:
        x.detach_()
    x.requires_grad_(True)
    x.grad = Tensor._make(np.zeros_like(x._data))
    key = id(x)
    _grad_reqs[key] = (weakref.ref(x, lambda _r, k=key: _grad_reqs.pop(k, None)), grad_req)
    return x


def grad_req(x: Tensor) -> str:
    """The ``grad_req`` of a variable: what :func:`attach_grad` set, else ``"write"``.

    Example:
        >>> import gradviz
        >>> grad_req(gradviz.ones(2, requires_grad=True))
        'write'
    """
    entry = _grad_reqs.get(id(x))
    if entry is not None and entry[0]() is x:
        return entry[1]
    return "write"


# -- the gradient graph ----------------------------------------------------------------------------
@dataclass(eq=False)
class GradNode:
    """One node of the gradient graph: reads some gradient buffers, writes others.

    ``op`` is ``_head_grad_ones``, ``_head_grad``, ``backward`` (runs ``node``'s formulas),
    ``_aggregate_sum``, ``_zeros`` or ``_copy``. Buffers are integers; ``outputs`` has one entry
    per output, ``None`` where a backward node's input needs no gradient. ``node`` and ``slot``
    say which backward-graph node (and which of its outputs) the node is about.
    """

    op: str
    name: str
    inputs: list[int]
    outputs: list[int | None]
    node: Node
    slot: int = 0
    attrs: dict[str, Any] = field(default_factory=dict)
    value: Any = None  # _head_grad: the given gradient
    id: str = ""  # "g<k>": its position in the execution order


@dataclass
class GradientGraph:
    """The explicit gradient graph, in execution order, with each buffer's reference count.

    ``targets`` says, for a buffer holding a gradient sent to a backward-graph node, which node
    and output slot it is for. ``counts`` is, per backward-graph node, how many such gradients
    it receives (PyTorch's dependency count). ``copies`` are the ``_copy`` nodes, one per
    variable, in the order of ``variables`` and ``grad_reqs``.
    """

    heads: list[Tensor]
    variables: list[Tensor]
    grad_reqs: list[str]
    copies: list[GradNode] = field(default_factory=list)
    order: list[GradNode] = field(default_factory=list)
    ref_count: dict[int, int] = field(default_factory=dict)
    targets: dict[int, tuple[Node, int]] = field(default_factory=dict)
    counts: dict[Node, int] = field(default_factory=dict)
    forward_nodes: list[Node] = field(default_factory=list)
    names: dict[int, str] = field(default_factory=dict)

    def buffer_name(self, entry: int) -> str:
        """``"g3:0"``: output 0 of node g3 (nnvm's ``name:index``)."""
        return self.names[entry]



def _edges(node: Node) -> tuple:
    """``next_functions`` as MXNet's graph has them: an edge into a node recorded outside
    :func:`record` (or whose history a backward cleared) is a constant, with no gradient."""
    return tuple(e if e[0] is None or isinstance(e[0], AccumulateGrad) or e[0] in _recorded
                 else NO_EDGE for e in node.next_functions)


def _forward_topo(roots: list[Node]) -> tuple[list[Node], dict[Node, tuple]]:
    """The forward graph in topological order (inputs first): an iterative depth-first
    post-order from the heads, visiting inputs in order (nnvm's ``DFSVisit``). Also returns
    each node's :func:`_edges`."""
    order: list[Node] = []
    edges_of: dict[Node, tuple] = {}
    for root in roots:
        if root in edges_of:
            continue
        edges_of[root] = _edges(root)
        stack: list[tuple[Node, int]] = [(root, 0)]
        while stack:
            node, i = stack[-1]
            edges = edges_of[node]
            if i < len(edges):
                stack[-1] = (node, i + 1)
                child = edges[i][0]
                if child is not None and child not in edges_of:
                    edges_of[child] = _edges(child)
                    stack.append((child, 0))
                continue
            stack.pop()
            order.append(node)
    return order, edges_of


def _schedule(sinks: list[GradNode], producer: dict[int, GradNode]) -> list[GradNode]:
    """Execution order: a depth-first post-order from ``sinks`` over the nodes' inputs. Nodes
    no sink needs are never reached: that is how unneeded gradients are dropped."""
    order: list[GradNode] = []
    seen: set[GradNode] = set()
    for sink in sinks:
        if sink in seen:
            continue
        seen.add(sink)
        stack: list[tuple[GradNode, int]] = [(sink, 0)]
        while stack:
            gn, i = stack[-1]
            if i < len(gn.inputs):
                stack[-1] = (gn, i + 1)
                child = producer[gn.inputs[i]]
                if child not in seen:
                    seen.add(child)
                    stack.append((child, 0))
                continue
            stack.pop()
            order.append(gn)
    return order


def build_gradient_graph(heads: Sequence[Tensor], head_grads: Sequence[Any],
                         variables: Sequence[Tensor] | None) -> GradientGraph:
    """Steps 2-4: head gradients, ``pass::Gradient``, the schedule and the reference counts.

    Args:
        heads: the outputs to differentiate, each in MXNet's graph.
        head_grads: one gradient (a tensor) or ``None`` (ones) per head.
        variables: the variables to differentiate with respect to (``grad``), or ``None`` for
            every variable in the graph whose ``grad_req`` is not ``"null"`` (``backward``).

    Raises:
        MXNetError: a head is not in the graph, a variable does not require gradient, or there
            is no variable at all (MXNet's messages).
    """
    for h in heads:
        in_graph = (h.grad_fn in _recorded if h.grad_fn is not None else h.requires_grad)
        if not in_graph:
            raise MXNetError(NOT_IN_GRAPH)
    if variables is not None:
        for i, v in enumerate(variables):
            if v.grad_fn is not None or not v.requires_grad:
                raise MXNetError(f"Cannot differentiate with respect to the {i + 1}-th variable "
                                 "because it does not require gradient.")

    head_edges = [gradient_edge(h) for h in heads]
    topo, edges_of = _forward_topo([fn for fn, _ in head_edges])
    # output_grads[node][k]: the buffers holding gradients sent to output k of node.
    output_grads: dict[Node, list[list[int]]] = {n: [[] for _ in range(n.num_outputs)]
                                                 for n in topo}
    producer: dict[int, GradNode] = {}  # buffer -> the node that writes it
    targets: dict[int, tuple[Node, int]] = {}

    def add(op: str, name: str, inputs: list[int], outputs: list[bool], node: Node,
            slot: int = 0, **attrs: Any) -> GradNode:
        # A new node with a fresh buffer for each wanted output.
        gn = GradNode(op, name, list(inputs), [], node, slot, attrs)
        for wanted in outputs:
            e = len(producer)
            gn.outputs.append(e if wanted else None)
            if wanted:
                producer[e] = gn
        return gn

    def aggregate(entries: list[int], node: Node, slot: int) -> int:
        # exec::AggregateGradient: nothing -> zeros; drop zeros from a sum (keep one); one ->
        # itself; several -> one summing node.
        if not entries:
            shape, dt = node._out_meta[slot]
            return add("_zeros", "_zeros", [], [True], node, slot, shape=list(shape),
                       dtype=str(np.dtype(dt))).outputs[0]
        nonzero = [e for e in entries if producer[e].op != "_zeros"] or entries[:1]
        if len(nonzero) == 1:
            return nonzero[0]
        return add("_aggregate_sum", "_aggregate_sum", nonzero, [True], node, slot,
                   num_args=len(nonzero)).outputs[0]

    # 2. Head gradients.
    for h, hg, (fn, nr) in zip(heads, head_grads, head_edges, strict=True):
        if hg is None:
            gn = add("_head_grad_ones", "_head_grad_ones", [], [True], fn, nr,
                     shape=list(h.shape))
        else:
            gn = add("_head_grad", "_head_grad", [], [True], fn, nr, shape=list(h.shape))
            gn.value = hg
        e = gn.outputs[0]
        output_grads[fn][nr].append(e)
        targets[e] = (fn, nr)

    # Which variables get a gradient, and how (MXNet's xs and x_reqs).
    if variables is None:
        xs = [n for n in topo if isinstance(n, AccumulateGrad) and grad_req(n.variable) != "null"]
        if not xs:
            raise MXNetError(NO_INPUTS)
        var_tensors = [n.variable for n in xs]
        reqs = [grad_req(t) for t in var_tensors]
    else:
        var_tensors = list(variables)
        xs = [gradient_edge(v).function for v in var_tensors]
        reqs = ["write"] * len(xs)

    # 3. pass::Gradient: consumers before producers; one backward node per forward node.
    for node in reversed(topo):
        if isinstance(node, AccumulateGrad):
            continue  # a variable: its gradient is taken out below
        grads_in = [aggregate(output_grads[node][k], node, k) for k in range(node.num_outputs)]
        edges = edges_of[node]
        gn = add("backward", type(node).__name__, grads_in, [nxt is not None for nxt, _ in edges],
                 node)
        for (nxt, nr), e in zip(edges, gn.outputs, strict=True):
            if e is not None:
                output_grads[nxt][nr].append(e)
                targets[e] = (nxt, nr)
    copies = []
    for x_node, req in zip(xs, reqs, strict=True):
        got = output_grads.get(x_node, [[]])[0]
        copies.append(add("_copy", "_copy", [aggregate(got, x_node, 0)], [True], x_node, 0,
                          grad_req=req))

    # 4. Schedule from the outputs, then count the readers of each buffer.
    graph = GradientGraph(heads=list(heads), variables=var_tensors, grad_reqs=reqs,
                          copies=copies, forward_nodes=topo)
    graph.order = _schedule(copies, producer)
    for pos, gn in enumerate(graph.order):
        gn.id = f"g{pos}"
        for k, e in enumerate(gn.outputs):
            if e is not None:
                graph.ref_count[e] = 0
                graph.names[e] = f"{gn.id}:{k}"
    for gn in graph.order:
        for e in gn.inputs:
            graph.ref_count[e] += 1
    for c in copies:
        graph.ref_count[c.outputs[0]] = 1  # the variable's gradient buffer: kept by its owner
    for e, (node, nr) in targets.items():
        if graph.ref_count.get(e, 0) > 0:
            graph.targets[e] = (node, nr)
            graph.counts[node] = graph.counts.get(node, 0) + 1
    return graph


# -- running it ------------------------------------------------------------------------------------
def _run(graph: GradientGraph, head_grads: Sequence[Any], retain_graph: bool,
         create_graph: bool, is_train: bool, accumulate: bool) -> list[Any]:
    """Steps 5 and 6: run the nodes in order, free buffers by reference count, clear history.

    Values are arrays, or tensors under ``create_graph`` (then every formula is recorded, and
    the nodes it makes are in MXNet's graph). Returns the variables' gradients in order.
    """
    heads = graph.heads
    # Who watches this pass (one that does nothing when nobody does); what only a watcher
    # reads is worked out only if someone watches.
    obs, watched = observer(), bool(watchers)
    if watched:
        root = (gradient_edge(heads[0]).function if len(heads) == 1 else
                GraphRoot(tuple(gradient_edge(h) for h in heads), list(head_grads)))
        obs.backward_begin("mxnet", tuple(heads), list(head_grads), retain_graph, create_graph,
                           () if accumulate else tuple(graph.variables), accumulate, root,
                           gradient_graph=graph)
        obs.dependencies(graph.counts, root)

    def const(arr: np.ndarray) -> Any:
        # A constant in the pass's representation: a tensor under create_graph, else an array.
        return Tensor._make(arr) if create_graph else arr

    buffers: dict[int, Any] = {}
    refs = dict(graph.ref_count)
    remaining = dict(graph.counts)
    executed: set[Node] = set()
    # MXNet: set_is_recording(create_graph), set_is_training(is_train) around RunGraph.
    prev_grad, prev_recording = _grad_state.enabled, _state.recording
    _set_recording_flag(create_graph)
    _grad_state.enabled = create_graph
    prev_training = set_training(is_train)
    gn: GradNode | None = None
    try:
        for gn in graph.order:
            ins = [buffers[e] for e in gn.inputs]
            before = None
            if gn.op in ("_head_grad_ones", "_zeros"):
                shape, dt = gn.node._out_meta[gn.slot]
                outs = [const(np.ones(shape, dt) if gn.op == "_head_grad_ones"
                              else np.zeros(shape, dt))]
            elif gn.op == "_head_grad":
                outs = [gn.value if create_graph else gn.value._data]
            elif gn.op == "backward":
                outs = list(gn.node.apply(ins, create_graph))
                for k, (e, (nxt, nr)) in enumerate(zip(gn.outputs, gn.node.next_functions,
                                                          strict=True)):
                    if e is not None and outs[k] is None:  # no gradient: zeros, as MXNet has
                        shape, dt = nxt._out_meta[nr]
                        outs[k] = const(np.zeros(shape, dt))
                executed.add(gn.node)
            elif gn.op == "_aggregate_sum":
                outs = [functools.reduce(operator.add, ins)]  # ElementWiseSum
            else:  # _copy
                var = gn.node.variable
                if accumulate and var.grad is not None:
                    before = obs.keep(var.grad)  # a copy, if a watcher records it
                outs = [_copy(var, ins[0], gn.attrs["grad_req"], create_graph, accumulate)]
            for e, v in zip(gn.outputs, outs, strict=True):
                if e is not None:
                    buffers[e] = v
            freed = _free(gn, buffers, refs, graph)
            if watched:
                _report(obs, gn, ins, outs, before, freed, graph, remaining, accumulate)
            if gn.op == "backward" and not retain_graph and gn.node.release_variables():
                obs.release_saved(gn.node)
        gn = None
    except BaseException as exc:
        obs.error(exc, None if gn is None else gn.node)
        raise
    finally:
        _set_recording_flag(prev_recording)
        _grad_state.enabled = prev_grad
        set_training(prev_training)

    if not retain_graph:  # clear history: these nodes are no longer in MXNet's graph
        for node in graph.forward_nodes:
            if isinstance(node, AccumulateGrad):
                continue  # a variable stays a variable
            _recorded.discard(node)
            if node not in executed and node.release_variables():
                obs.release_saved(node)
    obs.backward_end("mxnet")
    return [buffers[c.outputs[0]] for c in graph.copies]


def _copy(var: Tensor, g: Any, req: str, create_graph: bool, accumulate: bool) -> Any:
    """The ``_copy`` node: a variable's gradient into its buffer, as its ``grad_req`` says.

    For :func:`grad` the buffer is a new array (a recorded ``clone`` under ``create_graph``);
    for :func:`backward` it is ``.grad``: overwritten (``write``) or added to (``add``).
    """
    if not accumulate:
        return g.clone() if create_graph else np.array(g, dtype=var._data.dtype)
    old = var.grad
    if req == "add" and old is not None and old.shape == var.shape:
        np.add(old._data, g, out=old._data, casting="unsafe")
        old._version_counter.version += 1
        return old._data
    var.grad = Tensor._make(np.array(g, dtype=var._data.dtype))
    return var.grad._data


def _free(gn: GradNode, buffers: dict[int, Any], refs: dict[int, int], graph: GradientGraph
          ) -> list[str]:
    """After a node ran: one reader fewer for each input; free what nobody will read."""
    freed = []
    for e in gn.inputs:
        refs[e] -= 1
        if refs[e] == 0:
            del buffers[e]
            freed.append(graph.buffer_name(e))
    for e in gn.outputs:
        if e is not None and refs[e] == 0:
            del buffers[e]  # computed, but no node reads it (MXNet would not even write it)
            freed.append(graph.buffer_name(e))
    return freed


def _report(obs: events.Observer, gn: GradNode, ins: list, outs: list, before: Tensor | None,
            freed: list[str], graph: GradientGraph, remaining: dict[Node, int],
            accumulate: bool) -> None:
    """Tell ``obs`` what one gradient-graph node did, in the shared vocabulary:
    ``execute`` for a backward node, ``gradient_node`` for the others, ``leaf_grad`` for a
    ``_copy`` into ``.grad``, and one ``accumulate`` per gradient delivered to a node."""
    if gn.op == "backward":
        sent = [o if e is not None else None for e, o in zip(gn.outputs, outs, strict=True)]
        obs.execute(gn.node, ins, sent, {"gnode": gn.id, "freed": freed})
    else:
        extra: dict[str, Any] = {"freed": freed}
        if gn.op == "_copy":
            extra["grad_req"] = gn.attrs["grad_req"]
        obs.gradient_node(gn.id, gn.op, gn.node, gn.slot, ins, outs[0], extra)
    if gn.op == "_copy" and accumulate:
        var = gn.node.variable
        obs.leaf_grad(gn.node, var, before, var.grad,
                      {"gnode": gn.id, "grad_req": gn.attrs["grad_req"]})
    sender = gn.node if gn.op == "backward" else None
    for e, o in zip(gn.outputs, outs, strict=True):
        target = graph.targets.get(e) if e is not None else None
        if target is None:
            continue
        node, nr = target
        remaining[node] -= 1
        obs.accumulate(node, nr, o, o, sender, remaining[node],
                       {"gnode": gn.id, "buffer_id": graph.buffer_name(e)})


# -- the API ---------------------------------------------------------------------------------------
def plan(heads: Tensor | Sequence[Tensor], variables: Sequence[Tensor] | None = None,
         head_grads: Any = None) -> GradientGraph:
    """The gradient graph :func:`backward` (or :func:`grad`, with ``variables``) would run,
    built but not run. (``gradient_graph``, installed here by :mod:`gradviz.trace`, returns it
    as plain data a renderer draws.)

    Example:
        >>> import gradviz
        >>> x = attach_grad(gradviz.tensor([1.0, 2.0]))
        >>> with record():
        ...     y = (x * x).sum()
        >>> [gn.name for gn in plan(y).order]
        ['_head_grad_ones', 'SumBackward0', 'MulBackward0', '_aggregate_sum', '_copy']
    """
    heads_l, grads = _parse_head(heads, head_grads)
    return build_gradient_graph(heads_l, grads, None if variables is None else list(variables))


def _parse_head(heads: Tensor | Sequence[Tensor], head_grads: Any) -> tuple[list, list]:
    """Heads and their gradients as two lists (MXNet's ``_parse_head``), shapes checked."""
    heads_l = [heads] if isinstance(heads, Tensor) else list(heads)
    if head_grads is None:
        grads: list = [None] * len(heads_l)
    else:
        grads = [head_grads] if isinstance(head_grads, Tensor) else list(head_grads)
        if len(grads) != len(heads_l):
            raise AssertionError("heads and head_grads must be lists of the same length")
    for i, (h, g) in enumerate(zip(heads_l, grads, strict=True)):
        if not isinstance(h, Tensor):
            raise TypeError(f"heads must be Tensors, got {type(h).__name__}")
        if g is not None and not isinstance(g, Tensor):
            g = grads[i] = Tensor._make(np.full(h.shape, g, h._data.dtype))
        if g is not None and g.shape != h.shape:
            raise MXNetError(f"head_grads[{i}] has shape {list(g.shape)} but heads[{i}] has "
                             f"shape {list(h.shape)}")
    return heads_l, grads


def backward(heads: Tensor | Sequence[Tensor], head_grads: Any = None,
             retain_graph: bool = False, train_mode: bool = True) -> None:
    """Compute the gradients of ``heads`` into every variable's ``.grad`` (``autograd.backward``).

    Args:
        heads: the output(s) to differentiate, recorded inside :func:`record`.
        head_grads: their gradients; ``None`` (or a ``None`` entry) means ones, for any shape.
        retain_graph: keep the graph (and its saved values) for another backward.
        train_mode: the training flag during the pass.

    Raises:
        MXNetError: a head was not recorded, or was already differentiated without
            ``retain_graph``; or no variable in the graph wants a gradient.

    Example:
        >>> import gradviz
        >>> x = attach_grad(gradviz.tensor([1.0, 2.0, 3.0]))
        >>> with record():
        ...     y = x * x               # not a scalar: the head gradient is ones anyway
        >>> backward(y); x.grad
        tensor([2., 4., 6.])
    """
    heads_l, grads = _parse_head(heads, head_grads)
    graph = build_gradient_graph(heads_l, grads, None)
    _run(graph, grads, retain_graph, False, train_mode, accumulate=True)


def grad(heads: Tensor | Sequence[Tensor], variables: Tensor | Sequence[Tensor],
         head_grads: Any = None, retain_graph: bool | None = None, create_graph: bool = False,
         train_mode: bool = True) -> list[Tensor]:
    """Return the gradients of ``heads`` with respect to ``variables`` (``autograd.grad``).

    ``.grad`` is left alone. As in MXNet the result is always a list (even for one variable).

    Args:
        heads: the output(s) to differentiate, recorded inside :func:`record`.
        variables: the variable(s) to differentiate with respect to (leaves requiring grad).
        head_grads: as in :func:`backward`.
        retain_graph: keep the graph; defaults to ``create_graph``.
        create_graph: record the gradient computation itself, so that the result can be
            differentiated again.
        train_mode: the training flag during the pass.

    Example:
        >>> import gradviz
        >>> x = attach_grad(gradviz.tensor(3.0))
        >>> with record():
        ...     y = x ** 3
        ...     (dx,) = grad(y, x, create_graph=True)   # 3x² = 27, recorded
        >>> backward(dx); x.grad                          # 6x = 18
        tensor(18.)
    """
    heads_l, grads = _parse_head(heads, head_grads)
    if isinstance(variables, Tensor):
        variables_l = [variables]
    else:
        variables_l = list(variables)
        if not variables_l:
            raise AssertionError("variables cannot be an empty list.")
    if retain_graph is None:
        retain_graph = create_graph
    graph = build_gradient_graph(heads_l, grads, variables_l)
    results = _run(graph, grads, retain_graph, create_graph, train_mode, accumulate=False)
    return [r if isinstance(r, Tensor) else Tensor._make(r) for r in results]
