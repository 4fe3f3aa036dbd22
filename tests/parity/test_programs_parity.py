"""tests/programs/ on real PyTorch: each program, with its ``import gradviz as torch`` swapped for
``import torch``, prints what it prints on gradviz (numbers to float32 precision)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _parity import sibling

PROGRAMS = sibling("test_programs")


@pytest.mark.parametrize("name", PROGRAMS.PROGRAMS)
def test_program_prints_what_torch_prints(name: str, tmp_path: Path) -> None:
    source = (PROGRAMS.HERE / name).read_text()
    ours = PROGRAMS._tokens(PROGRAMS._run(source, tmp_path))
    theirs = PROGRAMS._tokens(PROGRAMS._run(source.replace(PROGRAMS.SWAP, "import torch\n"),
                                            tmp_path))
    assert len(ours) == len(theirs), (ours, theirs)
    for a, b in zip(ours, theirs, strict=True):
        if isinstance(a, float) and isinstance(b, float):
            assert a == pytest.approx(b, rel=2e-3, abs=1e-5), (name, ours, theirs)
        else:
            assert a == b, (name, a, b)
