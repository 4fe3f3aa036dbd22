"""tests/test_legacy_api.py's checks run on torch: its hard-coded expectations are torch's."""

from __future__ import annotations

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
        if name not in ("fill_", "xlogy_", "index_put_", "clamp_", "clip_"):
            assert getattr(gradviz, name)(x) is x, name
