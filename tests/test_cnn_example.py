"""The CNN example: its full run passes 95% test accuracy, and its short default run traces."""

from __future__ import annotations

import re
import subprocess
import sys
import sysconfig
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "gradviz" / "examples" / "cnn_digits.py"


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*args], capture_output=True, text=True, timeout=300, cwd=cwd)


def test_cnn_example_full_run_reaches_95_percent(tmp_path: Path) -> None:
    # 20 epochs: 97-98% with seeds 0-4 on this machine, in 3-7 s of training
    proc = _run(sys.executable, str(EXAMPLE), "full", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    accuracy = float(re.search(r"after 20 epochs: test accuracy ([0-9.]+)% \(450 images\)",
                               proc.stdout).group(1))
    assert accuracy >= 95.0
    losses = [float(v) for v in re.findall(r"training loss ([0-9.]+)", proc.stdout)]
    assert len(losses) == 20 and losses[-1] < losses[0]


def test_cnn_example_default_run_traces(tmp_path: Path) -> None:
    gradviz_cmd = Path(sysconfig.get_path("scripts")) / "gradviz"
    proc = _run(str(gradviz_cmd), "trace", "-q", "--out", "out", "--example", "cnn_digits",
                cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "after 3 steps" in proc.stdout
    for name in ("forward.svg", "backward.svg", "steps.html", "trace.json"):
        assert (tmp_path / "out" / name).stat().st_size > 0
    svg = (tmp_path / "out" / "backward.svg").read_text(encoding="utf-8")
    for node in ("ConvolutionBackward0", "MaxPool2DWithIndicesBackward0", "ReluBackward0",
                 "NllLossBackward0", "features.0.weight"):
        assert node in svg, node
    assert "gv-group" not in svg  # a CNN step is small: nothing folded
