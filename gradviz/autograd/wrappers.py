"""``Tensor.backward``, ``autograd.backward`` and ``autograd.grad``: thin wrappers over the
engine's :func:`~gradviz.autograd.engine.run_backward` (PyTorch's ``torch/autograd/__init__.py``).

They check and make the root gradients (PyTorch's ``_make_grads``) and pause the cyclic garbage
collector around the pass (NOTE [gc during backward]). Importing this module installs
``Tensor.backward``: the core layer's ``tensor.py`` does not import the engine
(docs/architecture.md).
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from gradviz._device import meta_array
from gradviz._dtype import to_dtype
from gradviz.autograd.engine import run_backward
from gradviz.autograd.node import GradientEdge
from gradviz.tensor import Tensor

__all__ = ["backward", "grad", "tensor_backward"]


def _tensors(x: Tensor | Sequence[Tensor] | None, what: str) -> tuple:
    if x is None:
        return ()
    if isinstance(x, Tensor):
        return (x,)
    if isinstance(x, GradientEdge):  # inputs= may name a GradientEdge, as in PyTorch
        return (x,)
    out = tuple(x)
    for t in out:
        if not isinstance(t, (Tensor, GradientEdge)):
            raise TypeError(f"{what} must be Tensors, got {type(t).__name__}")
    return out


def _zeros_for(x: Tensor, create_graph: bool) -> Tensor:
    """materialize_grads' zeros for an input that got no gradient; under create_graph they
    require grad, as PyTorch's do."""
    return Tensor._make(np.zeros(x._data.shape, x._data.dtype), create_graph)


def _output_meta(out: Tensor | GradientEdge) -> tuple[tuple, np.dtype, bool]:
    """``(shape, dtype, requires_grad)`` of an output to differentiate. A GradientEdge stands
    for what its node receives at ``output_nr``, which always takes a gradient (PyTorch reads
    the node's input metadata)."""
    if isinstance(out, GradientEdge):
        shape, dt = out.node._out_meta[out.output_nr]
        return tuple(shape), np.dtype(dt), True
    return out._data.shape, out._data.dtype, out.requires_grad


def _make_grads(outputs: tuple, grads: Any, is_grads_batched: bool = False) -> list:
    """Check or create the gradient for each output, a tensor or a GradientEdge (PyTorch's
    ``_make_grads``)."""
    if grads is None or isinstance(grads, Tensor):
        grads = (grads,) * len(outputs) if grads is None else (grads,)
    grads = tuple(grads)
    if len(grads) < len(outputs):  # PyTorch zips, so extra gradients are ignored
        raise RuntimeError(f"got {len(outputs)} tensors and {len(grads)} gradients")
    result = []
    for i, (out, g) in enumerate(zip(outputs, grads)):
        shape, dt, requires_grad = _output_meta(out)
        if g is None:
            if requires_grad:
                if int(np.prod(shape)) != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if dt.kind != "f":
                    raise RuntimeError(f"grad can be implicitly created only for real scalar "
                                       f"outputs but got {to_dtype(dt)!r}")
                g = Tensor._make(meta_array(shape, dt) if getattr(out, "is_meta", False)
                                 else np.ones(shape, dtype=dt))  # (a meta root: a meta grad)
            result.append(g)
            continue
        if not isinstance(g, Tensor):  # a number too: PyTorch makes no tensor of it
            raise TypeError(f"gradients can be either Tensors or None, but got {type(g).__name__}")
        if is_grads_batched and g.shape[1:] != shape:
            raise RuntimeError("If `is_grads_batched=True`, we interpret the first dimension of "
                               "each grad_output as the batch dimension. The sizes of the "
                               "remaining dimensions are expected to match the shape of "
                               "corresponding output, but a mismatch was detected: "
                               f"grad_output[{i}] has a shape of {_size(g.shape[1:])} and "
                               f"output[{i}] has a shape of {_size(shape)}. If you only "
                               "want some tensors in `grad_output` to be considered batched, "
                               "consider using vmap.")
        if not is_grads_batched and g.shape != shape:
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                               f"{_size(g.shape)} and output[{i}] has a shape of "
                               f"{_size(shape)}.")
        if g._data.dtype != dt and dt.kind == "f":
            # PyTorch's engine casts each gradient to its tensor's dtype (validate_outputs).
            g = g.to(to_dtype(dt)) if g.requires_grad else Tensor._make(g._data.astype(dt))
        result.append(g)
    return result


def _size(shape: tuple) -> str:
    return f"gradviz.Size({list(shape)})"


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for a backward pass (restored after, also on an
    error; left off if the program had turned it off).

    NOTE [gc during backward]: the pass frees what it no longer needs by reference counting
    and makes no cycles of its own, while the many short-lived gradients and buffers it
    allocates would trigger collections that each walk the whole (large) graph again.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def backward(tensors: Tensor | Sequence[Tensor], grad_tensors: Any = None,
             retain_graph: bool | None = None, create_graph: bool = False,
             grad_variables: Any = None, inputs: Tensor | Sequence[Tensor] | None = None
             ) -> None:
    """Accumulate into ``.grad`` of the graph's leaves the gradient of ``tensors``.

    Args:
        tensors: the outputs to differentiate.
        grad_tensors: their gradients (``None`` for single-element outputs).
        retain_graph: keep saved values for another backward (default: ``create_graph``).
        create_graph: record the pass, for higher-order gradients.
        grad_variables: deprecated alias of ``grad_tensors``.
        inputs: accumulate only into these tensors.

    Example:
        >>> import gradviz
        >>> x = gradviz.tensor([1.0, 2.0], requires_grad=True)
        >>> gradviz.autograd.backward((x * x).sum()); x.grad
        tensor([2., 4.])
    """
    if grad_variables is not None:
        if grad_tensors is not None:
            raise RuntimeError("'grad_tensors' and 'grad_variables' (deprecated) arguments both "
                               "passed to backward(). Please only use 'grad_tensors'.")
        grad_tensors = grad_variables
    outputs = _tensors(tensors, "tensors")
    inputs_t = _tensors(inputs, "inputs")
    if inputs is not None and not inputs_t:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    grads = _make_grads(outputs, grad_tensors)
    if retain_graph is None:
        retain_graph = create_graph
    if create_graph:
        import warnings

        warnings.warn("Using backward() with create_graph=True will create a reference cycle "
                      "between the parameter and its gradient which can cause a memory leak. We "
                      "recommend using autograd.grad when creating the graph to avoid this. If "
                      "you have to use this function, make sure to reset the .grad fields of "
                      "your parameters to None after use to break the cycle and avoid the leak.",
                      stacklevel=2)
    with _collector_paused():
        run_backward(outputs, grads, retain_graph, create_graph, inputs_t,
                     allow_unused=True, accumulate_grad=True)


def grad(outputs: Tensor | Sequence[Tensor], inputs: Tensor | Sequence[Tensor],
         grad_outputs: Any = None, retain_graph: bool | None = None, create_graph: bool = False,
         allow_unused: bool | None = None, is_grads_batched: bool = False, *,
         materialize_grads: bool = False) -> tuple[Tensor | None, ...]:
    """Return the gradients of ``outputs`` with respect to ``inputs`` (``.grad`` untouched).

    Args:
        outputs: the tensors to differentiate.
        inputs: the tensors to differentiate with respect to.
        grad_outputs: the gradients of ``outputs`` (``None`` for single-element outputs).
        retain_graph: keep saved values for another pass (default: ``create_graph``).
        create_graph: record the pass so that the results can be differentiated again.
        allow_unused: return ``None`` for an input the outputs do not depend on (otherwise
            that is an error).
        materialize_grads: return zeros instead of ``None`` for unused inputs.
        is_grads_batched: the first dimension of every ``grad_outputs`` tensor is a batch of
            vectors: the result holds one vector-Jacobian product per vector, stacked. PyTorch
            computes them with vmap in one pass; here each is a backward pass of its own (the
            tracer shows one run per vector), and with ``create_graph`` the result's
            ``grad_fn`` is the stack's.

    Example:
        >>> import gradviz
        >>> x = gradviz.tensor(3.0, requires_grad=True)
        >>> (dx,) = gradviz.autograd.grad(x ** 3, x, create_graph=True)
        >>> dx, gradviz.autograd.grad(dx, x)[0]
        (tensor(27., grad_fn=<MulBackward0>), tensor(18.))
    """
    outs = _tensors(outputs, "outputs")
    ins = _tensors(inputs, "inputs")
    if not ins:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    if allow_unused is None:
        allow_unused = materialize_grads
    if materialize_grads and not allow_unused:
        raise ValueError("Expected allow_unused to be True or not passed when "
                         "materialize_grads=True, but got: allow_unused=False.")
    for t in ins:
        if isinstance(t, Tensor) and not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    grads = _make_grads(outs, grad_outputs, is_grads_batched)
    if retain_graph is None:
        retain_graph = create_graph
    if is_grads_batched:
        result = _batched_grad(outs, grads, retain_graph, create_graph, ins, allow_unused)
    else:
        with _collector_paused():
            result = run_backward(outs, grads, retain_graph, create_graph, ins,
                                  allow_unused=allow_unused, accumulate_grad=False)
    if materialize_grads:
        if any(g is None and isinstance(t, GradientEdge) for g, t in zip(result, ins)):
            raise RuntimeError("materialize_grads cannot be used when the given input is a "
                               "GradientEdge")
        result = tuple(_zeros_for(t, create_graph) if g is None else g for g, t in zip(result, ins))
    return result


def _batched_grad(outs: tuple, grads: list, retain_graph: bool, create_graph: bool,
                  ins: tuple, allow_unused: bool) -> tuple[Tensor | None, ...]:
    """``grad`` with ``is_grads_batched``: one backward pass per vector of the batch (all but
    the last keep the graph), the results stacked along a new first dimension."""
    from gradviz.ops import functional as F

    size = grads[0].shape[0] if grads and grads[0] is not None and grads[0].ndim else 0
    passes = []
    for b in range(size):
        with _collector_paused():
            passes.append(run_backward(outs, [g[b] for g in grads],
                                       retain_graph or b < size - 1, create_graph, ins,
                                       allow_unused=allow_unused, accumulate_grad=False))
    return tuple(None if not passes or passes[0][k] is None
                 else F.stack([p[k] for p in passes]) for k in range(len(ins)))


def tensor_backward(self: Tensor, gradient: Tensor | None = None,
                    retain_graph: bool | None = None, create_graph: bool = False,
                    inputs: Sequence[Tensor] | Tensor | None = None) -> None:
    """Compute the gradient of this tensor with respect to the graph's leaves.

    Args:
        gradient: the gradient of some scalar with respect to this tensor; may be omitted
            only when this tensor holds a single element (then it is 1).
        retain_graph: keep saved values so that backward can run through the graph again;
            defaults to ``create_graph``.
        create_graph: record the backward pass itself, for higher-order gradients.
        inputs: accumulate only into these tensors' ``.grad``.

    Example:
        >>> import gradviz
        >>> x = gradviz.tensor([1.0, 2.0], requires_grad=True)
        >>> (x ** 2).backward(gradviz.ones_like(x)); x.grad
        tensor([2., 4.])
    """
    backward(self, gradient, retain_graph, create_graph, inputs=inputs)


Tensor.backward = tensor_backward
