"""``gradcheck`` and ``gradgradcheck``: compare autograd with central finite differences, the way
PyTorch's ``torch/autograd/gradcheck.py`` does (its checks, in its order, with its texts).

For each differentiable output and each input that requires grad, the Jacobian is computed
twice: numerically, by perturbing one input element at a time by ``±eps`` (written straight into
the input's array, as PyTorch writes into ``.data``) and calling ``func`` again with grad mode as
it is, and analytically, with one ``autograd.grad`` per output element. They must agree within
``|a - n| <= atol + rtol * |n|``. Then, as PyTorch does:

* the analytical pass runs twice and must give the same values (the *reentrancy* check; up to
  ``nondet_tol``);
* an output that does not require grad must have a zero numerical Jacobian when no output
  requires grad ("Numerical gradient for function expected to be zero");
* backward with zero ``grad_outputs`` must give zero gradients ("backward not multiplied by
  grad_output");
* with ``check_undefined_grad``, backward must cope with outputs that receive no gradient.

``fast_mode`` compares ``vᵀ J u`` for random unit vectors ``u`` and ``v`` instead of the whole
Jacobian (one perturbation and one backward per input and output); on failure it recomputes the
slow Jacobians for the message. Inputs that are expanded (a stride of 0) are refused, since
perturbing one element would move several.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from gradviz.tensor import Tensor

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised by :func:`gradcheck` when a check fails (unless ``raise_exception=False``)."""

    # Named where PyTorch's code imports it from (torch.autograd.gradcheck.GradcheckError), as
    # a traceback shows it.
    __module__ = "gradviz.autograd.gradcheck"


_FAILED_NONDET = """\n
NOTE: If your op relies on non-deterministic operations i.e., it is listed here:
https://pytorch.org/docs/stable/generated/torch.use_deterministic_algorithms.html
this failure might be expected.

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck.
If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `nondet_tol=<tol>` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_nondet_tol=<tol>`.
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_nondet_tol=<tol>`
"""

_FAST_FAIL_SLOW_OK = """
Fast gradcheck failed but element-wise differences are small. This means that the
test might've passed in slow_mode!

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck:

If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `fast_mode=False` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_fast_mode=False`
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_fast_mode=False`
""".strip()

_UNDEFINED_NOTE = ('Please look at "Notes about undefined output gradients" in '
                   '"tools/autograd/derivatives.yaml"')


# -- inputs and outputs -----------------------------------------------------------------------
def _as_tuple(x: Any) -> tuple:
    if isinstance(x, tuple):
        return x
    return tuple(x) if isinstance(x, list) else (x,)


def _differentiable_outputs(out: Any) -> tuple:
    # Like PyTorch, a non-tensor output fails here on `.requires_grad`.
    return tuple(o for o in _as_tuple(out) if o.requires_grad)


def _float_outputs(out: Any) -> list[Tensor]:
    return [o for o in _as_tuple(out) if isinstance(o, Tensor) and o.dtype.is_floating_point]


def _diff_inputs(inputs: tuple) -> list[tuple[int, Tensor]]:
    return [(i, x) for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]


def _check_inputs(inputs: tuple) -> None:
    """At least one input requires grad; warn for those that are not float64; refuse expanded
    ones (a stride of 0)."""
    for idx, x in _diff_inputs(inputs):
        if x.dtype.name != "float64":
            warnings.warn(f"Input #{idx} requires gradient and is not a double precision "
                          "floating point or complex. This check will likely fail if all the "
                          "inputs are not of double precision floating point or complex. ",
                          stacklevel=3)
        arr = x._data
        # an empty input has no element to share memory (NumPy may give it stride 0)
        if arr.size and not all(st > 0 or n <= 1 for st, n in zip(arr.strides, arr.shape)):
            raise RuntimeError(
                f"The {idx}th input has a dimension with stride 0. gradcheck only supports "
                "inputs that are non-overlapping to be able to compute the numerical gradients "
                "correctly. You should call .contiguous on the input before passing it to "
                "gradcheck.")
    if not _diff_inputs(inputs):
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but "
                         "none of them have requires_grad=True.")


# -- numerical ------------------------------------------------------------------------------
def _perturbed_difference(func: Callable, inputs: tuple, arr: np.ndarray, where: Any,
                          delta: Any, eps: float) -> list[np.ndarray]:
    """``(f(x + delta) - f(x - delta)) / (2 eps)`` for each float output, flattened, with
    ``arr[where]`` (part of an input's array) moved by ``delta`` and then restored."""
    orig = arr[where].copy()
    arr[where] = orig - delta
    before = [o._data.copy() for o in _float_outputs(func(*inputs))]
    arr[where] = orig + delta
    after = [o._data.copy() for o in _float_outputs(func(*inputs))]
    arr[where] = orig
    for a, b in zip(before, after):
        if a.shape != b.shape or a.dtype != b.dtype:
            what = "shape" if a.shape != b.shape else "dtype"
            raise AssertionError(
                f"Expected `func` to return outputs with the same {what} when inputs are "
                f"perturbed by {eps}, but got: {what}s "
                f"{(a.shape, b.shape) if what == 'shape' else (a.dtype, b.dtype)}.")
    return [((b - a) / (2 * eps)).reshape(-1) for a, b in zip(before, after)]


def _numerical_jacobians(func: Callable, inputs: tuple, func_out: Any, eps: float
                         ) -> list[list[np.ndarray]]:
    """``jac[j][i]``: d(float output i of ``func_out``) / d(differentiable input j), shaped
    ``(numel(input), numel(output))``, one column per perturbed input element."""
    outs = _float_outputs(func_out)
    jacobians = []
    for _, x in _diff_inputs(inputs):
        arr = x._data
        per_output = [np.zeros((arr.size, o.numel()), o._data.dtype) for o in outs]
        for k, where in enumerate(np.ndindex(arr.shape)):
            columns = _perturbed_difference(func, inputs, arr, where, eps, eps)
            for jac, col in zip(per_output, columns):
                jac[k] = col
        jacobians.append(per_output)
    return jacobians


# -- analytical -----------------------------------------------------------------------------
def _vjp(output: Tensor, inputs: tuple, grad_output: np.ndarray) -> tuple:
    from gradviz.autograd import grad

    return grad(output, [x for _, x in _diff_inputs(inputs)], Tensor._make(grad_output),
                retain_graph=True, allow_unused=True)


def _analytical_jacobians(output: Tensor, inputs: tuple, nondet_tol: float,
                          check_grad_dtypes: bool, v: np.ndarray | None = None
                          ) -> list[np.ndarray]:
    """d(output) / d(each differentiable input) as ``(numel(input), numel(output))`` arrays
    (with ``v``: the single column ``vᵀ J``), computed twice: both must agree (reentrancy)."""
    if v is None:
        seeds = []
        for k in range(output.numel()):
            seed = np.zeros(output.numel(), output._data.dtype)
            seed[k] = 1
            seeds.append(seed.reshape(output.shape))
    else:
        seeds = [v.reshape(output.shape)]
    diff = [x for _, x in _diff_inputs(inputs)]
    passes, sizes_ok, types_ok = [], True, True
    for _ in range(2):
        jacobians = [np.zeros((x.numel(), len(seeds)), x._data.dtype) for x in diff]
        for k, seed in enumerate(seeds):
            for jac, x, g in zip(jacobians, diff, _vjp(output, inputs, seed)):
                if g is None:
                    continue
                sizes_ok = sizes_ok and g.shape == x.shape
                types_ok = types_ok and g.dtype == x.dtype
                jac[:, k] = g._data.reshape(-1)
        passes.append(jacobians)
    if not types_ok and check_grad_dtypes:
        raise GradcheckError("Gradient has dtype mismatch")
    if not sizes_ok:
        raise GradcheckError("Analytical gradient has incorrect size")
    for first, second in zip(*passes):
        if first.size and np.abs(first - second).max() > nondet_tol:
            raise GradcheckError(
                "Backward is not reentrant, i.e., running backward with same input and "
                "grad_output multiple times gives different values, although analytical "
                "gradient matches numerical gradient.The tolerance for nondeterminism was "
                f"{nondet_tol}." + _FAILED_NONDET)
    return passes[0]


def _allclose(a: Any, n: Any, rtol: float, atol: float) -> bool:
    # torch.allclose after type promotion: NaN never matches.
    return bool(np.allclose(a, n, rtol=rtol, atol=atol, equal_nan=False))


def _mismatch(out_idx: int, in_idx: int, numerical: Any, analytical: Any) -> str:
    return (f"Jacobian mismatch for output {out_idx:d} with respect to input {in_idx:d},\n"
            f"numerical:{numerical}\nanalytical:{analytical}\n")


def _show(a: np.ndarray) -> str:
    return repr(Tensor._make(a))


# -- the two modes ----------------------------------------------------------------------------
def _slow_gradcheck(func: Callable, inputs: tuple, func_out: Any, outputs: tuple, eps: float,
                    rtol: float, atol: float, nondet_tol: float, check_grad_dtypes: bool
                    ) -> None:
    numerical = _numerical_jacobians(func, inputs, func_out, eps)  # [input][float output]
    if not outputs:
        if any(np.any(jac != 0) for per_input in numerical for jac in per_input):
            raise GradcheckError("Numerical gradient for function expected to be zero")
        return
    floats = _float_outputs(func_out)
    for i, o in enumerate(outputs):
        k = next(n for n, f in enumerate(floats) if f is o)
        analytical = _analytical_jacobians(o, inputs, nondet_tol, check_grad_dtypes)
        for j, a in enumerate(analytical):
            n = numerical[j][k]
            if not _allclose(a, n, rtol, atol):
                raise GradcheckError(_mismatch(i, j, _show(n), _show(a)))


def _unit_vector(n: int, dtype: np.dtype, rng: np.random.Generator) -> np.ndarray:
    v = rng.random(n).astype(dtype)
    return v / np.linalg.norm(v)


def _fast_gradcheck(func: Callable, inputs: tuple, func_out: Any, outputs: tuple, eps: float,
                    rtol: float, atol: float, nondet_tol: float, check_grad_dtypes: bool
                    ) -> None:
    rng = np.random.default_rng(0)  # its own generator: the user's random state is untouched
    diff = _diff_inputs(inputs)
    all_u = [_unit_vector(x.numel(), x._data.dtype, rng) for _, x in diff]
    all_v = [_unit_vector(o.numel(), o._data.dtype, rng) for o in outputs]
    floats = _float_outputs(func_out)
    keep = [next(n for n, f in enumerate(floats) if f is o) for o in outputs]
    # numerical[j][i] = vᵢᵀ (J u_j): one perturbation of input j along u_j.
    numerical = []
    for (_, x), u in zip(diff, all_u):
        arr = x._data
        ju = _perturbed_difference(func, inputs, arr, ..., (u * eps).reshape(arr.shape), eps)
        if not outputs:
            if any(col.size and np.abs(col).max() > nondet_tol for col in ju):
                raise GradcheckError("Numerical gradient for function expected to be zero")
            continue
        numerical.append([float(np.dot(v, ju[k])) for v, k in zip(all_v, keep)])
    for i, (o, v) in enumerate(zip(outputs, all_v)):
        analytical = _analytical_jacobians(o, inputs, nondet_tol, check_grad_dtypes, v)
        for j, (vj, u) in enumerate(zip(analytical, all_u)):
            a, n = float(np.dot(vj[:, 0], u)), numerical[j][i]
            # The tolerance scaled as vᵀ (atol · ones) u, PyTorch's _adjusted_atol.
            if not _allclose(a, n, rtol, atol * float(u.sum()) * float(v.sum())):
                raise GradcheckError(_mismatch(i, j, repr(n), repr(a)) + _slow_mode_report(
                    func, inputs, func_out, o, keep[i], j, rtol, atol, eps))


def _slow_mode_report(func: Callable, inputs: tuple, func_out: Any, output: Tensor, k: int,
                      in_idx: int, rtol: float, atol: float, eps: float) -> str:
    """After a fast-mode failure: the full Jacobians of that input and of ``output`` (float
    output ``k``), as PyTorch adds them."""
    numerical = _numerical_jacobians(func, inputs, func_out, eps)[in_idx][k]
    analytical = _analytical_jacobians(output, inputs, float("inf"), False)[in_idx]
    max_diff = np.abs(numerical - analytical).max()
    msg = ("\nThe above quantities relating the numerical and analytical jacobians are computed "
           "\nin fast mode. See: https://github.com/pytorch/pytorch/issues/53876 for more "
           "background \nabout fast mode. Below, we recompute numerical and analytical jacobians "
           f"in slow mode:\n\nNumerical:\n {_show(numerical)}\nAnalytical:\n{_show(analytical)}"
           f"\n\nThe max per-element difference (slow mode) is: {max_diff}.\n")
    if _allclose(analytical, numerical, rtol, atol):
        msg += _FAST_FAIL_SLOW_OK
    return msg


# -- the checks after the Jacobians -----------------------------------------------------------
def _test_backward_mul_by_grad_output(outputs: tuple, inputs: tuple) -> None:
    from gradviz.autograd import grad

    diff = [x for _, x in _diff_inputs(inputs)]
    zeros = [Tensor._make(np.zeros(o.shape, o._data.dtype)) for o in outputs]
    for gi, di in zip(grad(outputs, diff, zeros, allow_unused=True), diff):
        if gi is None:
            continue
        if np.any(gi._data != 0):
            raise GradcheckError("backward not multiplied by grad_output")
        if gi.dtype != di.dtype:
            raise GradcheckError("grad is incorrect type")
        if gi.shape != di.shape:
            raise GradcheckError("grad is incorrect size")


def _test_undefined_backward_mode(func: Callable, outputs: tuple, inputs: tuple) -> None:
    """Backward must work when outputs receive no gradient (None, PyTorch's undefined
    gradient): all of them, and, with several outputs, each one alone."""
    from gradviz.autograd.engine import run_backward

    diff = [x for _, x in _diff_inputs(inputs)]

    def warn_bc_breaking() -> None:
        warnings.warn("Backwards compatibility: New undefined gradient support checking feature "
                      "is enabled by default, but it may break existing callers of this "
                      "function. If this is true for you, you can call this function with "
                      '"check_undefined_grad=False" to disable the feature', stacklevel=4)

    # First every output's gradient undefined, then (with several outputs) each one alone.
    cases = [(None, _differentiable_outputs(func(*inputs)))]
    if len(cases[0][1]) > 1:
        cases += [(k, _differentiable_outputs(func(*inputs))) for k in range(len(outputs))]
    for undefined, outs in cases:
        grads = [None if undefined is None or k == undefined
                 else np.zeros(o.shape, o._data.dtype) for k, o in enumerate(outs)]
        try:
            result = run_backward(outs, grads, False, False, diff, allow_unused=True,
                                  accumulate_grad=False)
        except RuntimeError as e:
            warn_bc_breaking()
            raise GradcheckError("Expected backward function to handle undefined output grads. "
                                 + _UNDEFINED_NOTE) from e
        if any(g is not None and np.any(g._data != 0) for g in result):
            warn_bc_breaking()
            raise GradcheckError("Expected all input grads to be undefined or zero when all "
                                 "output grads are undefined or zero. " + _UNDEFINED_NOTE)


# -- the API --------------------------------------------------------------------------------
def gradcheck(func: Callable[..., Any], inputs: Any, *, eps: float = 1e-6, atol: float = 1e-5,
              rtol: float = 1e-3, raise_exception: bool = True, nondet_tol: float = 0.0,
              check_undefined_grad: bool = True, check_grad_dtypes: bool = False,
              check_batched_grad: bool = False, check_batched_forward_grad: bool = False,
              check_forward_ad: bool = False, check_backward_ad: bool = True,
              fast_mode: bool = False, masked: bool | None = None) -> bool:
    """Check ``func``'s gradients against finite differences (use float64 inputs).

    Args:
        func: takes the ``inputs`` and returns a tensor or a tuple of tensors. It is called
            with grad mode as it is (on, normally), as PyTorch calls it.
        inputs: a tensor or a tuple of arguments; tensors with ``requires_grad=True`` are checked.
        eps: the finite-difference step.
        atol, rtol: absolute and relative tolerance.
        raise_exception: raise :class:`GradcheckError` when a check fails (else return False).
        nondet_tol: how far two backward passes with the same inputs may differ.
        check_undefined_grad: check that backward copes with outputs that get no gradient.
        check_grad_dtypes: also fail when a gradient's dtype differs from its input's.
        fast_mode: compare ``vᵀ J u`` for random ``u``, ``v`` instead of whole Jacobians.
        check_batched_grad, check_batched_forward_grad, check_forward_ad: need ``vmap`` and
            forward-mode AD, which gradviz does not have: True raises ``NotImplementedError``.
        check_backward_ad: must stay True (the only mode gradviz has).
        masked: for sparse tensors in PyTorch; gradviz has none, so it changes nothing.

    Example:
        >>> import gradviz
        >>> x = gradviz.randn(3, dtype=gradviz.float64, requires_grad=True)
        >>> gradcheck(lambda t: (t * t).sum(), (x,))
        True
        >>> gradcheck(lambda t: (t * t).sum(), (x,), fast_mode=True)
        True
    """
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError(
            "Expected at least one of check_forward_ad or check_backward_ad to be True")
    if check_forward_ad or check_batched_forward_grad:
        raise NotImplementedError("gradcheck: gradviz has no forward-mode AD; call it with "
                                  "check_forward_ad=False and check_batched_forward_grad=False")
    if check_batched_grad:
        raise NotImplementedError("gradcheck: check_batched_grad needs vmap, which gradviz does "
                                  "not have; call it with check_batched_grad=False")
    try:
        tupled = _as_tuple(inputs)
        _check_inputs(tupled)
        func_out = func(*tupled)
        outputs = _differentiable_outputs(func_out)
        run = _fast_gradcheck if fast_mode else _slow_gradcheck
        run(func, tupled, func_out, outputs, eps, rtol, atol, nondet_tol, check_grad_dtypes)
        _test_backward_mul_by_grad_output(outputs, tupled)
        if check_undefined_grad:
            _test_undefined_backward_mode(func, outputs, tupled)
    except GradcheckError:
        if raise_exception:
            raise
        return False
    return True


def gradgradcheck(func: Callable[..., Any], inputs: Any, grad_outputs: Any = None, *,
                  eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
                  gen_non_contig_grad_outputs: bool = False, raise_exception: bool = True,
                  nondet_tol: float = 0.0, check_undefined_grad: bool = True,
                  check_grad_dtypes: bool = False, check_batched_grad: bool = False,
                  check_fwd_over_rev: bool = False, check_rev_over_rev: bool = True,
                  fast_mode: bool = False, masked: bool = False) -> bool:
    """Check second derivatives: :func:`gradcheck` of ``(inputs, v) -> vjp(func, v)``, the
    vector-Jacobian product computed with ``create_graph=True``.

    ``grad_outputs`` default to random tensors in [-1, 1) that require grad (so that the
    second derivative with respect to them is checked too); given ones are used as they are.
    ``gen_non_contig_grad_outputs`` changes nothing (gradviz's arrays are all contiguous).

    Example:
        >>> import gradviz
        >>> x = gradviz.randn(3, dtype=gradviz.float64, requires_grad=True)
        >>> gradgradcheck(lambda t: (t * t * t).sum(), (x,))
        True
    """
    from gradviz.autograd import grad

    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError(
            "Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True")
    tupled = _as_tuple(inputs)
    if grad_outputs is None:
        rng = np.random.default_rng()
        tupled_grads = tuple(
            Tensor._make(rng.uniform(-1, 1, o.shape).astype(
                o._data.dtype if o.dtype.is_floating_point else np.float64), True)
            for o in _differentiable_outputs(func(*tupled)))
    else:
        tupled_grads = _as_tuple(grad_outputs)
    n_grads = len(tupled_grads)
    diff_idx = {i for i, _ in _diff_inputs(tupled)}

    def vjp(*args: Any) -> tuple:
        xs = args[:-n_grads] if n_grads else args
        outputs = _differentiable_outputs(func(*xs))
        grads = grad(outputs, [x for i, x in enumerate(xs) if i in diff_idx],
                     list(args[len(xs):]), create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(vjp, tupled + tupled_grads, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, check_batched_grad=check_batched_grad,
                     fast_mode=fast_mode, check_forward_ad=check_fwd_over_rev,
                     check_backward_ad=check_rev_over_rev, masked=masked)
