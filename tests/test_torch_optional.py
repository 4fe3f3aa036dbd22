"""torch stays optional: ``import gradviz`` never imports it, and asking for torch tracing
without it says how to install it (run in subprocesses, with torch hidden where needed)."""

from __future__ import annotations

import subprocess
import sys

HIDE_TORCH = "import sys; sys.modules['torch'] = None\n"  # `import torch` now fails


def _python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)


def test_import_gradviz_does_not_import_torch() -> None:
    out = _python("import sys, gradviz, gradviz.render, gradviz.trace, gradviz.render.dot\n"
                  "import gradviz.trace.torch_source\n"
                  "print('torch' in sys.modules)")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_tracing_torch_without_torch_says_how_to_install_it() -> None:
    out = _python(HIDE_TORCH + "import gradviz\n"
                  "try:\n"
                  "    with gradviz.trace(torch=True):\n"
                  "        pass\n"
                  "except ImportError as e:\n"
                  "    print(e)\n")
    assert out.returncode == 0, out.stderr
    assert "pip install gradviz[torch]" in out.stdout


def test_gradviz_tracing_works_without_torch() -> None:
    out = _python(HIDE_TORCH + "import gradviz\n"
                  "with gradviz.trace() as tr:\n"
                  "    x = gradviz.ones(2, requires_grad=True)\n"
                  "    (x * 2).sum().backward()\n"
                  "print(tr.runs[0].engine, tr.torch_source)\n"
                  "print(gradviz.make_dot((x * 2).sum()).source.count('AccumulateGrad'))\n")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["pytorch", "None", "1"]
