"""Where the tiny-op chain's time goes, measured in ONE process with interleaved rounds.

The machine this runs on is shared and drifts by a factor of two within minutes, so comparing
two processes run a minute apart says little. Here every contender runs in the same process,
one after another within each round, and the figure reported is the median over the rounds of
each contender's per-op cost; ratios are medians of per-round ratios.

Contenders: gradviz (forward and backward timed apart), NumPy (the same arithmetic with a
hand-written backward), the minimal engine (``minimal_engine.py``) and, when installed,
PyTorch eager with one thread.

Usage: ``python benchmarks/breakdown.py [--rounds R] [--ops N] [--profile] [--mlp]``;
``--profile`` prints gradviz's cProfile of forward and backward instead; ``--mlp`` times the MLP
step against hand-written NumPy the same way.

Example (from the repository root)::

    .venv/bin/python benchmarks/breakdown.py --rounds 15
"""

from __future__ import annotations

import cProfile
import gc
import importlib.util
import os
import pstats
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def _forward(x: Any, n: int) -> Any:
    y = x
    for _ in range(n // 3):
        y = (y * 1.0001 + 0.001).tanh()
    return y.sum()


def _split(x: Any, backward: Callable[[Any], object], n: int) -> tuple[float, float]:
    """(forward, backward) seconds for one chain of ``n`` ops from ``x``."""
    t0 = time.perf_counter()
    s = _forward(x, n)
    t1 = time.perf_counter()
    backward(s)
    t2 = time.perf_counter()
    return t1 - t0, t2 - t1


def _numpy(n: int) -> tuple[float, float]:
    x = np.linspace(0.1, 0.4, 4)
    t0 = time.perf_counter()
    outs = []
    y = x
    for _ in range(n // 3):
        y = np.tanh(y * 1.0001 + 0.001)
        outs.append(y)
    t1 = time.perf_counter()
    g = np.ones(4)
    for y in reversed(outs):
        g = g * (1 - y * y)
        g = g * 1.0001
    t2 = time.perf_counter()
    return t1 - t0, t2 - t1


def contenders(n: int) -> dict[str, Callable[[], tuple[float, float]]]:
    import minimal_engine as m

    import gradviz as gv

    out = {
        "gradviz": lambda: _split(gv.tensor(np.linspace(0.1, 0.4, 4), requires_grad=True),
                                  lambda s: s.backward(), n),
        "numpy": lambda: _numpy(n),
        "minimal": lambda: _split(m.Var(np.linspace(0.1, 0.4, 4), requires_grad=True),
                                  m.backward, n),
    }
    if importlib.util.find_spec("torch") is not None:
        import torch

        torch.set_num_threads(1)
        out["torch"] = lambda: _split(
            torch.linspace(0.1, 0.4, 4, dtype=torch.float64, requires_grad=True),
            lambda s: s.backward(), n)
    return out


def mlp(rounds: int) -> None:
    """The MLP step (workloads.py's), gradviz against hand-written NumPy, in one process."""
    import workloads

    import gradviz as gv

    steps = {"gradviz": workloads._mlp_step(gv), "numpy": _numpy_mlp_step(workloads)}
    for fn in steps.values():
        for _ in range(3):
            fn()
    per: dict[str, list[float]] = {k: [] for k in steps}
    for _ in range(rounds):
        for name, fn in steps.items():
            gc.collect()
            times = []
            for _ in range(5):
                t0 = time.perf_counter()
                fn()
                times.append(time.perf_counter() - t0)
            per[name].append(statistics.median(times))
    print(f"MLP step, median of {rounds} interleaved rounds of 5: gradviz "
          f"{statistics.median(per['gradviz']) * 1e3:.3f} ms, NumPy "
          f"{statistics.median(per['numpy']) * 1e3:.3f} ms, ratio "
          f"{statistics.median(a / b for a, b in zip(per['gradviz'], per['numpy'])):.2f}")


def _numpy_mlp_step(workloads: Any) -> Callable[[], None]:
    # workloads.mlp_numpy times its step itself; take the step out of it.
    captured: list[Callable[[], None]] = []
    real = workloads._timed
    workloads._timed = lambda fn, repeat, warmup=1: captured.append(fn) or {}
    try:
        workloads.mlp_numpy(1)
    finally:
        workloads._timed = real
    return captured[0]


def main(argv: list[str]) -> int:
    rounds = int(argv[argv.index("--rounds") + 1]) if "--rounds" in argv else 11
    n = int(argv[argv.index("--ops") + 1]) if "--ops" in argv else 9999
    if "--mlp" in argv:
        mlp(rounds)
        return 0
    runs = contenders(n)
    if "--profile" in argv:
        import gradviz as gv

        runs["gradviz"]()  # warm up
        for part in ("forward", "backward"):
            x = gv.tensor(np.linspace(0.1, 0.4, 4), requires_grad=True)
            prof = cProfile.Profile()
            if part == "forward":
                prof.runcall(_forward, x, n)
            else:
                s = _forward(x, n)
                prof.runcall(s.backward)
            print(f"--- {part} ---")
            pstats.Stats(prof).sort_stats("tottime").print_stats(14)
        return 0
    for fn in runs.values():  # warm up
        fn()
    per: dict[str, list[tuple[float, float]]] = {k: [] for k in runs}
    for _ in range(rounds):
        for name, fn in runs.items():
            gc.collect()
            per[name].append(fn())
    us = 1e6 / n

    def med(name: str, k: int | None) -> float:
        return statistics.median((r[0] + r[1]) if k is None else r[k] for r in per[name]) * us

    print(f"tiny-op chain, {n} ops, median of {rounds} interleaved rounds (us per op)")
    print("| contender | forward | backward | total |")
    print("| --- | --- | --- | --- |")
    for name in runs:
        print(f"| {name} | {med(name, 0):.2f} | {med(name, 1):.2f} | {med(name, None):.2f} |")
    total = {k: [r[0] + r[1] for r in v] for k, v in per.items()}
    for ref in ("numpy", "torch", "minimal"):
        if ref in total:
            ratio = statistics.median(a / b for a, b in zip(total["gradviz"], total[ref]))
            print(f"gradviz / {ref}: {ratio:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
