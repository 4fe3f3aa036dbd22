"""The recurrent example: it learns when trained, and its short default run traces."""

from __future__ import annotations

import re
import subprocess
import sys
import sysconfig
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "gradviz" / "examples" / "rnn_sequence.py"


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*args], capture_output=True, text=True, timeout=300, cwd=cwd)


def test_rnn_example_learns_to_sum(tmp_path: Path) -> None:
    proc = _run(sys.executable, str(EXAMPLE), "200", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    losses = [float(v) for v in re.findall(r"training loss ([0-9.]+)", proc.stdout)]
    mse, baseline = map(float, re.search(
        r"after 200 steps: test MSE ([0-9.]+) \(always answering 0 gives ([0-9.]+)\)",
        proc.stdout).groups())
    assert losses[-1] < losses[0] / 10
    assert mse < 0.05 and mse < baseline / 5


def test_rnn_example_default_run_traces(tmp_path: Path) -> None:
    gradviz_cmd = Path(sysconfig.get_path("scripts")) / "gradviz"
    proc = _run(str(gradviz_cmd), "trace", "-q", "--out", "out", str(EXAMPLE), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "after 3 steps" in proc.stdout
    for name in ("forward.svg", "backward.svg", "steps.html", "trace.json"):
        assert (tmp_path / "out" / name).stat().st_size > 0
    svg = (tmp_path / "out" / "backward.svg").read_text(encoding="utf-8")
    assert "SigmoidBackward0" in svg and "StackBackward0" in svg
