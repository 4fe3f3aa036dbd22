"""Nodes and edges: the backward graph itself (PyTorch's ``torch/csrc/autograd/function.h`` and
``edge.h``, ``torch.autograd.graph.Node`` and ``GradientEdge``).

* a **Node** is one backward function. ``next_functions`` holds one ``(node, input_nr)`` pair per
  input of the forward op: the gradient for that input flows to ``node`` as its ``input_nr``-th
  incoming gradient. ``(None, 0)`` marks an input that needs no gradient.
* An **edge** is such a pair; :func:`gradient_edge` gives the edge a tensor's gradient flows into:
  its ``grad_fn`` (at ``output_nr``) or, for a leaf, its ``AccumulateGrad``
  (``accumulate_grad.py``).
* :func:`collect_next_edges` and :func:`set_history` are how an op records its node: the edges
  of its inputs in, the node as ``grad_fn`` of its outputs.
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from gradviz._device import MetaArray, meta_array
from gradviz.autograd.grad_mode import is_grad_enabled
from gradviz.autograd.hooks import HookDict, RemovableHandle, add_hook

if TYPE_CHECKING:
    from gradviz.autograd.events import Observer

__all__ = ["Node", "GraphRoot", "Edge", "NodeHooks", "GradientEdge", "NO_EDGE", "gradient_edge",
           "get_gradient_edge", "edge_pair", "input_edge", "collect_next_edges", "set_history",
           "move_retains_grad", "next_sequence_nr", "meta_gradients"]

# The Tensor class, handed over by gradviz/tensor.py once it exists (NOTE [no import circle]).
Tensor: type = None  # type: ignore[assignment]


# Thread-safety note: itertools.count's __next__ is atomic under the GIL.
_sequence_counter = itertools.count()
# The next node's sequence number: what Node.__init__ takes, for code that builds nodes itself.
next_sequence_nr = _sequence_counter.__next__


class Edge(NamedTuple):
    """``Edge(function, input_nr)``: where one gradient goes. Compares equal to the plain pair."""

    function: Node | None
    input_nr: int

    def __repr__(self) -> str:
        return tuple.__repr__(self)  # print as PyTorch prints next_functions: plain pairs


class _NodeExtra:
    """A node's hooks and metadata: rare, so kept out of every node's construction."""

    __slots__ = ("pre_hooks", "post_hooks", "tensor_pre_hooks", "retains_grad_hooks", "metadata",
                 "on_meta")

    def __init__(self) -> None:
        self.pre_hooks: HookDict | None = None
        self.post_hooks: HookDict | None = None
        self.tensor_pre_hooks: HookDict | None = None
        self.retains_grad_hooks: dict | None = None
        self.metadata: dict | None = None
        # Recorded by an op on meta tensors: the gradients it sends are meta too (NOTE [meta
        # device] in gradviz/_device.py), as PyTorch's are for a node on the meta device.
        self.on_meta = False


class NodeHooks(NamedTuple):
    """What runs around a node (copies: a hook may remove itself). ``tensor_pre``:
    ``(output_nr, fn)`` of ``Tensor.register_hook``; ``retains_grad``: ``(output_nr,
    tensor_ref)`` of ``retain_grad``; ``pre`` and ``post``: ``register_prehook`` and
    ``register_hook``."""

    tensor_pre: list
    retains_grad: list
    pre: list
    post: list


_NO_HOOKS = NodeHooks([], [], [], [])


class Node:
    """A backward function in the graph (``torch.autograd.graph.Node``).

    Subclasses are generated per op (``MulBackward0`` ...), per custom ``Function``
    (``<Name>Backward``) and fixed (``AccumulateGrad``, ``GraphRoot``). ``type(n).__name__`` is the
    name PyTorch shows.

    Example:
        >>> import gradviz
        >>> x = gradviz.ones(2, requires_grad=True)
        >>> y = x * 3
        >>> y.grad_fn.name(), y.grad_fn.next_functions[0][0].variable is x
        ('MulBackward0', True)
    """

    # NOTE [flat edges]
    # A node keeps its first two edges in slots (`_n0, _i0`, `_n1, _i1`: node and input_nr)
    # and how many it has in `_nedges`; `next_functions` builds the tuple of pairs on each
    # access, as PyTorch's does. Why: Python's cyclic collector tracks every tuple that holds
    # a node, and each full collection walks all of them. Stored as a tuple of pairs, each op
    # left three tracked objects (the node, the tuple, the pair); at a million ops that was
    # ~3 million objects to walk, a large part of the run (docs/performance.md, "The floors").
    # Now an op with one or two edges leaves one. Measured on issue #19's 1M-op chain
    # (alternating processes, nine rounds): forward 4.3-4.9 -> 3.5-3.9 us per op, the whole
    # run 1-17% faster per round (0.83-1.00x PyTorch, was 0.85-1.11x), peak memory +512 ->
    # +417 MB. Building the tuple costs ~0.1 us per access and the engine reads it twice per
    # node; the tiny-op chain (no collector pressure) and the MLP step measured unchanged.
    # The rare rest, a node with three or more edges or with pairs that are not plain tuples
    # (an `Edge`), keeps the tuple as it was given in `_rest` (with `_nedges = -1`) and
    # returns exactly it; its first two edges are in the slots too, so that generated
    # `apply`s (ops/fastpath.py) may read `_n0` and `_n1` of any node. Constructors on the hot
    # path set the slots themselves (the generated ops/fastpath.py); the others assign.
    __slots__ = ("_n0", "_i0", "_n1", "_i1", "_nedges", "_rest", "_seq", "_out_meta", "_extra",
                 "__weakref__")

    def __init__(self, next_functions: tuple = (), out_meta: tuple = (),
                 sequence_nr: int | None = None) -> None:
        self.next_functions = next_functions
        # PyTorch's two constructors: without a number a node takes the next one (and uses it
        # up); with one (AccumulateGrad's UINT64_MAX) the counter is left alone.
        self._seq = next(_sequence_counter) if sequence_nr is None else sequence_nr
        self._out_meta = out_meta
        self._extra: _NodeExtra | None = None  # hooks and metadata, rarely present

    @property
    def next_functions(self) -> tuple:
        """One ``(node, input_nr)`` pair per input of the forward op (NOTE [flat edges]).

        Example:
            >>> import gradviz
            >>> x = gradviz.ones(2, requires_grad=True)
            >>> [(n and n.name(), nr) for n, nr in (x * 2).grad_fn.next_functions]
            [('torch::autograd::AccumulateGrad', 0), (None, 0)]
        """
        n = self._nedges
        if n == 2:
            n1 = self._n1
            if n1 is None and self._i1 == 0:  # an input needing no gradient (`y * 2`'s 2)
                return ((self._n0, self._i0), _NO_EDGE)  # one tuple fewer to build
            return ((self._n0, self._i0), (n1, self._i1))
        if n == 1:
            return ((self._n0, self._i0),)
        if n == 0:
            return ()
        return self._rest

    @next_functions.setter
    def next_functions(self, edges: tuple) -> None:
        n = len(edges)
        e0 = edges[0] if n > 0 else _NO_EDGE
        e1 = edges[1] if n > 1 else _NO_EDGE
        try:
            self._n0, self._i0 = e0
            self._n1, self._i1 = e1
        except (TypeError, ValueError):
            raise TypeError("next_functions must be a tuple of (node, input_nr) pairs, got "
                            f"{edges!r}") from None
        if type(edges) is tuple and n <= 2 and type(e0) is tuple and type(e1) is tuple:
            self._nedges = n
            self._rest = None
        else:
            self._nedges = -1
            self._rest = edges

    # -- identity ------------------------------------------------------------------------------
    def name(self) -> str:
        """The node's class name, e.g. ``'MulBackward0'``."""
        return type(self).__name__

    def _sequence_nr(self) -> int:
        """PyTorch's spelling of :attr:`sequence_nr`."""
        return self._seq

    @property
    def sequence_nr(self) -> int:
        """Creation order: later nodes run first when several are ready (PyTorch's priority)."""
        return self._seq

    @property
    def metadata(self) -> dict:
        """A free-form dict that stays with the node (PyTorch's ``Node.metadata``)."""
        extra = self._x()
        if extra.metadata is None:
            extra.metadata = {}
        return extra.metadata

    @property
    def num_outputs(self) -> int:
        """How many forward outputs the node has, i.e. how many gradients it receives."""
        return len(self._out_meta)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {id(self):#x}>"

    # -- hooks -----------------------------------------------------------------------------------
    def register_hook(self, fn: Callable) -> RemovableHandle:
        """Run ``fn(grad_inputs, grad_outputs)`` after the node ran; a tuple it returns replaces
        ``grad_inputs`` (the gradients sent on to ``next_functions``).

        Example:
            >>> import gradviz
            >>> x = gradviz.ones(2, requires_grad=True)
            >>> y = (x * 3).sum()
            >>> h = y.grad_fn.register_hook(lambda gi, go: print(gi[0].shape))
            >>> y.backward()
            gradviz.Size([2])
        """
        extra = self._x()
        if extra.post_hooks is None:
            extra.post_hooks = HookDict()
        return add_hook(extra.post_hooks, fn)

    def register_prehook(self, fn: Callable) -> RemovableHandle:
        """Run ``fn(grad_outputs)`` before the node runs; a tuple it returns replaces them.

        Example:
            >>> import gradviz
            >>> x = gradviz.ones(2, requires_grad=True)
            >>> y = (x * 3).sum()
            >>> h = y.grad_fn.register_prehook(lambda go: (go[0] * 10,))
            >>> y.backward(); x.grad
            tensor([30., 30.])
        """
        extra = self._x()
        if extra.pre_hooks is None:
            extra.pre_hooks = HookDict()
        return add_hook(extra.pre_hooks, fn)

    def _register_tensor_pre_hook(self, output_nr: int, fn: Callable) -> RemovableHandle:
        # Tensor.register_hook on a non-leaf lands here, keyed by which output the tensor is.
        extra = self._x()
        if extra.tensor_pre_hooks is None:
            extra.tensor_pre_hooks = HookDict()
        hooks = extra.tensor_pre_hooks
        handle = RemovableHandle(hooks)
        hooks[handle.id] = (output_nr, fn)
        return handle

    def _register_retains_grad(self, output_nr: int, tensor_ref: weakref.ref) -> None:
        # retain_grad(): after the tensor hooks, the gradient for that output is kept in .grad.
        extra = self._x()
        if extra.retains_grad_hooks is None:
            extra.retains_grad_hooks = {}
        extra.retains_grad_hooks[output_nr] = tensor_ref

    def _tensor_hooks(self) -> list[tuple[int, Callable]]:
        """``(output_nr, fn)`` for the tensor hooks to run before this node, in order."""
        extra = self._extra
        if extra is not None and extra.tensor_pre_hooks:
            return list(extra.tensor_pre_hooks.values())
        return []

    def _hooks(self) -> NodeHooks:
        """The hooks the engine runs around this node, each kind in registration order."""
        extra = self._extra
        if extra is None:
            return _NO_HOOKS
        return NodeHooks(self._tensor_hooks(),
                         list(extra.retains_grad_hooks.items()) if extra.retains_grad_hooks else [],
                         list(extra.pre_hooks.values()) if extra.pre_hooks else [],
                         list(extra.post_hooks.values()) if extra.post_hooks else [])

    def _x(self) -> _NodeExtra:
        extra = self._extra
        if extra is None:
            extra = self._extra = _NodeExtra()
        return extra

    # -- execution -------------------------------------------------------------------------------
    def apply(self, grad_outputs: list, create_graph: bool) -> tuple:
        """Compute the gradient for each entry of ``next_functions`` from ``grad_outputs``.

        Values are NumPy arrays in a plain backward and tensors under ``create_graph``.
        """
        raise NotImplementedError(f"{self.name()} does not define apply()")

    def run(self, grad_outputs: list, create_graph: bool, observer: Observer) -> tuple:
        """What the engine calls: :meth:`apply`, then tell ``observer`` what it received and
        sent (PyTorch's ``Node::operator()``, where the profiler records each call)."""
        grad_inputs = self.apply(grad_outputs, create_graph)
        extra = self._extra
        if extra is not None and extra.on_meta:
            grad_inputs = meta_gradients(grad_inputs)
        observer.execute(self, grad_outputs, grad_inputs)
        return grad_inputs

    def release_variables(self) -> bool:
        """Free saved tensors (after a backward without ``retain_graph``); True if any were."""
        return False

    def _inspect_saved(self) -> list[tuple[str, Any]]:
        """``[(name, value)]`` of what the node saved, for inspection and tracing: each value as
        its ``_saved_<name>`` attribute shows it (a saved tensor as its ``SavedVariable``)."""
        return []

    def __call__(self, *grad_outputs: Any) -> Any:
        """Run the node by hand, as ``grad_fn(grad)`` does in PyTorch: tensors in, tensors out."""
        if len(grad_outputs) != self.num_outputs:  # one gradient per output, as torch checks
            raise TypeError(f"expected {self.num_outputs} arguments, got {len(grad_outputs)} "
                            "instead")
        create = is_grad_enabled() and any(
            isinstance(g, Tensor) and g.requires_grad for g in grad_outputs)
        # Tensors under create_graph, else arrays: what the engine would pass to apply.
        values = [g if g is None or create else g._data if isinstance(g, Tensor) else g
                  for g in grad_outputs]
        result = self.apply(values, create)
        wrapped = tuple(None if g is None else g if isinstance(g, Tensor) else Tensor._make(g)
                        for g in result)
        return wrapped[0] if len(wrapped) == 1 else wrapped


class GraphRoot(Node):
    """The dummy first node when backward starts from several roots; its outputs are the root
    gradients (PyTorch's ``GraphRoot``)."""

    __slots__ = ("_grads",)

    def __init__(self, edges: tuple, grads: list) -> None:
        super().__init__(edges, ())
        self._grads = grads

    def name(self) -> str:
        return "torch::autograd::GraphRoot"

    def apply(self, grad_outputs: list, create_graph: bool) -> tuple:
        return tuple(self._grads)


def gradient_edge(tensor: Tensor) -> Edge:
    """The edge a tensor's gradient flows into: ``(grad_fn, output_nr)`` or, for a leaf that
    requires grad, ``(AccumulateGrad, 0)`` (created once and shared while the graph lives).

    Example:
        >>> import gradviz
        >>> x = gradviz.ones(2, requires_grad=True)
        >>> gradient_edge(x).function.name()
        'torch::autograd::AccumulateGrad'
    """
    return Edge(*edge_pair(tensor))


def edge_pair(tensor: Tensor) -> tuple[Node, int]:
    """:func:`gradient_edge` as a plain ``(node, input_nr)`` pair, for code that builds nodes
    (no NamedTuple on the op layer's hot path)."""
    meta = tensor._view_meta
    if meta is not None and meta.version != tensor._version:
        # A view whose base was modified in place since its grad_fn was recorded: record
        # it again from the base's new history (NOTE [in-place on views] in ops/dispatch).
        fn = meta.regenerate(tensor)
    else:
        fn = tensor._grad_fn
    if fn is not None:
        return (fn, tensor._output_nr)
    return (tensor._grad_accumulator(), 0)


class GradientEdge(NamedTuple):
    """PyTorch's ``torch.autograd.graph.GradientEdge``: where a tensor's gradient flows in,
    ``(node, output_nr)``. It can stand for the tensor as ``inputs=`` of ``autograd.grad`` and
    ``backward`` (the gradient arriving there), even after the tensor itself is gone.

    Example:
        >>> import gradviz
        >>> x = gradviz.ones(2, requires_grad=True)
        >>> y = x * 2
        >>> edge = get_gradient_edge(y)
        >>> edge.node.name(), edge.output_nr
        ('MulBackward0', 0)
        >>> gradviz.autograd.grad((y * y).sum(), edge)
        (tensor([4., 4.]),)
    """

    node: Node
    output_nr: int
    ownership_token: Any = None


def get_gradient_edge(tensor: Tensor) -> GradientEdge:
    """PyTorch's ``torch.autograd.graph.get_gradient_edge``: the :class:`GradientEdge` of a
    tensor that requires grad (its ``grad_fn`` and ``output_nr``, or its ``AccumulateGrad``).

    Example:
        >>> import gradviz
        >>> get_gradient_edge(gradviz.ones(2, requires_grad=True)).node.name()
        'torch::autograd::AccumulateGrad'
    """
    if not tensor.requires_grad:
        raise RuntimeError(
            "It is not possible to get the gradient edge for a Tensor that does not require "
            "gradients")
    return GradientEdge(*edge_pair(tensor))


def input_edge(x: Tensor | GradientEdge) -> tuple[Node, int]:
    """The edge an ``inputs=`` entry of ``backward``/``autograd.grad`` names: a tensor's
    :func:`gradient_edge`, or a :class:`GradientEdge` as given."""
    if isinstance(x, GradientEdge):
        return Edge(x.node, x.output_nr)
    return gradient_edge(x)


NO_EDGE = Edge(None, 0)
_NO_EDGE = (None, 0)


def collect_next_edges(args: tuple) -> tuple[Edge, ...]:
    """One edge per argument: the gradient edge of each tensor that requires grad, else
    ``(None, 0)`` (PyTorch's ``collect_next_edges``)."""
    tensor_type = Tensor  # a local: read once per call
    # NOTE [perf]: every recorded op comes here; a loop (no comprehension call before 3.12)
    # and edge_pair's common case (a non-view with a grad_fn) in line.
    edges = []
    for a in args:
        if isinstance(a, tensor_type) and a._requires_grad:
            fn = a._grad_fn
            edges.append((fn, a._output_nr) if fn is not None and a._view_meta is None
                         else edge_pair(a))
        else:
            edges.append(_NO_EDGE)
    return tuple(edges)


def move_retains_grad(tensor: Tensor, old_fn: Node | None) -> None:
    """When ``tensor`` gets a new grad_fn (an in-place op, a view's rebase), its
    ``retain_grad`` moves from ``old_fn`` to the new one; hooks registered before stay with
    ``old_fn`` (PyTorch's ``update_tensor_hooks_on_new_gradfn``).

    Example:
        >>> import gradviz
        >>> b = gradviz.ones(2, requires_grad=True) * 1
        >>> b.retain_grad()
        >>> _ = b.mul_(2)  # the in-place op moves it to MulBackward0 (via move_retains_grad)
        >>> b.sum().backward(); b.grad
        tensor([1., 1.])
    """
    extra = old_fn._extra if old_fn is not None else None
    if extra is None or not extra.retains_grad_hooks:
        return
    ref = extra.retains_grad_hooks.get(tensor._output_nr)
    if ref is None or ref() is not tensor:
        return
    del extra.retains_grad_hooks[tensor._output_nr]
    tensor._grad_fn._register_retains_grad(tensor._output_nr, ref)


def set_history(node: Node, outputs: tuple) -> None:
    """Make ``node`` the ``grad_fn`` of ``outputs``: output ``i`` becomes its ``output_nr`` i."""
    for i, t in enumerate(outputs):
        if t is None:
            continue
        t._grad_fn = node
        t._output_nr = i
        t._requires_grad = True


def meta_gradients(grad_inputs: tuple) -> tuple:
    """What a node recorded on meta tensors sends: its gradients, computed on stand-in zeros,
    as meta ones of their shapes (NOTE [meta device: ops]). Every way of running a node
    (``Node.run``, an ``OpNode`` unpacking hooked saves) passes its gradients through here."""
    return tuple([None if g is None else _as_meta(g) for g in grad_inputs])


def _as_meta(g: Any) -> Any:
    """A gradient (an array, or a tensor under create_graph) as a meta one of its shape."""
    data = getattr(g, "_data", None)
    if data is not None:  # a tensor: made by this backward, so its array may be replaced
        if type(data) is not MetaArray:
            g._data = meta_array(data.shape, data.dtype)
        return g
    arr = np.asarray(g)
    return g if type(g) is MetaArray else meta_array(arr.shape, arr.dtype)

