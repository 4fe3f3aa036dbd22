"""The usual cross-entropy / nll_loss call's shortcuts give the general formulas' numbers.

``_nll_backward``'s unit-weight shortcut (no weight, a reduction, nothing ignored) is compared
with the weighted formula fed all-ones weights (the same arithmetic, spelled per entry), and the
saved values of ``NllLossBackward0`` are checked as the general record keeps them.
"""

from __future__ import annotations

import numpy as np
import pytest

import gradviz
import gradviz.nn.functional as F


def _grad(logits: np.ndarray, target: np.ndarray, **kwargs: object) -> np.ndarray:
    x = gradviz.tensor(logits, requires_grad=True)
    F.cross_entropy(x, gradviz.tensor(target), **kwargs).backward()
    return x.grad.numpy()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("shape", [(5, 3), (3,)])
def test_unit_weight_shortcut_matches_weighted_formula(dtype, reduction, shape):
    rng = np.random.default_rng(1)
    logits = rng.standard_normal(shape).astype(dtype)
    target = rng.integers(0, shape[-1], shape[:-1])
    ones = gradviz.ones(shape[-1], dtype=gradviz.float32 if dtype == np.float32
                        else gradviz.float64)
    fast = _grad(logits, target, reduction=reduction)
    general = _grad(logits, target, reduction=reduction, weight=ones)
    assert fast.dtype == dtype
    np.testing.assert_array_equal(fast, general)


def test_ignored_targets_take_the_weighted_formula():
    logits = np.array([[1.0, 2.0, 0.5], [0.1, 0.2, 0.3], [2.0, -1.0, 0.0]])
    target = np.array([2, -100, 0])
    g = _grad(logits, target)
    # the ignored row gets nothing; the others share the mean over the two counted rows
    p = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    expected = p.copy()
    expected[[0, 2], [2, 0]] -= 1
    expected[1] = 0
    np.testing.assert_allclose(g, expected / 2, rtol=1e-12)


def test_reduction_none_keeps_per_row_gradients():
    logits = np.array([[1.0, 2.0], [0.5, -0.5]])
    x = gradviz.tensor(logits, requires_grad=True)
    F.nll_loss(x, gradviz.tensor([1, 0]), reduction="none").backward(gradviz.tensor([2.0, 3.0]))
    np.testing.assert_array_equal(x.grad.numpy(), [[0.0, -2.0], [-3.0, 0.0]])


def test_nll_node_saves_what_the_general_record_saves():
    x = gradviz.randn(4, 3, requires_grad=True)
    target = gradviz.tensor([0, 2, 1, 2])
    loss = F.cross_entropy(x, target)
    node = loss.grad_fn
    assert node.name() == "NllLossBackward0"
    # ignore_index=-100 read back as uint64, as in torch (NOTE [saved as given])
    assert node._saved_reduction == 1 and node._saved_ignore_index == 2**64 - 100
    assert node._saved_weight is None
    assert node._saved_target is target
    assert float(node._saved_total_weight) == 4.0
    assert node.next_functions[0][0].name() == "LogSoftmaxBackward0"
    # an attribute the row saves from a keyword without a default is the call's value
    out = F.nll_loss(x.log_softmax(1), target, reduction="sum", ignore_index=1)
    assert out.grad_fn._saved_reduction == 2 and out.grad_fn._saved_ignore_index == 1


@pytest.mark.parametrize("gshape, shape", [((5, 3), (3,)), ((2, 1), (1,)), ((1, 4), (4,)),
                                           ((3, 4), (1,)), ((2, 3, 4), (4,)), ((3, 4), (3, 1))])
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_bias_gradient_shortcut_is_sum_to(gshape, shape, dt):
    from gradviz.ops import _formula
    from gradviz.ops.dispatch import _unbroadcast

    g = np.random.default_rng(2).standard_normal(gshape).astype(np.float32)
    got = _unbroadcast(g, (shape, np.dtype(dt)))
    want = _formula.to_dtype(_formula.sum_to(g, shape), np.dtype(dt))
    assert got.shape == want.shape == shape and got.dtype == want.dtype == dt
    np.testing.assert_array_equal(got, want)


def test_linear_bias_gradient_is_the_row_sum():
    x = gradviz.randn(6, 4)
    lin = gradviz.nn.Linear(4, 3)
    g = gradviz.randn(6, 3)
    lin(x).backward(g)
    np.testing.assert_array_equal(lin.bias.grad.numpy(), g.numpy().sum(0))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("shape,dim", [((64, 10), 1), ((3, 4, 5), 0), ((7,), 0), ((2, 3), -1),
                                       ((0, 3), 1), ((), 0)])
def test_softmax_kernels_give_the_textbook_formulas_numbers(dtype, shape, dim):
    # The kernels reduce with the ufuncs and finish in place (NOTE [perf] in
    # _kernels/activations.py): the numbers, dtype and type must be those of the formula written
    # with np.amax and np.sum.
    from gradviz.ops import _kernels as K

    a = (np.random.default_rng(2).standard_normal(shape) * 5).astype(dtype)
    if a.size > 3:
        a.flat[1] = np.inf  # a row holding inf: nan, as the formula gives
    with np.errstate(all="ignore"):
        if a.size:
            s = a - np.amax(a, axis=dim, keepdims=True)
            log_sm = s - np.log(np.sum(np.exp(s), axis=dim, keepdims=True))
            e = np.exp(a - np.amax(a, axis=dim, keepdims=True))
            sm = e / np.sum(e, axis=dim, keepdims=True)
        else:
            log_sm = sm = a.copy()
        got_log, got = K.log_softmax(a, dim), K.softmax(a, dim)
    for want, have in ((log_sm, got_log), (sm, got)):
        assert type(have) is type(want) and np.result_type(have) == np.result_type(want)
        assert np.shape(have) == np.shape(want)
        np.testing.assert_array_equal(have, want)


def test_formula_sum_of_an_array_is_np_sum():
    from gradviz.ops import _formula as f

    g = np.random.default_rng(3).standard_normal((4, 5)).astype(np.float32)
    for dims, keep in (((1,), True), ((0, 1), False), ((), True)):
        have, want = f.sum(g, dims, keep), np.asarray(np.sum(g, axis=dims, keepdims=keep))
        assert have.dtype == want.dtype and have.shape == want.shape
        np.testing.assert_array_equal(have, want)
    assert f.sum(np.float32(2.0), (0,)) == 2.0  # a NumPy scalar: the np.sum spelling
