"""``make bench``: run every workload in its own process and print medians and target ratios.

Each framework runs in a separate process so that one's garbage collector or thread pool does
not tax another. PyTorch columns appear when torch is installed (the ``parity`` extra). Targets
are those of the performance issue (see docs/performance.md); a ratio is "met" when it is at or
below its target.

Usage: ``python benchmarks/run.py [--repeat N] [--quick]`` (``--quick`` skips the 1M chain).
"""

from __future__ import annotations

import importlib.util
import json
import os
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


def fmt_time(r: dict | None, per: int = 1, unit: str = "ms") -> str:
    if r is None:
        return "-"
    scale = {"ms": 1e3, "us": 1e6, "s": 1.0}[unit] / per
    return (f"{r['median'] * scale:.2f} {unit} "
            f"({r['min'] * scale:.2f}-{r['max'] * scale:.2f})")


def ratio(a: dict | None, b: dict | None) -> float | None:
    if a is None or b is None:
        return None
    return a["median"] / b["median"]


def main(argv: list[str]) -> int:
    repeat = int(argv[argv.index("--repeat") + 1]) if "--repeat" in argv else 5
    quick = "--quick" in argv
    have_torch = importlib.util.find_spec("torch") is not None
    names = ["chain_gradviz", "chain_numpy", "chain_traced", "mlp_gradviz", "mlp_numpy",
             "mlp_traced", "render_1000", "render_20000", "render_torchviz_case"]
    if not quick:
        names.append("million_gradviz")
    if have_torch:
        names += ["chain_torch", "mlp_torch"] + ([] if quick else ["million_torch"])
    results: dict[str, dict | None] = {}
    for name in names:
        print(f"running {name} ...", file=sys.stderr, flush=True)
        results[name] = measure(name, 1 if name.startswith("million") else repeat)
    r = results.get

    ops = 10_000 - 10_000 % 3
    print()
    print(f"Machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}; medians of "
          f"{repeat} (min-max)")
    print()
    print("| workload | gradviz | NumPy | PyTorch |")
    print("| --- | --- | --- | --- |")
    print(f"| tiny-op chain, per op (fwd+bwd) | {fmt_time(r('chain_gradviz'), ops, 'us')} | "
          f"{fmt_time(r('chain_numpy'), ops, 'us')} | {fmt_time(r('chain_torch'), ops, 'us')} |")
    print(f"| MLP 784-256-128-10 step, batch 64 | {fmt_time(r('mlp_gradviz'))} | "
          f"{fmt_time(r('mlp_numpy'))} | {fmt_time(r('mlp_torch'))} |")
    if not quick:
        g, t = r("million_gradviz"), r("million_torch")
        mb = 1024 * 1024

        def mem(x: dict | None) -> str:
            if x is None:
                return "-"
            return (f"{x['median']:.1f} s, peak +{(x['peak_rss'] - x['base_rss']) / mb:.0f} MB, "
                    f"after drop +{(x['after_rss'] - x['base_rss']) / mb:.0f} MB")

        print(f"| 1,000,000-op chain | {mem(g)} | - | {mem(t)} |")
    print(f"| traced tiny-op chain | {fmt_time(r('chain_traced'), ops, 'us')} | | |")
    print(f"| traced MLP step | {fmt_time(r('mlp_traced'))} | | |")
    print(f"| 1,000-node backward graph to SVG | {fmt_time(r('render_1000'), 1, 's')} | | |")
    print(f"| 20,000-op trace to SVG (collapsed) | {fmt_time(r('render_20000'), 1, 's')} | | |")
    print(f"| torchviz's RecursionError case | {fmt_time(r('render_torchviz_case'), 1, 's')} "
          "| | |")

    rows = [
        ("tiny-op chain: gradviz / NumPy", ratio(r("chain_gradviz"), r("chain_numpy")), 3.0),
        ("tiny-op chain: gradviz / PyTorch", ratio(r("chain_gradviz"), r("chain_torch")), 0.6),
        ("MLP step: gradviz / NumPy", ratio(r("mlp_gradviz"), r("mlp_numpy")), 1.10),
        ("MLP step: gradviz / PyTorch", ratio(r("mlp_gradviz"), r("mlp_torch")), 1.0),
        ("tracing overhead, MLP step", ratio(r("mlp_traced"), r("mlp_gradviz")), 1.3),
        ("tracing overhead, tiny-op chain", ratio(r("chain_traced"), r("chain_gradviz")), 2.0),
    ]
    if not quick and r("million_gradviz") and r("million_torch"):
        g, t = r("million_gradviz"), r("million_torch")
        rows.append(("1M chain wall time: gradviz / PyTorch", g["median"] / t["median"], 1.0))
        rows.append(("1M chain peak memory: gradviz / PyTorch",
                     (g["peak_rss"] - g["base_rss"]) / max(1, t["peak_rss"] - t["base_rss"]),
                     1.0))
    if not quick and r("million_gradviz"):
        g = r("million_gradviz")
        rows.append(("1M chain: memory after drop / before", g["after_rss"] / g["base_rss"],
                     1.15))
    render_rows = [("1,000-node SVG (s)", r("render_1000"), 1.0),
                   ("20,000-op trace SVG (s)", r("render_20000"), 10.0)]
    print()
    print("| target | measured | target | met |")
    print("| --- | --- | --- | --- |")
    for label, value, target in rows:
        if value is None:
            print(f"| {label} | - | <= {target} | (not measured) |")
        else:
            print(f"| {label} | {value:.2f} | <= {target} | {'yes' if value <= target else 'NO'} |")
    for label, res, target in render_rows:
        if res is None:
            print(f"| {label} | - | <= {target} | (not measured) |")
        else:
            v = res["median"]
            print(f"| {label} | {v:.2f} | <= {target} | {'yes' if v <= target else 'NO'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
