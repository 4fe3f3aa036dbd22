"""The drawings and the step player on real PyTorch show what the program recorded itself
(tests/test_trace_truth_drawn.py holds the checks; tests/parity/test_trace_truth_torch.py the
programs)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import gradviz
from tests.parity.test_trace_truth_torch import PROGRAMS
from tests.test_trace_truth import Record
from tests.test_trace_truth_drawn import drawings_truth, player_truth

pytest_plugins = ("tests._browser",)  # the `driver` fixture: headless Chromium


def _traced(name: str) -> tuple[Any, Record]:
    rec = Record()
    with gradviz.trace(values="all", keep_runs="all", torch=True) as tr:
        PROGRAMS[name](rec)
    return tr, rec


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_drawings_show_what_the_torch_program_recorded(name: str) -> None:
    tr, rec = _traced(name)
    drawings_truth(tr, rec)


@pytest.mark.browser
def test_the_player_shows_what_the_torch_program_recorded(driver: Any, tmp_path: Path) -> None:
    tr, rec = _traced("optimizer_step")
    player_truth(driver, tr, rec, tmp_path / "steps.html")
