"""gradviz.autograd.functional: jacobian, hessian, vjp, jvp, vhp, hvp as torch 2.13 computes
them (values, shapes, tuple structure, detaching, strict mode and error texts). The parity
suite (tests/parity/test_autograd_functional_parity.py) runs CASES on torch too."""

from __future__ import annotations

import numpy as np
import pytest

import gradviz
from gradviz.autograd import functional as AF

# (source, what torch 2.13 gives: repr of the result, or "Error: text"). Names: the functions,
# ``m`` the library, x = [1., 2.] (float32), y a (2, 3) float64 matrix.
CASES = [
    ("jacobian(lambda t: t ** 2, x)", "tensor([[2., 0.],\n        [0., 4.]])"),
    ("jacobian(lambda t: t.sum(), m.tensor(3.))", "tensor(1.)"),
    ("jacobian(lambda t: t ** 2, x, create_graph=True)",
     "tensor([[2., 0.],\n        [0., 4.]], grad_fn=<ViewBackward0>)"),
    ("jacobian(lambda t: m.ones(2), x)", "tensor([[0., 0.],\n        [0., 0.]])"),
    ("jacobian(lambda a, b: (a * b, a + b), (x, x))[1][0]",
     "tensor([[1., 0.],\n        [0., 1.]])"),
    ("hessian(lambda t: (t ** 3).sum(), x)", "tensor([[ 6.,  0.],\n        [ 0., 12.]])"),
    ("hessian(lambda a, b: (a * b).sum(), (x, x))[0][1]",
     "tensor([[1., 0.],\n        [0., 1.]])"),
    ("vjp(lambda t: t ** 2, x, m.ones(2))", "(tensor([1., 4.]), tensor([2., 4.]))"),
    ("vjp(lambda t: (t ** 2).sum(), x)", "(tensor(5.), tensor([2., 4.]))"),
    ("jvp(lambda t: t ** 2, x, m.ones(2))", "(tensor([1., 4.]), tensor([2., 4.]))"),
    ("hvp(lambda t: (t ** 3).sum(), x, m.ones(2))", "(tensor(9.), tensor([ 6., 12.]))"),
    ("vhp(lambda t: (t ** 3).sum(), x, m.ones(2))", "(tensor(9.), tensor([ 6., 12.]))"),
    ("jacobian(lambda t: 3, x)",
     "TypeError: The outputs of the user-provided function given to jacobian must be either a "
     "Tensor or a tuple of Tensors but the given outputs of the user-provided function has type "
     "<class 'int'>."),
    ("jacobian(lambda t: t ** 2, [1., 2.])",
     "TypeError: The inputs given to jacobian must be either a Tensor or a tuple of Tensors but "
     "the given inputs has type <class 'list'>."),
    ("jacobian(lambda t: t ** 2, (x, 3))",
     "TypeError: The inputs given to jacobian must be either a Tensor or a tuple of Tensors but "
     "the value at index 1 has type <class 'int'>."),
    ("jacobian(lambda t: m.ones(2), x, strict=True)",
     "RuntimeError: Output 0 of the user-provided function does not require gradients. The "
     "outputs must be computed in a differentiable manner from the input when running in strict "
     "mode."),
    ("jacobian(lambda a, b: a.sum(), (x, x), strict=True)",
     "RuntimeError: Output 0 of the user-provided function is independent of input 1. This is "
     "not allowed in strict mode."),
    ("jacobian(lambda t: t[:0], x)", "RuntimeError: stack expects a non-empty TensorList"),
    ("jacobian(lambda t: t ** 2, x, strategy='bad')",
     "AssertionError: Expected strategy to be either \"forward-mode\" or \"reverse-mode\". Hint: "
     "If your function has more outputs than inputs, \"forward-mode\" tends to be more "
     "performant. Otherwise, prefer to use \"reverse-mode\"."),
    ("hessian(lambda t: t ** 3, x)",
     "RuntimeError: The Tensor returned by the function given to hessian should contain a single "
     "element"),
    ("hessian(lambda t: ((t ** 3).sum(), t.sum()), x)",
     "RuntimeError: The function given to hessian should return a single Tensor"),
    ("hessian(lambda a: a.sum(), x, strict=True)",
     "RuntimeError: While computing the hessian, found that the jacobian of the user-provided "
     "function with respect to input 0 is independent of the input. This is not allowed in "
     "strict mode. You should ensure that your function is twice differentiable and that the "
     "jacobian depends on the inputs (this would be violated by a linear function for "
     "example)."),
    ("vjp(lambda t: t ** 2, x)",
     "RuntimeError: The vector v can only be None if the user-provided function returns a "
     "single Tensor with a single element."),
    ("vjp(lambda t: t ** 2, x, m.ones(3))",
     "RuntimeError: v has invalid size: should be T.Size([2]) but got T.Size([3])."),
    ("vjp(lambda a, b: a.sum(), (x, x), strict=True)",
     "RuntimeError: The output of the user-provided function is independent of input 1. This is "
     "not allowed in strict mode."),
    ("jvp(lambda t: t ** 2, x)",
     "RuntimeError: The vector v can only be None if the input to the user-provided function is "
     "a single Tensor with a single element."),
    ("jvp(lambda a: a * 2, x, (x, x))",
     "RuntimeError: The given v should contain a single Tensor."),
    ("jvp(lambda a: a * 2, (x,), (x, x))",
     "RuntimeError: v is a tuple of invalid length: should be 1 but got 2."),
    ("hvp(lambda t: t ** 3, x, m.ones(2))",
     "RuntimeError: The Tensor returned by the function given to hvp should contain a single "
     "element"),
]


def run(src: str, m) -> str:
    """What ``src`` gives with library ``m`` (gradviz or torch), as CASES spells it."""
    functional = __import__(f"{m.__name__}.autograd.functional", fromlist=["jacobian"])
    names = {k: getattr(functional, k) for k in AF.__all__}
    names.update(m=m, x=m.tensor([1.0, 2.0]))
    try:
        out = repr(eval(src, names))  # noqa: S307 - sources above
    except Exception as e:  # noqa: BLE001 - the error is what is compared
        out = f"{type(e).__name__}: {e}"
    return out.replace(f"{m.__name__}.", "T.")


@pytest.mark.parametrize(("src", "expected"), CASES, ids=[c[0] for c in CASES])
def test_cases(src: str, expected: str) -> None:
    assert run(src, gradviz) == expected


def _y() -> gradviz.Tensor:
    return gradviz.tensor([[0.3, -1.2, 0.8], [1.5, 0.1, -0.4]], dtype=gradviz.float64)


def _numeric_jacobian(f, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    out = f(x)
    jac = np.zeros(out.shape + x.shape)
    for idx in np.ndindex(*x.shape):
        step = np.zeros_like(x)
        step[idx] = eps
        jac[(...,) + idx] = (f(x + step) - f(x - step)) / (2 * eps)
    return jac


def test_jacobian_and_hessian_match_finite_differences() -> None:
    y = _y()

    def f(t):
        return (t.exp() @ t.T).tanh()

    jac = AF.jacobian(f, y)
    assert jac.shape == (2, 2, 2, 3) and jac.dtype is gradviz.float64 and not jac.requires_grad
    numeric = _numeric_jacobian(lambda a: np.tanh(np.exp(a) @ a.T), y.numpy())
    np.testing.assert_allclose(jac.numpy(), numeric, rtol=1e-6, atol=1e-8)

    def g(t):
        return (t.sin() * t).sum()

    hess = AF.hessian(g, y)
    assert hess.shape == (2, 3, 2, 3)
    grad_of = lambda a: np.sin(a) + a * np.cos(a)  # noqa: E731 - g's gradient
    np.testing.assert_allclose(hess.numpy(), _numeric_jacobian(grad_of, y.numpy()),
                               rtol=1e-6, atol=1e-8)


def test_products_agree_with_the_full_matrices() -> None:
    y, v = _y(), gradviz.tensor([[1.0, 0.5, -2.0], [0.25, 3.0, 1.0]], dtype=gradviz.float64)
    u = gradviz.tensor([[0.7, -1.0], [2.0, 0.5]], dtype=gradviz.float64)

    def f(t):
        return (t.exp() @ t.T).tanh()

    jac = AF.jacobian(f, y).numpy().reshape(4, 6)
    _, jv = AF.jvp(f, y, v)
    _, uj = AF.vjp(f, y, u)
    np.testing.assert_allclose(jv.numpy().reshape(4), jac @ v.numpy().reshape(6), rtol=1e-10)
    np.testing.assert_allclose(uj.numpy().reshape(6), u.numpy().reshape(4) @ jac, rtol=1e-10)

    def g(t):
        return (t.exp() * t.cos()).sum()

    hess = AF.hessian(g, y).numpy().reshape(6, 6)
    value, hv = AF.hvp(g, y, v)
    _, vh = AF.vhp(g, y, v)
    assert value.item() == pytest.approx(float((np.exp(y.numpy()) * np.cos(y.numpy())).sum()))
    np.testing.assert_allclose(hv.numpy().reshape(6), hess @ v.numpy().reshape(6), rtol=1e-10)
    np.testing.assert_allclose(vh.numpy().reshape(6), v.numpy().reshape(6) @ hess, rtol=1e-10)


def test_tuples_of_inputs_and_outputs_nest_as_in_torch() -> None:
    a, b = gradviz.tensor([1.0, 2.0]), gradviz.tensor([3.0, 4.0, 5.0])
    jac = AF.jacobian(lambda p, q: (p.sum() * q, p * 2), (a, b))
    assert [[tuple(t.shape) for t in row] for row in jac] == [[(3, 2), (3, 3)], [(2, 2), (2, 3)]]
    hess = AF.hessian(lambda p, q: p.sum() * q.sum(), (a, b))
    assert [[tuple(t.shape) for t in row] for row in hess] == [[(2, 2), (2, 3)], [(3, 2), (3, 3)]]
    assert hess[0][1].tolist() == [[1.0] * 3] * 2 and hess[0][0].tolist() == [[0.0] * 2] * 2


def test_inputs_are_left_alone_and_results_keep_a_graph_only_when_asked() -> None:
    x = gradviz.tensor([1.0, 2.0], requires_grad=True)
    jac = AF.jacobian(lambda t: t ** 3, x)
    assert x.grad is None and not jac.requires_grad
    jac = AF.jacobian(lambda t: t ** 3, x, create_graph=True)
    assert jac.requires_grad
    jac.sum().backward()  # d/dx of sum(3x^2 on the diagonal) = 6x
    assert x.grad.tolist() == [6.0, 12.0]


def test_forward_mode_is_refused_with_a_clear_message() -> None:
    with pytest.raises(NotImplementedError, match="no forward-mode AD"):
        AF.jacobian(lambda t: t * 2, gradviz.ones(2), strategy="forward-mode", vectorize=True)


def test_reached_as_an_attribute_as_in_torch() -> None:
    assert gradviz.autograd.functional.jacobian is AF.jacobian


# autograd.grad(is_grads_batched=True): (source, torch 2.13's result or error)
BATCHED = [
    ("m.autograd.grad(x * 2, x, grad_outputs=m.eye(2), is_grads_batched=True)",
     "(tensor([[2., 0.],\n        [0., 2.]]),)"),
    ("m.autograd.grad(x * 2, [x, w], grad_outputs=m.eye(2), is_grads_batched=True, "
     "allow_unused=True)", "(tensor([[2., 0.],\n        [0., 2.]]), None)"),
    ("m.autograd.grad(x * 2, [x, w], grad_outputs=m.eye(2), is_grads_batched=True, "
     "materialize_grads=True)[1]", "tensor([0.])"),
    ("m.autograd.grad(x * x, x, grad_outputs=m.eye(2), is_grads_batched=True)[0].tolist()",
     "[[2.0, 0.0], [0.0, 4.0]]"),
    ("m.autograd.grad(x * 2, x, grad_outputs=m.ones(2), is_grads_batched=True)",
     "RuntimeError: If `is_grads_batched=True`, we interpret the first dimension of each "
     "grad_output as the batch dimension. The sizes of the remaining dimensions are expected to "
     "match the shape of corresponding output, but a mismatch was detected: grad_output[0] has a "
     "shape of T.Size([]) and output[0] has a shape of T.Size([2]). If you only want some "
     "tensors in `grad_output` to be considered batched, consider using vmap."),
]


def run_batched(src: str, m) -> str:
    names = {"m": m, "x": m.tensor([1.0, 2.0], requires_grad=True),
             "w": m.tensor([3.0], requires_grad=True)}
    try:
        out = repr(eval(src, names))  # noqa: S307 - sources above
    except Exception as e:  # noqa: BLE001 - the error is what is compared
        out = f"{type(e).__name__}: {e}"
    return out.replace(f"{m.__name__}.", "T.")


@pytest.mark.parametrize(("src", "expected"), BATCHED, ids=[c[0] for c in BATCHED])
def test_batched_grad_outputs(src: str, expected: str) -> None:
    assert run_batched(src, gradviz) == expected


def test_batched_grad_is_one_backward_run_per_vector_and_keeps_the_graph_until_the_last() -> None:
    x = gradviz.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    with gradviz.trace() as tr:
        gradviz.autograd.grad(y, x, grad_outputs=gradviz.eye(2), is_grads_batched=True)
    assert len(tr.runs) == 2
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        gradviz.autograd.grad(y, x, grad_outputs=gradviz.ones(2))
