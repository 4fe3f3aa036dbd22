"""Real PyTorch models traced whole (issue #32), for ``make bench PARITY=1``.

Two models of our own, each one training step on real PyTorch: a ResNet-18-shaped CNN
(``docs/programs/resnet_cnn.py``, 11 million parameters) and a GPT-2-shaped language model
(``docs/programs/transformer_lm.py gpt2``: 12 blocks). Each runs as a whole process, plain
(``python script.py``) and traced (``gradviz trace --engine torch script.py``), interleaved
round by round so the machine's drift falls on both alike. Reported: the wall time of each, its
ratio (the goal is at most 1.5), each process's peak memory (its own maximum resident set, as
the kernel counts it for that child), the size of ``trace.json`` and the backward run's steps.

Run on its own: ``python benchmarks/real_models.py [--rounds R]``. Needs torch.
"""

from __future__ import annotations

import compileall
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = ROOT / "docs" / "programs"
MODELS = {
    "ResNet-18-shaped CNN": [str(PROGRAMS / "resnet_cnn.py")],
    "GPT-2-shaped LM (12 blocks)": [str(PROGRAMS / "transformer_lm.py"), "gpt2"],
}
GOAL = 1.5  # whole process traced / plain


def run_child(cmd: list[str], cwd: str) -> tuple[float, int, float]:
    """Wall time, peak resident memory (bytes) and CPU time (user + system) of one child
    process; it must succeed."""
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    # wait4 gives this child's own resource use (RUSAGE_CHILDREN would mix all children).
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.stderr:
        proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{err}")
    # Linux reports kilobytes. CPU time barely moves when other processes share the cores,
    # so it is the steadier ratio on a loaded machine; the goal is on wall time.
    return seconds, usage.ru_maxrss * 1024, usage.ru_utime + usage.ru_stime


def compile_packages() -> None:
    """Compile gradviz and its command line to bytecode first, as installing them does.

    The plain run reads torch's compiled bytecode from site-packages; without the same for
    gradviz, a machine that writes no bytecode (PYTHONDONTWRITEBYTECODE, a read-only checkout)
    compiles all of gradviz in every traced process (0.9-1.1 s of CPU measured on the 2-core
    machine, against 0.4 s to import it compiled): a cost of the machine's setting, which
    an installed gradviz does not pay.
    """
    for name in ("gradviz", "gradviz_cli"):
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            for folder in spec.submodule_search_locations:
                compileall.compile_dir(folder, quiet=1)


def measure(rounds: int = 3) -> dict[str, dict[str, float]]:
    """Each model's numbers: plain and traced seconds (medians), their ratio (the median of
    the rounds' ratios) and the same ratio in CPU time, peak memory of each, trace.json
    bytes, steps recorded."""
    from gradviz.trace import load_trace

    compile_packages()

    out: dict[str, dict[str, float]] = {}
    for label, script in MODELS.items():
        plain, traced, ratios, cpu_ratios, peaks = [], [], [], [], ([], [])
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp) / "out"
            for _ in range(rounds):
                p, p_mem, p_cpu = run_child([sys.executable, *script], tmp)
                t, t_mem, t_cpu = run_child([sys.executable, "-m", "gradviz", "trace", "--engine",
                                      "torch", "--quiet", "--out", str(folder), *script], tmp)
                plain.append(p)
                traced.append(t)
                ratios.append(t / p)
                cpu_ratios.append(t_cpu / p_cpu)
                peaks[0].append(p_mem)
                peaks[1].append(t_mem)
            trace_file = folder / "trace.json"
            steps = sum(len(r.steps) for r in load_trace(trace_file).runs)
            out[label] = {"plain": statistics.median(plain), "traced": statistics.median(traced),
                          "ratio": statistics.median(ratios),
                          "cpu_ratio": statistics.median(cpu_ratios),
                          "plain_peak": max(peaks[0]), "traced_peak": max(peaks[1]),
                          "trace_bytes": trace_file.stat().st_size, "steps": steps,
                          "player": str(folder / "steps.html")}
            out[label].update(player_numbers(folder / "steps.html", steps))
    return out


def player_numbers(page: Path, steps: int) -> dict[str, float]:
    """The step player's load time and mean time per step (one forward, one back), measured
    as benchmarks/player_bench.py measures it in headless Chromium; nothing without a
    browser."""
    try:
        import player_bench  # benchmarks/ is this script's folder, first on sys.path

        driver = player_bench.browser()
    except Exception as e:  # noqa: BLE001 - no Chromium or selenium: these numbers are left out
        print(f"  player not measured: {e}", file=sys.stderr)
        return {}
    try:
        m = player_bench.measure(driver, page, steps)
    finally:
        driver.quit()
    return {"load": m["load_ms"] / 1e3, "per_step": (m["next_ms"] + m["prev_ms"]) / 2e3}


def report(results: dict[str, dict[str, float]]) -> list[tuple[str, float | None, float]]:
    """Print the table; return the target rows (label, value, goal) for run.py's table."""
    mb = 1e6
    print()
    print("| real model, one training step | plain | traced | traced / plain | (CPU time) | "
          "peak memory plain / traced | trace.json | steps | player load | per step |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    rows = []
    for label, r in results.items():
        load = f"{r['load']:.2f} s" if "load" in r else "-"
        per = f"{r['per_step'] * 1e3:.1f} ms" if "per_step" in r else "-"
        print(f"| {label} | {r['plain']:.1f} s | {r['traced']:.1f} s | {r['ratio']:.2f} | "
              f"{r['cpu_ratio']:.2f} | "
              f"{r['plain_peak'] / mb:.0f} / {r['traced_peak'] / mb:.0f} MB | "
              f"{r['trace_bytes'] / mb:.1f} MB | {r['steps']:.0f} | {load} | {per} |")
        rows.append((f"{label}: whole process traced / plain", r["ratio"], GOAL))
    return rows


def main(argv: list[str]) -> int:
    rounds = int(argv[argv.index("--rounds") + 1]) if "--rounds" in argv else 3
    for label, value, goal in report(measure(rounds)):
        print(f"{label}: {value:.2f} (goal <= {goal})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
