"""PyTorch's op database as the oracle (tests/parity/_opinfo.py): every OpInfo entry gradviz
matched on every sample when opinfo_matching.txt was written must go on matching, on values,
dtypes, grad_fn and next_functions names, errors and gradients, float64 and float32; and no
entry gradviz resolved may stop resolving. ``python -m tests.parity._opinfo`` prints the
entries that differ, and why."""

from __future__ import annotations

from typing import Any

import pytest

from tests.parity import _opinfo

RESOLVED, MATCHING = _opinfo.read_matching()


@pytest.fixture(scope="module")
def entries() -> dict[str, Any]:
    return {_opinfo.entry_id(info): info for info in _opinfo.op_db()}


@pytest.mark.parametrize("entry", MATCHING)
def test_an_entry_that_matched_still_matches_on_every_sample(entries: dict[str, Any],
                                                              entry: str) -> None:
    result = _opinfo.run_entry(entries[entry])
    assert result.resolved, f"{entry}: gradviz no longer has this op"
    assert result.run and result.matched == result.run, "\n".join(result.first)


def test_no_entry_stops_resolving(entries: dict[str, Any]) -> None:
    resolved = sum(_opinfo.resolve(info) is not None for info in entries.values())
    assert resolved >= RESOLVED, (resolved, RESOLVED)
    assert len(MATCHING) >= 300  # the list is a tally of a real run, not an empty file
