"""tests/test_legacy_api.py's checks run on torch: its hard-coded expectations are torch's."""

from __future__ import annotations

import pytest
import torch
from _parity import sibling

LEGACY = sibling("test_legacy_api")


@pytest.mark.parametrize("check", LEGACY.CHECKS, ids=[c.__name__ for c in LEGACY.CHECKS])
def test_torch_does_what_the_checks_expect(check) -> None:
    check(torch)
