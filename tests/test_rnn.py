"""Recurrent layers: shapes, gradients against finite differences, the graph of a step, names.

Expected graphs, reprs and error texts were taken from torch 2.13 on the CPU (the live comparison
is tests/parity/test_rnn_parity.py); this file never imports torch.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from _graphs import execution_order, graph_nodes, sig

import gradviz
from gradviz import nn
from gradviz.autograd import gradcheck


@pytest.fixture(autouse=True)
def _seed() -> None:
    gradviz.manual_seed(0)


F64 = gradviz.float64


def _rand(*shape: int, grad: bool = True) -> gradviz.Tensor:
    return gradviz.randn(*shape, dtype=F64, requires_grad=grad)


# -- shapes ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("cls", [nn.RNN, nn.LSTM, nn.GRU])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("num_layers", [1, 3])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_sequence_shapes(cls: type, batch_first: bool, num_layers: int,
                         bidirectional: bool) -> None:
    T, N, F, H = 5, 2, 3, 4
    D = 2 if bidirectional else 1
    m = cls(F, H, num_layers=num_layers, batch_first=batch_first, bidirectional=bidirectional)
    x = gradviz.randn(N, T, F) if batch_first else gradviz.randn(T, N, F)
    out, hidden = m(x)
    assert out.shape == ((N, T, D * H) if batch_first else (T, N, D * H))
    states = hidden if cls is nn.LSTM else (hidden,)
    for s in states:
        assert s.shape == (num_layers * D, N, H)
    # Unbatched: (T, F) in, (T, D*H) out, states (num_layers*D, H), whatever batch_first says.
    out, hidden = m(gradviz.randn(T, F))
    assert out.shape == (T, D * H)
    for s in (hidden if cls is nn.LSTM else (hidden,)):
        assert s.shape == (num_layers * D, H)


def test_sequence_output_is_last_layer_states_and_h_n_last_step() -> None:
    m = nn.LSTM(3, 4, num_layers=2, batch_first=True)
    out, (h, c) = m(gradviz.randn(2, 6, 3))
    np.testing.assert_allclose(out[:, -1].detach().numpy(), h[-1].detach().numpy())
    gru = nn.GRU(3, 4, bidirectional=True)
    out, h = gru(gradviz.randn(6, 2, 3))
    # The forward direction ends at the last step, the reverse one at the first.
    np.testing.assert_allclose(out[-1, :, :4].detach().numpy(), h[0].detach().numpy())
    np.testing.assert_allclose(out[0, :, 4:].detach().numpy(), h[1].detach().numpy())


def test_unbatched_equals_batch_of_one() -> None:
    m = nn.GRU(3, 4, num_layers=2)
    x, h0 = gradviz.randn(5, 3), gradviz.randn(2, 4)
    out, h = m(x, h0)
    out_b, h_b = m(x.unsqueeze(1), h0.unsqueeze(1))
    np.testing.assert_allclose(out.detach().numpy(), out_b[:, 0].detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(h.detach().numpy(), h_b[:, 0].detach().numpy(), rtol=1e-6)


def test_sequence_equals_cells_stepped_by_hand() -> None:
    lstm = nn.LSTM(3, 4, dtype=F64)
    cell = nn.LSTMCell(3, 4, dtype=F64)
    cell.load_state_dict({k[:-3]: v for k, v in lstm.state_dict().items()})
    x = gradviz.randn(6, 2, 3, dtype=F64)
    out, (h, c) = lstm(x)
    hc = None
    for t in range(6):
        hc = cell(x[t], hc)
        np.testing.assert_allclose(out[t].detach().numpy(), hc[0].detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(c[0].detach().numpy(), hc[1].detach().numpy(), rtol=1e-12)


@pytest.mark.parametrize("cls", [nn.RNNCell, nn.LSTMCell, nn.GRUCell])
def test_cell_shapes(cls: type) -> None:
    cell = cls(3, 5)
    out = cell(gradviz.randn(4, 3))
    for o in (out if cls is nn.LSTMCell else (out,)):
        assert o.shape == (4, 5)
    out = cell(gradviz.randn(3))
    for o in (out if cls is nn.LSTMCell else (out,)):
        assert o.shape == (5,)


def test_dropout_between_layers_only_in_training() -> None:
    m = nn.RNN(3, 4, num_layers=2, dropout=0.5)
    x = gradviz.randn(5, 2, 3)
    m.eval()
    a, _ = m(x)
    b, _ = m(x)
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    m.train()
    c, _ = m(x)
    assert not np.allclose(a.detach().numpy(), c.detach().numpy())


# -- gradients -------------------------------------------------------------------------------------
@pytest.mark.parametrize("kw", [{}, {"bias": False}, {"nonlinearity": "relu"}])
def test_rnn_cell_gradcheck(kw: dict) -> None:
    cell = nn.RNNCell(3, 2, dtype=F64, **kw)
    x, h = _rand(2, 3), _rand(2, 2)
    assert gradcheck(lambda x, h, *p: cell(x, h), (x, h, *cell.parameters()))


@pytest.mark.parametrize("bias", [True, False])
def test_lstm_cell_gradcheck(bias: bool) -> None:
    cell = nn.LSTMCell(3, 2, bias=bias, dtype=F64)
    x, h, c = _rand(2, 3), _rand(2, 2), _rand(2, 2)
    assert gradcheck(lambda x, h, c, *p: cell(x, (h, c)), (x, h, c, *cell.parameters()))


@pytest.mark.parametrize("bias", [True, False])
def test_gru_cell_gradcheck(bias: bool) -> None:
    cell = nn.GRUCell(3, 2, bias=bias, dtype=F64)
    x, h = _rand(2, 3), _rand(2, 2)
    assert gradcheck(lambda x, h, *p: cell(x, h), (x, h, *cell.parameters()))


@pytest.mark.parametrize("cls", [nn.RNN, nn.LSTM, nn.GRU])
def test_sequence_gradcheck(cls: type) -> None:
    m = cls(2, 2, num_layers=2, batch_first=True, bidirectional=True, dtype=F64)
    x = _rand(1, 3, 2)
    assert gradcheck(lambda x, *p: m(x)[0], (x, *m.parameters()))


# -- the graph of one step -------------------------------------------------------------------------
# Both projections: linear(hx, w_hh, b_hh) first, then linear(input, w_ih, b_ih), summed.
_GATES = ("AddBackward0(AddmmBackward0(Acc, Acc, TBackward0(Acc)), "
          "AddmmBackward0(Acc, Acc, TBackward0(Acc)))")
_SPLIT = f"UnsafeSplitBackward0({_GATES})"  # ATen's CPU cells cut the gates with unsafe_chunk
_C = (f"AddBackward0(MulBackward0(SigmoidBackward0({_SPLIT}), Acc), "
      f"MulBackward0(SigmoidBackward0({_SPLIT}), TanhBackward0({_SPLIT})))")


def test_rnn_cell_step_graph() -> None:
    x, h = _rand(2, 3), _rand(2, 4)
    assert sig(nn.RNNCell(3, 4, dtype=F64)(x, h)) == f"TanhBackward0({_GATES})"
    assert sig(nn.RNNCell(3, 4, nonlinearity="relu", dtype=F64)(x, h)) == f"ReluBackward0({_GATES})"
    mm = "MmBackward0(Acc, TBackward0(Acc))"
    assert sig(nn.RNNCell(3, 4, bias=False, dtype=F64)(x, h)) == (
        f"TanhBackward0(AddBackward0({mm}, {mm}))")


def test_lstm_cell_step_graph() -> None:
    cell = nn.LSTMCell(3, 4, dtype=F64)
    x, h, c = _rand(2, 3), _rand(2, 4), _rand(2, 4)
    hy, cy = cell(x, (h, c))
    assert sig(cy) == _C
    assert sig(hy) == f"MulBackward0(SigmoidBackward0({_SPLIT}), TanhBackward0({_C}))"
    # The four gates are the four outputs of one split node, in PyTorch's order i, f, g, o.
    split = hy.grad_fn.next_functions[0][0].next_functions[0][0]
    assert split.name() == "UnsafeSplitBackward0"
    assert (split._saved_split_size, split._saved_dim) == (4, 1)
    tanh_c = hy.grad_fn.next_functions[1][0]
    add_c = tanh_c.next_functions[0][0]
    ingate_mul, forget_mul = add_c.next_functions[1][0], add_c.next_functions[0][0]
    assert [(n.next_functions[0][1]) for n in (
        ingate_mul.next_functions[0][0], forget_mul.next_functions[0][0],
        ingate_mul.next_functions[1][0], hy.grad_fn.next_functions[0][0])] == [0, 1, 2, 3]


# What torch 2.13's CPU LSTMCell records and its engine runs for `h, c = cell(x)` and
# `(h.sum() + c.sum()).backward()` (tests/parity/test_engine_order_parity.py compares with torch):
# (name, sequence_nr counted from the cell's first node, next_functions), in the order run.
_ACC = ("AccumulateGrad", None, ())
LSTM_CELL_ORDER = [
    ("AddBackward0", 17, (("SumBackward0", 0), ("SumBackward0", 0))),
    ("SumBackward0", 16, (("AddBackward0", 0),)),
    ("SumBackward0", 15, (("MulBackward0", 0),)),
    ("MulBackward0", 14, (("SigmoidBackward0", 0), ("TanhBackward0", 0))),  # hy = o * tanh(cy)
    ("TanhBackward0", 13, (("AddBackward0", 0),)),
    ("AddBackward0", 12, (("MulBackward0", 0), ("MulBackward0", 0))),  # cy = f * cx + i * g
    ("MulBackward0", 11, (("SigmoidBackward0", 0), ("TanhBackward0", 0))),
    ("MulBackward0", 10, (("SigmoidBackward0", 0), (None, 0))),  # cx: zeros, no gradient
    ("SigmoidBackward0", 9, (("UnsafeSplitBackward0", 3),)),
    ("TanhBackward0", 8, (("UnsafeSplitBackward0", 2),)),
    ("SigmoidBackward0", 7, (("UnsafeSplitBackward0", 1),)),
    ("SigmoidBackward0", 6, (("UnsafeSplitBackward0", 0),)),
    ("UnsafeSplitBackward0", 5, (("AddBackward0", 0),)),
    ("AddBackward0", 4, (("AddmmBackward0", 0), ("AddmmBackward0", 0))),
    ("AddmmBackward0", 3, (("AccumulateGrad", 0), ("AccumulateGrad", 0), ("TBackward0", 0))),
    _ACC, _ACC, ("TBackward0", 2, (("AccumulateGrad", 0),)), _ACC,  # the input projection
    ("AddmmBackward0", 1, (("AccumulateGrad", 0), (None, 0), ("TBackward0", 0))),  # hx: zeros
    _ACC, ("TBackward0", 0, (("AccumulateGrad", 0),)), _ACC,
]


def test_lstm_cell_runs_its_nodes_in_pytorchs_order() -> None:
    cell = nn.LSTMCell(3, 4, dtype=F64)
    x = _rand(2, 3)
    first = (x * 1).grad_fn._sequence_nr() + 1  # the cell's first node takes the next number
    h, c = cell(x)
    ran = execution_order(h.sum() + c.sum())
    assert [(n, None if s is None else s - first, e) for n, s, e in ran] == LSTM_CELL_ORDER


def test_unsafe_chunk_pieces_are_not_views() -> None:
    x = _rand(2, 8)
    pieces = gradviz.unsafe_chunk(x * 1, 4, 1)
    node = pieces[0].grad_fn
    assert node.name() == "UnsafeSplitBackward0" and all(p.grad_fn is node for p in pieces)
    assert [p.output_nr for p in pieces] == [0, 1, 2, 3]
    assert (node._saved_split_size, node._saved_dim, node._saved_self_sym_sizes) == (2, 1, (2, 8))
    assert not any(p._is_view() for p in pieces) and pieces[1]._base is None
    (pieces[1] * 2).sum().backward()  # the pieces not used get zeros
    np.testing.assert_array_equal(x.grad.numpy(), np.tile([0, 0, 2, 2, 0, 0, 0, 0], (2, 1)))
    assert [p.shape[1] for p in gradviz.unsafe_split_with_sizes(x, [3, 5], 1)] == [3, 5]


def test_gru_cell_step_graph() -> None:
    x, h = _rand(2, 3), _rand(2, 4)
    ih = "UnsafeSplitBackward0(AddmmBackward0(Acc, Acc, TBackward0(Acc)))"
    hh = ih  # both projections are split into r, z, n before they are added
    r = z = f"SigmoidBackward0(AddBackward0({hh}, {ih}))"
    n = f"TanhBackward0(AddBackward0({ih}, MulBackward0({hh}, {r})))"
    assert sig(nn.GRUCell(3, 4, dtype=F64)(x, h)) == (
        f"AddBackward0(MulBackward0(SubBackward0(Acc, {n}), {z}), {n})")


def test_unbatched_cell_graph_unsqueezes_and_squeezes() -> None:
    hy = nn.RNNCell(3, 4, dtype=F64)(_rand(3))
    assert sig(hy).startswith("SqueezeBackward1(TanhBackward0(AddBackward0(AddmmBackward0(Acc, "
                              "None, TBackward0(Acc)), AddmmBackward0(Acc, UnsqueezeBackward0(")


def test_sequence_graph_one_projection_per_layer() -> None:
    m = nn.GRU(3, 4)
    out, _ = m(gradviz.randn(7, 2, 3))
    assert out.grad_fn.name() == "StackBackward0"
    assert len(out.grad_fn.next_functions) == 7
    names = [node.name() for node in graph_nodes(out)]
    # One addmm for the whole input projection (viewed back and unbound), one per step for hx.
    assert names.count("AddmmBackward0") == 1 + 7
    assert names.count("UnbindBackward0") == 1 and names.count("ViewBackward0") == 1


# -- names, state_dict, repr, init, errors ---------------------------------------------------------
def test_cell_parameters() -> None:
    cell = nn.LSTMCell(3, 5)
    assert [(k, v.shape) for k, v in cell.state_dict().items()] == [
        ("weight_ih", (20, 3)), ("weight_hh", (20, 5)), ("bias_ih", (20,)), ("bias_hh", (20,))]
    assert list(nn.GRUCell(3, 5, bias=False).state_dict()) == ["weight_ih", "weight_hh"]
    assert nn.GRUCell(3, 5).weight_ih.shape == (15, 3)
    assert nn.RNNCell(3, 5, bias=False).bias_ih is None


def test_sequence_state_dict_keys() -> None:
    m = nn.LSTM(3, 5, num_layers=2, bidirectional=True)
    assert [(k, v.shape) for k, v in m.state_dict().items()] == [
        ("weight_ih_l0", (20, 3)), ("weight_hh_l0", (20, 5)), ("bias_ih_l0", (20,)),
        ("bias_hh_l0", (20,)), ("weight_ih_l0_reverse", (20, 3)),
        ("weight_hh_l0_reverse", (20, 5)), ("bias_ih_l0_reverse", (20,)),
        ("bias_hh_l0_reverse", (20,)), ("weight_ih_l1", (20, 10)), ("weight_hh_l1", (20, 5)),
        ("bias_ih_l1", (20,)), ("bias_hh_l1", (20,)), ("weight_ih_l1_reverse", (20, 10)),
        ("weight_hh_l1_reverse", (20, 5)), ("bias_ih_l1_reverse", (20,)),
        ("bias_hh_l1_reverse", (20,))]
    assert list(nn.GRU(3, 5, num_layers=2, bias=False).state_dict()) == [
        "weight_ih_l0", "weight_hh_l0", "weight_ih_l1", "weight_hh_l1"]
    assert [len(w) for w in nn.RNN(2, 3, num_layers=2).all_weights] == [4, 4]


def test_reprs() -> None:
    assert repr(nn.LSTM(10, 20, num_layers=2, batch_first=True)) == (
        "LSTM(10, 20, num_layers=2, batch_first=True)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert repr(nn.RNN(3, 4, bias=False, dropout=0.5, bidirectional=True,
                           nonlinearity="relu")) == (
            "RNN(3, 4, bias=False, dropout=0.5, bidirectional=True)")
    assert repr(nn.GRU(3, 4)) == "GRU(3, 4)"
    assert repr(nn.LSTMCell(3, 4)) == "LSTMCell(3, 4)"
    assert repr(nn.RNNCell(3, 4, bias=False, nonlinearity="relu")) == (
        "RNNCell(3, 4, bias=False, nonlinearity=relu)")
    assert repr(nn.Sequential(nn.GRUCell(3, 4))) == "Sequential(\n  (0): GRUCell(3, 4)\n)"


@pytest.mark.parametrize("make", [lambda: nn.GRU(7, 16, num_layers=2), lambda: nn.LSTMCell(7, 16)])
def test_init_bounds(make: object) -> None:
    m = make()  # type: ignore[operator]
    bound = 1 / math.sqrt(16)
    values = np.concatenate([p.detach().numpy().ravel() for p in m.parameters()])
    assert values.min() >= -bound and values.max() <= bound
    assert values.min() < -0.9 * bound and values.max() > 0.9 * bound  # fills the range


@pytest.mark.parametrize(("call", "exc", "text"), [
    (lambda: nn.LSTMCell(3, 4)(gradviz.randn(2, 5)), RuntimeError,
     "input has inconsistent input_size: got 5 expected 3"),
    (lambda: nn.LSTMCell(3, 4)(gradviz.randn(2, 3), (gradviz.randn(3, 4), gradviz.randn(2, 4))),
     RuntimeError, "Input batch size 2 doesn't match hidden0 batch size 3"),
    (lambda: nn.GRUCell(3, 4)(gradviz.randn(2, 3), gradviz.randn(2, 5)), RuntimeError,
     "hidden0 has inconsistent hidden_size: got 5, expected 4"),
    (lambda: nn.RNNCell(3, 4)(gradviz.randn(2, 3, 3)), ValueError,
     "RNNCell: Expected input to be 1D or 2D, got 3D instead"),
    (lambda: nn.RNNCell(3, 4, nonlinearity="x")(gradviz.randn(2, 3)), RuntimeError,
     "Unknown nonlinearity: x"),
    (lambda: nn.LSTM(3, 4)(gradviz.randn(2, 2, 5)), RuntimeError,
     "input.size(-1) must be equal to input_size. Expected 3, got 5"),
    (lambda: nn.GRU(3, 4)(gradviz.randn(2, 2, 3), gradviz.randn(1, 3, 4)), RuntimeError,
     "Expected hidden size (1, 2, 4), got [1, 3, 4]"),
    (lambda: nn.LSTM(3, 4)(gradviz.randn(2, 2, 3), (gradviz.randn(1, 2, 4),
                                                    gradviz.randn(2, 2, 4))),
     RuntimeError, "Expected hidden[1] size (1, 2, 4), got [2, 2, 4]"),
    (lambda: nn.RNN(3, 4, nonlinearity="x"), ValueError,
     "Unknown nonlinearity 'x'. Select from 'tanh' or 'relu'."),
    (lambda: nn.RNN(3, 4)(gradviz.randn(2, 2, 3), gradviz.randn(2, 4)), RuntimeError,
     "For batched 3-D input, hx should also be 3-D but got 2-D tensor"),
    (lambda: nn.LSTM(3, 4)(gradviz.randn(2, 3), (gradviz.randn(1, 2, 4), gradviz.randn(1, 2, 4))),
     RuntimeError, "For unbatched 2-D input, hx and cx should also be 2-D but got (3-D, 3-D) "
     "tensors"),
    (lambda: nn.GRU(3, 4)(gradviz.randn(3)), ValueError,
     "GRU: Expected input to be 2D or 3D, got 1D instead"),
    (lambda: nn.LSTM(3, 0), ValueError, "hidden_size must be greater than zero"),
])
def test_errors(call: object, exc: type, text: str) -> None:
    with pytest.raises(exc) as info:
        call()  # type: ignore[operator]
    assert str(info.value) == text


def test_dropout_with_one_layer_warns() -> None:
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        nn.GRU(3, 4, dropout=0.2)
