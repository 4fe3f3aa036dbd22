"""Make the CNN and LSTM pictures in docs/images/ that docs/cnn-rnn.md shows.

Usage: ``.venv/bin/python scripts/make_pictures.py`` (needs Debian's chromium; ``make test``
installs it). Each example runs as ``gradviz trace --keep-runs 1 --example NAME`` would run it;
its ``forward.svg``, ``backward.svg`` and ``steps.html`` are screenshot in headless Chromium at
1,400 px wide: each drawing at full scale, or shrunk to the window's width if it is wider (the
text stays legible: the LSTM's forward graph, the widest, is shown at 0.83), the player at
step 0. Writes PNGs only (the SVGs are what `gradviz trace` makes on the reader's machine) and
prints each picture's size and the drawing's own width.
"""

from __future__ import annotations

import math
import runpy
import sys
import tempfile
from pathlib import Path
from unittest import mock

import _chromium  # scripts/ is on sys.path when this file runs
from _chromium import svg_size

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "images"
WIDTH = 1400  # the window every picture is taken in
MAX_HEIGHT = 3300  # a taller drawing is cut: the top is what the text reads first
EXAMPLES = {"cnn": "cnn_digits", "lstm": "rnn_sequence"}


def screenshot(url: str, out: Path, height: int, profile: Path) -> None:
    """Take a ``WIDTH`` x ``height`` screenshot of ``url`` in headless Chromium."""
    _chromium.screenshot(url, out, WIDTH, height, profile)


def picture_of_svg(svg_path: Path, out: Path, scale: float, tmp: Path) -> tuple[int, float]:
    """Screenshot an SVG drawn at ``scale``; returns (picture height, drawn width in px)."""
    w, h = svg_size(svg_path.read_text(encoding="utf-8"))
    page = tmp / f"{out.stem}.html"
    # An <img> at a set width scales the whole drawing, text included, as a reader zooming out.
    page.write_text(f'<!doctype html><body style="margin:0;background:white">'
                    f'<img src="{svg_path.as_uri()}" width="{w * scale:.0f}"></body>',
                    encoding="utf-8")
    height = min(MAX_HEIGHT, max(600, math.ceil(h * scale)))
    screenshot(page.as_uri(), out, height, tmp / "profile")
    return height, w * scale


def trace_example(name: str) -> object:
    """Run a bundled example under the tracer, as ``gradviz trace`` does (by default, a loop
    keeps its last iteration)."""
    import gradviz

    path = ROOT / "gradviz" / "examples" / f"{name}.py"
    with mock.patch.object(sys, "argv", [str(path)]), \
            gradviz.trace(name=path.name) as tr:
        runpy.run_path(str(path), run_name="__main__")
    return tr


def main() -> int:
    from gradviz import render

    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        for short, name in EXAMPLES.items():
            tr = trace_example(name)
            fwd, bwd = tmp / f"{short}_forward.svg", tmp / f"{short}_backward.svg"
            render.render(render.draw_forward(tr), fwd, "svg")
            render.render(render.draw_backward(tr), bwd, "svg")
            for svg in (fwd, bwd):
                w, _ = svg_size(svg.read_text(encoding="utf-8"))
                scale = min(1.0, WIDTH / w)
                out = OUT / f"{svg.stem}.png"
                height, drawn = picture_of_svg(svg, out, scale, tmp)
                print(f"{out.relative_to(ROOT)}: {WIDTH} x {height}, the drawing {drawn:.0f} px "
                      f"wide at scale {scale}")
            html = tmp / f"{short}_steps.html"
            tr.to_html(html)
            out = OUT / f"{short}_player.png"
            screenshot(f"{html.as_uri()}#run=0&step=0", out, 1000, tmp / "profile")
            print(f"{out.relative_to(ROOT)}: {WIDTH} x 1000, step 0")
    return 0


if __name__ == "__main__":
    sys.exit(main())
