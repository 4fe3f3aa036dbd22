"""Running the installed ``gradviz`` command as a user does, for the CLI tests."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

GRADVIZ = Path(sys.executable).with_name("gradviz")


def cli_env(columns: int = 120) -> dict[str, str]:
    """The environment of a run: a fixed terminal width, no colour, unbuffered output."""
    return {**os.environ, "COLUMNS": str(columns), "NO_COLOR": "1", "PYTHONUNBUFFERED": "1"}


def run(*args: str, cwd: Path, timeout: int = 240, columns: int = 120
        ) -> subprocess.CompletedProcess[str]:
    """``gradviz ARGS`` in ``cwd``, its output captured."""
    assert GRADVIZ.exists(), f"the installed `gradviz` command is missing at {GRADVIZ}"
    return subprocess.run([str(GRADVIZ), *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=cli_env(columns))


def write(path: Path, code: str) -> Path:
    """Write a (dedented) script to ``path``."""
    path.write_text(textwrap.dedent(code), encoding="utf-8")
    return path
