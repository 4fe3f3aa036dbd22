"""``gradcheck`` and ``gradgradcheck``: compare autograd with central finite differences.

Both build the full Jacobian of each output with respect to each input that requires grad, once
numerically (perturbing every element by ``±eps``) and once analytically (one backward pass per
output element), and compare them elementwise with ``|a - n| <= atol + rtol * |n|``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from gradviz.autograd.grad_mode import enable_grad, no_grad
from gradviz.tensor import Tensor

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised by :func:`gradcheck` when the analytical and numerical Jacobians differ."""


def _as_tuple(x: Any) -> tuple:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _diff_outputs(fn: Callable, inputs: tuple) -> list[Tensor]:
    outs = _as_tuple(fn(*inputs))
    return [o for o in outs if isinstance(o, Tensor) and o.dtype.is_floating_point]


def _numerical_jacobians(fn: Callable, inputs: tuple, eps: float) -> list[list[np.ndarray]]:
    """jac[i][j]: d out_i / d in_j as a (numel(in_j), numel(out_i)) array, by central
    differences."""
    diff_idx = [j for j, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    with no_grad():
        outs = _diff_outputs(fn, inputs)
        jac = [[np.zeros((inputs[j].numel(), o.numel())) for j in diff_idx] for o in outs]
        for col, j in enumerate(diff_idx):
            flat = inputs[j]._data.reshape(-1)  # a view: writing into it perturbs the input
            for k in range(flat.size):
                orig = flat[k]
                flat[k] = orig + eps
                plus = [o._data.astype(np.float64).reshape(-1).copy()
                        for o in _diff_outputs(fn, inputs)]
                flat[k] = orig - eps
                minus = [o._data.astype(np.float64).reshape(-1).copy()
                         for o in _diff_outputs(fn, inputs)]
                flat[k] = orig
                for i in range(len(outs)):
                    jac[i][col][k] = (plus[i] - minus[i]) / (2 * eps)
    return jac


def _analytical_jacobians(fn: Callable, inputs: tuple) -> list[list[np.ndarray]]:
    from gradviz.autograd import grad as autograd_grad

    diff = [x for x in inputs if isinstance(x, Tensor) and x.requires_grad]
    outs = _diff_outputs(fn, inputs)
    jac = [[np.zeros((x.numel(), o.numel())) for x in diff] for o in outs]
    for i, o in enumerate(outs):
        if not o.requires_grad:
            continue  # output does not depend on any input: its Jacobian is zero
        for k in range(o.numel()):
            seed = np.zeros(o.numel(), dtype=o._data.dtype)
            seed[k] = 1
            grads = autograd_grad(o, diff, Tensor._make(seed.reshape(o.shape)),
                                  retain_graph=True, allow_unused=True)
            for j, g in enumerate(grads):
                if g is not None:
                    jac[i][j][:, k] = g._data.astype(np.float64).reshape(-1)
    return jac


def _check_inputs(inputs: tuple) -> None:
    if not any(isinstance(x, Tensor) and x.requires_grad for x in inputs):
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but "
                         "none of the them have requires_grad=True.")
    for x in inputs:
        if isinstance(x, Tensor) and x.requires_grad and x.dtype.name != "float64":
            import warnings

            warnings.warn(f"Input #{inputs.index(x)} requires gradient and is not a double "
                          "precision floating point. This check will likely fail if all the "
                          "inputs are not of double precision floating point. ",
                          stacklevel=3)


def gradcheck(func: Callable[..., Any], inputs: Any, *, eps: float = 1e-6, atol: float = 1e-5,
              rtol: float = 1e-3, raise_exception: bool = True) -> bool:
    """Check ``func``'s gradients against finite differences (use float64 inputs).

    Args:
        func: takes the ``inputs`` and returns a tensor or a tuple of tensors.
        inputs: a tensor or a tuple of arguments; tensors with ``requires_grad=True`` are checked.
        eps: the finite-difference step.
        atol, rtol: absolute and relative tolerance.
        raise_exception: raise :class:`GradcheckError` on mismatch (else return False).

    Example:
        >>> import gradviz
        >>> x = gradviz.randn(3, dtype=gradviz.float64, requires_grad=True)
        >>> gradcheck(lambda t: (t * t).sum(), (x,))
        True
    """
    inputs = _as_tuple(inputs)
    _check_inputs(inputs)
    numerical = _numerical_jacobians(func, inputs, eps)
    analytical = _analytical_jacobians(func, inputs)
    diff_pos = [j for j, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    if len(numerical) != len(analytical):  # never let zip() skip an output silently
        raise GradcheckError(f"the function returned {len(numerical)} differentiable outputs "
                             f"under no_grad but {len(analytical)} with grad enabled")
    for i, (num_row, ana_row) in enumerate(zip(numerical, analytical, strict=True)):
        for col, (n, a) in enumerate(zip(num_row, ana_row, strict=True)):
            if not np.allclose(a, n, rtol=rtol, atol=atol, equal_nan=True):
                msg = (f"Jacobian mismatch for output {i} with respect to input "
                       f"{diff_pos[col]},\nnumerical:{_fmt(n)}\nanalytical:{_fmt(a)}\n")
                if raise_exception:
                    raise GradcheckError(msg)
                return False
    return True


def _fmt(a: np.ndarray) -> str:
    from gradviz.tensor import Tensor as _T

    return repr(_T._make(a))


def gradgradcheck(func: Callable[..., Any], inputs: Any, grad_outputs: Any = None, *,
                  eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
                  raise_exception: bool = True) -> bool:
    """Check second derivatives: gradcheck the function ``(inputs, v) -> vjp(func, v)``.

    The vector-Jacobian product is computed with ``create_graph=True``, so this checks that the
    backward formulas are themselves correctly differentiable.

    Example:
        >>> import gradviz
        >>> x = gradviz.randn(3, dtype=gradviz.float64, requires_grad=True)
        >>> gradgradcheck(lambda t: (t * t * t).sum(), (x,))
        True
    """
    from gradviz import _factories
    from gradviz.autograd import grad as autograd_grad

    inputs = _as_tuple(inputs)
    _check_inputs(inputs)
    outs = _diff_outputs(func, inputs)
    if grad_outputs is None:
        grad_outputs = tuple(
            _factories.randn(*o.shape, dtype=o.dtype, requires_grad=True) for o in outs)
    else:
        grad_outputs = tuple(g.detach().requires_grad_() for g in _as_tuple(grad_outputs))
    n_in = len(inputs)
    diff_idx = [j for j, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]

    def vjp(*args: Any) -> tuple:
        xs, vs = args[:n_in], args[n_in:]
        # The numerical Jacobian runs `vjp` under no_grad; without enable_grad here it would see
        # no graph, return nothing, and the check would pass vacuously.
        with enable_grad():
            ys = [o for o in _diff_outputs(func, xs) if o.requires_grad]
            grads = autograd_grad(ys, [xs[j] for j in diff_idx], list(vs[:len(ys)]),
                                  create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(vjp, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
