"""Small equivalents of PyTorch's introductory programs (tests/programs/): the "Learning PyTorch
with examples" polynomial fits, the autograd tutorial, the "Extending PyTorch" examples and the
autograd notes' saved-tensor hooks. Each file starts with ``import gradviz as torch`` and must
run unchanged; with torch installed, the same file with that one import swapped must print the
same (numbers to float32 precision, ``gradviz`` read as ``torch``)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent / "programs"
PROGRAMS = sorted(p.name for p in HERE.glob("*.py"))
SWAP = "import gradviz as torch\n"


def _run(source: str, tmp_path: Path) -> str:
    script = tmp_path / "program.py"
    script.write_text(source)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


_NUMBER = re.compile(r"-?\d+\.\d*(?:e[-+]?\d+)?|-?\d+e[-+]?\d+|-?\d+")
# Printed in one library's words: addresses, and the one name that differs.
_ADDRESS = re.compile(r" at 0x[0-9a-f]+")


def _tokens(text: str) -> list:
    text = _ADDRESS.sub("", text.replace("gradviz.", "torch."))
    out: list = []
    pos = 0
    for m in _NUMBER.finditer(text):
        out.append(text[pos:m.start()])
        out.append(float(m.group()))
        pos = m.end()
    out.append(text[pos:])
    return out


def test_every_program_starts_with_the_import_swap() -> None:
    assert len(PROGRAMS) >= 10
    for name in PROGRAMS:
        assert SWAP in (HERE / name).read_text(), name
        rest = (HERE / name).read_text().replace(SWAP, "")
        assert "import torch" not in rest and "gradviz" not in rest, name


@pytest.mark.parametrize("name", PROGRAMS)
def test_program_runs_unchanged(name: str, tmp_path: Path) -> None:
    out = _run((HERE / name).read_text(), tmp_path)
    assert out.strip()
    assert "Traceback" not in out


@pytest.mark.parametrize("name", PROGRAMS)
def test_program_written_for_torch_traces_on_gradviz(name: str, tmp_path: Path) -> None:
    # The program as PyTorch's tutorial writes it (`import torch`), unmodified, traced with
    # `gradviz trace --engine gradviz`: it prints what it prints on gradviz, and the trace holds
    # its backward runs on gradviz's engine. No torch needed.
    source = (HERE / name).read_text().replace(SWAP, "import torch\n")
    script = tmp_path / name
    script.write_text(source)
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "gradviz", "trace", "--engine", "gradviz",
                           "-q", "-o", str(out), str(script)],
                          capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert _tokens(proc.stdout) == _tokens(_run((HERE / name).read_text(), tmp_path))
    trace = json.loads((out / "trace.json").read_text())
    assert trace["ops"]
    # poly_tensors computes its gradients by hand: it is the one program without backward()
    assert bool(trace["runs"]) == (name != "poly_tensors.py")
    assert {r["engine"] for r in trace["runs"]} <= {"pytorch"}
