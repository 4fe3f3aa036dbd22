"""The graphs gradviz builds for ``F.linear`` and the recurrent cells against torch 2.13's on the
CPU: node names, ``next_functions``, sequence numbers and the order the engine runs the nodes in.

The torch-free twins (tests/test_nn_functional.py, tests/test_rnn.py) write torch's answers out;
here each is derived again from torch, and gradviz is run beside it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from _graphs import execution_order
from _parity import sibling

import gradviz

NNF = sibling("test_nn_functional")
RNN = sibling("test_rnn")


def _numbered(lib: Any, make: Any) -> list:
    """``make(lib)``'s loss run backward: its nodes in the order run, numbered from the first
    number ``make`` took (a node made just before tells it)."""
    probe = lib.ones(1, dtype=lib.float64, requires_grad=True)
    first = (probe * 1).grad_fn._sequence_nr() + 1
    ran = execution_order(make(lib))
    return [(n, None if s is None else s - first, e) for n, s, e in ran]


def _linear(case: str) -> Any:
    x_shape, b_shape, _ = NNF.LINEAR_ORDERS[case]
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal(x_shape), rng.standard_normal((5, 3))
    b = None if b_shape is None else rng.standard_normal(b_shape)

    def make(lib: Any) -> Any:
        t = lib.tensor(x, requires_grad=True)
        W = lib.tensor(w, requires_grad=True)  # noqa: N806
        B = None if b is None else lib.tensor(b, requires_grad=True)  # noqa: N806
        return lib.nn.functional.linear(t, W, B).sum()
    return make


@pytest.mark.parametrize("case", sorted(NNF.LINEAR_ORDERS))
def test_linear_order_is_torchs(case: str) -> None:
    import torch

    theirs = _numbered(torch, _linear(case))
    assert theirs == NNF.LINEAR_ORDERS[case][2]  # the twin's written-out answer is torch's
    assert _numbered(gradviz, _linear(case)) == theirs


@pytest.mark.parametrize("shape", [(3,), (2, 2, 4, 3)])
def test_linear_order_is_torchs_for_1d_and_4d(shape: tuple) -> None:
    import torch

    rng = np.random.default_rng(2)
    x, w, b = rng.standard_normal(shape), rng.standard_normal((5, 3)), rng.standard_normal(5)

    def make(lib: Any, transpose: bool = False, bias: bool = True) -> Any:
        t = lib.tensor(x, requires_grad=True)
        t = t.transpose(0, 1) if transpose else t
        B = lib.tensor(b, requires_grad=True) if bias else None  # noqa: N806
        return lib.nn.functional.linear(t, lib.tensor(w, requires_grad=True), B).sum()

    variants = [dict(), dict(bias=False)] + ([dict(transpose=True)] if len(shape) > 1 else [])
    for kw in variants:
        def run(lib: Any, kw: dict = kw) -> Any:
            return make(lib, **kw)
        assert _numbered(gradviz, run) == _numbered(torch, run), kw


def _cell(kind: str, state: bool) -> Any:
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3))
    h0 = rng.standard_normal((2, 4))
    params: dict[str, np.ndarray] = {}

    def make(lib: Any) -> Any:
        cell = getattr(lib.nn, kind)(3, 4, dtype=lib.float64)
        if not params:  # torch's initial weights, given to both
            params.update({k: v.detach().numpy().copy() for k, v in cell.state_dict().items()})
        cell.load_state_dict({k: lib.tensor(v) for k, v in params.items()})
        t = lib.tensor(x, requires_grad=True)
        if kind == "LSTMCell":
            hc = (lib.tensor(h0, requires_grad=True), lib.tensor(h0 * 0.5)) if state else None
            h, c = cell(t, hc)
            return h.sum() + c.sum()
        return cell(t, lib.tensor(h0, requires_grad=True) if state else None).sum()
    return make


def test_lstm_cell_order_is_torchs() -> None:
    import torch

    make = _cell("LSTMCell", state=False)
    theirs = _numbered(torch, make)
    assert theirs == RNN.LSTM_CELL_ORDER
    assert _numbered(gradviz, make) == theirs


@pytest.mark.parametrize("kind", ["LSTMCell", "RNNCell", "GRUCell"])
def test_cell_with_a_state_order_is_torchs(kind: str) -> None:
    import torch

    make = _cell(kind, state=True)
    theirs, ours = _numbered(torch, make), _numbered(gradviz, make)
    if kind == "GRUCell":
        # ATen's GRUCell updates its gates in place, and each in-place mul_ saves a clone of its
        # input whose (unused) CloneBackward0 takes a number: the same nodes in the same order,
        # numbered with two gaps (docs/ops.md, "Where gradviz differs").
        def ranks(ran: list) -> list:
            order = sorted({s for _, s, _ in ran if s is not None})
            return [(n, None if s is None else order.index(s), e) for n, s, e in ran]
        theirs, ours = ranks(theirs), ranks(ours)
    assert ours == theirs
