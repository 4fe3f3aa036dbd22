"""The sorting, selection and shape ops of tests/test_ops_select_more.py against a live torch:
every expectation hard-coded there is re-derived from torch 2.13, and every new row of the
derivative table is run sample by sample next to torch's function of the same op (values,
gradients, node name, ``_saved_*`` names and values).

Known, deliberate differences, handled explicitly:
* shape errors: gradviz appends the op and the shapes to torch's text, so torch's text must be
  the start of gradviz's.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
from _graphs import sig
from _parity import sibling

import gradviz
from gradviz.ops import OPS
from gradviz.ops.dispatch import dispatch

SEL = sibling("test_ops_select_more")


@pytest.mark.parametrize(("src", "expected"), SEL.VALUES, ids=[c[0] for c in SEL.VALUES])
def test_hard_coded_values_are_torchs(src: str, expected: Any) -> None:
    assert SEL.describe(eval(src, SEL.env(torch))) == expected  # noqa: S307


@pytest.mark.parametrize(("src", "expected"), SEL.GRADS, ids=[c[0] for c in SEL.GRADS])
def test_hard_coded_gradients_are_torchs(src: str, expected: Any) -> None:
    assert SEL.grad_of(torch, src) == expected


@pytest.mark.parametrize(("src", "node", "values"), SEL.NODES, ids=[c[0] for c in SEL.NODES])
def test_hard_coded_nodes_are_torchs(src: str, node: str, values: dict[str, Any]) -> None:
    # Negative ints read back as uint64 in both (NOTE [saved as given] in gradviz/tensor.py).
    name, saved = SEL.node_of(torch, src)
    assert name == node
    assert saved == values


@pytest.mark.parametrize(("src", "expected"), SEL.GRAPHS, ids=[c[0] for c in SEL.GRAPHS])
def test_hard_coded_graphs_are_torchs(src: str, expected: str) -> None:
    assert sig(eval(src, SEL.env(torch))) == expected  # noqa: S307


@pytest.mark.parametrize(("src", "expected"), SEL.ERRORS, ids=[c[0] for c in SEL.ERRORS])
def test_hard_coded_errors_are_torchs(src: str, expected: tuple[str, str]) -> None:
    kind, text = SEL.error_of(torch, src)
    assert kind == expected[0]
    assert expected[1] == text or expected[1].startswith(text + " ("), text


def test_unsorted_topk_holds_torchs_elements() -> None:
    x = np.random.default_rng(4).normal(size=(3, 9))
    for largest in (True, False):
        ours = gradviz.tensor(x).topk(4, 1, largest, False)
        theirs = torch.tensor(x).topk(4, 1, largest, False)
        for a, b in ((ours.values, theirs.values), (ours.indices, theirs.indices)):
            np.testing.assert_array_equal(np.sort(a.numpy(), 1), np.sort(b.numpy(), 1))


def test_cumprod_second_derivative_at_zeros_is_torchs() -> None:
    assert SEL.cumprod_second_derivative(torch) == SEL.CUMPROD_SECOND


# -- every new row, sample by sample, next to torch's own function --------------------------------
def _torch_calls() -> dict[str, Callable[..., Any]]:
    return {
        "topk": torch.topk, "sort": torch.sort, "sort_stable": torch.sort,
        "kthvalue": torch.kthvalue, "median": torch.median, "median_dim": torch.median,
        "nanmedian": torch.nanmedian, "nanmedian_dim": torch.nanmedian,
        "cumprod": torch.cumprod, "cummax": torch.cummax, "cummin": torch.cummin,
        "tril": torch.tril, "triu": torch.triu, "diagonal": torch.diagonal,
        "diagonal_copy": torch.diagonal_copy, "diag_embed": torch.diag_embed,
        "diagonal_backward": torch.ops.aten.diagonal_backward,
        "roll": torch.roll, "masked_select": torch.masked_select, "take": torch.take,
        "linalg_cross": torch.linalg.cross,
    }


ROWS = ["topk", "sort", "sort_stable", "kthvalue", "median", "median_dim", "nanmedian",
        "nanmedian_dim", "cumprod", "cummax", "cummin", "tril", "triu", "diagonal",
        "diagonal_copy", "diag_embed", "diagonal_backward", "roll", "masked_select", "take",
        "linalg_cross"]


def _to_torch(v: Any, requires_grad: bool) -> Any:
    if isinstance(v, gradviz.Tensor):
        t = torch.tensor(v.detach().numpy())
        return t.requires_grad_(True) if requires_grad and v.requires_grad else t
    return v


def _first(out: Any) -> Any:
    return out[0] if isinstance(out, tuple) else out


@pytest.mark.parametrize("name", ROWS)
def test_new_rows_match_torch_sample_by_sample(name: str) -> None:
    op = OPS[name]
    assert op.samples
    for sample in op.samples:
        args, kwargs = sample.build(np.random.default_rng(zlib.crc32(name.encode())))
        targs = [_to_torch(a, True) for a in args]
        grads_of = [(a, t) for a, t in zip(args, targs, strict=True)
                    if isinstance(a, gradviz.Tensor) and a.requires_grad]
        tkwargs = {k: _to_torch(v, False) for k, v in kwargs.items()}
        out, tout = dispatch(op, *args, **kwargs), _torch_calls()[name](*targs, **tkwargs)
        for a, b in zip(out if isinstance(out, tuple) else (out,),
                        tout if isinstance(tout, tuple) else (tout,), strict=True):
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12)
            assert str(a.dtype)[8:] == str(b.dtype)[6:]
        o, to = _first(out), _first(tout)
        assert o.grad_fn.name() == to.grad_fn.name()
        ours, theirs = SEL.saved(o.grad_fn, gradviz), SEL.saved(to.grad_fn, torch)
        assert sorted(ours) == sorted(theirs)
        assert ours == theirs
        w = np.arange(1.0, o.numel() + 1).reshape(tuple(o.shape))
        (o * gradviz.tensor(w)).sum().backward()
        (to * torch.tensor(w)).sum().backward()
        for a, t in grads_of:
            np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=1e-12, atol=1e-12)


# The rows the opsselect branch added. They sat under one "-- more ops (opsselect)" seam in
# derivatives.py; they now live with their categories (gradviz/ops/derivatives/reductions.py,
# shape.py, linalg.py, indexing.py), so they are named here.
OPSSELECT_ROWS = ("topk", "sort", "sort_stable", "kthvalue", "median", "median_dim", "nanmedian",
                  "nanmedian_dim", "cumprod", "cummax", "cummin", "tril", "triu", "diagonal",
                  "diagonal_copy", "diagonal_backward", "diag_embed", "roll", "linalg_cross",
                  "masked_select", "take", "nonzero")


def test_every_opsselect_row_is_compared() -> None:
    """Every row of the opsselect branch that has samples is listed in ROWS."""
    assert sorted(n for n in OPSSELECT_ROWS if OPS[n].samples) == sorted(ROWS)
