"""``gradviz.autograd.functional``: Jacobians, Hessians and their products with vectors, as
``torch.autograd.functional`` computes them.

Each is a few calls of :func:`gradviz.autograd.grad` on the graph the function builds, so the
tracer draws them like any other backward pass:

* :func:`vjp`: ``v^T J``, one backward pass from the outputs with ``v`` as their gradient;
* :func:`jacobian`: ``J``, one such pass per output element (row by row);
* :func:`jvp`: ``J v``, by the double-backward trick: the vjp with a placeholder ``u``,
  differentiated with respect to ``u`` along ``v``;
* :func:`hessian`: the Jacobian of the gradient (made with ``create_graph=True``);
* :func:`vhp` and :func:`hvp`: ``v^T H`` and ``H v`` from that gradient.

Inputs are taken as fresh leaves (detached, requiring grad), and results come back detached
unless ``create_graph=True``, as in PyTorch.

Example:
    >>> import gradviz
    >>> from gradviz.autograd.functional import jacobian, hessian
    >>> x = gradviz.tensor([1.0, 2.0])
    >>> jacobian(lambda t: t ** 2, x)
    tensor([[2., 0.],
            [0., 4.]])
    >>> hessian(lambda t: (t ** 3).sum(), x)
    tensor([[ 6.,  0.],
            [ 0., 12.]])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gradviz.autograd.grad_mode import enable_grad
from gradviz.autograd.wrappers import grad as _grad
from gradviz.ops import functional as F
from gradviz.tensor import Tensor

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]

_STRATEGIES = ("forward-mode", "reverse-mode")


# -- arguments and results ------------------------------------------------------------------
def _as_tuple(value: Any, what: str, fn: str) -> tuple[bool, tuple[Tensor, ...]]:
    """(whether ``value`` was a tuple, its tensors as a tuple); torch's TypeError otherwise
    (``what``: "inputs", "outputs of the user-provided function", "v" ...)."""
    is_tuple = isinstance(value, tuple)
    items = value if is_tuple else (value,)
    for k, item in enumerate(items):
        if not isinstance(item, Tensor):
            where = (f"the value at index {k}" if is_tuple else
                     f"the given {what}")
            raise TypeError(f"The {what} given to {fn} must be either a Tensor or a tuple of "
                            f"Tensors but {where} has type {type(item)}.")
    return is_tuple, tuple(items)


def _leaves(inputs: tuple[Tensor, ...], create_graph: bool) -> tuple[Tensor, ...]:
    """The inputs as the function will see them: new leaves that require grad, or, to build a
    graph through the result (``create_graph``), views of inputs that already require grad."""
    out = []
    for t in inputs:
        if create_graph and t.requires_grad:
            out.append(t.view_as(t))
        else:
            out.append(t.detach().requires_grad_(True))
    return tuple(out)


def _finish(values: Any, create_graph: bool) -> Any:
    """Results detached unless a graph through them was asked for: a tensor, a tuple of
    them, or a tuple of such tuples (a Jacobian of several outputs and inputs)."""
    if create_graph:
        return values
    if not isinstance(values, tuple):
        return values.detach()
    return tuple(tuple(t.detach() for t in v) if isinstance(v, tuple) else v.detach()
                 for v in values)


def _check_outputs(outputs: tuple[Tensor, ...], strict: bool) -> None:
    if not strict:
        return
    for k, out in enumerate(outputs):
        if not out.requires_grad:
            raise RuntimeError(f"Output {k} of the user-provided function does not require "
                               "gradients. The outputs must be computed in a differentiable "
                               "manner from the input when running in strict mode.")


def _check_v(v: tuple[Tensor, ...], like: tuple[Tensor, ...], like_tuple: bool) -> None:
    """``v`` against what it multiplies (``like``: the outputs for a vjp, else the inputs)."""
    if len(v) != len(like):
        if not like_tuple:
            raise RuntimeError("The given v should contain a single Tensor.")
        raise RuntimeError(f"v is a tuple of invalid length: should be {len(like)} but got "
                           f"{len(v)}.")
    for a, b in zip(v, like):
        if a.size() != b.size():
            raise RuntimeError(f"v has invalid size: should be {b.size()} but got {a.size()}.")


def _input_vector(v: Any, ins: tuple[Tensor, ...], is_tuple: bool, fn: str
                  ) -> tuple[Tensor, ...]:
    """``v`` for a product on the input side (jvp, hvp, vhp), checked against the inputs; left
    out, ones for a single one-element input."""
    if v is None:
        if len(ins) != 1 or ins[0].numel() != 1:
            raise RuntimeError("The vector v can only be None if the input to the user-provided "
                               "function is a single Tensor with a single element.")
        return (F.ones_like(ins[0]),)
    _, vs = _as_tuple(v, "v", fn)
    _check_v(vs, ins, is_tuple)
    return vs


# What strict mode says of an input the outputs do not reach ({k}: the input's index).
_UNUSED = ("The output of the user-provided function is independent of input {k}. This is not "
           "allowed in strict mode.")
_UNUSED_BY_GRADIENT = (
    "While computing the hessian, found that the jacobian of the user-provided function with "
    "respect to input {k} is independent of the input. This is not allowed in strict mode. You "
    "should ensure that your function is twice differentiable and that the jacobian depends on "
    "the inputs (this would be violated by a linear function for example).")


def _check_second_order(grads: tuple[Tensor, ...], strict: bool) -> None:
    """In strict mode, a gradient must depend on the inputs (a Hessian of it is wanted)."""
    for k, g in enumerate(grads):
        if strict and not g.requires_grad:
            raise RuntimeError(_UNUSED_BY_GRADIENT.format(k=k))


def _grads(outputs: tuple[Tensor, ...], inputs: tuple[Tensor, ...],
           grad_outputs: tuple[Tensor, ...], create_graph: bool,
           strict: str | bool = False) -> tuple[Tensor, ...]:
    """d(sum of outputs * grad_outputs)/d(inputs), zeros for an input the outputs do not
    reach (in strict mode, an error: ``strict`` is its text, or True for _UNUSED)."""
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o.requires_grad]
    if pairs:
        found = _grad([o for o, _ in pairs], inputs, [g for _, g in pairs], retain_graph=True,
                      create_graph=create_graph, allow_unused=True)
    else:
        found = (None,) * len(inputs)
    out = []
    for k, (g, inp) in enumerate(zip(found, inputs)):
        if g is None:
            if strict:
                raise RuntimeError((_UNUSED if strict is True else strict).format(k=k))
            g = F.zeros_like(inp)
        out.append(g)
    return tuple(out)


def _jacobian_times(outputs: tuple[Tensor, ...], inputs: tuple[Tensor, ...],
                    vs: tuple[Tensor, ...], create_graph: bool, strict: bool,
                    strict_last: bool = False) -> tuple[Tensor, ...]:
    """``J v`` for the Jacobian of ``outputs`` with respect to ``inputs``, by the
    double-backward trick: ``u^T J`` is linear in a placeholder ``u`` (its value does not
    matter), so its gradient with respect to ``u`` along ``v`` is ``J v``."""
    us = tuple(F.zeros_like(o).requires_grad_(True) for o in outputs)
    u_jacobian = _grads(outputs, inputs, us, True, strict)
    return _grads(u_jacobian, us, vs, create_graph, strict_last)


# -- the functions --------------------------------------------------------------------------
def vjp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """``(func(*inputs), v^T J)``: the vector-Jacobian product at ``inputs``. ``v`` may be left
    out when ``func`` returns one single-element tensor.

    Example:
        >>> import gradviz
        >>> vjp(lambda t: t ** 2, gradviz.tensor([1.0, 2.0]), gradviz.ones(2))
        (tensor([1., 4.]), tensor([2., 4.]))
    """
    with enable_grad():
        is_tuple, ins = _as_tuple(inputs, "inputs", "vjp")
        ins = _leaves(ins, create_graph)
        out_tuple, outs = _as_tuple(func(*ins), "outputs of the user-provided function", "vjp")
        _check_outputs(outs, strict)
        if v is None:
            if len(outs) != 1 or outs[0].numel() != 1:
                raise RuntimeError("The vector v can only be None if the user-provided function "
                                   "returns a single Tensor with a single element.")
            vs: tuple[Tensor, ...] = (F.ones_like(outs[0]),)
        else:
            _, vs = _as_tuple(v, "v", "vjp")
            _check_v(vs, outs, out_tuple)
        result = _grads(outs, ins, vs, create_graph, strict)
    return (_finish(outs if out_tuple else outs[0], create_graph),
            _finish(result if is_tuple else result[0], create_graph))


def jvp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """``(func(*inputs), J v)``: the Jacobian-vector product at ``inputs``, by the
    double-backward trick (``J v`` is the gradient of ``u -> u^T J`` along ``v``). ``v`` may
    be left out when the input is one single-element tensor.

    Example:
        >>> import gradviz
        >>> jvp(lambda t: t ** 2, gradviz.tensor([1.0, 2.0]), gradviz.ones(2))
        (tensor([1., 4.]), tensor([2., 4.]))
    """
    with enable_grad():
        is_tuple, ins = _as_tuple(inputs, "inputs", "jvp")
        ins = _leaves(ins, create_graph)
        vs = _input_vector(v, ins, is_tuple, "jvp")
        out_tuple, outs = _as_tuple(func(*ins), "outputs of the user-provided function", "jvp")
        _check_outputs(outs, strict)
        result = _jacobian_times(outs, ins, vs, create_graph, strict)
    return (_finish(outs if out_tuple else outs[0], create_graph),
            _finish(result if out_tuple else result[0], create_graph))


def jacobian(func: Callable[..., Any], inputs: Any, create_graph: bool = False,
             strict: bool = False, vectorize: bool = False,
             strategy: str = "reverse-mode") -> Any:
    """The Jacobian of ``func`` at ``inputs``: for one input and one output, a tensor of shape
    ``output.shape + input.shape``; with tuples, ``result[i][j]`` for output ``i`` and input
    ``j``. Computed in reverse mode, one backward pass per output element (``vectorize`` is
    accepted and gives the same values: there is no vmap here).

    Example:
        >>> import gradviz
        >>> jacobian(lambda a, b: a * b, (gradviz.tensor([1.0, 2.0]), gradviz.tensor([3.0, 4.0])))
        (tensor([[3., 0.],
                [0., 4.]]), tensor([[1., 0.],
                [0., 2.]]))
    """
    if strategy not in _STRATEGIES:
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". '
                             "Hint: If your function has more outputs than inputs, "
                             '"forward-mode" tends to be more performant. Otherwise, prefer to '
                             'use "reverse-mode".')
    if strategy == "forward-mode":
        raise NotImplementedError('jacobian(strategy="forward-mode"): gradviz has no forward-mode '
                                  'AD; use strategy="reverse-mode" (the same values)')
    with enable_grad():
        is_tuple, ins = _as_tuple(inputs, "inputs", "jacobian")
        ins = _leaves(ins, create_graph)
        out_tuple, outs = _as_tuple(func(*ins), "outputs of the user-provided function",
                                    "jacobian")
        _check_outputs(outs, strict)
        per_output = []
        for i, out in enumerate(outs):
            unused = (f"Output {i} of the user-provided function is independent of input {{k}}. "
                      "This is not allowed in strict mode.") if strict else False
            rows: list[list[Tensor]] = [[] for _ in ins]
            flat = out.reshape(-1)
            for k in range(flat.numel()):
                # d(out[k])/d(inputs): one row of the Jacobian per input
                row = _grads((flat[k],), ins, (F.ones_like(flat[k]),), create_graph, unused)
                for j, g in enumerate(row):
                    rows[j].append(g)
            blocks = []
            for j, inp in enumerate(ins):
                shape = tuple(out.shape) + tuple(inp.shape)
                blocks.append(F.stack(rows[j]).view(shape))  # no rows: torch's stack error
            per_output.append(tuple(blocks) if is_tuple else blocks[0])
    result = tuple(per_output) if out_tuple else per_output[0]
    return _finish(result, create_graph)


def _scalar_function(func: Callable[..., Any], fn: str, strict: bool) -> Callable[..., Tensor]:
    """``func`` checked to return one single-element tensor (what a Hessian needs)."""

    def scalar(*args: Tensor) -> Tensor:
        out = func(*args)
        out_tuple, outs = _as_tuple(out, "outputs of the user-provided function", fn)
        _check_outputs(outs, strict)
        if out_tuple or len(outs) != 1:
            raise RuntimeError(f"The function given to {fn} should return a single Tensor")
        if outs[0].numel() != 1:
            raise RuntimeError(f"The Tensor returned by the function given to {fn} should "
                               "contain a single element")
        return outs[0].squeeze()

    return scalar


def hessian(func: Callable[..., Any], inputs: Any, create_graph: bool = False,
            strict: bool = False, vectorize: bool = False,
            outer_jacobian_strategy: str = "reverse-mode") -> Any:
    """The Hessian of a scalar function at ``inputs``: the Jacobian of its gradient. For one
    input, a tensor of shape ``input.shape + input.shape``; with tuples, ``result[i][j]`` is
    the block of inputs ``i`` and ``j``.

    Example:
        >>> import gradviz
        >>> hessian(lambda t: (t ** 3).sum(), gradviz.tensor([1.0, 2.0]))
        tensor([[ 6.,  0.],
                [ 0., 12.]])
    """
    scalar = _scalar_function(func, "hessian", strict)
    is_tuple, _ = _as_tuple(inputs, "inputs", "hessian")

    def gradient(*args: Tensor) -> tuple[Tensor, ...]:
        # the gradient with its own graph, so that the outer jacobian can differentiate it
        out = scalar(*args)
        grads = _grads((out,), args, (F.ones_like(out),), True)
        _check_second_order(grads, strict)
        return grads

    result = jacobian(gradient, inputs if is_tuple else (inputs,), create_graph, strict,
                      vectorize, outer_jacobian_strategy)
    return result if is_tuple else result[0][0]


def vhp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """``(func(*inputs), v^T H)``: the vector-Hessian product of a scalar function.

    Example:
        >>> import gradviz
        >>> vhp(lambda t: (t ** 3).sum(), gradviz.tensor([1.0, 2.0]), gradviz.ones(2))
        (tensor(9.), tensor([ 6., 12.]))
    """
    return _hessian_product(func, inputs, v, create_graph, strict, "vhp")


def hvp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """``(func(*inputs), H v)``: the Hessian-vector product of a scalar function (by the
    double-backward trick, as :func:`jvp` of its gradient).

    Example:
        >>> import gradviz
        >>> hvp(lambda t: (t ** 3).sum(), gradviz.tensor([1.0, 2.0]), gradviz.ones(2))
        (tensor(9.), tensor([ 6., 12.]))
    """
    return _hessian_product(func, inputs, v, create_graph, strict, "hvp")


def _hessian_product(func: Callable[..., Any], inputs: Any, v: Any, create_graph: bool,
                     strict: bool, fn: str) -> tuple[Any, Any]:
    scalar = _scalar_function(func, fn, strict)
    with enable_grad():
        is_tuple, ins = _as_tuple(inputs, "inputs", fn)
        ins = _leaves(ins, create_graph)
        vs = _input_vector(v, ins, is_tuple, fn)
        out = scalar(*ins)
        grads = _grads((out,), ins, (F.ones_like(out),), True, strict)
        _check_second_order(grads, strict)
        if fn == "vhp":  # v^T H: the gradient's vjp with v
            result = _grads(grads, ins, vs, create_graph, strict)
        else:  # H v: the gradient's jvp along v
            result = _jacobian_times(grads, ins, vs, create_graph, strict, strict_last=strict)
    return _finish(out, create_graph), _finish(result if is_tuple else result[0], create_graph)
