"""nn.utils and the new nn.init functions against torch: tests/test_nn_utils.py's program
records the same on both libraries, and torch still gives its hard-coded EXPECTED.

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

_PATH = Path(__file__).resolve().parents[1] / "test_nn_utils.py"
_SPEC = importlib.util.spec_from_file_location("_parity_copy_of_nn_utils", _PATH)
assert _SPEC is not None and _SPEC.loader is not None
UTILS = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(UTILS)


def test_expected_is_torchs() -> None:
    assert UTILS.program(torch) == UTILS.EXPECTED


def test_program_matches_torch() -> None:
    assert UTILS.program(gradviz) == UTILS.program(torch)
