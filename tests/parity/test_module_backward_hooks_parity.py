"""Module backward hooks against torch: tests/test_module_backward_hooks.py's program, run on
both libraries, records the same nodes, gradients, warnings and errors.

Without torch these tests are deselected (NOTE [parity marker] in conftest.py)."""

from __future__ import annotations

import pytest
from _parity import sibling, torch

import gradviz

pytestmark = pytest.mark.parity

HOOKS = sibling("test_module_backward_hooks")


def test_program_matches_torch() -> None:
    assert HOOKS.program(gradviz) == HOOKS.program(torch)
