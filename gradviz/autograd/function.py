"""Custom autograd functions: ``class MyOp(Function)`` with static ``forward``/``backward``.

As in PyTorch, the ``ctx`` object handed to ``forward`` and ``backward`` *is* the backward node:
``y.grad_fn`` of a ``MulConstant.apply(...)`` result is a ``MulConstantBackward`` whose
``saved_tensors`` and ``needs_input_grad`` you can read.
"""

from __future__ import annotations

import inspect
import warnings
from typing import Any

import numpy as np

from gradviz.autograd.events import observer, watchers
from gradviz.autograd.grad_mode import _state, no_grad
from gradviz.autograd.node import NO_EDGE, Node, collect_next_edges, move_retains_grad, set_history
from gradviz.autograd.saved_variable import FREED_MESSAGE, SavedTensor, SavedVariable
from gradviz.ops.dispatch import (
    IN_CUSTOM_FUNCTION,
    MULTI_OUTPUT_NODE,
    _check_inplace,
    _make_view,
    rebase_history,
)
from gradviz.tensor import Tensor, unwrap_grad, wrap_grad

__all__ = ["Function", "FunctionCtx", "BackwardCFunction", "once_differentiable"]


class FunctionCtx:
    """What ``forward`` can tell ``backward`` through ``ctx`` (besides plain attributes)."""

    def save_for_backward(self, *tensors: Tensor | None) -> None:
        """Save tensors for ``backward``; read them back as ``ctx.saved_tensors``.

        Saving through this method (rather than as attributes) lets gradviz check that they
        were not modified in place before backward, and free them after it.
        """
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError("save_for_backward can only save variables, but argument "
                                f"{tensors.index(t)} is of type {type(t).__name__}")
        self.to_save = tensors

    def mark_dirty(self, *tensors: Tensor) -> None:
        """Declare inputs that ``forward`` modified in place (and returns as outputs)."""
        self.dirty_tensors = tensors

    def mark_non_differentiable(self, *tensors: Tensor) -> None:
        """Declare outputs that carry no gradient (e.g. indices)."""
        self.non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        """Whether ``backward`` receives zero tensors (True, the default) or ``None`` for
        outputs that got no gradient."""
        self.materialize_grads = bool(value)


class BackwardCFunction(Node, FunctionCtx):
    """The node class of a custom Function (named ``<Function name>Backward``)."""

    _forward_cls: type[Function]

    def __init__(self) -> None:
        Node.__init__(self)
        self.to_save: tuple = ()
        self.dirty_tensors: tuple = ()
        self.non_differentiable: tuple = ()
        self.materialize_grads = True
        self.needs_input_grad: tuple[bool, ...] = ()
        self._saved_variables: list | None = []
        self._input_meta: list = []

    def __repr__(self) -> str:
        # Python's own repr of the class PyTorch makes, as torch prints it:
        # <torch.autograd.function.MulConstantBackward object at 0x...>
        return f"<{type(self).__module__}.{self.name()} object at {id(self):#x}>"

    @property
    def saved_tensors(self) -> tuple[Tensor | None, ...]:
        """The tensors given to ``save_for_backward``, checked for in-place changes."""
        if self._saved_variables is None:
            raise RuntimeError(FREED_MESSAGE)
        return tuple(None if s is None else s.unpack(self) for s in self._saved_variables)

    saved_variables = saved_tensors

    @property
    def _raw_saved_tensors(self) -> tuple[SavedTensor, ...]:
        """The saved tensors as ``SavedTensor`` handles (to give one pack and unpack hooks)."""
        if self._saved_variables is None:
            raise RuntimeError(FREED_MESSAGE)
        return tuple(SavedTensor(s, self) for s in self._saved_variables)

    def release_variables(self) -> bool:
        had = bool(self._saved_variables)
        self._saved_variables = None
        return had

    def _inspect_saved(self) -> list[tuple[str, Any]]:
        return [(f"saved_tensors[{i}]", s) for i, s in enumerate(self._saved_variables or ())]

    def apply(self, grad_outputs: list, create_graph: bool) -> tuple:
        name = self.name()
        grads = []
        for g, (shape, dt) in zip(grad_outputs, self._out_meta):
            if g is None and self.materialize_grads and dt is not None:  # None: not a tensor
                grads.append(Tensor._make(np.zeros(shape, dt)))
            else:
                grads.append(None if g is None else wrap_grad(g))
        result = _backward_fn(self._forward_cls)(self, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        n = len(self._input_meta)  # one gradient per forward input, tensor or not
        if len(result) > n and all(r is None for r in result[n:]):
            result = result[:n]  # PyTorch tolerates extra trailing Nones
        if len(result) != n:
            raise RuntimeError(f"function {name} returned an incorrect number of gradients "
                               f"(expected {n}, got {len(result)})")
        # One result per next_functions entry, i.e. per tensor input (PyTorch gives the other
        # arguments no edge): the gradients returned for non-tensor inputs must be None.
        out = []
        for i, (g, meta) in enumerate(zip(result, self._input_meta)):
            if meta is None:
                if g is not None:
                    raise RuntimeError(f"function {name} returned a gradient different than "
                                       f"None at position {i + 1}, but the corresponding "
                                       "forward input was not a Variable")
                continue
            edge = self.next_functions[len(out)]
            if g is None:
                out.append(None)
                continue
            if not isinstance(g, Tensor):
                raise TypeError(f"function {name} returned a gradient of type "
                                f"{type(g).__name__} at index {i}; expected a Tensor or None")
            if edge[0] is None:
                # An input that needs no gradient: its value is kept unchecked, as PyTorch's
                # engine does (post hooks see it; nothing is sent along a missing edge).
                out.append(g if create_graph else unwrap_grad(g))
                continue
            out.append(_validated(name, i, g, meta, create_graph))
        return tuple(out)


def _validated(name: str, i: int, g: Tensor, meta: tuple, create_graph: bool) -> Any:
    """Check a returned gradient against its input's shape; reduce a broadcast one."""
    from gradviz.ops import _formula

    shape, dt = meta
    if g.shape != shape:
        try:
            ok = np.broadcast_shapes(shape, g.shape) == g.shape
        except ValueError:
            ok = False
        if not ok:
            raise RuntimeError(f"Function {name} returned an invalid gradient at index {i} - got "
                               f"{list(g.shape)} but expected shape compatible with "
                               f"{list(shape)}")
        g = _formula.sum_to(g, shape)
    value = g if create_graph else unwrap_grad(g)
    return _formula.to_dtype(value, dt)


class _FunctionMeta(type):
    """Gives every Function subclass its node class, ``<Name>Backward``."""

    def __init__(cls, name: str, bases: tuple, ns: dict) -> None:
        super().__init__(name, bases, ns)
        # PyTorch makes this class inside torch.autograd.function: its module is that one.
        cls._backward_cls = type(f"{name}Backward", (BackwardCFunction,),
                                 {"_forward_cls": cls, "__module__": __name__})


_LEGACY_CALL_MESSAGE = (
    "Legacy autograd function with non-static forward method is deprecated. Please use new-style "
    "autograd function with static forward method. (Example: "
    "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")


class Function(metaclass=_FunctionMeta):
    """Base class for custom differentiable operations.

    Define ``forward(ctx, *args)`` and ``backward(ctx, *grad_outputs)`` as static methods and
    call ``MyFunction.apply(*args)``. ``backward`` returns one gradient per ``forward`` argument
    (``None`` for non-tensors).

    Example:
        >>> import gradviz
        >>> class MulConstant(Function):
        ...     @staticmethod
        ...     def forward(ctx, tensor, constant):
        ...         ctx.constant = constant
        ...         return tensor * constant
        ...     @staticmethod
        ...     def backward(ctx, grad_output):
        ...         return grad_output * ctx.constant, None
        >>> a = gradviz.ones(2, requires_grad=True)
        >>> b = MulConstant.apply(a, 5); b
        tensor([5., 5.], grad_fn=<MulConstantBackward>)
        >>> b.sum().backward(); a.grad
        tensor([5., 5.])
    """

    _backward_cls: type[BackwardCFunction]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # PyTorch warns (and will raise in a future version): the methods are all static.
        warnings.warn(f"{type(self)} should not be instantiated. Methods on autograd functions "
                      "are all static, so you should invoke them on the class itself. "
                      "Instantiating an autograd function will raise an error in a future "
                      "version of PyTorch.", DeprecationWarning, stacklevel=2)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # Calling an instance was PyTorch's legacy (non-static) Function API; it refuses it.
        raise RuntimeError(_LEGACY_CALL_MESSAGE)

    @staticmethod
    def forward(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward mode "
                                  "AD.")

    # PyTorch's other name for backward: a Function may define either, not both.
    vjp = backward

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple, output: Any) -> Any:
        """Define this to take ``forward(*args)`` without ``ctx``: it is then called as
        ``setup_context(ctx, inputs, output)`` to save what backward needs."""
        raise NotImplementedError("setup_context is not implemented.")

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run ``forward`` without recording inside it, then record one ``<Name>Backward`` node
        connecting the tensor arguments to the outputs (PyTorch's ``_wrap_outputs``)."""
        ctx = cls._backward_cls()
        with_setup_context = cls.setup_context is not Function.setup_context
        if with_setup_context:
            # forward(*args) without ctx: PyTorch binds the arguments to forward's signature,
            # defaults filled in, and hands them to setup_context as `inputs`.
            bound = inspect.signature(cls.forward).bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = tuple(bound.args), {}
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        watched = observer() if watchers else None
        if watched is not None:  # a tracer keeps the ops forward() runs inside the Function's op
            watched.function_enter(cls)
        try:
            with no_grad():
                if with_setup_context:
                    raw = cls.forward(*args)
                    cls.setup_context(ctx, args, raw)
                else:
                    raw = cls.forward(ctx, *args, **kwargs)
        finally:
            if watched is not None:
                watched.function_exit(cls)
        is_tuple = isinstance(raw, tuple)
        record = _state.enabled and any(ctx.needs_input_grad)
        outputs = _wrap_outputs(ctx, args, list(raw) if is_tuple else [raw], record)
        dirty = ctx.dirty_tensors
        # As PyTorch, drop what forward handed over: a node holding its own outputs (a saved or
        # dirty output) would be a reference cycle, keeping the graph alive until gc runs.
        ctx.to_save = ctx.dirty_tensors = ctx.non_differentiable = None
        if watchers:
            observer().op(cls.__name__, ctx if record else None, args,
                          tuple(o for o in outputs if isinstance(o, Tensor)), {}, bool(dirty),
                          function=True)
        return tuple(outputs) if is_tuple else outputs[0]


def _wrap_outputs(ctx: BackwardCFunction, args: tuple, outputs: list, record: bool) -> list:
    """What ``forward`` returned, made into the Function's outputs (PyTorch's
    ``_wrap_outputs``): ``ctx`` becomes their grad_fn when ``record``; dirty inputs are checked
    and bumped as an in-place op's would be; views among them are marked as made inside a
    Function; non-differentiable ones do not require grad."""
    inputs_by_id = {id(a): a for a in args if isinstance(a, Tensor)}
    dirty = _checked_dirty(ctx.dirty_tensors, inputs_by_id, outputs, record)
    non_diff = {id(t) for t in ctx.non_differentiable}
    returned_inputs = [(i, o) for i, o in enumerate(outputs)
                       if isinstance(o, Tensor) and id(o) in inputs_by_id]
    for i, o in enumerate(outputs):
        if isinstance(o, Tensor) and id(o) in inputs_by_id and id(o) not in dirty:
            # An input returned as-is comes back as a new view of it, as in PyTorch (marked
            # non-differentiable if the input was).
            outputs[i] = alias = Tensor._make(o._data)
            _make_view(alias, o, None, {})
            if id(o) in non_diff:
                non_diff.add(id(alias))
    diff = [o if isinstance(o, Tensor) and id(o) not in non_diff
            and o._data.dtype.kind == "f" else None for o in outputs]
    for o in outputs:
        if isinstance(o, Tensor) and id(o) in dirty:
            if record:
                _check_dirty_inplace(o)
            o._version_counter.version += 1
            o._version_counter.last_op = ctx.name()
    if record:
        # Only tensors get an edge (MulConstant.apply(a, 5): one entry, as in PyTorch).
        ctx.next_functions = collect_next_edges(tuple(a for a in args if isinstance(a, Tensor)))
        ctx._input_meta = [(a.shape, a._data.dtype) if isinstance(a, Tensor) else None
                           for a in args]
        ctx._out_meta = tuple((o.shape, o._data.dtype) if isinstance(o, Tensor) else ((), None)
                              for o in outputs)
        # A dirty view changes its base's history (CopySlices, PyTorch's rebase_history); every
        # other differentiable output gets ctx as its grad_fn.
        dirty_views = [(i, o) for i, o in enumerate(diff)
                       if o is not None and id(o) in dirty and o._base is not None]
        old = [None if o is None else o._grad_fn for o in diff]
        rebased = {i for i, _ in dirty_views}
        set_history(ctx, tuple(None if i in rebased else o for i, o in enumerate(diff)))
        for i, o in enumerate(diff):
            if o is not None and id(o) in dirty and o._base is None:
                move_retains_grad(o, old[i])
        for i, view in dirty_views:
            view._output_nr = i
            rebase_history(view, view._base, ctx)
        # Saved after the outputs got their history: a saved output comes back connected.
        out_ids = {id(o) for o in outputs}
        ctx._saved_variables = [None if t is None else SavedVariable(t, is_output=id(t) in out_ids)
                                for t in ctx.to_save]
    else:
        ctx.next_functions = tuple(NO_EDGE for a in args if isinstance(a, Tensor))
        # Nothing recorded (grad mode off): an input returned that requires grad comes back as
        # a detached alias, as PyTorch returns it, not as itself or a view requiring grad.
        for i, o in returned_inputs:
            if o._requires_grad:
                outputs[i] = o.detach()
    # A view among the outputs may not be modified in place later: its rebase would replace
    # this Function's backward (PyTorch's CreationMeta for them).
    n_diff = sum(o is not None for o in diff)
    for o in diff:
        if o is not None and o._view_meta is not None and id(o) not in dirty:
            o._view_meta.creation_meta = MULTI_OUTPUT_NODE if n_diff > 1 else IN_CUSTOM_FUNCTION
    for o in outputs:
        if isinstance(o, Tensor) and id(o) in non_diff:
            o._requires_grad = False
    return outputs


def _backward_fn(cls: type[Function]) -> Any:
    """The user's ``backward`` or ``vjp`` (PyTorch refuses a Function defining both)."""
    backward, vjp = cls.backward, cls.vjp
    if backward is not Function.backward and vjp is not Function.vjp:
        raise RuntimeError("Implementing both 'backward' and 'vjp' for a custom Function is not "
                           "allowed. You should only implement one of them.")
    return vjp if vjp is not Function.vjp else backward


def _checked_dirty(dirty_tensors: tuple, inputs_by_id: dict, outputs: list,
                   record: bool) -> set[int]:
    """The ids of the tensors given to ``mark_dirty``, validated as PyTorch does: every one
    must be returned; when the Function is recorded, each should be an input (a warning
    otherwise), and a view among them must be the only output (its rebase rewrites the
    graph)."""
    dirty = {id(t) for t in dirty_tensors}
    returned = {id(o) for o in outputs if isinstance(o, Tensor)}
    if any(i not in returned for i in dirty):
        raise RuntimeError("Some elements marked as dirty during the forward method were not "
                           "returned as output. The inputs that are modified inplace must all "
                           "be outputs of the Function.")
    if not record:
        return dirty
    if any(i not in inputs_by_id for i in dirty):
        warnings.warn("ctx.mark_dirty() received a tensor that was not an input. Only input "
                      "Tensors that have been mutated should be passed to ctx.mark_dirty().",
                      UserWarning, stacklevel=3)
    if len(outputs) > 1 and any(t._base is not None for t in dirty_tensors):
        raise RuntimeError(_DIRTY_VIEW_MESSAGE)
    return dirty


_DIRTY_VIEW_MESSAGE = (
    "If your Function modifies inplace an input that is a view of another Tensor, your Function "
    "cannot return more than one Tensor. This is not supported by the current autograd engine. "
    "You should either make sure the input is not a view (using .clone() for example) or make "
    "your Function only return one Tensor (potentially splitting it into two Functions: one "
    "doing the inplace that returns a single Tensor and a second one that does the other "
    "operations). You can ask on the forum https://discuss.pytorch.org/ if you need help to do "
    "this change.")


def _check_dirty_inplace(t: Tensor) -> None:
    """What PyTorch checks before recording a Function's in-place change of ``t``."""
    if t._base is not None:
        _check_inplace(t)
    elif t._requires_grad and t._grad_fn is None:
        # PyTorch's custom-Function check words it differently from the in-place ops'.
        raise RuntimeError("a leaf Variable that requires grad has been used in an in-place "
                           "operation.")


_ONCE_MESSAGE = ("trying to differentiate twice a function that was marked with "
                 "@once_differentiable")


class Error(Node):
    """A node that raises when backward reaches it (PyTorch's ``DelayedError``): the grad_fn of
    what a ``@once_differentiable`` backward returned under ``create_graph``."""

    __slots__ = ("_msg",)
    __module__ = "gradviz.autograd.nodes"

    def __init__(self, msg: str, next_functions: tuple, out_meta: tuple) -> None:
        super().__init__(next_functions, out_meta)
        self._msg = msg

    def name(self) -> str:
        return "torch::autograd::Error"

    def apply(self, grad_outputs: list, create_graph: bool) -> tuple:
        raise RuntimeError(self._msg)


def once_differentiable(fn: Any) -> Any:
    """Mark a ``backward`` as not itself differentiable: it runs without recording, and under
    ``create_graph`` its results get an ``Error`` grad_fn that raises if differentiated.

    Example:
        >>> import gradviz
        >>> class Square(Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         ctx.save_for_backward(x)
        ...         return x * x
        ...     @staticmethod
        ...     @once_differentiable
        ...     def backward(ctx, g):
        ...         return 2 * g * ctx.saved_tensors[0]
        >>> x, w = gradviz.ones(2, requires_grad=True), gradviz.ones(2, requires_grad=True)
        >>> gradviz.autograd.grad((Square.apply(x) * w).sum(), x, create_graph=True)[0]
        tensor([2., 2.], grad_fn=<Error>)
    """
    import functools

    @functools.wraps(fn)
    def wrapper(ctx: Any, *args: Any) -> Any:
        with no_grad():
            outputs = fn(ctx, *args)
        if not _state.enabled or not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            return outputs
        # Under create_graph: the results are new tensors whose grad_fn raises (as PyTorch's
        # DelayedError), connected to requiring-grad copies so that they require grad.
        is_tuple = isinstance(outputs, tuple)
        fakes = [o.detach().requires_grad_() if isinstance(o, Tensor) else o
                 for o in (outputs if is_tuple else (outputs,))]
        tensors = tuple(f if isinstance(f, Tensor) else None for f in fakes)
        node = Error(_ONCE_MESSAGE, collect_next_edges(tensors),
                     tuple(((), None) if t is None else (t.shape, t._data.dtype)
                           for t in tensors))
        results = [Tensor._make(f._data) if isinstance(f, Tensor) else f for f in fakes]
        set_history(node, tuple(r if isinstance(r, Tensor) else None for r in results))
        return tuple(results) if is_tuple else results[0]

    return wrapper
