"""Every test in this folder compares gradviz with PyTorch, and only the tests in this folder do.

NOTE [parity tests] Whether a test needs torch is decided here, by where it lives, and nowhere
else: a file under ``tests/parity/`` imports torch as any torch program does and carries no
marker of its own; this conftest marks each of its tests ``parity`` (so ``-m parity`` and
``-m "not parity"`` select them). The lint keeps torch out of the rest of the suite (ruff's
banned-api rule, pyproject.toml), so the plain ``make test`` can never meet a test that needs it.

Without torch the folder is not collected, and the summary says so; with ``GRADVIZ_PARITY=1``
(``make test PARITY=1``) it is always collected, so a missing torch fails loudly at import.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

_demanded = os.environ.get("GRADVIZ_PARITY", "") == "1"
_without_torch = importlib.util.find_spec("torch") is None and not _demanded

# Read by pytest: the files of this folder it must not import.
collect_ignore_glob = ["*.py"] if _without_torch else []


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.is_relative_to(HERE):
            item.add_marker(pytest.mark.parity)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _without_torch:
        files = len(list(HERE.glob("test_*.py")))
        terminalreporter.write_line(
            f"tests/parity: {files} files not collected, torch is not installed "
            "(`make test PARITY=1` installs it and runs them)", yellow=True)
