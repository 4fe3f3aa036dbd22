"""Module backward hooks against torch: tests/test_module_backward_hooks.py's program, run on
both libraries, records the same nodes, gradients, warnings and errors.
"""

from __future__ import annotations

import torch
from _parity import sibling

import gradviz

HOOKS = sibling("test_module_backward_hooks")


def test_program_matches_torch() -> None:
    assert HOOKS.program(gradviz) == HOOKS.program(torch)
