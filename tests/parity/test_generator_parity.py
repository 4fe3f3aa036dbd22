"""gradviz.Generator's API against torch.Generator (tests/test_generator.py's api()); the
numbers drawn differ by design (NumPy's generator), the seeds, states' shape and errors not.

Without torch these tests are deselected (NOTE [parity marker] in conftest.py)."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

import gradviz

try:
    import torch
except ImportError:
    if os.environ.get("GRADVIZ_PARITY") == "1" or importlib.util.find_spec("torch") is not None:
        raise
    torch = None

pytestmark = pytest.mark.parity

_PATH = Path(__file__).resolve().parents[1] / "test_generator.py"
_SPEC = importlib.util.spec_from_file_location("_parity_copy_of_generator", _PATH)
assert _SPEC is not None and _SPEC.loader is not None
GEN = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(GEN)


def test_expected_is_torchs() -> None:
    assert GEN.api(torch) == GEN.EXPECTED


def test_api_matches_torch() -> None:
    assert GEN.api(gradviz) == GEN.api(torch)


@pytest.mark.parametrize(("src", "message"), GEN.MULTINOMIAL_ERRORS,
                         ids=[c[0] for c in GEN.MULTINOMIAL_ERRORS])
def test_multinomial_errors_are_torchs(src: str, message: str) -> None:
    assert GEN.multinomial_error(src, torch) == message
