"""The docstring examples that run real PyTorch (tests/test_doctests.py runs all the others)."""

from __future__ import annotations

import pytest
from _parity import sibling

DOCTESTS = sibling("test_doctests")


@pytest.mark.parametrize("name", DOCTESTS.NEEDS_TORCH)
def test_docstring_examples(name: str) -> None:
    DOCTESTS.run_docstring_examples(name)
