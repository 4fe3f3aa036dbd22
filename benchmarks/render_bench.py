"""How long drawing takes: a 1,000-node backward graph at full detail, a 20,000-op trace collapsed.

Prints timings only (tests never time). Run: ``python benchmarks/render_bench.py``.
Targets (issue "See it"): the 1,000-node graph to SVG in about a second; the 20,000-op trace
(backward, forward and both, collapsed) in under 10 s each.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import gradviz as torch  # noqa: E402
from gradviz.render import draw_backward, draw_both, draw_forward, to_svg  # noqa: E402


def timed(label: str, fn: Callable[[], object]) -> object:
    t0 = time.perf_counter()
    out = fn()
    print(f"{label:<52} {time.perf_counter() - t0:7.2f} s", flush=True)
    return out


def chain(n: int) -> torch.Tensor:
    """``y = y * w`` n times: a chain whose every node also points at w's AccumulateGrad."""
    w = torch.ones(2, requires_grad=True)
    y = torch.ones(2, requires_grad=True)
    for _ in range(n):
        y = y * w
    return y


def loop_trace(steps: int):
    w = torch.full((2,), 0.5, requires_grad=True)
    b = torch.full((2,), 0.1, requires_grad=True)
    with torch.trace(values="none") as tr:
        h = torch.ones(2, requires_grad=True)
        for _ in range(steps):
            h = h * w + b
        h.sum().backward()
    return tr


def main() -> None:
    y = chain(1000)
    dot = timed("1,000-node chain: draw_backward (full detail)",
                lambda: draw_backward(y, max_nodes=math.inf))
    timed("1,000-node chain: layout + SVG", lambda: to_svg(dot))
    timed("1,000-node chain: total", lambda: to_svg(draw_backward(y, max_nodes=math.inf)))

    tr = timed("20,000-op trace: record", lambda: loop_trace(10_000))
    print(f"  ({tr.summary()})")
    for name, fn in (("draw_backward", draw_backward), ("draw_forward", draw_forward),
                     ("draw_both", draw_both)):
        timed(f"20,000-op trace: {name} + SVG (collapsed)", lambda fn=fn: to_svg(fn(tr)))


if __name__ == "__main__":
    main()
