"""Make the picture of the README's "Watch real PyTorch" section: the step player on one
training step of a small MLP run by real PyTorch (its engine, not gradviz's).

Usage: ``.venv/bin/python scripts/make_torch_pictures.py`` (needs torch,
``pip install gradviz[torch]``, and Debian's chromium; ``make test`` installs it). Traces the
step with ``gradviz.trace(torch=True)`` and screenshots the player in headless Chromium at
1,400 x 900 in the middle of the backward pass, as make_player_pictures.py does.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from _chromium import screenshot  # scripts/ is on sys.path when this file runs

import gradviz

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "images" / "torch_player.png"
SIZE = (1400, 900)
STEP = 14  # mid-backward: finished, ready and not-yet-run nodes all on screen


# The traced program, run from a file name of its own so the player's source lines read
# "train_step.py:N", not a path on the machine that made the picture.
STEP_SOURCE = """\
import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(5, 4)
target = torch.tensor([0, 2, 1, 1, 0])
with gradviz.trace(torch=True) as tr:
    loss = torch.nn.functional.cross_entropy(model(x), target)
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


def trace_torch_mlp_step() -> gradviz.trace:
    """One SGD step of a 2-layer MLP on real PyTorch, traced."""
    namespace = {"gradviz": gradviz, "__name__": "__main__"}
    exec(compile(STEP_SOURCE, "train_step.py", "exec"), namespace)
    tr = namespace["tr"]
    assert tr.run().engine == "torch" and not tr.notes, tr.notes
    return tr


def main() -> int:
    OUT.parent.mkdir(parents=True, exist_ok=True)
    width, height = SIZE
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        html = tmp / "torch_mlp.html"
        trace_torch_mlp_step().to_html(html)
        screenshot(f"{html.as_uri()}#run=0&step={STEP}", OUT, width, height, tmp / "profile")
    print(f"{OUT.relative_to(ROOT)}: {width} x {height}, step {STEP}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
