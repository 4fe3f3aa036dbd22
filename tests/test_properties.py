"""Property tests: random compositions of ops are gradchecked, and backward obeys its algebra.

Hypothesis draws a *program* (a start shape and a list of steps: unary functions, binary ops with
a new operand of a broadcast-compatible shape, reductions, shape changes, matmuls); the program is
run on float64 leaves filled from a drawn seed and ``gradcheck``-ed. Values come from NumPy rather
than from hypothesis floats so that they stay away from kinks and poles (relu at 0, division by
~0) without filtering; domains are kept safe by construction (``log(t * t + 1)`` ...).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gradviz
from gradviz.autograd import grad, gradcheck, gradgradcheck

F64 = gradviz.float64
SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True,
                database=None)

Shape = tuple[int, ...]

# -- steps: each maps (current tensor, list of new operands) -> tensor -----------------------------
UNARY: dict[str, Callable[[Any], Any]] = {
    "neg": lambda t: -t,
    "tanh": lambda t: t.tanh(),
    "sigmoid": lambda t: t.sigmoid(),
    "exp(tanh)": lambda t: t.tanh().exp(),
    "relu": lambda t: t.relu(),
    "log(t*t+1)": lambda t: (t * t + 1).log(),
    "reciprocal(t*t+1)": lambda t: (t * t + 1).reciprocal(),
    "(t*t+0.5)**1.5": lambda t: (t * t + 0.5) ** 1.5,
    "t**2": lambda t: t ** 2,
    "2-t": lambda t: 2 - t,
    "t*3": lambda t: t * 3,
    "2/(t*t+1)": lambda t: 2 / (t * t + 1),
    "2**tanh(t)": lambda t: 2 ** t.tanh(),
    "t-0.5": lambda t: t - 0.5,
    "clone": lambda t: t.clone(),
}
BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "add": lambda t, o: t + o,
    "sub": lambda t, o: t - o,
    "rsub-order": lambda t, o: o - t,
    "mul": lambda t, o: t * o,
    "div": lambda t, o: t / (o * o + 0.5),
    "rdiv": lambda t, o: o / (t * t + 0.5),
    "pow": lambda t, o: (t * t + 0.5) ** o,
    "where": lambda t, o: gradviz.where(o > 0, t, o),
    "add alpha": lambda t, o: gradviz.add(t, o, alpha=-1.5),
    "inplace mul": lambda t, o: t.clone().mul_(o) if o.shape == t.shape or _bcasts_into(
        o.shape, t.shape) else t * o,
}


def _bcasts_into(small: Shape, big: Shape) -> bool:
    try:
        return np.broadcast_shapes(small, big) == tuple(big)
    except ValueError:
        return False


@st.composite
def bcast_shape(draw: st.DrawFn, shape: Shape) -> Shape:
    """A shape that broadcasts with ``shape`` (the result may also be larger than ``shape``)."""
    drop = draw(st.integers(0, len(shape)))
    out = tuple(1 if draw(st.booleans()) else n for n in shape[drop:])
    if drop == 0 and len(shape) < 3 and draw(st.integers(0, 4)) == 0:
        out = (draw(st.integers(2, 3)),) + out  # the result grows a leading dimension
    return out


def _wrapped(ndim: int, d: int) -> int:
    return d % ndim


@st.composite
def programs(draw: st.DrawFn, max_steps: int = 5) -> tuple[Shape, list[tuple]]:
    shape: Shape = tuple(draw(st.lists(st.integers(1, 3), min_size=0, max_size=3)))
    start = shape
    steps: list[tuple] = []
    for _ in range(draw(st.integers(1, max_steps))):
        kind = draw(st.sampled_from(["unary", "binary", "binary", "reduce", "shape", "matmul"]))
        if kind == "unary":
            steps.append(("unary", draw(st.sampled_from(sorted(UNARY)))))
        elif kind == "binary":
            other = draw(bcast_shape(shape))
            steps.append(("binary", draw(st.sampled_from(sorted(BINARY))), other))
            shape = tuple(np.broadcast_shapes(shape, other))
        elif kind == "reduce":
            fn = draw(st.sampled_from(["sum", "mean"]))
            if not shape or draw(st.integers(0, 3)) == 0:
                steps.append(("reduce", fn, None, False))
                shape = ()
            else:
                nd = len(shape)
                dims = draw(st.lists(st.integers(-nd, nd - 1), min_size=1, max_size=nd,
                                     unique_by=functools.partial(_wrapped, nd)))
                keep = draw(st.booleans())
                steps.append(("reduce", fn, tuple(dims), keep))
                norm = {d % len(shape) for d in dims}
                shape = tuple(1 if i in norm else n for i, n in enumerate(shape)) if keep else \
                    tuple(n for i, n in enumerate(shape) if i not in norm)
        elif kind == "shape":
            options = ["unsqueeze", "flatten"]
            if len(shape) >= 2:
                options += ["transpose", "permute", "reshape-T"]
            if len(shape) <= 2:
                options.append("t")
            if 1 in shape:
                options += ["squeeze", "expand"]
            op = draw(st.sampled_from(options))
            if op == "unsqueeze":
                d = draw(st.integers(-len(shape) - 1, len(shape)))
                steps.append(("shape", op, d))
                shape = tuple(np.expand_dims(np.zeros(shape), d).shape)
            elif op == "flatten":
                steps.append(("shape", op))
                shape = (int(np.prod(shape)),)
            elif op == "transpose":
                d0, d1 = draw(st.integers(0, len(shape) - 1)), draw(st.integers(0, len(shape) - 1))
                steps.append(("shape", op, d0, d1))
                s = list(shape)
                s[d0], s[d1] = s[d1], s[d0]
                shape = tuple(s)
            elif op == "permute":
                perm = tuple(draw(st.permutations(range(len(shape)))))
                steps.append(("shape", op, perm))
                shape = tuple(shape[p] for p in perm)
            elif op == "reshape-T":  # non-contiguous reshape: clone + _unsafe_view
                steps.append(("shape", op))
                shape = (int(np.prod(shape)),)
            elif op == "t":
                steps.append(("shape", op))
                shape = shape[::-1]
            elif op == "squeeze":
                d = draw(st.sampled_from([i for i, n in enumerate(shape) if n == 1] + [None]))
                steps.append(("shape", op, d))
                shape = tuple(np.squeeze(np.zeros(shape), d).shape) if d is not None else tuple(
                    n for n in shape if n != 1)
            else:  # expand a size-1 dimension
                d = draw(st.sampled_from([i for i, n in enumerate(shape) if n == 1]))
                size = list(shape)
                size[d] = draw(st.integers(2, 3))
                steps.append(("shape", op, tuple(size)))
                shape = tuple(size)
        else:  # matmul with a new operand
            if len(shape) not in (1, 2):
                continue
            k = shape[-1]
            # 2-D @ 1-D (mv) or 2-D @ 2-D (mm); 1-D @ 1-D (dot) or 1-D @ 2-D (squeeze_ of mm)
            other: Shape = (k,) if draw(st.booleans()) else (k, draw(st.integers(1, 3)))
            steps.append(("matmul", other))
            shape = (np.zeros(shape) @ np.zeros(other)).shape
    return start, steps


def operand_shapes(start: Shape, steps: list[tuple]) -> list[Shape]:
    return [start] + [s[2] for s in steps if s[0] == "binary"] + [
        s[1] for s in steps if s[0] == "matmul"]


def build(start: Shape, steps: list[tuple]) -> Callable[..., Any]:
    """The program as a function of its leaves (start tensor first, then operands in order)."""
    n_bin = sum(1 for s in steps if s[0] == "binary")

    def fn(x: Any, *operands: Any) -> Any:
        bins, mats = list(operands[:n_bin]), list(operands[n_bin:])
        t = x
        for step in steps:
            kind = step[0]
            if kind == "unary":
                t = UNARY[step[1]](t)
            elif kind == "binary":
                t = BINARY[step[1]](t, bins.pop(0))
            elif kind == "reduce":
                _, name, dims, keep = step
                t = getattr(t, name)() if dims is None else getattr(t, name)(dims, keepdim=keep)
            elif kind == "matmul":
                t = t @ mats.pop(0)
            else:
                t = _shape_step(t, step)
        return t

    return fn


def _shape_step(t: Any, step: tuple) -> Any:
    op = step[1]
    if op == "unsqueeze":
        return t.unsqueeze(step[2])
    if op == "flatten":
        return t.reshape(-1)
    if op == "transpose":
        return t.transpose(step[2], step[3])
    if op == "permute":
        return t.permute(*step[2])
    if op == "reshape-T":
        return t.transpose(0, 1).reshape(-1)
    if op == "t":
        return t.t()
    if op == "squeeze":
        return t.squeeze() if step[2] is None else t.squeeze(step[2])
    return t.expand(*step[2])


def leaves(shapes: list[Shape], seed: int) -> list[gradviz.Tensor]:
    rng = np.random.default_rng(seed)
    out = []
    for s in shapes:
        # |value| in [0.1, 1]: away from relu's kink and from where's switch point.
        mag = rng.uniform(0.1, 1.0, s)
        sign = np.where(rng.random(s) < 0.5, -1.0, 1.0)
        out.append(gradviz.tensor(mag * sign, dtype=F64, requires_grad=True))
    return out


# -- properties ------------------------------------------------------------------------------------
@settings(max_examples=40, **SETTINGS)
@given(prog=programs(), seed=st.integers(0, 2**32 - 1))
def test_random_programs_gradcheck(prog: tuple, seed: int) -> None:
    start, steps = prog
    fn = build(start, steps)
    inputs = leaves(operand_shapes(start, steps), seed)
    out = fn(*inputs)
    assert out.dtype is F64
    assert gradcheck(fn, inputs, eps=1e-6, atol=1e-6, rtol=1e-4)


@settings(max_examples=15, **SETTINGS)
@given(prog=programs(max_steps=3), seed=st.integers(0, 2**32 - 1))
def test_random_programs_gradgradcheck(prog: tuple, seed: int) -> None:
    start, steps = prog
    fn = build(start, steps)
    inputs = leaves(operand_shapes(start, steps), seed)
    assert gradgradcheck(fn, inputs, atol=1e-5, rtol=1e-3)


shapes = st.lists(st.integers(1, 4), min_size=0, max_size=3).map(tuple)


@settings(max_examples=30, **SETTINGS)
@given(shape=shapes, seed=st.integers(0, 2**32 - 1))
def test_grad_of_sum_is_ones_and_of_mean_is_one_over_n(shape: Shape, seed: int) -> None:
    (x,) = leaves([shape], seed)
    x.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.ones(shape))
    x.grad = None
    x.mean().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full(shape, 1 / max(x.numel(), 1)))
    # The gradients of a sum add up to the number of elements, whatever the path.
    x.grad = None
    (x * 1).sum().backward()
    assert float(x.grad.sum()) == x.numel()


@settings(max_examples=30, **SETTINGS)
@given(shape=shapes.filter(lambda s: len(s) > 0), data=st.data(), seed=st.integers(0, 2**31))
def test_broadcast_gradient_sums_over_broadcast_dims(shape: Shape, data: st.DataObject,
                                                     seed: int) -> None:
    small = data.draw(bcast_shape(shape))
    x, y = leaves([shape, small], seed)
    (x + y).sum().backward()
    out_shape = np.broadcast_shapes(shape, small)
    want = np.ones(out_shape).sum(axis=tuple(range(len(out_shape) - len(small))))
    want = want.sum(axis=tuple(i for i, n in enumerate(small) if n == 1), keepdims=True)
    np.testing.assert_array_equal(y.grad.numpy(), want.reshape(small))
    assert y.grad.shape == small


@settings(max_examples=30, **SETTINGS)
@given(prog=programs(max_steps=4), seed=st.integers(0, 2**32 - 1),
       a=st.floats(-3, 3), b=st.floats(-3, 3))
def test_backward_is_linear_in_the_gradient(prog: tuple, seed: int, a: float, b: float) -> None:
    start, steps = prog
    fn = build(start, steps)
    inputs = leaves(operand_shapes(start, steps), seed)
    out = fn(*inputs)
    rng = np.random.default_rng(seed)
    g1 = gradviz.tensor(rng.standard_normal(out.shape), dtype=F64)
    g2 = gradviz.tensor(rng.standard_normal(out.shape), dtype=F64)
    r1 = grad(out, inputs, g1, retain_graph=True, allow_unused=True)
    r2 = grad(out, inputs, g2, retain_graph=True, allow_unused=True)
    r12 = grad(out, inputs, a * g1 + b * g2, allow_unused=True)
    for x, u, v, w in zip(inputs, r1, r2, r12, strict=True):
        if w is None:
            assert u is None and v is None
            continue
        assert w.shape == x.shape and w.dtype is F64
        np.testing.assert_allclose(w.numpy(), a * u.numpy() + b * v.numpy(), rtol=1e-9,
                                   atol=1e-9)


@settings(max_examples=20, **SETTINGS)
@given(prog=programs(max_steps=4), seed=st.integers(0, 2**32 - 1))
def test_create_graph_gives_the_same_gradients(prog: tuple, seed: int) -> None:
    """The formulas run on tensors (create_graph) and on arrays must agree."""
    start, steps = prog
    fn = build(start, steps)
    inputs = leaves(operand_shapes(start, steps), seed)
    out = fn(*inputs).sum()
    plain = grad(out, inputs, retain_graph=True, allow_unused=True)
    graphed = grad(out, inputs, create_graph=True, allow_unused=True)
    for p, g in zip(plain, graphed, strict=True):
        assert (p is None) == (g is None)
        if p is not None:
            np.testing.assert_allclose(g.detach().numpy(), p.numpy(), rtol=1e-12, atol=1e-12)


@settings(max_examples=20, **SETTINGS)
@given(prog=programs(max_steps=4), seed=st.integers(0, 2**32 - 1))
def test_backward_twice_accumulates(prog: tuple, seed: int) -> None:
    start, steps = prog
    fn = build(start, steps)
    inputs = leaves(operand_shapes(start, steps), seed)
    out = fn(*inputs).sum()
    out.backward(retain_graph=True)
    first = [None if x.grad is None else x.grad.numpy().copy() for x in inputs]
    out.backward()
    for x, g in zip(inputs, first, strict=True):
        if g is not None:
            np.testing.assert_allclose(x.grad.numpy(), 2 * g, rtol=1e-12, atol=0)
