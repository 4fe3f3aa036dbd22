"""The benchmark workloads. Each runs in its own process (see ``run.py``) and prints JSON.

Usage: ``python benchmarks/workloads.py NAME [--repeat N]``. Times are medians over repeats, in
seconds unless the key says otherwise; every workload also reports min and max.
"""

from __future__ import annotations

import gc
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

CHAIN_OPS = 10_000  # tiny-op chain: mul, add, tanh repeated on a (4,) float64 tensor
MLP = (784, 256, 128, 10)
BATCH = 64
DIGITS = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "gradviz",
                      "datasets", "digits.npz")


def _timed(fn: Callable[[], object], repeat: int, warmup: int = 1) -> dict[str, float]:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return {"median": statistics.median(times), "min": min(times), "max": max(times)}


# -- tiny-op chain ---------------------------------------------------------------------------------
def _chain(x: Any, backward: Callable[[Any], object]) -> Callable[[], None]:
    """The timed chain from ``x``, in ``x``'s framework; ``backward`` runs the backward pass.
    The same code for gradviz, PyTorch and the minimal engine: only the imports differ."""

    def run() -> None:
        y = x
        for _ in range(CHAIN_OPS // 3):
            y = (y * 1.0001 + 0.001).tanh()
        backward(y.sum())

    return run


def chain_gradviz(repeat: int) -> dict:
    import gradviz as gv

    x = gv.tensor(np.linspace(0.1, 0.4, 4), requires_grad=True)
    return _timed(_chain(x, lambda s: s.backward()), repeat)


def chain_traced(repeat: int) -> dict:
    import gradviz as gv

    chain = _chain(gv.tensor(np.linspace(0.1, 0.4, 4), requires_grad=True),
                   lambda s: s.backward())

    def run() -> None:
        with gv.trace(values="small", keep_runs=1):
            chain()

    return _timed(run, repeat)


def chain_recording_floor(repeat: int) -> dict:
    """For reference: the chain under the recording floor (trace_floor.py), the least any
    recorder of gradviz's events in Python pays, where chain_traced runs a real trace."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import trace_floor

    import gradviz as gv

    chain = _chain(gv.tensor(np.linspace(0.1, 0.4, 4), requires_grad=True),
                   lambda s: s.backward())

    def run() -> None:
        with trace_floor.recording_floor("small"):
            chain()

    return _timed(run, repeat)


def chain_numpy(repeat: int) -> dict:
    x = np.linspace(0.1, 0.4, 4)

    def run() -> None:
        outs = []
        y = x
        for _ in range(CHAIN_OPS // 3):
            y = np.tanh(y * 1.0001 + 0.001)
            outs.append(y)
        g = np.ones(4)
        for y in reversed(outs):
            g = g * (1 - y * y)
            g = g * 1.0001
        return g

    return _timed(run, repeat)


def chain_minimal(repeat: int) -> dict:
    """The floor: the same chain on the least engine that can run it (minimal_engine.py)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import minimal_engine as m

    return _timed(_chain(m.Var(np.linspace(0.1, 0.4, 4), requires_grad=True), m.backward),
                  repeat)


def chain_floor(repeat: int) -> dict:
    """For reference: the chain on a perfect op layer with gradviz's engine (chain_floor.py)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import chain_floor as floor

    return _timed(_chain(floor.leaf(np.linspace(0.1, 0.4, 4)), lambda s: s.backward()), repeat)


def chain_torch(repeat: int) -> dict:
    import torch

    torch.set_num_threads(1)
    x = torch.linspace(0.1, 0.4, 4, dtype=torch.float64, requires_grad=True)
    return _timed(_chain(x, lambda s: s.backward()), repeat)


# -- MLP training step -----------------------------------------------------------------------------
def _mlp_data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return (rng.standard_normal((BATCH, MLP[0])).astype(np.float32),
            rng.integers(0, MLP[-1], BATCH))


def _mlp_step(lib: Any) -> Callable[[], None]:
    """One training step written once for ``gradviz`` or ``torch`` (the same API)."""
    nn = lib.nn
    lib.manual_seed(0)
    X, y = (lib.from_numpy(a) for a in _mlp_data())
    model = nn.Sequential(nn.Linear(MLP[0], MLP[1]), nn.ReLU(), nn.Linear(MLP[1], MLP[2]),
                          nn.ReLU(), nn.Linear(MLP[2], MLP[3]))
    opt = lib.optim.SGD(model.parameters(), lr=0.01)

    def step() -> None:
        opt.zero_grad()
        nn.functional.cross_entropy(model(X), y).backward()
        opt.step()

    return step


def mlp_gradviz(repeat: int, traced: bool = False) -> dict:
    import gradviz as gv

    step = _mlp_step(gv)

    def run() -> None:
        if traced:
            with gv.trace(values="small", keep_runs=1):
                step()
        else:
            step()

    return _timed(run, repeat, warmup=3)


def mlp_traced(repeat: int) -> dict:
    return mlp_gradviz(repeat, traced=True)


def mlp_recording_floor(repeat: int) -> dict:
    """For reference: the MLP step under the recording floor (trace_floor.py)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import trace_floor

    import gradviz as gv

    step = _mlp_step(gv)

    def run() -> None:
        with trace_floor.recording_floor("small"):
            step()

    return _timed(run, repeat, warmup=3)


def mlp_floor(repeat: int) -> dict:
    """For reference: the step on a perfect op layer with gradviz's engine (mlp_floor.py)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import mlp_floor as floor

    return _timed(floor.floor_step(), repeat, warmup=3)


def mlp_numpy(repeat: int) -> dict:
    X, y = _mlp_data()
    rng = np.random.default_rng(0)
    Ws = [(rng.standard_normal((o, i)) / np.sqrt(i)).astype(np.float32)
          for i, o in zip(MLP[:-1], MLP[1:])]
    bs = [np.zeros(o, np.float32) for o in MLP[1:]]
    onehot = np.eye(MLP[-1], dtype=np.float32)[y]

    def run() -> None:
        acts = [X]
        h = X
        for k, (W, b) in enumerate(zip(Ws, bs)):
            h = h @ W.T + b
            if k < len(Ws) - 1:
                h = np.maximum(h, 0)
            acts.append(h)
        z = h - h.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        g = (p - onehot) / BATCH
        for k in range(len(Ws) - 1, -1, -1):
            gW = g.T @ acts[k]
            gb = g.sum(axis=0)
            if k:
                g = (g @ Ws[k]) * (acts[k] > 0)
            Ws[k] -= 0.01 * gW
            bs[k] -= 0.01 * gb

    return _timed(run, repeat, warmup=3)


def mlp_torch(repeat: int) -> dict:
    import torch

    torch.set_num_threads(1)
    return _timed(_mlp_step(torch), repeat, warmup=3)


# -- CNN training step ------------------------------------------------------------------------
def _cnn_data() -> tuple[np.ndarray, np.ndarray]:
    """The first 64 digits, read straight from the package's file (no gradviz import, so the
    PyTorch process stays free of it)."""
    with np.load(DIGITS) as f:
        images, labels = f["images"][:BATCH], f["labels"][:BATCH]
    return (images.astype(np.float32)[:, None] / np.float32(16.0)), labels.astype(np.int64)


def _cnn_step(lib: Any) -> Callable[[], None]:
    """One training step of ``examples/cnn_digits.py``'s LeNet-style net (Adam, as there),
    written once for ``gradviz`` or ``torch``."""
    nn = lib.nn
    lib.manual_seed(0)
    X, y = (lib.from_numpy(a) for a in _cnn_data())
    model = nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))
    opt = lib.optim.Adam(model.parameters(), lr=0.005)

    def step() -> Any:
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(X), y)
        loss.backward()
        opt.step()
        return loss

    return step


def cnn_gradviz(repeat: int) -> dict:
    import gradviz as gv

    return _timed(_cnn_step(gv), repeat, warmup=3)


def cnn_torch(repeat: int) -> dict:
    import torch

    torch.set_num_threads(1)
    return _timed(_cnn_step(torch), repeat, warmup=3)


# -- a 1,000,000-op chain --------------------------------------------------------------------------
def _rss() -> tuple[int, int]:
    """(current RSS, peak RSS) in bytes, from /proc (Linux)."""
    cur = peak = 0
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                cur = int(line.split()[1]) * 1024
            elif line.startswith("VmHWM:"):
                peak = int(line.split()[1]) * 1024
    return cur, peak


def _million(make: Callable[[], object], step: Callable[[object], object],
             backward: Callable[[object], None]) -> dict:
    gc.collect()
    base, _ = _rss()
    t0 = time.perf_counter()
    x = make()
    y = x
    for _ in range(1_000_000):
        y = step(y)
    backward(y)
    elapsed = time.perf_counter() - t0
    _, peak = _rss()
    del y
    gc.collect()
    after, _ = _rss()
    return {"median": elapsed, "min": elapsed, "max": elapsed, "base_rss": base,
            "peak_rss": peak, "after_rss": after}


def million_gradviz(repeat: int) -> dict:
    import gradviz as gv

    return _million(lambda: gv.tensor([0.5, 0.25], dtype=gv.float64, requires_grad=True),
                    lambda t: t * 1.000001, lambda t: t.sum().backward())


def million_floor(repeat: int) -> dict:
    """For reference: the 1M-op chain on a perfect op layer with gradviz's engine."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import chain_floor as floor

    return _million(lambda: floor.leaf(np.array([0.5, 0.25])), lambda t: t * 1.000001,
                    lambda t: t.sum().backward())


def million_torch(repeat: int) -> dict:
    import torch

    torch.set_num_threads(1)
    return _million(lambda: torch.tensor([0.5, 0.25], dtype=torch.float64, requires_grad=True),
                    lambda t: t * 1.000001, lambda t: t.sum().backward())


# -- import time ---------------------------------------------------------------------------------
def import_gradviz(repeat: int) -> dict:
    """``import gradviz`` in a fresh interpreter: the CPU time (user + system) of
    ``python -c "import gradviz"`` minus that of ``python -c "import numpy"`` (NumPy's own
    import is not gradviz's). CPU time, not wall time: on the shared machine a process waits
    for a core for longer than it computes."""
    import resource
    import subprocess

    def once(code: str) -> float:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([sys.executable, "-c", code], check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)

    times = []
    for _ in range(repeat):
        base = once("import numpy")
        times.append(max(0.0, once("import gradviz") - base))
    return {"median": statistics.median(times), "min": min(times), "max": max(times)}


# -- a 2,000-step training loop, traced with the defaults (NOTE [long runs]) ---------------------
LOOP_STEPS = 2000


def _loop(traced: bool) -> dict:
    """PyTorch's polynomial example (gradviz/examples/polynomial.py), once: time, the peak
    resident memory of the process (VmHWM: the interpreter, NumPy and gradviz included) and,
    traced, the size of trace.json as ``save`` writes it."""
    import contextlib
    import io
    import runpy
    import tempfile

    import gradviz as gv

    path = Path(gv.__file__).parent / "examples" / "polynomial.py"
    os.environ["GRADVIZ_POLY_STEPS"] = str(LOOP_STEPS)
    gc.collect()
    t0 = time.perf_counter()
    size = 0
    with contextlib.redirect_stdout(io.StringIO()):
        if traced:
            with gv.trace(name="polynomial") as tr:
                runpy.run_path(str(path), run_name="__main__")
            with tempfile.TemporaryDirectory() as tmp:
                tr.save(Path(tmp) / "trace.json")
                size = (Path(tmp) / "trace.json").stat().st_size
        else:
            runpy.run_path(str(path), run_name="__main__")
    elapsed = time.perf_counter() - t0
    _, peak = _rss()
    return {"median": elapsed, "min": elapsed, "max": elapsed, "peak_bytes": peak,
            "file_bytes": size}


def loop_untraced(repeat: int) -> dict:
    return _loop(False)


def loop_traced(repeat: int) -> dict:
    return _loop(True)


# -- rendering -------------------------------------------------------------------------------------
def render_1000(repeat: int) -> dict:
    import gradviz as gv
    from gradviz import render

    x = gv.ones(2, requires_grad=True)
    y = x
    for _ in range(1000):
        y = y * 1.0
    graph = gv.graph_of(y)
    return _timed(lambda: render.to_svg(render.draw_backward(graph, max_nodes=10**9)), repeat)


def render_20000(repeat: int) -> dict:
    import gradviz as gv
    from gradviz import render

    with gv.trace(values="none") as tr:
        x = gv.ones(2, requires_grad=True)
        y = x
        for k in range(20_000):
            y = y * 1.0 if k % 2 else y + 1.0
        y.sum().backward()
    return _timed(lambda: (render.to_svg(render.draw_backward(tr)),
                           render.to_svg(render.draw_forward(tr))), repeat, warmup=0)


def render_torchviz_case(repeat: int) -> dict:
    """torchviz hits RecursionError on a 1,000-op chain; here it renders (collapsed)."""
    import gradviz as gv
    from gradviz import render

    sys.setrecursionlimit(1000)  # Python's default: no deep recursion is needed anywhere
    x = gv.ones(2, requires_grad=True)
    y = x
    for _ in range(5000):
        y = (y * 1.0).tanh()
    return _timed(lambda: render.to_svg(render.draw_backward(y)), repeat, warmup=0)


WORKLOADS = {name: fn for name, fn in globals().items()
             if callable(fn) and name.split("_")[0] in ("chain", "mlp", "cnn", "million", "render",
                                                              "import", "loop")}


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in WORKLOADS:
        print(f"usage: workloads.py NAME [--repeat N]; names: {', '.join(WORKLOADS)}",
              file=sys.stderr)
        return 2
    repeat = int(argv[argv.index("--repeat") + 1]) if "--repeat" in argv else 5
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    print(json.dumps(WORKLOADS[argv[0]](repeat)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
