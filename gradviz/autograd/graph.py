"""The backward graph: ``Node``, ``AccumulateGrad``, ``GraphRoot``, saved values and hook handles.

Vocabulary is PyTorch's (``torch/csrc/autograd/function.h``, ``torch/autograd/graph.py``):

* a **Node** is one backward function. ``next_functions`` holds one ``(node, input_nr)`` pair per
  input of the forward op: the gradient for that input flows to ``node`` as its ``input_nr``-th
  incoming gradient. ``(None, 0)`` marks an input that needs no gradient.
* An **edge** is such a pair; :func:`gradient_edge` gives the edge a tensor's gradient flows into:
  its ``grad_fn`` (at ``output_nr``) or, for a leaf, its ``AccumulateGrad``.
* **AccumulateGrad** is the node at a leaf: running it writes ``.grad`` of ``.variable``.
"""

from __future__ import annotations

import itertools
import re
import sys
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from gradviz._device import NO_DATA, MetaArray, meta_array
from gradviz.autograd import events

if TYPE_CHECKING:
    from gradviz.autograd.events import Observer
    from gradviz.tensor import Tensor

__all__ = ["Node", "AccumulateGrad", "GraphRoot", "Edge", "RemovableHandle", "SavedVariable",
           "gradient_edge", "get_gradient_edge", "collect_next_edges", "edge_pair",
           "next_sequence_nr", "set_history", "move_retains_grad", "SavedVariableList",
           "save_value", "NO_EDGE", "FREED_MESSAGE", "DETACHED_MESSAGE", "GradientEdge",
           "input_edge", "saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks",
           "register_multi_grad_hook", "increment_version", "SavedTensor", "copied_grad"]

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward."
)

DETACHED_MESSAGE = (
    "Trying to use a saved tensor that has been detached in-place, i.e. with .detach_().This is "
    "not supported, please use out-of-place `.detach()` instead")

# PyTorch reports AccumulateGrad's sequence number as UINT64_MAX: it runs first once ready.
_MAX_SEQUENCE_NR = 2**64 - 1

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


class RemovableHandle:
    """Returned by every ``register_*hook``; ``handle.remove()`` unregisters the hook.

    Example:
        >>> import gradviz
        >>> x = gradviz.ones(2, requires_grad=True)
        >>> h = x.register_hook(lambda g: g * 2)
        >>> h.remove()
    """

    __slots__ = ("_dict_ref", "id")
    _next_id = itertools.count()

    def __init__(self, hooks_dict: _HookDict) -> None:
        # Weak, so that a forgotten handle does not keep a dead graph's hooks alive.
        self._dict_ref = weakref.ref(hooks_dict)
        self.id = next(RemovableHandle._next_id)

    def remove(self) -> None:
        hooks = self._dict_ref()
        if hooks is not None:
            hooks.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


class _HookDict(OrderedDict):
    """An ordered dict that can be weakly referenced (plain dicts cannot)."""


def _add_hook(hooks: _HookDict, fn: Callable) -> RemovableHandle:
    if not callable(fn):
        raise TypeError(f"hook must be callable, got {type(fn).__name__}")
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn
    return handle


class _NodeExtra:
    """A node's hooks and metadata: rare, so kept out of every node's construction."""

    __slots__ = ("pre_hooks", "post_hooks", "tensor_pre_hooks", "retains_grad_hooks", "metadata",
                 "on_meta")

    def __init__(self) -> None:
        self.pre_hooks: _HookDict | None = None
        self.post_hooks: _HookDict | None = None
        self.tensor_pre_hooks: _HookDict | None = None
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
            extra.post_hooks = _HookDict()
        return _add_hook(extra.post_hooks, fn)

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
            extra.pre_hooks = _HookDict()
        return _add_hook(extra.pre_hooks, fn)

    def _register_tensor_pre_hook(self, output_nr: int, fn: Callable) -> RemovableHandle:
        # Tensor.register_hook on a non-leaf lands here, keyed by which output the tensor is.
        extra = self._x()
        if extra.tensor_pre_hooks is None:
            extra.tensor_pre_hooks = _HookDict()
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
        from gradviz.autograd.grad_mode import is_grad_enabled
        from gradviz.tensor import Tensor, _unwrap_grad, _wrap_grad

        if len(grad_outputs) != self.num_outputs:  # one gradient per output, as torch checks
            raise TypeError(f"expected {self.num_outputs} arguments, got {len(grad_outputs)} "
                            "instead")
        create = is_grad_enabled() and any(
            isinstance(g, Tensor) and g.requires_grad for g in grad_outputs)
        values = [None if g is None else (g if create else _unwrap_grad(g)) for g in grad_outputs]
        result = self.apply(values, create)
        wrapped = tuple(None if g is None else _wrap_grad(g) for g in result)
        return wrapped[0] if len(wrapped) == 1 else wrapped


class AccumulateGrad(Node):
    """The node at a leaf tensor: running it adds the incoming gradient into ``variable.grad``.

    Example:
        >>> import gradviz
        >>> x = gradviz.ones(2, requires_grad=True)
        >>> acc = (x * 2).grad_fn.next_functions[0][0]
        >>> type(acc).__name__, acc.variable is x
        ('AccumulateGrad', True)
    """

    __slots__ = ("variable",)

    def __init__(self, variable: Tensor) -> None:
        # PyTorch builds it with an explicit UINT64_MAX: making a leaf's AccumulateGrad does not
        # use up a sequence number, so the op nodes around it are numbered 0, 1, 2 ... as in torch.
        super().__init__((), ((variable._data.shape, variable._data.dtype),), _MAX_SEQUENCE_NR)
        self.variable = variable

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"  # what PyTorch's AccumulateGrad.name() returns

    def _tensor_hooks(self) -> list[tuple[int, Callable]]:
        # Hooks on a leaf live on the tensor (so they outlive this node), as in PyTorch 2.x.
        hooks = self.variable._backward_hooks
        if not hooks:
            return []
        return [(0, fn) for fn in hooks.values()]

    def _hooks(self) -> NodeHooks:
        hooks = Node._hooks(self)
        if hooks is _NO_HOOKS and self.variable._backward_hooks:
            hooks = NodeHooks(self._tensor_hooks(), [], [], [])
        return hooks

    def run(self, grad_outputs: list, create_graph: bool, observer: Observer) -> tuple:
        # Reported before .grad changes, so that a watcher sees the node run, then write.
        observer.execute(self, grad_outputs, ())
        self.accumulate(grad_outputs, create_graph, observer)
        return ()

    def apply(self, grad_outputs: list, create_graph: bool) -> tuple:
        """Add ``grad_outputs[0]`` into ``variable.grad`` (see :meth:`accumulate`); no outputs."""
        self.accumulate(grad_outputs, create_graph, events.observer())
        return ()

    def accumulate(self, grad_outputs: list, create_graph: bool, observer: Observer) -> None:
        """PyTorch's ``AccumulateGrad::apply``: the gradient becomes or joins ``.grad``.

        The gradient is moved out of ``grad_outputs`` (PyTorch's ``std::move(grads[0])``).
        The first one becomes ``.grad`` as it is when nobody else holds it (see
        :func:`_can_steal`), else as a copy; later ones are added in place, or out of place
        under ``create_graph`` so that ``.grad`` stays differentiable. Then the variable's
        post-accumulate-grad hooks run (also when no gradient arrived).

        Example:
            >>> import gradviz
            >>> x = gradviz.zeros(2, requires_grad=True)
            >>> acc = (x * 1).grad_fn.next_functions[0][0]
            >>> _ = acc(gradviz.ones(2)); _ = acc(gradviz.ones(2)); x.grad
            tensor([2., 2.])
        """
        new_grad = grad_outputs[0]
        grad_outputs[0] = None  # the list no longer refers to it: see _can_steal
        if new_grad is None:
            self._call_post_accumulate_grad_hooks(observer)
            return
        tensor_type = _TENSOR or _tensor_class()
        var = self.variable
        before = var._grad  # a leaf's: the property's non-leaf warning never applies
        shown_before = observer.keep(before)  # the value before an in-place add changes it
        if type(var._data) is MetaArray:  # a meta leaf's .grad is meta: nothing to add up
            if before is None:  # (NOTE [meta device] in gradviz/_device.py)
                var._grad = tensor_type._make(meta_array(var._data.shape, var._data.dtype))
        elif type(new_grad) is MetaArray:  # from a meta tensor made with .to("meta")
            raise NotImplementedError(NO_DATA)
        elif create_graph:
            # PyTorch copies into a fresh tensor (clone_obey_contract): .grad shows CopyBackwards.
            var.grad = (tensor_type._make(np.empty_like(new_grad._data)).copy_(new_grad)
                        if before is None else before + new_grad)
        elif before is None:
            # Held by this variable, and by the engine's inputs if it copied them for the
            # post-hooks. (Counted in a statement of its own: a pending call's arguments count.)
            only_engine_holds_it = _use_count(new_grad) <= 1 + bool(self._hooks().post)
            if _can_steal(new_grad, only_engine_holds_it, var._data):
                # NOTE [perf]: straight into ._grad: _can_steal checked what the setter checks
                # (a tensor of the variable's dtype and shape)
                var._grad = tensor_type._make(new_grad)
            else:
                var.grad = tensor_type._make(np.array(new_grad, dtype=var._data.dtype))
        elif before.requires_grad:
            var.grad = tensor_type._make(before._data + new_grad)
        else:
            np.add(before._data, new_grad, out=before._data, casting="unsafe")
            before._version_counter.version += 1
        observer.leaf_grad(self, var, shown_before, var._grad)
        self._call_post_accumulate_grad_hooks(observer)

    def _call_post_accumulate_grad_hooks(self, observer: Observer) -> None:
        # They run even when no gradient arrived (.grad unchanged), as in PyTorch.
        var = self.variable
        extra = var._extra
        if extra is not None and extra.post_acc_hooks:
            for fn in list(extra.post_acc_hooks.values()):
                if fn(var) is not None:
                    raise RuntimeError("Tensor post accumulate grad hooks should return None.")
                observer.hook("post_accumulate_grad", self, fn=fn)


def hook_name(fn: Callable) -> str:
    """How PyTorch names a hook in its errors: its ``__name__``, else its ``repr``."""
    return getattr(fn, "__name__", None) or repr(fn)


def checked_hook_result(fn: Callable, result: Any, value: Any, create_graph: bool) -> Any:
    """A gradient that hook ``fn`` returned (not None) in place of ``value``, checked as PyTorch
    checks it (``check_single_result`` in ``python_hook.cpp``): no gradient where there was
    None, a tensor, of the same type and size. Returned as the engine carries it (an array, or
    under ``create_graph`` a tensor)."""
    tensor_type = _TENSOR or _tensor_class()
    if value is None:
        raise RuntimeError("can't replace a None gradient with a non-None value")
    if not isinstance(result, tensor_type):
        raise TypeError(f"expected Variable, but hook returned '{type(result).__name__}'")
    # Under create_graph the engine carries tensors: compare NumPy dtypes, not gradviz's.
    old_dtype = value._data.dtype if isinstance(value, tensor_type) else np.asarray(value).dtype
    if result._data.dtype != old_dtype:
        from gradviz.tensor import _type_name

        raise RuntimeError(f"hook '{hook_name(fn)}' has changed the type of value (was "
                           f"{_type_name(old_dtype)} got "
                           f"{_type_name(result._data.dtype)})")
    if result.shape != np.shape(value):
        # PyTorch's text; the shapes are gradviz's addition.
        raise RuntimeError(f"hook '{hook_name(fn)}' has changed the size of value (expected "
                           f"{list(np.shape(value))}, got {list(result.shape)})")
    return result if create_graph else result._data


def checked_hook_results(fn: Callable, result: Any, values: Any, create_graph: bool) -> list:
    """What a node pre-hook or post-hook returned (not None) in place of the tuple ``values``:
    a tuple of the same length, each entry None or passing :func:`checked_hook_result`."""
    if not isinstance(result, tuple):
        raise TypeError(f"expected tuple, but hook returned '{type(result).__name__}'")
    if len(result) != len(values):
        raise RuntimeError(f"hook '{hook_name(fn)}' has returned an incorrect number of values "
                           f"(got {len(result)}, but expected {len(values)})")
    return [None if r is None else checked_hook_result(fn, r, v, create_graph)
            for r, v in zip(result, values)]


def retain_grad(tensor: Tensor, grad: Any, create_graph: bool) -> None:
    """What ``retain_grad`` does when the gradient of a non-leaf arrives: the first is copied
    into ``tensor.grad``, later ones are added."""
    if create_graph:
        tensor.grad = grad.clone() if tensor.grad is None else tensor.grad + grad
    else:
        tensor_type = _TENSOR or _tensor_class()
        tensor.grad = tensor_type._make(
            copied_grad(grad) if tensor.grad is None else tensor.grad._data + grad)


def copied_grad(grad: Any) -> np.ndarray:
    """A gradient array as a tensor gets it: a copy, or a meta one as it is (it has no values
    to share, NOTE [meta device] in gradviz/_device.py).

    Example:
        >>> copied_grad(np.ones(2))
        array([1., 1.])
    """
    return grad if type(grad) is MetaArray else np.array(grad)


def _use_count(obj: Any) -> int:
    """PyTorch's ``use_count``: how many references hold ``obj``, the caller's variable among
    them (``sys.getrefcount`` also counts those of this call, measured below)."""
    return sys.getrefcount(obj) - _CALL_REFS


def _call_refs() -> int:
    probe = np.empty(1)  # held by this one variable
    return _use_count(probe) - 1


_CALL_REFS = 0
_CALL_REFS = _call_refs()  # differs between Python versions


def _can_steal(new_grad: Any, only_engine_holds_it: bool, like: np.ndarray) -> bool:
    """Whether a first gradient may become ``.grad`` without a copy (PyTorch's rule in
    ``AccumulateGrad::accumulateGrad``): only the engine refers to it, and its layout (type,
    dtype, shape, contiguity, writability) matches the variable's. A gradient that a hook, a
    user's tensor, another branch or a tracer still holds is copied, so that ``.grad`` shares
    memory with nothing. A view counts when its base is held by the view alone and is no
    larger (a transpose, a reshape), or ``.grad`` would pin more memory.
    """
    if (not only_engine_holds_it or type(new_grad) is not np.ndarray
            or new_grad.dtype != like.dtype or new_grad.shape != like.shape
            or not new_grad.flags.writeable
            or new_grad.flags.c_contiguous != like.flags.c_contiguous):
        return False
    base = new_grad.base
    return base is None or (type(base) is np.ndarray and base.base is None
                            and base.size == new_grad.size and _use_count(base) <= 2)


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
    tensor_type = _TENSOR or _tensor_class()
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


def _tensor_class() -> type:
    # graph.py sits below tensor.py; fetch the class once, after both modules exist.
    global _TENSOR
    if _TENSOR is None:
        from gradviz.tensor import Tensor

        _TENSOR = Tensor
    return _TENSOR


_TENSOR: type | None = None


def set_history(node: Node, outputs: tuple) -> None:
    """Make ``node`` the ``grad_fn`` of ``outputs``: output ``i`` becomes its ``output_nr`` i."""
    for i, t in enumerate(outputs):
        if t is None:
            continue
        t._grad_fn = node
        t._output_nr = i
        t._requires_grad = True


class SavedVariableList(tuple):
    """Tensors saved for backward as one list argument (PyTorch's ``std::vector<SavedVariable>``,
    as ``IndexBackward0._saved_indices``): ``None`` entries stay ``None``; freed like any saved
    tensor after backward."""

    __slots__ = ()

    def unpack(self, owner: Node | None = None) -> tuple:
        """The tensors, each version-checked."""
        return tuple(None if s is None else s.unpack(owner) for s in self)

    def tensors(self) -> tuple:
        """The tensors as saved, unchecked (for inspection)."""
        return tuple(None if s is None else (s._tensor if s._tensor is not None else s.data)
                     for s in self)


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


def save_value(v: Any) -> Any:
    """How a non-input value is kept for backward: a tensor (or a list holding tensors) as
    saved variables, anything else as it is.

    Example:
        >>> import gradviz
        >>> type(save_value((gradviz.tensor([1]), None))).__name__, save_value(3)
        ('SavedVariableList', 3)
    """
    tensor_type = _TENSOR or _tensor_class()
    if isinstance(v, tensor_type):
        return SavedVariable(v)
    if type(v) in (tuple, list) and any(isinstance(x, tensor_type) for x in v):
        return SavedVariableList(None if x is None else SavedVariable(x) for x in v)
    return v
# NOTE [saved tensor hooks]
# PyTorch lets a program decide how a tensor saved for backward is stored: inside
# `saved_tensors_hooks(pack, unpack)`, every tensor a node saves is handed to `pack` and only what
# `pack` returns is kept; when backward (or `_saved_<name>`) needs the tensor, `unpack` gets that
# back and must return a tensor. `grad_fn._raw_saved_<name>.register_hooks(pack, unpack)` does
# the same for one value after the fact. Packing happens in one place, `SavedVariable.__init__`,
# which every node's saving goes through (table ops, fast paths, custom Functions); with no hooks
# active it costs one truthiness test of `_SAVED_HOOKS`. A packed value is not version-checked
# (PyTorch cannot see through the hooks either). Both steps are told to listeners as
# `saved_tensor_pack` and `saved_tensor_unpack` events, so that the tracer can show them.

# The active saved_tensors_hooks, innermost last; `[message]` of disable_saved_tensors_hooks.
_SAVED_HOOKS: list[tuple[Callable, Callable]] = []
_HOOKS_DISABLED: list[str] = []
# [True] once any value was packed by a hook; ON_FIRST_PACK is called then (the op layer
# installs its nodes' unpack-once step, so that nothing is paid before hooks are first used).
HOOKED_SAVES = [False]
ON_FIRST_PACK: list[Callable[[], None]] = []

_PACK_MODIFIED = (
    "A saved tensor pack hook is modifying its input in place. Tensors provided as input to "
    "pack hook cannot be modified by in-place operations as this can lead to unexpected "
    "side-effects. Please open an issue if you need to perform in-place operations on the input "
    "to a pack hook.")
_REGISTER_FREED = (
    "Calling register_hooks on a saved tensor after it has been freed. Saved intermediate values "
    "of the graph are freed when you call .backward() or autograd.grad(). Specify "
    "retain_graph=True if you need to backward through the graph a second time or if you need "
    "to access saved variables after calling backward.")


class SavedVariable:
    """A tensor saved for backward, with the version it had when saved (PyTorch's SavedVariable).

    Unpacking checks the version: a tensor modified in place since it was saved raises PyTorch's
    error. An op's *output* is saved as its array only (a reference to the tensor would make a
    cycle through ``grad_fn``); under ``create_graph`` it is rebuilt with the owning node as
    ``grad_fn``. Under saved-tensor hooks only what the pack hook returned is kept (NOTE [saved
    tensor hooks]): ``data`` is then None and ``hooks`` holds ``(packed, unpack_hook)`` (it is
    set only then).
    """

    __slots__ = ("data", "version", "_counter", "_tensor", "_requires_grad", "_output_nr",
                 "_was_non_leaf", "hooks", "_edge", "_meta")

    def __init__(self, tensor: Tensor, is_output: bool = False) -> None:
        self.data = tensor._data
        self._counter = tensor._version_counter
        if self._counter.inference:
            raise RuntimeError(
                "Inference tensors cannot be saved for backward. Please do not use Tensors "
                "created in inference mode in computation tracked by autograd. To work around "
                "this, you can make a clone to get a normal tensor and use it in autograd, or use "
                "`gradviz.no_grad()` instead of `gradviz.inference_mode()`.")
        self.version = self._counter.version
        self._requires_grad = tensor._requires_grad or tensor.grad_fn is not None
        self._output_nr = tensor._output_nr
        self._tensor = None if is_output else tensor
        # An input with a history: detach_() on it later is an error at unpack (as PyTorch).
        self._was_non_leaf = not is_output and tensor._grad_fn is not None
        # `hooks` is set only when packed (then `data` is None): nothing more to pay here.
        if _SAVED_HOOKS:  # the one check the common case pays
            self.set_hooks(*_SAVED_HOOKS[-1], tensor)

    def set_hooks(self, pack_hook: Callable, unpack_hook: Callable, tensor: Tensor,
                  owner: Node | None = None) -> None:
        """Pack ``tensor`` with ``pack_hook`` and keep only its result (and ``unpack_hook``);
        ``owner``: the node, when known (``register_hooks`` on a node's saved value)."""
        version = tensor._version
        packed = pack_hook(tensor)
        if tensor._version != version:
            raise RuntimeError(_PACK_MODIFIED)
        t = self._tensor
        if t is not None:
            # An input: remember where its gradient goes rather than the tensor itself.
            self._edge = ((t.grad_fn, t._output_nr) if t.grad_fn is not None
                          else (t._grad_accumulator(), 0) if t._requires_grad else None)
        else:
            self._edge = None
        self._meta = (self.data.shape, self.data.dtype)
        self.hooks = (packed, unpack_hook)
        self.data = None
        if not HOOKED_SAVES[0]:
            HOOKED_SAVES[0] = True
            for fn in ON_FIRST_PACK:
                fn()
        self._tensor = None
        self._was_non_leaf = False  # the tensor is no longer held: nothing left to check
        if events.watchers:
            events.observer().saved_tensor_pack(self, tensor, packed, pack_hook, owner)

    def check_version(self, owner: Node | None = None) -> None:
        counter = self._counter
        if self.data is not None and counter.version != self.version:
            raise RuntimeError(self._modified_message(owner))
        if self._was_non_leaf and self._tensor._grad_fn is None:
            raise RuntimeError(DETACHED_MESSAGE)

    def _modified_message(self, owner: Node | None = None) -> str:
        from gradviz.tensor import _type_name

        shape = list(self.data.shape)
        where = ""
        t = self._tensor
        node_name = t.grad_fn.name() if t is not None and t.grad_fn is not None else None
        if t is None:
            # A saved output names the node that saved it (as PyTorch does), not the in-place op.
            node_name = owner.name() if owner is not None else self._counter.last_op
        if node_name:
            # PyTorch's short form: ExpBackward0 -> Exp, FillBackward2 -> Fill2, FooBackward -> Foo.
            m = re.search(r"Backward(\d*)$", node_name)
            short = node_name if m is None else node_name[: m.start()] + m.group(1).lstrip("0")
            where = f", which is output {self._output_nr} of {short},"
        return (
            "one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: [{_type_name(self.data.dtype)} {shape}]{where} is at version "
            f"{self._counter.version}; expected version {self.version} instead. Hint: enable "
            "anomaly detection to find the operation that failed to compute its gradient, with "
            "gradviz.autograd.set_detect_anomaly(True, check_nan=False)."
        )

    def _call_unpack_hook(self, owner: Node | None) -> Tensor:
        packed, unpack_hook = self.hooks
        value = unpack_hook(packed)
        tensor_type = _TENSOR or _tensor_class()
        if not isinstance(value, tensor_type):
            raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got "
                            f"result of type {type(value).__name__}")
        if events.watchers:
            events.observer().saved_tensor_unpack(self, owner, packed, value, unpack_hook)
        return value

    def unpack_data(self, owner: Node | None = None) -> Any:
        """The saved value as the engine's array (a plain backward), after the version check
        or through the unpack hook."""
        if self.data is None:  # packed by a hook
            return self._call_unpack_hook(owner)._data
        self.check_version(owner)
        return self.data

    def unpack(self, owner: Node | None = None) -> Tensor:
        """The saved value as a tensor (graph-connected), after the version check."""
        from gradviz.tensor import Tensor

        if self.data is None:  # packed by a hook
            return self._unpack_hooked(owner)
        self.check_version(owner)
        if self._tensor is not None:
            return self._tensor
        out = Tensor._make(self.data)
        if self._requires_grad and owner is not None:
            out.grad_fn = owner
            out._requires_grad = True  # else ops on it under create_graph would not record
            out._output_nr = self._output_nr
            out._version_counter = self._counter
        return out

    def _unpack_hooked(self, owner: Node | None) -> Tensor:
        # What the unpack hook returned, given the saved tensor's place in the graph again.
        value = self._call_unpack_hook(owner)
        edge = self._edge if self._edge is not None or owner is None or not self._requires_grad \
            else (owner, self._output_nr)
        if edge is None:
            return value
        out = type(value)._make(value._data)
        out._vc = value._vc
        out._requires_grad = True
        if isinstance(edge[0], AccumulateGrad):
            out._x().grad_acc = weakref.ref(edge[0])  # a leaf: its gradient goes to the original
        else:
            out.grad_fn, out._output_nr = edge
        return out


class SavedTensor:
    """What ``grad_fn._raw_saved_<name>`` returns (PyTorch's ``torch._C._autograd.SavedTensor``):
    a handle on one saved tensor, to give it its own pack and unpack hooks.

    Example:
        >>> import gradviz
        >>> x = gradviz.ones(2, requires_grad=True)
        >>> y = x * x
        >>> y.grad_fn._raw_saved_self.register_hooks(lambda t: t * 10, lambda p: p / 10)
        >>> y.sum().backward(); x.grad
        tensor([2., 2.])
    """

    __slots__ = ("_saved", "_owner")

    def __init__(self, saved: SavedVariable | None | object, owner: Node | None) -> None:
        self._saved = saved  # a SavedVariable; None: nothing saved; a number; else: freed
        self._owner = owner

    def register_hooks(self, pack_hook: Callable, unpack_hook: Callable) -> None:
        """Pack the saved tensor now with ``pack_hook``; backward reads ``unpack_hook(packed)``."""
        if not callable(pack_hook) or not callable(unpack_hook):
            raise TypeError("register_hooks(): incompatible function arguments. The following "
                            "argument types are supported:\n    1. (self: SavedTensor, arg0: "
                            "collections.abc.Callable, arg1: collections.abc.Callable) -> None")
        saved = self._saved
        if saved is None:
            raise RuntimeError("Calling register_hooks on a saved tensor with value None is "
                               "forbidden")
        if isinstance(saved, (int, float, complex, np.number)):
            raise RuntimeError(f"{self._owner.name()} keeps this operand as the number it was "
                               f"given ({saved!r}), not as a saved tensor: gradviz cannot "
                               "give it hooks")
        if type(saved) is not SavedVariable:
            raise RuntimeError(_REGISTER_FREED)
        if saved.data is None:
            raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have "
                               "already been set. Hint: only one pair of hooks is allowed at a "
                               "time.")
        # The hook gets the values without their history, as PyTorch passes ``data.detach()``.
        tensor = saved._tensor if saved._tensor is not None else saved.unpack(self._owner)
        saved.set_hooks(pack_hook, unpack_hook, tensor.detach(), self._owner)

    def __repr__(self) -> str:
        # Python's own form, as torch prints its <torch._C._autograd.SavedTensor object at ...>
        return f"<{type(self).__module__}.SavedTensor object at {id(self):#x}>"


class saved_tensors_hooks:  # noqa: N801 - PyTorch's name
    """Inside this context, every tensor a node saves for backward is ``pack_hook(tensor)``;
    backward reads it back as ``unpack_hook(packed)``, which must return a tensor (PyTorch's
    ``torch.autograd.graph.saved_tensors_hooks``; NOTE [saved tensor hooks]). Contexts nest:
    the innermost one packs.

    Example:
        >>> import gradviz
        >>> x = gradviz.ones(2, requires_grad=True)
        >>> def pack(t):
        ...     print("pack", t.shape)
        ...     return t
        >>> def unpack(t):
        ...     print("unpack")
        ...     return t
        >>> with saved_tensors_hooks(pack, unpack):
        ...     y = x.pow(2)
        pack gradviz.Size([2])
        >>> y.sum().backward()
        unpack
    """

    def __init__(self, pack_hook: Callable[[Tensor], Any],
                 unpack_hook: Callable[[Any], Tensor]) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> saved_tensors_hooks:
        if _HOOKS_DISABLED:
            raise RuntimeError(_HOOKS_DISABLED[-1])
        _SAVED_HOOKS.append((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc: object) -> None:
        _SAVED_HOOKS.pop()


class save_on_cpu(saved_tensors_hooks):  # noqa: N801 - PyTorch's name
    """Saved tensors are kept on the CPU and moved back when backward needs them (PyTorch's
    ``torch.autograd.graph.save_on_cpu``). gradviz only has the CPU, so packing is a copy of
    the values: what the node keeps no longer shares memory with the tensor it saved.

    Example:
        >>> import gradviz
        >>> x = gradviz.ones(2, requires_grad=True)
        >>> with save_on_cpu():
        ...     y = (x * x).sum()
        >>> y.backward(); x.grad
        tensor([2., 2.])
    """

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack_to_cpu(tensor: Tensor) -> tuple:
            return (tensor.device, type(tensor)._make(tensor._data.copy()))

        def unpack_from_cpu(packed: tuple) -> Tensor:
            _, copy = packed
            return copy

        super().__init__(pack_to_cpu, unpack_from_cpu)


class disable_saved_tensors_hooks:  # noqa: N801 - PyTorch's name
    """Forbid saved-tensor hooks inside: entering :class:`saved_tensors_hooks` raises
    ``RuntimeError(error_message)``, and so does entering this context while hooks are active
    (PyTorch's ``torch.autograd.graph.disable_saved_tensors_hooks``).

    Example:
        >>> with disable_saved_tensors_hooks("no hooks in this block"):
        ...     with saved_tensors_hooks(lambda t: t, lambda t: t):
        ...         pass
        Traceback (most recent call last):
        RuntimeError: no hooks in this block
    """

    def __init__(self, error_message: str) -> None:
        self.error_message = error_message

    def __enter__(self) -> None:
        if _SAVED_HOOKS:
            raise RuntimeError(self.error_message)
        _HOOKS_DISABLED.append(self.error_message)

    def __exit__(self, *exc: object) -> None:
        _HOOKS_DISABLED.pop()

    def __call__(self, fn: Callable) -> Callable:
        import functools

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self:
                return fn(*args, **kwargs)

        return wrapper


def increment_version(tensor: Tensor | Any) -> None:
    """Bump the version counter of ``tensor`` (or of each tensor in an iterable), as an in-place
    write would: backward then refuses values saved before (PyTorch's
    ``torch.autograd.graph.increment_version``, for code that writes tensors behind autograd's
    back).

    Example:
        >>> import gradviz
        >>> x = gradviz.ones(2)
        >>> increment_version(x); x._version
        1
    """
    tensor_type = _TENSOR or _tensor_class()
    for t in (tensor,) if isinstance(tensor, tensor_type) else tensor:
        if t.is_inference():
            continue  # an inference tensor has no version counter: nothing to bump, as torch
        t._version_counter.version += 1


# -- what the engine is running now, per thread ---------------------------------------------------
class _Running(threading.local):
    """This thread's engine at work: ``tasks``, the backward passes running (innermost last,
    each ``(task, graph_root)``), so that a hook can ask which nodes its pass will run; and
    ``node``, the node whose backward runs. Per thread, as PyTorch's: two threads may each be
    inside a backward pass, and a hook must see its own."""

    def __init__(self) -> None:
        self.tasks: list[tuple[Any, Node]] = []
        self.node: Node | None = None


RUNNING = _Running()


# -- register_multi_grad_hook ------------------------------------------------------------------


def will_engine_execute_node(node: Node) -> bool:
    """Whether the backward pass running now will run ``node`` (PyTorch's
    ``torch._C._will_engine_execute_node``): it is reachable from the root and, when only some
    gradients are wanted (``inputs=``), needed for them."""
    tasks = RUNNING.tasks
    if not tasks:
        raise RuntimeError("_will_engine_execute_node should only be called during the "
                           "backward pass")
    task, root = tasks[-1]
    if task.exec_info is None:
        return node is root or node in task.dependencies
    if node in task.captures and all(n is None for n, _ in node.next_functions):
        # A leaf's gradient that autograd.grad captures (PyTorch's topological_nr 0).
        raise RuntimeError("A leaf node was passed to _will_engine_execute_node but we are "
                           "currently running autograd.grad(). This is currently not supported.")
    return bool(task.exec_info.get(node)) or node in task.captures


class _MultiHandle:
    """The handle of :func:`register_multi_grad_hook`: ``remove()`` removes every tensor hook."""

    __slots__ = ("handles",)

    def __init__(self, handles: tuple) -> None:
        self.handles = handles

    def remove(self) -> None:
        for h in self.handles:
            h.remove()

    def __enter__(self) -> _MultiHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def register_multi_grad_hook(tensors: Any, fn: Callable, *, mode: str = "all") -> _MultiHandle:
    """Call ``fn`` once per backward pass about several tensors (PyTorch's
    ``torch.autograd.graph.register_multi_grad_hook``).

    ``mode="all"``: after the gradients of every tensor the pass reaches were computed, call
    ``fn(grads)`` with one entry per tensor (None for those it did not reach or does not need).
    ``mode="any"``: call ``fn(grad)`` with the first of them to be computed.

    Example:
        >>> import gradviz
        >>> a = gradviz.ones(2, requires_grad=True); b = gradviz.ones(2, requires_grad=True)
        >>> c = a * b; d = a * b
        >>> h = register_multi_grad_hook((a, b, c, d), lambda g: print([x is not None for x in g]))
        >>> c.sum().backward(retain_graph=True)
        [True, True, True, False]
        >>> c.sum().backward(inputs=(a,))
        [True, False, True, False]
    """
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    tensors = tuple(tensors)
    if mode == "any":
        seen_tasks: set[int] = set()

        def first_grad(grad: Tensor) -> None:
            task = _current_task()
            if id(task) in seen_tasks:
                return
            seen_tasks.add(id(task))
            _forget_when_done(task, seen_tasks)
            fn(grad)

        return _MultiHandle(tuple(t.register_hook(first_grad) for t in tensors
                                  if t.requires_grad))

    nodes = [edge_pair(t)[0] if t.requires_grad else None for t in tensors]
    pending: dict[int, list] = {}  # id(task) -> [gradients still to come, gradients so far]

    def make_hook(i: int) -> Callable:
        def hook(grad: Tensor) -> None:
            task = _current_task()
            state = pending.get(id(task))
            if state is None:
                expected = sum(n is not None and will_engine_execute_node(n) for n in nodes)
                state = pending[id(task)] = [expected, [None] * len(tensors)]
                _forget_when_done(task, pending)
            state[1][i] = grad
            state[0] -= 1
            if state[0] == 0:
                del pending[id(task)]
                fn(tuple(state[1]))

        return hook

    return _MultiHandle(tuple(t.register_hook(make_hook(i)) for i, t in enumerate(tensors)))


def _current_task() -> Any:
    tasks = RUNNING.tasks
    if not tasks:
        raise AssertionError("expected this hook to be called inside a backward call")
    return tasks[-1][0]


def _forget_when_done(task: Any, table: set | dict) -> None:
    # A pass that stops early (an error) must not leave its entry behind for a later pass that
    # reuses the id: the engine calls these when the pass ends.
    key = id(task)
    task.on_done.append(lambda: table.discard(key) if isinstance(table, set)
                        else table.pop(key, None))
