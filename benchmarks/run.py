"""``make bench``: run every workload in its own process and print medians and target ratios.

Each framework runs in a separate process so that one's garbage collector or thread pool does
not tax another. The machine's speed drifts (a shared VM), so the workloads compared with each
other run in rounds, one process of each per round, interleaved: a slow minute then slows every
framework alike instead of one of them. A workload's number is the median over its rounds of
each process's median; min and max span all its runs; a ratio is the median over the rounds of
that round's ratio. PyTorch columns appear when torch is
installed (the ``parity`` extra). Targets are those of the performance issue (see
docs/performance.md); a ratio is "met" when it is at or below its target.

Usage: ``python benchmarks/run.py [--repeat N] [--rounds R] [--quick]``: N timed runs in each
process (5), R rounds (3); ``--quick`` skips the 1,000,000-op chains and the real models (with
torch: a ResNet-18-shaped and a GPT-2-shaped model traced whole, benchmarks/real_models.py).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def measure(name: str, repeat: int) -> dict | None:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, str(HERE / "workloads.py"), name, "--repeat",
                           str(repeat)], capture_output=True, text=True, env=env, timeout=3600)
    if proc.returncode != 0:
        print(f"  {name}: failed\n{proc.stderr.strip()}", file=sys.stderr)
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def measure_rounds(names: list[str], repeat: int, rounds: int) -> dict[str, dict | None]:
    """Run ``names`` interleaved, ``rounds`` times; combine each workload's runs."""
    runs: dict[str, list[dict]] = {n: [] for n in names}
    for k in range(rounds):
        for name in names:
            print(f"running {name} (round {k + 1}/{rounds}) ...", file=sys.stderr, flush=True)
            res = measure(name, repeat)
            if res is not None:
                runs[name].append(res)
    out: dict[str, dict | None] = {}
    for name, rs in runs.items():
        if not rs:
            out[name] = None
            continue
        combined = dict(rs[0])
        combined.update(median=statistics.median(r["median"] for r in rs),
                        min=min(r["min"] for r in rs), max=max(r["max"] for r in rs),
                        rounds=[r["median"] for r in rs] if len(rs) == rounds else None)
        out[name] = combined
    return out


def fmt_time(r: dict | None, per: int = 1, unit: str = "ms") -> str:
    if r is None:
        return "-"
    scale = {"ms": 1e3, "us": 1e6, "s": 1.0}[unit] / per
    return (f"{r['median'] * scale:.2f} {unit} "
            f"({r['min'] * scale:.2f}-{r['max'] * scale:.2f})")


def ratio(a: dict | None, b: dict | None) -> float | None:
    """``a / b``: the median of the per-round ratios when both ran in the same rounds (a round's
    two numbers were measured a few seconds apart, so the machine's drift cancels out), else
    the ratio of the medians."""
    if a is None or b is None:
        return None
    ra, rb = a.get("rounds"), b.get("rounds")
    if ra and rb and len(ra) == len(rb):
        return statistics.median(x / y for x, y in zip(ra, rb))
    return a["median"] / b["median"]


def main(argv: list[str]) -> int:
    repeat = int(argv[argv.index("--repeat") + 1]) if "--repeat" in argv else 5
    rounds = int(argv[argv.index("--rounds") + 1]) if "--rounds" in argv else 3
    quick = "--quick" in argv
    have_torch = importlib.util.find_spec("torch") is not None
    torch_too = (lambda *names: list(names)) if have_torch else (lambda *names: [])
    groups = [
        ["chain_gradviz", "chain_numpy", "chain_minimal", "chain_floor", "chain_traced",
         "chain_recording_floor", *torch_too("chain_torch")],
        ["mlp_gradviz", "mlp_numpy", "mlp_floor", "mlp_traced", "mlp_recording_floor",
         *torch_too("mlp_torch")],
        ["cnn_gradviz", *torch_too("cnn_torch")],
    ]
    results: dict[str, dict | None] = {}
    for group in groups:
        results.update(measure_rounds(group, repeat, rounds))
    results.update(measure_rounds(["render_1000", "render_20000", "render_torchviz_case",
                                   "import_gradviz"], repeat, 1))
    # One process each per round (the loop takes seconds): its time ratio is over the rounds.
    results.update(measure_rounds(["loop_untraced", "loop_traced"], 1, rounds))
    if not quick:  # one run each: a million ops take tens of seconds
        results.update(measure_rounds(["million_gradviz", "million_floor",
                                       *torch_too("million_torch")], 1, 1))
    r = results.get

    ops = 10_000 - 10_000 % 3
    print()
    print(f"Machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}; medians over "
          f"{rounds} interleaved rounds of {repeat} runs (min-max of all runs)")
    print()
    print("| workload | gradviz | NumPy | PyTorch | minimal engine |")
    print("| --- | --- | --- | --- | --- |")
    print(f"| tiny-op chain, per op (fwd+bwd) | {fmt_time(r('chain_gradviz'), ops, 'us')} | "
          f"{fmt_time(r('chain_numpy'), ops, 'us')} | {fmt_time(r('chain_torch'), ops, 'us')} | "
          f"{fmt_time(r('chain_minimal'), ops, 'us')} |")
    print(f"| MLP 784-256-128-10 step, batch 64 | {fmt_time(r('mlp_gradviz'))} | "
          f"{fmt_time(r('mlp_numpy'))} | {fmt_time(r('mlp_torch'))} | |")
    print(f"| LeNet-style CNN step (digits), batch 64 | {fmt_time(r('cnn_gradviz'))} | | "
          f"{fmt_time(r('cnn_torch'))} | |")
    if not quick:
        g, t = r("million_gradviz"), r("million_torch")
        mb = 1024 * 1024

        def mem(x: dict | None) -> str:
            if x is None:
                return "-"
            return (f"{x['median']:.1f} s, peak +{(x['peak_rss'] - x['base_rss']) / mb:.0f} MB, "
                    f"after drop +{(x['after_rss'] - x['base_rss']) / mb:.0f} MB")

        print(f"| 1,000,000-op chain | {mem(g)} | - | {mem(t)} | |")
    print(f"| traced tiny-op chain | {fmt_time(r('chain_traced'), ops, 'us')} | | | |")
    print(f"| traced MLP step | {fmt_time(r('mlp_traced'))} | | | |")
    print(f"| 1,000-node backward graph to SVG | {fmt_time(r('render_1000'), 1, 's')} | | | |")
    print(f"| 20,000-op trace to SVG (collapsed) | {fmt_time(r('render_20000'), 1, 's')} | | | |")
    print("| import gradviz (CPU time over import numpy) | "
          f"{fmt_time(r('import_gradviz'), 1, 's')} | | | |")
    print(f"| torchviz's RecursionError case | {fmt_time(r('render_torchviz_case'), 1, 's')} "
          "| | | |")
    lu, lt = r("loop_untraced"), r("loop_traced")
    if lt is not None:
        print(f"| 2,000-step training-loop trace | {fmt_time(lt, 1, 's')}, peak "
              f"{lt['peak_bytes'] / 1e6:.0f} MB, trace.json {lt['file_bytes'] / 1e6:.2f} MB "
              f"(untraced {fmt_time(lu, 1, 's')}) | | | |")

    rows = [
        ("tiny-op chain: gradviz / NumPy", ratio(r("chain_gradviz"), r("chain_numpy")), 3.0),
        ("tiny-op chain: gradviz / PyTorch", ratio(r("chain_gradviz"), r("chain_torch")), 0.6),
        ("MLP step: gradviz / NumPy", ratio(r("mlp_gradviz"), r("mlp_numpy")), 1.10),
        ("MLP step: gradviz / PyTorch", ratio(r("mlp_gradviz"), r("mlp_torch")), 1.0),
        ("CNN step: gradviz / PyTorch", ratio(r("cnn_gradviz"), r("cnn_torch")), 2.0),
        ("tracing overhead, MLP step", ratio(r("mlp_traced"), r("mlp_gradviz")), 1.3),
        ("tracing overhead, tiny-op chain", ratio(r("chain_traced"), r("chain_gradviz")), 2.0),
    ]
    # The budget of a long run's trace (docs/guarantees.md, NOTE [long runs]).
    rows.append(("2,000-step training-loop trace: traced / untraced time",
                 ratio(r("loop_traced"), r("loop_untraced")), 3.0))
    lt = r("loop_traced")
    rows.append(("2,000-step training-loop trace: peak memory (MB)",
                 None if lt is None else lt["peak_bytes"] / 1e6, 300.0))
    rows.append(("2,000-step training-loop trace: trace.json (MB)",
                 None if lt is None else lt["file_bytes"] / 1e6, 5.0))
    if not quick and r("million_gradviz") and r("million_torch"):
        g, t = r("million_gradviz"), r("million_torch")
        rows.append(("1M chain wall time: gradviz / PyTorch", g["median"] / t["median"], 0.8))
        rows.append(("1M chain peak memory: gradviz / PyTorch",
                     (g["peak_rss"] - g["base_rss"]) / max(1, t["peak_rss"] - t["base_rss"]),
                     1.0))
    if not quick and r("million_gradviz"):
        g = r("million_gradviz")
        rows.append(("1M chain: memory after drop / before", g["after_rss"] / g["base_rss"],
                     1.15))
    # For reference, not targets: the least any pure-Python engine pays (minimal_engine.py),
    # and what a perfect op layer on gradviz's unchanged engine would cost (chain_floor.py,
    # mlp_floor.py): where a target is below the latter, no op-layer work can meet it.
    references = [
        ("tiny-op chain: minimal engine / NumPy", ratio(r("chain_minimal"), r("chain_numpy"))),
        ("tiny-op chain: perfect op layer on gradviz's engine / NumPy",
         ratio(r("chain_floor"), r("chain_numpy"))),
        ("tiny-op chain: perfect op layer on gradviz's engine / PyTorch",
         ratio(r("chain_floor"), r("chain_torch"))),
        ("MLP step: perfect op layer on gradviz's engine / NumPy",
         ratio(r("mlp_floor"), r("mlp_numpy"))),
        # The recording floor (trace_floor.py): what recording only the irreducible part of each
        # event costs over the untraced run. Where a tracing target is below it, no recorder of
        # gradviz's events written in Python can meet that target.
        ("tracing overhead floor (recording only), tiny-op chain",
         ratio(r("chain_recording_floor"), r("chain_gradviz"))),
        ("tracing overhead floor (recording only), MLP step",
         ratio(r("mlp_recording_floor"), r("mlp_gradviz"))),
    ]
    if not quick and r("million_floor") and r("million_torch"):
        references.append(("1M chain: perfect op layer on gradviz's engine / PyTorch",
                           r("million_floor")["median"] / r("million_torch")["median"]))
    if have_torch and not quick:  # real models traced whole (issue #32): minutes, so not --quick
        import real_models  # benchmarks/ is this script's folder, first on sys.path

        rows += real_models.report(real_models.measure(rounds))
    render_rows = [("import gradviz (CPU s, over importing NumPy)", r("import_gradviz"), 0.3),
                   ("1,000-node SVG (s)", r("render_1000"), 1.0),
                   ("20,000-op trace SVG (s)", r("render_20000"), 10.0)]
    print()
    print("| target | measured | target | met |")
    print("| --- | --- | --- | --- |")
    for label, value, target in rows:
        if value is None:
            print(f"| {label} | - | <= {target} | (not measured) |")
        else:
            print(f"| {label} | {value:.2f} | <= {target} | {'yes' if value <= target else 'NO'} |")
    for label, value in references:
        if value is not None:
            print(f"| (reference) {label} | {value:.2f} | - | - |")
    for label, res, target in render_rows:
        if res is None:
            print(f"| {label} | - | <= {target} | (not measured) |")
        else:
            v = res["median"]
            print(f"| {label} | {v:.2f} | <= {target} | {'yes' if v <= target else 'NO'} |")
    player_rows(player())
    return 0


def player() -> dict | None:
    """The HTML player in headless Chromium (player_bench.py), when Chromium is installed."""
    if not (shutil.which("chromium") or os.access("/usr/bin/chromium", os.X_OK)):
        print("player benchmark skipped: no chromium (scripts/ensure-chromium.sh)",
              file=sys.stderr)
        return None
    print("running player_bench ...", file=sys.stderr, flush=True)
    proc = subprocess.run([sys.executable, str(HERE / "player_bench.py"), "--json"],
                          capture_output=True, text=True, timeout=3600)
    if proc.returncode != 0:
        print(f"  player_bench: failed\n{proc.stderr.strip()}", file=sys.stderr)
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def player_rows(res: dict | None) -> None:
    """Targets of the player (docs/player.md): a step costs the same at 20,000 steps as at 200
    (ratio about 1; 1.5 leaves room for the machine's noise), a page loads in under 2 s."""
    if res is None:
        print("| player: step time 20,000 / 200 steps | - | <= 1.5 | (not measured) |")
        return
    big = res["20,000 steps"]
    for label, value, target in (
            ("player: next-step time, 20,000 / 200 steps", res["ratio"]["next_ms"], 1.5),
            ("player: previous-step time, 20,000 / 200 steps", res["ratio"]["prev_ms"], 1.5),
            ("player: load at 20,000 steps (s)", big["load_ms"] / 1000, 2.0)):
        print(f"| {label} | {value:.2f} | <= {target} | {'yes' if value <= target else 'NO'} |")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
