"""Before and after, interleaved in one run: the same workloads on two versions of gradviz.

``make bench`` measures one version against its targets. A change that claims speed, or must
not lose any, is judged against the version before it, and on this shared machine only ratios
measured side by side mean anything: each round runs every workload once on the old version
and once on the new one, each in its own process, so a slow minute slows both alike. A
workload's ratio is the median over the rounds of new / old (below 1: faster).

Usage::

    python benchmarks/compare.py REF_OR_DIR [NEW_DIR] [--rounds R] [--repeat N]
                                 [--workloads a,b,c] [--tolerance T]

``REF_OR_DIR`` is the old version: a folder holding a gradviz checkout, or a git revision of
this repository (exported to a temporary folder with ``git archive``). ``NEW_DIR`` defaults to
this checkout. Each workload comes from that version's own ``benchmarks/workloads.py`` (the
names in :data:`DEFAULT`, or ``--workloads``). The exit status is 1 when a ratio is worse than
``1 + T`` (``T`` = 0.05), so a script can check a refactoring: ``make bench-compare BASE=main``.
"""

from __future__ import annotations

import compileall
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: The workloads of the engine, the op layer and the tracer that run in seconds.
DEFAULT = ["chain_gradviz", "mlp_gradviz", "cnn_gradviz", "chain_traced", "mlp_traced",
           "loop_untraced", "loop_traced", "import_gradviz", "render_1000"]


def export(ref: str, into: Path) -> Path:
    """The files of git revision ``ref`` of this repository, written under ``into``."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", ref],
                             capture_output=True, check=False)
    if archive.returncode != 0:
        raise SystemExit(f"compare: {ref!r} is neither a folder nor a git revision here: "
                         f"{archive.stderr.decode(errors='replace').strip()}")
    tar = into / "old.tar"
    tar.write_bytes(archive.stdout)
    tree = into / "old"
    with tarfile.open(tar) as t:
        t.extractall(tree, filter="data")
    return tree


def run_once(tree: Path, name: str, repeat: int) -> float | None:
    """One process of workload ``name`` from ``tree``: the median of its ``repeat`` runs."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join([str(tree), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, str(tree / "benchmarks" / "workloads.py"), name,
                           "--repeat", str(repeat)], capture_output=True, text=True, env=env,
                          timeout=3600, check=False)
    if proc.returncode != 0:
        print(f"  {name} ({tree}): failed\n{proc.stderr.strip()}", file=sys.stderr)
        return None
    return float(json.loads(proc.stdout.strip().splitlines()[-1])["median"])


def compare(old: Path, new: Path, names: list[str], rounds: int, repeat: int
            ) -> dict[str, tuple[float, float, float]]:
    """Each workload's (old median, new median, median of the rounds' new/old ratios)."""
    for tree in (old, new):  # as installed: no version pays for compiling itself
        compileall.compile_dir(tree / "gradviz", quiet=1)
    times: dict[str, tuple[list[float], list[float], list[float]]] = {
        n: ([], [], []) for n in names}
    for k in range(rounds):
        for name in names:
            print(f"round {k + 1}/{rounds}: {name}", file=sys.stderr, flush=True)
            # Alternate which version goes first, so neither always runs on a warmer machine.
            pair = (old, new) if k % 2 == 0 else (new, old)
            got = {tree: run_once(tree, name, repeat) for tree in pair}
            a, b = got[old], got[new]
            if a is not None and b is not None:
                times[name][0].append(a)
                times[name][1].append(b)
                times[name][2].append(b / a)
    return {n: (statistics.median(a), statistics.median(b), statistics.median(r))
            for n, (a, b, r) in times.items() if r}


def main(argv: list[str]) -> int:
    def option(flag: str, default: str) -> str:
        if flag in argv:
            i = argv.index(flag)
            value = argv[i + 1]
            del argv[i:i + 2]
            return value
        return default

    rounds = int(option("--rounds", "3"))
    repeat = int(option("--repeat", "5"))
    names = option("--workloads", ",".join(DEFAULT)).split(",")
    tolerance = float(option("--tolerance", "0.05"))
    if not argv or len(argv) > 2:
        print(__doc__, file=sys.stderr)
        return 2
    new = Path(argv[1]).resolve() if len(argv) == 2 else ROOT
    with tempfile.TemporaryDirectory() as tmp:
        given = Path(argv[0])
        old = given.resolve() if given.is_dir() else export(argv[0], Path(tmp))
        results = compare(old, new, names, rounds, repeat)
    print(f"\nold: {argv[0]}   new: {new}   {rounds} interleaved rounds of {repeat} runs\n")
    print("| workload | old (s) | new (s) | new / old |")
    print("| --- | --- | --- | --- |")
    worse = []
    for name, (a, b, ratio) in results.items():
        flag = "  worse" if ratio > 1 + tolerance else ""
        print(f"| {name} | {a:.4g} | {b:.4g} | {ratio:.3f}{flag} |")
        if flag:
            worse.append(name)
    missing = [n for n in names if n not in results]
    if missing:
        print(f"\nfailed on a version: {', '.join(missing)}")
    if worse:
        print(f"\nworse by more than {tolerance:.0%}: {', '.join(worse)}")
    return 1 if worse or missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
