"""Where the tiny-op chain's time goes, measured in ONE process with interleaved rounds.

The machine this runs on is shared and drifts by a factor of two within minutes, so comparing
two processes run a minute apart says little. Here every contender runs in the same process,
one after another within each round, and the figure reported is the median over the rounds of
each contender's per-op cost; ratios are medians of per-round ratios.

Contenders: gradviz (forward and backward timed apart), NumPy (the same arithmetic with a
hand-written backward), the minimal engine (``minimal_engine.py``), the floor (a perfect op
layer on gradviz's unchanged engine, ``chain_floor.py``) and, when installed, PyTorch eager
with one thread.

Usage: ``python benchmarks/breakdown.py [--rounds R] [--ops N] [--profile] [--mlp] [--traced]
[--cpu] [--million [N]]``.

- ``--profile`` prints gradviz's cProfile of forward and backward instead.
- ``--mlp`` times the MLP step against hand-written NumPy the same way; with ``--floor`` also
  the step on a perfect op layer with gradviz's engine, and the same without the engine
  (``mlp_floor.py``): the least any op-layer work could bring the step to.
- ``--traced`` times the chain inside ``gradviz.trace(values="small", keep_runs=1)`` against the
  untraced chain (issue #16's target: at most 2x), forward, backward and the whole ``with``
  block apart (with ``--profile``: the traced chain's profile; with ``--mlp``: the traced MLP
  step against the untraced one).
- ``--values none|small|all`` sets what the traced runs keep of values (default ``small``, as
  the targets are measured): ``none`` shows what tracing costs without value summaries.
- ``--cpu`` times with the process's CPU clock instead of the wall clock (steadier when other
  processes load the machine: their time is not counted).
- ``--million [N]`` times the 1M-op chain's workload (``y = y * 1.000001``, N ops, 300,000 by
  default) for gradviz and for the floor, each also with Python's cyclic collector paused
  during the forward (what the collector's walks over the growing graph cost; the engine
  pauses it during backward already), interleaved. PyTorch is left out: importing it puts
  ~10^5 more objects in front of every full collection, which would inflate gradviz's figure
  (``make bench`` runs PyTorch's 1M-op chain in its own process).

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

_clock = time.perf_counter  # time.process_time with --cpu
_values = "small"  # what the traced runs keep of values (--values)


def _forward(x: Any, n: int) -> Any:
    y = x
    for _ in range(n // 3):
        y = (y * 1.0001 + 0.001).tanh()
    return y.sum()


def _split(x: Any, backward: Callable[[Any], object], n: int) -> tuple[float, float]:
    """(forward, backward) seconds for one chain of ``n`` ops from ``x``."""
    t0 = _clock()
    s = _forward(x, n)
    t1 = _clock()
    backward(s)
    t2 = _clock()
    return t1 - t0, t2 - t1


def _numpy(n: int) -> tuple[float, float]:
    x = np.linspace(0.1, 0.4, 4)
    t0 = _clock()
    outs = []
    y = x
    for _ in range(n // 3):
        y = np.tanh(y * 1.0001 + 0.001)
        outs.append(y)
    t1 = _clock()
    g = np.ones(4)
    for y in reversed(outs):
        g = g * (1 - y * y)
        g = g * 1.0001
    t2 = _clock()
    return t1 - t0, t2 - t1


def contenders(n: int) -> dict[str, Callable[[], tuple[float, float]]]:
    import chain_floor
    import minimal_engine as m

    import gradviz as gv

    out = {
        "gradviz": lambda: _split(gv.tensor(np.linspace(0.1, 0.4, 4), requires_grad=True),
                                  lambda s: s.backward(), n),
        "numpy": lambda: _numpy(n),
        "minimal": lambda: _split(m.Var(np.linspace(0.1, 0.4, 4), requires_grad=True),
                                  m.backward, n),
        "floor": lambda: _split(chain_floor.leaf(np.linspace(0.1, 0.4, 4)),
                                lambda s: s.backward(), n),
    }
    if importlib.util.find_spec("torch") is not None:
        import torch

        torch.set_num_threads(1)
        out["torch"] = lambda: _split(
            torch.linspace(0.1, 0.4, 4, dtype=torch.float64, requires_grad=True),
            lambda s: s.backward(), n)
    return out


def _traced(x: Any, n: int) -> tuple[float, float, float]:
    """(forward, backward, whole block) seconds of the chain traced as chain_traced traces it."""
    import gradviz as gv

    t0 = _clock()
    with gv.trace(values=_values, keep_runs=1):
        t1 = _clock()
        s = _forward(x, n)
        t2 = _clock()
        s.backward()
        t3 = _clock()
    t4 = _clock()
    return t2 - t1, t3 - t2, t4 - t0


def traced(rounds: int, n: int) -> None:
    """The traced chain against the untraced one, interleaved in one process."""
    import gradviz as gv

    def fresh() -> Any:
        return gv.tensor(np.linspace(0.1, 0.4, 4), requires_grad=True)

    def untraced() -> tuple[float, float, float]:
        f, b = _split(fresh(), lambda s: s.backward(), n)
        return f, b, f + b

    runs = {"untraced": untraced, "traced": lambda: _traced(fresh(), n)}
    for fn in runs.values():  # warm up
        fn()
    per: dict[str, list[tuple[float, float, float]]] = {k: [] for k in runs}
    for _ in range(rounds):
        for name, fn in runs.items():
            gc.collect()
            per[name].append(fn())
    us = 1e6 / n
    print(f"tiny-op chain, {n} ops, traced with values={_values!r}, median of {rounds} "
          "interleaved rounds (us per op; traced "
          "total is the whole with block)")
    print("| | forward | backward | total |")
    print("| --- | --- | --- | --- |")
    for name in runs:
        cells = [statistics.median(r[k] for r in per[name]) * us for k in range(3)]
        print(f"| {name} | " + " | ".join(f"{c:.2f}" for c in cells) + " |")
    ratios = [statistics.median(t[k] / u[k] for t, u in zip(per["traced"], per["untraced"]))
              for k in range(3)]
    print("| traced / untraced | " + " | ".join(f"{r:.2f}x" for r in ratios) + " |")


def mlp_traced(rounds: int) -> None:
    """The MLP step traced (workloads.mlp_gradviz's way) against untraced, in one process."""
    import workloads

    import gradviz as gv

    step = workloads._mlp_step(gv)

    def traced_step() -> None:
        with gv.trace(values=_values, keep_runs=1):
            step()

    steps = {"untraced": step, "traced": traced_step}
    _interleave(steps, rounds, f"MLP step traced (values={_values!r})", "untraced", "traced")


def _interleave(steps: dict[str, Callable[[], None]], rounds: int, title: str, a: str,
                b: str) -> None:
    per = _rounds(steps, rounds)
    print(f"{title}, median of {rounds} interleaved rounds of 5: {a} "
          f"{statistics.median(per[a]) * 1e3:.3f} ms, {b} "
          f"{statistics.median(per[b]) * 1e3:.3f} ms, ratio {b}/{a} "
          f"{statistics.median(y / x for x, y in zip(per[a], per[b])):.2f}")


def _rounds(steps: dict[str, Callable[[], None]], rounds: int) -> dict[str, list[float]]:
    """Each step's median of 5 runs, per round, the steps taking turns within each round."""
    for fn in steps.values():
        for _ in range(3):
            fn()
    per: dict[str, list[float]] = {k: [] for k in steps}
    for _ in range(rounds):
        for name, fn in steps.items():
            gc.collect()
            times = []
            for _ in range(5):
                t0 = _clock()
                fn()
                times.append(_clock() - t0)
            per[name].append(statistics.median(times))
    return per


def mlp(rounds: int, floor: bool = False) -> None:
    """The MLP step (workloads.py's), gradviz against hand-written NumPy, in one process; with
    ``floor``, the perfect op layer's step with and without the engine too (mlp_floor.py)."""
    import workloads

    import gradviz as gv

    steps = {"NumPy": _numpy_mlp_step(workloads), "gradviz": workloads._mlp_step(gv)}
    if not floor:
        _interleave(steps, rounds, "MLP step", "NumPy", "gradviz")
        return
    import mlp_floor

    steps["perfect op layer + engine"] = mlp_floor.floor_step()
    steps["perfect op layer, no engine"] = mlp_floor.floor_step(engine=False)
    per = _rounds(steps, rounds)
    print(f"MLP step, median of {rounds} interleaved rounds of 5 (ms; ratio: median of the "
          "rounds' ratios to NumPy)")
    print("| contender | ms | / NumPy |")
    print("| --- | --- | --- |")
    for name, times in per.items():
        ratio = statistics.median(t / n for t, n in zip(times, per["NumPy"]))
        print(f"| {name} | {statistics.median(times) * 1e3:.3f} | {ratio:.3f} |")


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


def _million_run(make: Callable[[], Any], n: int, paused: bool) -> tuple[float, float]:
    """(forward, backward) seconds of ``n`` ops of the 1M-op chain's workload from ``make()``."""
    gc.collect()
    x = make()
    if paused:
        gc.disable()
    try:
        t0 = _clock()
        y = x
        for _ in range(n):
            y = y * 1.000001
        t1 = _clock()
    finally:
        gc.enable()
    y.sum().backward()
    t2 = _clock()
    return t1 - t0, t2 - t1


def million(rounds: int, n: int) -> None:
    """The 1M-op chain's workload at ``n`` ops: gradviz and the floor (chain_floor.py), each
    with and without the collector paused in the forward, interleaved in one process."""
    import chain_floor

    import gradviz as gv

    def start() -> Any:
        return gv.tensor([0.5, 0.25], dtype=gv.float64, requires_grad=True)

    def floor_start() -> Any:
        return chain_floor.leaf(np.array([0.5, 0.25]))

    runs: dict[str, Callable[[], tuple[float, float]]] = {
        "gradviz": lambda: _million_run(start, n, False),
        "gradviz, collector paused in the forward": lambda: _million_run(start, n, True),
        "floor (chain_floor.py)": lambda: _million_run(floor_start, n, False),
        "floor, collector paused in the forward": lambda: _million_run(floor_start, n, True)}
    per: dict[str, list[tuple[float, float]]] = {k: [] for k in runs}
    for _ in range(rounds):
        for name, fn in runs.items():
            per[name].append(fn())
    us = 1e6 / n
    print(f"1M-op chain's workload at {n} ops, median of {rounds} interleaved rounds (us per op)")
    print("| contender | forward | backward | total |")
    print("| --- | --- | --- | --- |")
    for name, rs in per.items():
        cells = [statistics.median(r[k] for r in rs) * us for k in (0, 1)]
        print(f"| {name} | {cells[0]:.2f} | {cells[1]:.2f} | {sum(cells):.2f} |")
    names = list(per)
    for a, b in ((0, 1), (2, 3)):
        ratio = statistics.median(sum(x) / sum(y) for x, y in zip(per[names[a]], per[names[b]]))
        print(f"{names[a]} / {names[b]}: {ratio:.2f}")


def main(argv: list[str]) -> int:
    global _clock, _values
    rounds = int(argv[argv.index("--rounds") + 1]) if "--rounds" in argv else 11
    if "--cpu" in argv:
        _clock = time.process_time
    if "--values" in argv:
        _values = argv[argv.index("--values") + 1]
    n = int(argv[argv.index("--ops") + 1]) if "--ops" in argv else 9999
    if "--million" in argv:
        at = argv.index("--million") + 1
        ops = int(argv[at]) if at < len(argv) and argv[at].isdigit() else 300_000
        million(int(argv[argv.index("--rounds") + 1]) if "--rounds" in argv else 3, ops)
        return 0
    if "--mlp" in argv:
        if "--traced" in argv:
            mlp_traced(rounds)
        else:
            mlp(rounds, floor="--floor" in argv)
        return 0
    if "--traced" in argv and "--profile" in argv:
        import gradviz as gv

        x = gv.tensor(np.linspace(0.1, 0.4, 4), requires_grad=True)
        _traced(x, n)  # warm up
        prof = cProfile.Profile()
        prof.runcall(_traced, x, n)
        pstats.Stats(prof).sort_stats("tottime").print_stats(25)
        return 0
    if "--traced" in argv:
        traced(rounds, n)
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
    for ref in ("numpy", "torch", "minimal", "floor"):
        if ref in total:
            ratio = statistics.median(a / b for a, b in zip(total["gradviz"], total[ref]))
            print(f"gradviz / {ref}: {ratio:.2f}")
    for ref in ("numpy", "torch"):
        if ref in total:
            ratio = statistics.median(a / b for a, b in zip(total["floor"], total[ref]))
            print(f"floor (a perfect op layer on gradviz's engine) / {ref}: {ratio:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
