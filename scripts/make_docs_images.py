"""Make the pictures in docs/images/ from the bundled MLP example (used by the README).

Usage: ``.venv/bin/python scripts/make_docs_images.py`` (needs Debian's chromium for the player
screenshot; ``make test`` installs it). Writes PNGs only: the SVGs are what `gradviz trace`
produces on the reader's machine.
"""

from __future__ import annotations

import runpy
import sys
import tempfile
from pathlib import Path

from _chromium import screenshot  # scripts/ is on sys.path when this file runs

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "images"


def main() -> int:
    import gradviz
    from gradviz import render

    OUT.mkdir(parents=True, exist_ok=True)
    example = ROOT / "gradviz" / "examples" / "mlp_moons.py"
    with gradviz.trace(name="MLP on two moons") as tr:  # the default keeps the last step
        runpy.run_path(str(example), run_name="__main__")
    render.render(render.draw_forward(tr), OUT / "mlp_forward.png", "png")
    render.render(render.draw_backward(tr), OUT / "mlp_backward.png", "png")
    with tempfile.TemporaryDirectory() as tmp:
        html = Path(tmp) / "steps.html"
        tr.to_html(html)
        screenshot(f"{html.as_uri()}#run=0&step=10", OUT / "mlp_player.png", 1400, 900,
                   Path(tmp) / "profile")
    for name in ("mlp_forward.png", "mlp_backward.png", "mlp_player.png"):
        print(OUT / name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
