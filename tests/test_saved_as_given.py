"""Saved integer arguments read back as PyTorch's ``_saved_*`` shows them (NOTE [saved as given]
in gradviz/tensor.py): as the caller wrote them, a negative one as the unsigned 64-bit number it
is stored as; Scalar arguments signed; gradients unchanged. The expectations are torch 2.13's
(tests/parity/test_saved_as_given_parity.py derives them again from torch)."""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np
import pytest

import gradviz
from gradviz.tensor import _AsGiven, _wrap_dim

U = 2**64  # a negative saved integer -k reads back as U - k


def env(lib: Any) -> dict[str, Any]:
    """The names the cases use, for ``lib`` (gradviz or torch)."""
    lib.manual_seed(0)
    return {"x": lib.randn(4, 5, 6, requires_grad=True), "lib": lib,
            "F": lib.nn.functional, "t": lib.tensor([0, 1, 2])}


# (expression giving a tensor, the attribute of its grad_fn, what it reads back as)
CASES = [
    ("x.softmax(-1)", "_saved_dim", U - 1),
    ("x.softmax(2)", "_saved_dim", 2),
    ("x.sum(-1)", "_saved_dim", (U - 1,)),
    ("x.sum((-1, 0))", "_saved_dim", (U - 1, 0)),
    ("x.transpose(-2, -1)", "_saved_dim0", U - 2),
    ("x.transpose(-2, -1)", "_saved_dim1", U - 1),
    ("x.unsqueeze(-1)", "_saved_dim", U - 1),
    ("lib.cat([x, x], -1)", "_saved_dim", U - 1),
    ("lib.stack([x, x], -1)", "_saved_dim", U - 1),
    ("x.cumsum(dim=-2)", "_saved_dim", U - 2),
    ("x.max(-1).values", "_saved_dim", U - 1),
    ("x.split(2, -1)[0]", "_saved_dim", U - 1),
    ("x.permute(-1, 0, 1)", "_saved_dims", (U - 1, 0, 1)),
    ("x.movedim(-1, 0)", "_saved_dims", (2, 0, 1)),  # dims computed by movedim: as computed
    ("x.flip(-1)", "_saved_dims", (U - 1,)),
    ("x.select(0, -1)", "_saved_index", U - 1),
    ("x[-1]", "_saved_index", U - 1),
    ("x[:, -3:]", "_saved_start", U - 3),
    ("x[-3:-1]", "_saved_end", U - 1),
    ("x[-10:]", "_saved_start", U - 10),  # clamped for the kernel, saved as written
    ("x[1:3]", "_saved_start", 1),
    ("x.narrow(1, -3, 2)", "_saved_start", 2),  # narrow computes its start: as computed
    ("x.roll((1, -2), (0, -1))", "_saved_shifts", (1, U - 2)),
    ("x.roll((1, -2), (0, -1))", "_saved_dims", (0, U - 1)),
    ("F.pad(x, (-1, 1))", "_saved_pad", (U - 1, 1)),
    ("x[0].diagonal(-1)", "_saved_offset", U - 1),
    ("x.tril(-1)", "_saved_diagonal", U - 1),
    ("x[0, 0].diag(1)", "_saved_dim1", U - 2),  # diag_embed's default dims
    ("x[0, 0].diag(1)", "_saved_dim2", U - 1),
    ("F.nll_loss(x[0, :3].log_softmax(1), t)", "_saved_ignore_index", U - 100),
    ("F.embedding(t, x[0], padding_idx=-1)", "_saved_padding_idx", 4),  # made non-negative
    # Scalars read back signed.
    ("x.clone().add_(x, alpha=-2)", "_saved_alpha", -2),
    ("x.clamp(-2, -1)", "_saved_min", -2),
    ("F.leaky_relu(x, -2)", "_saved_negative_slope", -2),
    ("x.var(-1, correction=-1)", "_saved_correction", -1),
]


def saved(lib: Any, src: str, attr: str) -> Any:
    return getattr(eval(src, env(lib)).grad_fn, attr)  # noqa: S307


@pytest.mark.parametrize(("src", "attr", "expected"), CASES, ids=[f"{c[0]} {c[1]}" for c in CASES])
def test_saved_arguments_read_back_as_torch_shows_them(src: str, attr: str,
                                                       expected: Any) -> None:
    got = saved(gradviz, src, attr)
    assert got == expected
    assert type(got) is type(expected)  # plain ints, not the kernel's normalized values
    if isinstance(got, tuple):
        assert all(type(v) is int for v in got)


# (with negative arguments, the same with their non-negative equivalents)
SAME = [("x.sum((-1, 0))", "x.sum((2, 0))"), ("x[-3:-1]", "x[1:3]"),
        ("x.select(1, -2)", "x.select(1, 3)"), ("x.transpose(-2, -1)", "x.transpose(1, 2)"),
        ("x.softmax(-1)", "x.softmax(2)"), ("x.cumsum(-2)", "x.cumsum(1)"),
        ("lib.stack([x, x * 2], -1)", "lib.stack([x, x * 2], 3)"),
        ("x.roll((1, -2), (0, -1))", "x.roll((1, 4), (0, 2))"),
        ("x[0].diagonal(-1)", "x[0].diagonal(-1, 0, 1)")]


@pytest.mark.parametrize(("src", "positive"), SAME, ids=[c[0] for c in SAME])
def test_gradients_of_negative_arguments_are_those_of_the_positive_ones(src: str,
                                                                        positive: str) -> None:
    # The formulas read the normalized values: x.sum(-1) differentiates as x.sum(2).
    grads = []
    for expr in (src, positive):
        e = env(gradviz)
        out = eval(expr, e)  # noqa: S307
        w = np.arange(1.0, out.numel() + 1, dtype=np.float32).reshape(out.shape)
        (out * gradviz.tensor(w)).sum().backward()
        grads.append((out.detach().numpy(), e["x"].grad.numpy()))
    np.testing.assert_array_equal(grads[0][0], grads[1][0])
    np.testing.assert_array_equal(grads[0][1], grads[1][1])


def test_a_wrapped_dim_is_the_normalized_int_and_remembers_the_written_one() -> None:
    d = _wrap_dim(-1, 3)
    assert d == 2 and d.given == -1 and isinstance(d, int)
    assert [10, 20, 30][d] == 30 and d + 1 == 3 and f"{d}" == "2" and hash(d) == hash(2)
    assert type(_wrap_dim(1, 3)) is int  # a non-negative dim stays a plain int
    back = pickle.loads(pickle.dumps(_AsGiven(2, -1)))
    assert back == 2 and back.given == -1
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of "
                                         r"\[-3, 2\], but got -4\)"):
        _wrap_dim(-4, 3)


def test_the_trace_keeps_saved_integers_as_pytorch_shows_them() -> None:
    # What a trace shows is what the node's _saved_* shows, as a trace of real PyTorch does
    # (gradviz compare then reads the same numbers on both engines): dim=-1 as the uint64 it is
    # stored as, cross_entropy's ignore_index=-100 likewise.
    x = gradviz.randn(2, 3, 4, requires_grad=True)
    with gradviz.trace() as tr:
        y = x.softmax(-1)
        loss = gradviz.nn.functional.cross_entropy(y[0], gradviz.tensor([0, 1, 2]))
        loss.backward()
    saved = {(n.name, s.name): s.value for n in tr.nodes.values() for s in n.saved}
    assert saved["SoftmaxBackward0", "dim"] == {"const": 18446744073709551615}
    assert y.grad_fn._saved_dim == 18446744073709551615
    assert saved["NllLossBackward0", "ignore_index"] == {"const": 2**64 - 100}
    assert loss.grad_fn._saved_ignore_index == 2**64 - 100
    assert '"const": 18446744073709551615' in tr.to_json()
