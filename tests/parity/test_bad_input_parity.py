"""gradviz's behaviour on bad input matches torch's (issue #20): the corpus of
``tests/parity/bad_input.py`` runs on both libraries, and every snippet where they differ is in
:data:`ALLOWED` with its reason. No gradviz error escapes as a class torch never raises."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest
import torch

import gradviz

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bad_input  # noqa: E402 - the corpus lives next to this file

_CPU = "deliberate: gradviz computes on the CPU only and says so (docs/ops.md, differences)"
# snippet -> why gradviz differs. Every `disagree` and `same type` snippet must be here, and
# nothing else: "deliberate" ones are documented in docs/ops.md, "gap" ones are still to match
# (none today).
ALLOWED: dict[str, str] = {
    "x.to('cuda')": _CPU,
    "g.register_hook(1)": ("deliberate: gradviz refuses a hook that is not callable when it is "
                           "registered; torch fails later, inside backward (docs/ops.md)"),
}


@pytest.fixture(scope="module")
def result() -> dict:
    out = bad_input.compare(gradviz, torch)
    counts = Counter(c for c, _, _ in out.values())
    print(f"\nbad-input corpus, {len(out)} snippets: "
          + ", ".join(f"{k} {v}" for k, v in counts.most_common()))
    return out


def test_no_internal_error_escapes(result: dict) -> None:
    internal = {s: gv for s, (c, gv, _) in result.items() if c == "internal"}
    assert not internal, internal


def test_every_difference_is_allowed_with_a_reason(result: dict) -> None:
    differ = {s: (c, gv, th) for s, (c, gv, th) in result.items() if c in ("disagree", "same type")}
    unexplained = {s: v for s, v in differ.items() if s not in ALLOWED}
    assert not unexplained, unexplained
    stale = sorted(set(ALLOWED) - set(differ))
    assert not stale, f"allow-list entries that now agree with torch (remove them): {stale}"
    assert all(why.startswith(("deliberate: ", "gap: ")) for why in ALLOWED.values())


def test_allow_list_snippets_are_in_the_corpus() -> None:
    assert set(ALLOWED) <= set(bad_input.SNIPPETS)
