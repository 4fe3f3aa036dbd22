"""gradviz's recurrent layers against torch.nn's on the CPU, in float64.

With the weights copied from a torch module, the outputs, the final states, the input's gradient
and every parameter's gradient agree (rtol 1e-6), and so does the backward graph node by node, up
to the difference docs/ops.md lists (``TransposeBackward0`` for the ``transpose_`` RNN and GRU
apply to a batch-first output).
Parameter names, shapes, reprs and the init range are compared too.

torch is imported inside the tests (see conftest.py for how a missing torch is handled).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pytest

import gradviz
from gradviz import nn

CELLS = ["RNNCell", "LSTMCell", "GRUCell"]
SEQUENCES = ["RNN", "LSTM", "GRU"]


def _flat(out: Any) -> list[Any]:
    """Outputs as a flat list: ``h``, ``(h, c)``, ``(out, h)`` or ``(out, (h, c))``."""
    if not isinstance(out, tuple):
        return [out]
    return [t for o in out for t in (o if isinstance(o, tuple) else (o,))]


def _graph(root: Any) -> list[tuple[str | None, tuple]]:
    """Every node reachable from ``root`` (breadth first, in ``next_functions`` order) with the
    names and input numbers of its next functions, in gradviz's spelling."""
    def name(node: Any) -> str | None:
        if node is None:
            return None
        return node.name().replace("TransposeBackward1", "TransposeBackward0")

    out, seen, queue = [], set(), [root]
    while queue:
        node = queue.pop(0)
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        out.append((name(node), tuple((name(n), i) for n, i in node.next_functions)))
        queue += [n for n, _ in node.next_functions]
    return out


def _pair(kind: str, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
    """The same layer in torch and gradviz (float64), gradviz's weights copied from torch's."""
    import torch

    theirs = getattr(torch.nn, kind)(*args, **kwargs, dtype=torch.float64)
    ours = getattr(nn, kind)(*args, **kwargs, dtype=gradviz.float64)
    ours.load_state_dict({k: gradviz.tensor(v.detach().numpy())
                          for k, v in theirs.state_dict().items()})
    return theirs, ours


def _compare(kind: str, args: tuple, kwargs: dict, x_shape: tuple, hx_shapes: list | None,
             seed: int) -> None:
    import torch

    theirs, ours = _pair(kind, *args, **kwargs)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(x_shape)
    tx, gx = torch.tensor(x, requires_grad=True), gradviz.tensor(x, requires_grad=True)
    t_in: list[Any] = [tx]
    g_in: list[Any] = [gx]
    if hx_shapes is not None:
        hs = [rng.standard_normal(s) for s in hx_shapes]
        th = [torch.tensor(h, requires_grad=True) for h in hs]
        gh = [gradviz.tensor(h, requires_grad=True) for h in hs]
        t_in.append(tuple(th) if len(hs) == 2 else th[0])
        g_in.append(tuple(gh) if len(hs) == 2 else gh[0])
    t_out, g_out = _flat(theirs(*t_in)), _flat(ours(*g_in))
    assert len(t_out) == len(g_out)
    for a, b in zip(t_out, g_out):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-6,
                                   atol=1e-12)
    weights = [rng.standard_normal(tuple(a.shape)) for a in t_out]
    sum((a * torch.tensor(w)).sum() for a, w in zip(t_out, weights)).backward()
    sum((b * gradviz.tensor(w)).sum() for b, w in zip(g_out, weights)).backward()
    leaves = [(tx, gx)]
    if hx_shapes is not None:
        leaves += list(zip(th, gh))
    for a, b in leaves:
        np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=1e-6, atol=1e-12)
    ours_params = dict(ours.named_parameters())
    for name, p in theirs.named_parameters():
        np.testing.assert_allclose(ours_params[name].grad.numpy(), p.grad.numpy(), rtol=1e-6,
                                   atol=1e-12, err_msg=name)
    for a, b in zip(t_out, g_out):
        assert _graph(b.grad_fn) == _graph(a.grad_fn)


@pytest.mark.parametrize("kind", CELLS)
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("with_hx", [True, False])
def test_cells_match_torch(kind: str, bias: bool, batched: bool, with_hx: bool) -> None:
    lead = (3,) if batched else ()
    hx = None
    if with_hx:
        hx = [lead + (4,)] * (2 if kind == "LSTMCell" else 1)
    _compare(kind, (5, 4), {"bias": bias}, lead + (5,), hx, seed=1)


def test_relu_rnn_cell_matches_torch() -> None:
    _compare("RNNCell", (5, 4), {"nonlinearity": "relu"}, (3, 5), [(3, 4)], seed=2)


@pytest.mark.parametrize("kind", SEQUENCES)
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_sequences_match_torch(kind: str, batch_first: bool, bidirectional: bool) -> None:
    T, N, F, H, L = 6, 3, 5, 4, 2
    D = 2 if bidirectional else 1
    x_shape = (N, T, F) if batch_first else (T, N, F)
    hx = [(L * D, N, H)] * (2 if kind == "LSTM" else 1)
    kwargs = {"num_layers": L, "batch_first": batch_first, "bidirectional": bidirectional}
    _compare(kind, (F, H), kwargs, x_shape, hx, seed=3)
    _compare(kind, (F, H), kwargs, x_shape, None, seed=4)


@pytest.mark.parametrize("kind", SEQUENCES)
@pytest.mark.parametrize("batch_first", [False, True])
def test_unbatched_sequences_match_torch(kind: str, batch_first: bool) -> None:
    kwargs = {"num_layers": 2, "batch_first": batch_first}
    _compare(kind, (5, 4), kwargs, (6, 5), [(2, 4)] * (2 if kind == "LSTM" else 1), seed=5)
    _compare(kind, (5, 4), {"bias": False}, (6, 5), None, seed=6)


def test_relu_rnn_matches_torch() -> None:
    _compare("RNN", (5, 4), {"nonlinearity": "relu", "num_layers": 3}, (6, 2, 5), None, seed=7)


def test_dropout_in_eval_mode_matches_torch() -> None:
    import torch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs, ours = _pair("GRU", 5, 4, num_layers=2, dropout=0.5)
    theirs.eval()
    ours.eval()
    x = np.random.default_rng(8).standard_normal((6, 2, 5))
    np.testing.assert_allclose(ours(gradviz.tensor(x))[0].detach().numpy(),
                               theirs(torch.tensor(x))[0].detach().numpy(), rtol=1e-6)


def _all_layers(lib_nn: Any) -> list[Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [
            lib_nn.RNNCell(3, 4), lib_nn.RNNCell(3, 4, bias=False, nonlinearity="relu"),
            lib_nn.LSTMCell(3, 4), lib_nn.GRUCell(3, 4, bias=False),
            lib_nn.RNN(3, 4), lib_nn.RNN(3, 4, nonlinearity="relu", dropout=0.5),
            lib_nn.LSTM(10, 20, num_layers=2, batch_first=True),
            lib_nn.LSTM(3, 4, bias=False, bidirectional=True, num_layers=3),
            lib_nn.GRU(3, 4, num_layers=2, dropout=0.25, bidirectional=True),
        ]


def test_reprs_and_parameters_match_torch() -> None:
    import torch

    for ours, theirs in zip(_all_layers(nn), _all_layers(torch.nn)):
        assert repr(ours) == repr(theirs)
        assert list(ours.state_dict()) == list(theirs.state_dict())
        assert ([(n, tuple(p.shape)) for n, p in ours.named_parameters()]
                == [(n, tuple(p.shape)) for n, p in theirs.named_parameters()])
    assert repr(nn.Sequential(*_all_layers(nn))) == repr(torch.nn.Sequential(
        *_all_layers(torch.nn)))


def test_init_ranges_match_torch() -> None:
    import torch

    for ours, theirs in zip(_all_layers(nn), _all_layers(torch.nn)):
        bound = 1 / math.sqrt(theirs.hidden_size)
        for (name, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
            for t in (p.detach().numpy(), q.detach().numpy()):
                assert t.min() >= -bound and t.max() <= bound, name
            assert p.dtype.name == str(q.dtype).removeprefix("torch.")


def test_error_texts_match_torch() -> None:
    import torch

    calls = [
        lambda lib: lib.nn.LSTMCell(3, 4)(lib.randn(2, 5)),
        lambda lib: lib.nn.GRUCell(3, 4)(lib.randn(2, 3), lib.randn(2, 5)),
        lambda lib: lib.nn.RNNCell(3, 4)(lib.randn(2, 3, 3)),
        lambda lib: lib.nn.LSTM(3, 4)(lib.randn(2, 2, 5)),
        lambda lib: lib.nn.GRU(3, 4)(lib.randn(2, 2, 3), lib.randn(1, 3, 4)),
        lambda lib: lib.nn.RNN(3, 4)(lib.randn(2, 2, 3), lib.randn(2, 4)),
        lambda lib: lib.nn.LSTM(3, 4)(lib.randn(2, 3), (lib.randn(1, 2, 4), lib.randn(1, 2, 4))),
        lambda lib: lib.nn.GRU(3, 4)(lib.randn(3)),
        lambda lib: lib.nn.RNN(3, 4)(lib.randn(3)),
        lambda lib: lib.nn.GRU(3, 4)(lib.randn(2, 3), lib.randn(1, 1, 4)),
        lambda lib: lib.nn.LSTMCell(3, 4)(lib.randn(2, 3), (lib.randn(3, 4), lib.randn(2, 4))),
        lambda lib: lib.nn.LSTMCell(3, 4)(lib.randn(2, 3), (lib.randn(2, 4), lib.randn(2, 5))),
        lambda lib: lib.nn.RNN(3, 4, nonlinearity="gelu"),
    ]
    for call in calls:
        with pytest.raises(Exception) as theirs:
            call(torch)
        with pytest.raises(Exception) as ours:
            call(gradviz)
        assert (type(ours.value), str(ours.value)) == (type(theirs.value), str(theirs.value))
