"""What the picture scripts share: a Graphviz SVG's size, and a screenshot in headless Chromium.

The scripts run as ``python scripts/NAME.py``, so this folder is on ``sys.path`` and they
``from _chromium import ...``.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path


def svg_size(svg: str) -> tuple[float, float]:
    """A Graphviz SVG's size in CSS pixels (Graphviz writes points: 1 pt = 4/3 px).

    Example:
        >>> svg_size('<svg width="300pt" height="150pt" viewBox="0 0 300 150">')
        (400.0, 200.0)
    """
    m = re.search(r'<svg width="([\d.]+)pt" height="([\d.]+)pt"', svg)
    if m is None:
        raise ValueError("not a Graphviz SVG: no width and height in points")
    return float(m.group(1)) * 4 / 3, float(m.group(2)) * 4 / 3


def screenshot(url: str, out: Path, width: int, height: int, profile: Path) -> None:
    """Save a ``width`` x ``height`` screenshot of ``url`` to ``out`` (Debian's chromium, a
    throw-away profile in ``profile``, nothing fetched from the network)."""
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    cmd = [chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--no-first-run", f"--user-data-dir={profile}", f"--window-size={width},{height}",
           f"--screenshot={out}", url]
    subprocess.run(cmd, check=True, capture_output=True, timeout=180)
