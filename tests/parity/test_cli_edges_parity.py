"""The CLI on a script that imports torch, with torch installed: ``gradviz trace`` runs it on
real PyTorch (``--engine auto``), says so, and records torch's graph."""

from __future__ import annotations

import re
from pathlib import Path

from _cli import run, write

from gradviz.trace import load_trace


def test_a_real_torch_script_is_traced_on_real_torch(tmp_path: Path) -> None:
    script = write(tmp_path / "real.py", """
        import torch
        x = torch.ones(3, requires_grad=True)
        (x * 2).sum().backward()
        print(x.grad.tolist())
    """)
    proc = run("trace", "--out", "o", str(script), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "[2.0, 2.0, 2.0]" in proc.stdout  # real PyTorch ran
    summary = " ".join(proc.stdout.replace("│", " ").split())
    assert re.search(r"engine torch 2\.13\.0\S* \(the script imports torch; --engine gradviz "
                     r"runs it on gradviz\)", summary), summary
    tr = load_trace(tmp_path / "o" / "trace.json")
    assert sorted(n.name for n in tr.nodes.values()) == ["AccumulateGrad", "MulBackward0",
                                                         "SumBackward0"]
    assert len(tr.runs) == 1
