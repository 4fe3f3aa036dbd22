"""tests/test_transformer.py against a live torch: every case records torch's whole graph with
torch's values and gradients, and the warnings, reprs and errors are torch's."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from _graphs import sig
from _parity import sibling

import gradviz

TR = sibling("test_transformer")


def _run(lib: Any, module: str, call: str) -> tuple[str, np.ndarray, dict[str, np.ndarray]]:
    m, out, e = TR.run(lib, module, call)
    (out * out).sum().backward()
    grads = {n: p.grad.numpy() for n, p in m.named_parameters()}
    grads["src"], grads["tgt"] = (None if e[k].grad is None else e[k].grad.numpy()
                                  for k in ("src", "tgt"))
    return sig(out), out.detach().numpy(), grads


@pytest.mark.parametrize(("name", "module", "call"), TR.CASES, ids=TR._IDS)
def test_graph_values_and_gradients_are_torchs(name: str, module: str, call: str) -> None:
    ours, theirs = _run(gradviz, module, call), _run(torch, module, call)
    assert ours[0] == theirs[0]
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-10, atol=1e-12)
    assert ours[2].keys() == theirs[2].keys()
    for key, g in ours[2].items():
        t = theirs[2][key]
        assert (g is None) == (t is None), key
        if g is not None:
            np.testing.assert_allclose(g, t, rtol=1e-8, atol=1e-10, err_msg=key)


@pytest.mark.parametrize(("args", "why"), TR.WARNINGS, ids=[w[0] for w in TR.WARNINGS])
def test_hard_coded_warnings_are_torchs(args: str, why: str | None) -> None:
    expected = [] if why is None else [
        f"enable_nested_tensor is True, but self.use_nested_tensor is False because {why}"]
    assert TR.encoder_warnings(torch, args) == expected


def test_reprs_and_parameter_names_are_torchs() -> None:
    for src in ("nn.TransformerEncoderLayer(8, 2, 16)", "nn.TransformerDecoderLayer(8, 2, 16)",
                "nn.Transformer(8, 2, 1, 2, 16, batch_first=True)",
                "nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, batch_first=True), "
                "3, norm=nn.LayerNorm(8))"):
        ours = eval(src, {"nn": gradviz.nn})  # noqa: S307
        theirs = eval(src, {"nn": torch.nn})  # noqa: S307
        assert repr(ours) == repr(theirs)
        assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == \
            [(n, tuple(p.shape)) for n, p in theirs.named_parameters()]


@pytest.mark.parametrize(("src", "kind", "message"), TR.ERRORS, ids=[e[0] for e in TR.ERRORS])
def test_hard_coded_errors_are_torchs(src: str, kind: type, message: str) -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(kind) as info:
            eval(src, {"nn": torch.nn, "gradviz": torch})  # noqa: S307
    assert str(info.value) == message


def test_the_generated_mask_is_torchs() -> None:
    for dtype in (None, "float64"):
        ours = gradviz.nn.Transformer.generate_square_subsequent_mask(
            4, dtype=None if dtype is None else getattr(gradviz, dtype))
        theirs = torch.nn.Transformer.generate_square_subsequent_mask(
            4, dtype=None if dtype is None else getattr(torch, dtype))
        assert ours.dtype.name == str(theirs.dtype)[6:]
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
