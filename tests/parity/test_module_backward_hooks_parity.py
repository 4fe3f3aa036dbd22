"""Module backward hooks against torch: tests/test_module_backward_hooks.py's program, run on
both libraries, records the same nodes, gradients, warnings and errors.

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

_PATH = Path(__file__).resolve().parents[1] / "test_module_backward_hooks.py"
_SPEC = importlib.util.spec_from_file_location("_parity_copy_of_module_backward_hooks", _PATH)
assert _SPEC is not None and _SPEC.loader is not None
HOOKS = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(HOOKS)


def test_program_matches_torch() -> None:
    assert HOOKS.program(gradviz) == HOOKS.program(torch)
