"""tests/test_legacy_api.py's checks run on torch: its hard-coded expectations are torch's."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from _parity import sibling

import gradviz

LEGACY = sibling("test_legacy_api")


@pytest.mark.parametrize("check", LEGACY.CHECKS, ids=[c.__name__ for c in LEGACY.CHECKS])
def test_torch_does_what_the_checks_expect(check) -> None:
    check(torch)


def test_torchs_module_inplace_functions_exist_for_gradvizs_inplace_methods() -> None:
    names = [n for n in dir(torch) if n.endswith("_") and not n.startswith("_")
             and hasattr(gradviz.Tensor, n)]
    assert len(names) >= 45
    assert [n for n in names if not hasattr(gradviz, n)] == []
    x = gradviz.tensor([0.5, 0.25])
    for name in names:
        if name not in ("fill_", "xlogy_", "index_put_", "clamp_", "clip_", "resize_as_",
                        "clamp_min_", "clamp_max_"):  # (these take a bound, as in torch)
            assert getattr(gradviz, name)(x) is x, name


def _to_gradviz(value):  # noqa: ANN001, ANN202 - a torch state_dict's values as gradviz's
    if isinstance(value, torch.Tensor):
        return gradviz.from_numpy(value.detach().numpy().copy())
    if isinstance(value, dict):
        return {k: _to_gradviz(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_to_gradviz(v) for v in value)
    return value


@pytest.mark.parametrize(("name", "kwargs"), [
    ("SGD", {"lr": 0.1, "momentum": 0.9, "foreach": False}), ("Adam", {"lr": 0.05}),
    ("AdamW", {"lr": 0.05, "amsgrad": True}), ("RMSprop", {"lr": 0.01, "centered": True}),
    ("Adagrad", {"lr": 0.1}), ("NAdam", {"lr": 0.05})])
def test_a_torch_written_state_dict_loads_and_continues_like_torch(name: str,
                                                                     kwargs: dict) -> None:
    start = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]
    tw = torch.tensor(start, dtype=torch.float64, requires_grad=True)
    t_opt = getattr(torch.optim, name)([tw], **kwargs)
    for _ in range(3):
        t_opt.zero_grad()
        ((tw ** 2).sum() + tw.sin().sum()).backward()
        t_opt.step()
    saved = t_opt.state_dict()
    gw = gradviz.tensor(tw.detach().numpy().copy(), requires_grad=True)
    g_opt = getattr(gradviz.optim, name)([gw], lr=123.0)
    g_opt.load_state_dict(_to_gradviz(saved))
    assert list(g_opt.param_groups[0].items())[:-1] == [
        (k, v) for k, v in saved["param_groups"][0].items() if k != "params"]
    assert list(g_opt.state_dict()["param_groups"][0]) == list(saved["param_groups"][0])
    t_opt = getattr(torch.optim, name)([tw], lr=123.0)  # torch loads it too (and casts state)
    t_opt.load_state_dict(saved)
    for opt, w in ((t_opt, tw), (g_opt, gw)):
        for _ in range(3):
            opt.zero_grad()
            ((w ** 2).sum() + w.sin().sum()).backward()
            opt.step()
    np.testing.assert_allclose(gw.detach().numpy(), tw.detach().numpy(), rtol=1e-12, atol=0)


def test_the_saved_lists_of_the_new_nodes_are_torchs() -> None:
    saved = sibling("test_ops_forward").TORCH_SAVED
    x = torch.tensor([[1.0, 2.0], [2.0, 3.0]], requires_grad=True)
    nodes = [(x * 1).t_().grad_fn, (x * 1).unsqueeze_(0).squeeze_().grad_fn,
             torch.nanmedian(x).grad_fn, torch.nanmedian(x, 1).values.grad_fn,
             torch.unique_consecutive(x).grad_fn]
    assert [n.name() for n in nodes] == ["TBackward1", "SqueezeBackward3", "NanmedianBackward0",
                                         "NanmedianBackward1", "UniqueConsecutiveBackward0"]
    for node in nodes:
        assert saved[node.name()] == sorted(
            a[len("_saved_"):] for a in dir(node) if a.startswith("_saved_")), node.name()
