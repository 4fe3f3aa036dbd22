"""Custom autograd functions: ``class MyOp(Function)`` with static ``forward``/``backward``.

As in PyTorch, the ``ctx`` object handed to ``forward`` and ``backward`` *is* the backward node:
``y.grad_fn`` of a ``MulConstant.apply(...)`` result is a ``MulConstantBackward`` whose
``saved_tensors`` and ``needs_input_grad`` you can read.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from gradviz.autograd.events import _listeners, emit
from gradviz.autograd.grad_mode import _state, no_grad
from gradviz.autograd.graph import (
    FREED_MESSAGE,
    NO_EDGE,
    Node,
    SavedVariable,
    collect_next_edges,
    set_history,
)
from gradviz.tensor import Tensor, _unwrap_grad, _wrap_grad

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
        return f"<{self.name()} object at {id(self):#x}>"

    @property
    def saved_tensors(self) -> tuple[Tensor | None, ...]:
        """The tensors given to ``save_for_backward``, checked for in-place changes."""
        if self._saved_variables is None:
            raise RuntimeError(FREED_MESSAGE)
        return tuple(None if s is None else s.unpack(self) for s in self._saved_variables)

    saved_variables = saved_tensors

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
                grads.append(None if g is None else _wrap_grad(g))
        result = self._forward_cls.backward(self, *grads)
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
            if g is None or edge[0] is None:
                if g is not None and not isinstance(g, Tensor):
                    raise TypeError(f"function {name} returned a gradient of type "
                                    f"{type(g).__name__} at index {i}; expected a Tensor or None")
                out.append(None)
                continue
            if not isinstance(g, Tensor):
                raise TypeError(f"function {name} returned a gradient of type "
                                f"{type(g).__name__} at index {i}; expected a Tensor or None")
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
    value = g if create_graph else _unwrap_grad(g)
    return _formula.to_dtype(value, dt)


class _FunctionMeta(type):
    """Gives every Function subclass its node class, ``<Name>Backward``."""

    def __init__(cls, name: str, bases: tuple, ns: dict) -> None:
        super().__init__(name, bases, ns)
        cls._backward_cls = type(f"{name}Backward", (BackwardCFunction,),
                                 {"_forward_cls": cls, "__module__": cls.__module__})


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

    @staticmethod
    def forward(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward mode "
                                  "AD.")

    @classmethod
    def apply(cls, *args: Any) -> Any:
        """Run ``forward`` without recording inside it, then record one ``<Name>Backward`` node
        connecting the tensor arguments to the outputs."""
        ctx = cls._backward_cls()
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        watched = bool(_listeners)
        if watched:  # a tracer keeps the ops forward() runs inside the Function's op
            emit("function_enter", {"function": cls})
        try:
            with no_grad():
                raw = cls.forward(ctx, *args)
        finally:
            if watched:
                emit("function_exit", {"function": cls})
        is_tuple = isinstance(raw, tuple)
        outputs = list(raw) if is_tuple else [raw]
        record = _state.enabled and any(ctx.needs_input_grad)
        inputs_by_id = {id(a): a for a in args if isinstance(a, Tensor)}
        dirty = {id(t) for t in ctx.dirty_tensors}
        for i, o in enumerate(outputs):
            if isinstance(o, Tensor) and id(o) in inputs_by_id and id(o) not in dirty:
                # Returning an input unchanged gives a new tensor object, as in PyTorch.
                alias = Tensor._make(o._data)
                alias._version_counter = o._version_counter
                outputs[i] = alias
        for t in ctx.dirty_tensors:
            if record and t.is_leaf and t.requires_grad:
                # PyTorch's custom-Function check words it differently from the in-place ops'.
                raise RuntimeError("a leaf Variable that requires grad has been used in an "
                                   "in-place operation.")
            t._version_counter.version += 1
            t._version_counter.last_op = ctx.name()
        non_diff = {id(t) for t in ctx.non_differentiable}
        if record:
            # Only tensors get an edge (MulConstant.apply(a, 5): one entry, as in PyTorch).
            ctx.next_functions = collect_next_edges(tuple(a for a in args if isinstance(a, Tensor)))
            ctx._input_meta = [(a.shape, a._data.dtype) if isinstance(a, Tensor) else None
                               for a in args]
            ctx._out_meta = tuple((o.shape, o._data.dtype) if isinstance(o, Tensor) else ((), None)
                                  for o in outputs)
            diff = [o if isinstance(o, Tensor) and id(o) not in non_diff
                    and o._data.dtype.kind == "f" else None for o in outputs]
            set_history(ctx, tuple(diff))
            out_ids = {id(o) for o in outputs}
            ctx._saved_variables = [
                None if t is None else SavedVariable(t, is_output=id(t) in out_ids)
                for t in ctx.to_save]
        else:
            ctx.next_functions = tuple(NO_EDGE for a in args if isinstance(a, Tensor))
        for o in outputs:
            if isinstance(o, Tensor) and id(o) in non_diff:
                o._requires_grad = False
        # As PyTorch, drop what forward handed over: a node holding its own outputs (a saved or
        # dirty output) would be a reference cycle, keeping the graph alive until gc runs.
        ctx.to_save = ctx.dirty_tensors = ctx.non_differentiable = None
        if _listeners:
            emit("op", {"name": cls.__name__, "node": ctx if record else None,
                        "inputs": args, "outputs": tuple(o for o in outputs
                                                         if isinstance(o, Tensor)),
                        "kwargs": {}, "inplace": bool(dirty), "function": True})
        return tuple(outputs) if is_tuple else outputs[0]


def once_differentiable(fn: Any) -> Any:
    """Mark a ``backward`` as not itself differentiable: it runs without recording."""
    import functools

    @functools.wraps(fn)
    def wrapper(ctx: Any, *args: Any) -> Any:
        with no_grad():
            return fn(ctx, *args)

    return wrapper
