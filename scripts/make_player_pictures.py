"""Make the two pictures of the step player that docs/player.md shows.

Usage: ``.venv/bin/python scripts/make_player_pictures.py`` (needs Debian's chromium; ``make
test`` installs it). Traces the MLP and the CNN examples as ``gradviz trace --keep-runs 1
--example NAME`` would, and screenshots each player in headless Chromium at the size a reader
opens it: the MLP at 1,400 x 900, the CNN at 1,024 x 768, both in the middle of the backward
pass (finished, ready, current and not-yet-run nodes all on screen).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from _chromium import screenshot
from make_pictures import trace_example  # scripts/ is on sys.path when this file runs

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "images"
# (example, picture, window size, step shown)
SHOTS = (("mlp_moons", "player_mlp_1400.png", (1400, 900), 14),
         ("cnn_digits", "player_cnn_1024.png", (1024, 768), 42))


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        for name, picture, (width, height), step in SHOTS:
            html = tmp / f"{name}.html"
            trace_example(name).to_html(html)
            out = OUT / picture
            screenshot(f"{html.as_uri()}#run=0&step={step}", out, width, height,
                       tmp / "profile")
            print(f"{out.relative_to(ROOT)}: {width} x {height}, step {step}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
