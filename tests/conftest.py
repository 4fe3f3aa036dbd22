"""Shared pytest configuration for the gradviz suite (kept minimal on purpose)."""

from __future__ import annotations

import importlib.util
from importlib.metadata import PackageNotFoundError, version


def pytest_report_header() -> list[str]:
    """Say up front which optional oracles are installed, so skips are never a surprise."""
    lines = []
    for dist in ("numpy", "torch"):
        try:
            lines.append(f"{dist}: {version(dist)}")
        except PackageNotFoundError:
            lines.append(f"{dist}: not installed")
    if importlib.util.find_spec("torch") is None:
        lines.append("parity tests need torch: `make test PARITY=1` installs it")
    return lines
