"""gradviz.nn.utils (clip_grad_norm_, clip_grad_value_, parameters_to_vector,
vector_to_parameters) and nn.init's orthogonal_, dirac_, sparse_, as torch 2.13 has them.
tests/parity/test_nn_utils_parity.py runs PROGRAM on torch and compares."""

from __future__ import annotations

import numpy as np
import pytest

import gradviz
from gradviz import nn
from gradviz.nn import init


def program(m) -> list:
    """Gradient clipping and flattening with library ``m`` (gradviz or torch)."""
    U = m.nn.utils
    out: list = []

    def fresh():
        ps = [m.nn.Parameter(m.tensor([3.0, 4.0])), m.nn.Parameter(m.tensor([12.0]))]
        ps[0].grad, ps[1].grad = m.tensor([3.0, 4.0]), m.tensor([12.0])
        return ps

    for norm_type, max_norm in ((2.0, 1.0), (2.0, 100.0), ("inf", 1.0), (1, 1.0), (0.5, 2.0)):
        ps = fresh()
        total = U.clip_grad_norm_(ps, max_norm, norm_type=norm_type)
        out.append((round(total.item(), 4), str(total.dtype)[-7:],
                    [round(v, 4) for p in ps for v in p.grad.tolist()]))
    out.append(U.clip_grad_norm_([], 1.0).item())
    p = m.nn.Parameter(m.ones(2))
    out.append((U.clip_grad_norm_(p, 1.0).item(), p.grad))
    p.grad = m.tensor([float("nan"), 1.0])
    try:
        U.clip_grad_norm_(p, 1.0, error_if_nonfinite=True)
    except RuntimeError as e:
        out.append(str(e))
    q = m.nn.Parameter(m.tensor([1.0, -5.0, 3.0]))
    q.grad = m.tensor([1.0, -5.0, 3.0])
    out.append((U.clip_grad_value_(q, 2.0), q.grad.tolist()))
    ps = fresh()
    vec = U.parameters_to_vector(ps)
    out.append((vec.tolist(), vec.requires_grad, type(vec.grad_fn).__name__))
    U.vector_to_parameters(m.tensor([1.0, 2.0, 3.0]), ps)
    out.append([p.tolist() for p in ps])
    try:
        U.vector_to_parameters([1, 2], ps)
    except TypeError as e:
        out.append(str(e).replace("gradviz.", "torch."))
    for call in (lambda: m.nn.init.orthogonal_(m.empty(3)),
                 lambda: m.nn.init.dirac_(m.empty(2, 2)),
                 lambda: m.nn.init.dirac_(m.empty(3, 2, 3), groups=2),
                 lambda: m.nn.init.sparse_(m.empty(2, 2, 2), 0.5)):
        try:
            call()
        except ValueError as e:
            out.append(str(e))
    out.append(m.nn.init.dirac_(m.empty(4, 2, 3), groups=2).tolist())
    return out


EXPECTED = [  # torch 2.13
    (13.0, "float32", [0.2308, 0.3077, 0.9231]),
    (13.0, "float32", [3.0, 4.0, 12.0]),
    (12.0, "float32", [0.25, 0.3333, 1.0]),
    (19.0, "float32", [0.1579, 0.2105, 0.6316]),
    (51.7846, "float32", [0.1159, 0.1545, 0.4635]),
    0.0,
    (0.0, None),
    "The total norm of order 2.0 for gradients from `parameters` is non-finite, so it cannot be "
    "clipped. To disable this error and scale the gradients by the non-finite norm anyway, set "
    "`error_if_nonfinite=False`",
    (None, [1.0, -2.0, 2.0]),
    ([3.0, 4.0, 12.0], True, "CatBackward0"),
    [[1.0, 2.0], [3.0]],
    "expected torch.Tensor, but got: list",
    "Only tensors with 2 or more dimensions are supported",
    "Only tensors with 3, 4, or 5 dimensions are supported",
    "dim 0 must be divisible by groups",
    "Only tensors with 2 dimensions are supported",
    [[[0.0, 1.0, 0.0], [0.0, 0.0, 0.0]], [[0.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
     [[0.0, 1.0, 0.0], [0.0, 0.0, 0.0]], [[0.0, 0.0, 0.0], [0.0, 1.0, 0.0]]],
]


def test_program_gives_torchs_results() -> None:
    assert program(gradviz) == EXPECTED


def test_clipping_float64_gradients_keeps_their_dtype_and_bumps_their_version() -> None:
    w = nn.Parameter(gradviz.ones(3, dtype=gradviz.float64))
    w.grad = gradviz.full((3,), 4.0, dtype=gradviz.float64)
    before = w.grad._version
    total = nn.utils.clip_grad_norm_([w], 1.0)
    assert total.dtype is gradviz.float64 and total.item() == pytest.approx(48 ** 0.5)
    assert w.grad._version == before + 1
    assert np.linalg.norm(w.grad.numpy()) == pytest.approx(1.0, rel=1e-5)


@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (4, 2, 3)])
def test_orthogonal_rows_or_columns_are_orthonormal(shape) -> None:
    gradviz.manual_seed(0)
    w = init.orthogonal_(gradviz.empty(*shape), gain=2.0).numpy().reshape(shape[0], -1)
    small = min(w.shape)
    gram = w @ w.T if w.shape[0] == small else w.T @ w
    np.testing.assert_allclose(gram, 4.0 * np.eye(small), atol=1e-5)


def test_sparse_zeroes_the_same_count_in_every_column() -> None:
    gradviz.manual_seed(1)
    w = init.sparse_(gradviz.empty(10, 4), sparsity=0.25, std=0.5)
    assert (w == 0).sum(0).tolist() == [3, 3, 3, 3]  # ceil(0.25 * 10)
    assert w.abs().max().item() > 0.05  # the others drawn with std 0.5
