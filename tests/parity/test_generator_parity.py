"""gradviz.Generator's API against torch.Generator (tests/test_generator.py's api()); the
numbers drawn differ by design (NumPy's generator), the seeds, states' shape and errors not.
"""

from __future__ import annotations

import pytest
import torch
from _parity import sibling

import gradviz

GEN = sibling("test_generator")


def test_expected_is_torchs() -> None:
    assert GEN.api(torch) == GEN.EXPECTED


def test_api_matches_torch() -> None:
    assert GEN.api(gradviz) == GEN.api(torch)


@pytest.mark.parametrize(("src", "message"), GEN.MULTINOMIAL_ERRORS,
                         ids=[c[0] for c in GEN.MULTINOMIAL_ERRORS])
def test_multinomial_errors_are_torchs(src: str, message: str) -> None:
    assert GEN.multinomial_error(src, torch) == message
