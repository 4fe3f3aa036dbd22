"""The recording floor: the least a tracer in Python must do at each event, and what it costs.

Issue #16 asks that tracing cost at most 2x on the tiny-op chain and 1.3x on the MLP step. This
module answers "how low can any recorder built on gradviz's events go?" by timing a recorder
that does only what no trace can skip at the moment an event happens, and nothing else:

- per forward op: take the lock and compare the thread (events may come from several threads),
  find the user's frame and instruction (``recorder.user_frame``: where the op came from;
  read later, the frame has moved on), hold the op's node, inputs and outputs (their ids and
  graph read later), and take each output value's snapshot with the trace's value policy
  (``model.snapshot``; a later in-place op or optimizer step would change it);
- per engine step (``enqueue``, ``execute``, ``accumulate``, ``release_saved``): the lock and
  the thread, the step's kind, node and numbers, and a snapshot of each gradient sent (the
  engine may add into it in place later).

Full views of one buffer (a weight and its transpose) share their stats within an op and within
a backward run, as they do in a trace (``shared`` of ``model.snapshot``).

It gives no ids, draws no graph, names nothing and folds nothing: ``Floor.log`` is a list of
tuples that nobody reads. It even leaves out two captures a trace cannot put off: the values a
node saves (backward frees them) and the value of a tensor first seen as an input (a parameter:
the optimizer changes it in place). A real trace does all of that as well, so its cost is above
this one's. If this floor is above a target, no recorder of gradviz's events written in Python can
meet the target; only fewer events (an engine reporting less) or a compiled recorder could.

Usage (from the repository root)::

    .venv/bin/python benchmarks/trace_floor.py [--rounds R] [--values small|none]

It prints the tiny-op chain (forward, backward, total, per op) and the MLP step (ms) untraced,
under this floor and under ``gradviz.trace(values=..., keep_runs=1)``, as medians of
interleaved rounds in one process.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import statistics
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import gradviz as gv  # noqa: E402
from gradviz.autograd import events  # noqa: E402
from gradviz.trace.model import SMALL, snapshot  # noqa: E402
from gradviz.trace.naming import user_frame  # noqa: E402

_get_ident = threading.get_ident


class Floor(events.Observer):
    """An observer that records the irreducible part of each event (see the module's doc)."""

    def __init__(self, values: str = "small") -> None:
        self.values = values
        self.log: list[tuple] = []
        self.upto = SMALL if values == "small" else -1
        # A plain lock, cheaper than the RLock a trace needs (its handlers may run ops).
        self.lock = threading.Lock()
        self.thread = _get_ident()
        self.run_shared: dict = {}  # a backward run's views of one buffer share their stats

    def op(self, name: str, node: Any, inputs: tuple, outputs: tuple, kwargs: dict,
           inplace: bool, function: bool = False) -> None:
        with self.lock:
            if _get_ident() != self.thread:
                self.thread = _get_ident()
            frame = user_frame(2)  # past this method and emit_op: the user's line
            snaps = []
            shared: dict = {}  # one op's views of one buffer share their stats, as in a trace
            for t in outputs:
                arr = t._data  # snapshot()'s usual case, a small array copied, in line
                snaps.append(arr.copy() if arr.size <= self.upto and arr.dtype.kind in "biuf"
                             else snapshot(arr, self.values, shared))
            self.log.append((name, node, inputs, outputs, kwargs, inplace, frame.f_code,
                             frame.f_lasti, snaps))

    def enqueue(self, node: Any, priority: int, engine_data: dict | None = None) -> None:
        with self.lock:
            if _get_ident() != self.thread:
                self.thread = _get_ident()
            self.log.append(("enqueue", node, priority))

    def execute(self, node: Any, grad_outputs: list, grad_inputs: tuple,
                engine_data: dict | None = None) -> None:
        with self.lock:
            if _get_ident() != self.thread:
                self.thread = _get_ident()
            sent = []
            for g in grad_inputs:
                if g is None:
                    sent.append(None)
                elif g.size <= self.upto and g.dtype.kind in "biuf":
                    sent.append(g.copy())
                else:
                    sent.append(snapshot(g, self.values, self.run_shared))
            self.log.append(("execute", node, tuple(grad_outputs), sent))

    def accumulate(self, node: Any, input_nr: int, grad: Any, buffer: Any, source: Any,
                   remaining: int, engine_data: dict | None = None) -> None:
        with self.lock:
            if _get_ident() != self.thread:
                self.thread = _get_ident()
            self.log.append(("accumulate", node, input_nr, grad, buffer, source, remaining))

    def release_saved(self, node: Any, engine_data: dict | None = None) -> None:
        with self.lock:
            if _get_ident() != self.thread:
                self.thread = _get_ident()
            self.log.append(("release_saved", node))


@contextlib.contextmanager
def recording_floor(values: str = "small") -> Iterator[Floor]:
    """A ``with`` block in which a :class:`Floor` is the registered observer, as a trace's
    observer is inside ``gradviz.trace()``.

    Example:
        >>> with recording_floor() as floor:
        ...     _ = gv.ones(2, requires_grad=True) * 2
        >>> [entry[0] for entry in floor.log]
        ['mul']
    """
    floor = events.add_observer(Floor(values))
    try:
        yield floor
    finally:
        events.remove_observer(floor)


def _chain(n: int) -> tuple[Any, Callable[[], Any]]:
    x = gv.tensor(np.linspace(0.1, 0.4, 4), requires_grad=True)

    def forward() -> Any:
        y = x
        for _ in range(n // 3):
            y = (y * 1.0001 + 0.001).tanh()
        return y.sum()

    return x, forward


def _chain_run(mode: str, n: int, values: str) -> tuple[float, float]:
    """(forward, backward) seconds of the chain, ``mode`` being untraced, floor or traced."""
    _, forward = _chain(n)
    clock = time.perf_counter

    def both() -> tuple[float, float]:
        t0 = clock()
        s = forward()
        t1 = clock()
        s.backward()
        return t1 - t0, clock() - t1

    if mode == "floor":
        with recording_floor(values):
            return both()
    if mode == "traced":
        with gv.trace(values=values, keep_runs=1):
            return both()
    return both()


def chain(rounds: int, n: int, values: str) -> None:
    modes = ("untraced", "floor", "traced")
    per: dict[str, list[tuple[float, float]]] = {m: [] for m in modes}
    for _ in range(rounds):
        for m in modes:
            gc.collect()
            per[m].append(_chain_run(m, n, values))
    us = 1e6 / n
    print(f"tiny-op chain, {n} ops, values={values!r}, median of {rounds} interleaved rounds "
          "(us per op; ratios: medians of the rounds' ratios to untraced)")
    print("| | forward | backward | total | total / untraced |")
    print("| --- | --- | --- | --- | --- |")
    for m in modes:
        f = statistics.median(r[0] for r in per[m]) * us
        b = statistics.median(r[1] for r in per[m]) * us
        t = statistics.median((r[0] + r[1]) / (u[0] + u[1])
                              for r, u in zip(per[m], per["untraced"]))
        print(f"| {m} | {f:.2f} | {b:.2f} | {f + b:.2f} | {t:.2f}x |")


def mlp(rounds: int, values: str) -> None:
    import breakdown
    import workloads

    step = workloads._mlp_step(gv)

    def floor_step() -> None:
        with recording_floor(values):
            step()

    def traced_step() -> None:
        with gv.trace(values=values, keep_runs=1):
            step()

    steps = {"untraced": step, "floor": floor_step, "traced": traced_step}
    per = breakdown._rounds(steps, rounds)  # warmed up, then each step's median of 5 per round
    print(f"MLP step, values={values!r}, median of {rounds} interleaved rounds of 5 (ms; "
          "ratios: medians of the rounds' ratios to untraced)")
    print("| | ms | / untraced |")
    print("| --- | --- | --- |")
    for name, times in per.items():
        ratio = statistics.median(t / u for t, u in zip(times, per["untraced"]))
        print(f"| {name} | {statistics.median(times) * 1e3:.3f} | {ratio:.2f}x |")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--ops", type=int, default=9999)
    parser.add_argument("--values", choices=("small", "none"), default="small")
    args = parser.parse_args(argv)
    chain(args.rounds, args.ops, args.values)
    print()
    mlp(args.rounds, args.values)


if __name__ == "__main__":
    main()
