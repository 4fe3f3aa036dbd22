"""nn.utils and the new nn.init functions against torch: tests/test_nn_utils.py's program
records the same on both libraries, and torch still gives its hard-coded EXPECTED.
"""

from __future__ import annotations

import torch
from _parity import sibling

import gradviz

UTILS = sibling("test_nn_utils")


def test_expected_is_torchs() -> None:
    assert UTILS.program(torch) == UTILS.EXPECTED


def test_program_matches_torch() -> None:
    assert UTILS.program(gradviz) == UTILS.program(torch)
