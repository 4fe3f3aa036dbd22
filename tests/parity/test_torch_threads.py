"""Issue #33, threads on real PyTorch: a script whose threads each run ``backward()`` and
``autograd.grad()`` many times, traced through ``gradviz.trace(torch=True)`` and through
``gradviz trace --engine torch``, has every call recorded under its own run with its own steps,
the forward ops of every thread, a trace that loads back and renders, and gradients unchanged.

What torch executed is seen independently, by torch's own autograd debug logging (a pre-hook on
every node of each backward call, logging "Executing: <node>" on the thread running it), which
the script turns on itself; see tests/parity/test_torch_trace.py for the single-thread case.
"""

from __future__ import annotations

import json
import textwrap
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import torch
from _cli import run

import gradviz
from gradviz.trace.model import ExecuteStep

THREADS, CALLS = 4, 25

# Thread k has its own model and leaf v (full of k + 1), k extra multiplications in each graph,
# and shares the leaf w with every thread: its AccumulateGrad node is in every thread's graphs,
# and w.grad sums integers, so its value does not depend on the threads' interleaving.
SCRIPT = textwrap.dedent(f"""
    import json, logging, re, sys, threading
    import torch

    THREADS, CALLS = {THREADS}, {CALLS}
    OBSERVED = {{}}  # thread name -> [(node address, node class)], as torch's logging saw them
    # Where to write them: given by the test (in its process) or as the script's argument.
    SEEN_PATH = globals().get("SEEN_PATH") or sys.argv[1]


    class Observer(logging.Handler):
        def emit(self, record):
            m = re.match(r"Executing: <(?:[\\w.]+\\.)?(\\w+) object at (0x[0-9a-f]+)>",
                         record.getMessage())
            if m:
                OBSERVED.setdefault(record.threadName, []).append(
                    (int(m.group(2), 16), m.group(1)))


    log = logging.getLogger("torch.autograd.graph")
    observer = Observer(logging.DEBUG)
    log.addHandler(observer)
    log.setLevel(logging.DEBUG)
    log.propagate = False

    torch.manual_seed(0)
    w = torch.ones(3, requires_grad=True)
    models = [torch.nn.Linear(3, 1) for _ in range(THREADS)]
    RESULTS = {{}}


    def work(k, barrier):
        model = models[k]
        v = torch.full((3,), float(k + 1), requires_grad=True)
        got = []
        barrier.wait()  # start together, so the threads' calls really interleave
        for i in range(CALLS):
            x = torch.arange(3.0) + i
            s = v.sin()
            for _ in range(k):
                s = s * 2
            if i % 2 == 0:
                loss = (x * w).sum() + (s * x).sum() + model(x).sum()
                loss.backward()
            else:
                gv, gw = torch.autograd.grad((v.exp() * s * w).sum(), [v, w])
                got.append(torch.cat([gv, gw]))
        RESULTS[k] = [v.grad, model.weight.grad, model.bias.grad, *got]


    barrier = threading.Barrier(THREADS)
    threads = [threading.Thread(target=work, args=(k, barrier), name=f"worker-{{k}}")
               for k in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    RESULTS["w"] = [w.grad]
    log.removeHandler(observer)
    log.propagate = True
    with open(SEEN_PATH, "w") as f:
        json.dump({{"observed": OBSERVED,
                   "results": {{str(k): [r.tolist() for r in v] for k, v in RESULTS.items()}}}},
                  f)
""")


def _run_script(tmp_path: Path, traced: bool
                ) -> tuple[dict[str, Any], gradviz.trace.Trace | None]:
    ns: dict[str, Any] = {"__name__": "__main__", "SEEN_PATH": str(tmp_path / "seen.json")}
    code = compile(SCRIPT, str(tmp_path / "threaded.py"), "exec")
    if traced:
        import threading

        before = threading.getprofile()
        with gradviz.trace(torch=True, keep_runs="all") as tr:
            exec(code, ns)
        assert threading.getprofile() is before  # what gave each new thread its mode is gone
        return ns, tr
    exec(code, ns)
    return ns, None


def _collapsed(seen: list[Any]) -> list[Any]:
    """A thread's observed nodes, each once: every call through a node shared by several
    threads' graphs (w's AccumulateGrad) put torch's logging hook on it, and each logs."""
    out: list[Any] = []
    for s in seen:
        if not out or out[-1] != s:
            out.append(s)
    return out


def _check_orders(runs: list[Any], executed: dict[str, list[Any]], thread_of: dict[str, str],
                  observed: dict[str, list[Any]]) -> None:
    """Each thread ran its calls one after another: the executed nodes of its runs, in the
    order the runs began (their ids), are what torch's logging saw on that thread."""
    assert sorted(observed) == [f"worker-{k}" for k in range(THREADS)]
    for name, seen in observed.items():
        mine = sorted((r for r in runs if thread_of[r.id] == name), key=lambda r: int(r.id[3:]))
        assert len(mine) == CALLS, name
        assert [n for r in mine for n in executed[r.id]] == [s[1] for s in _collapsed(seen)]


def _thread_of(tr: gradviz.trace.Trace, run: Any) -> str:
    """The thread of a run, from its leaf v's value: k + 1 on thread k."""
    for nid in run.nodes:
        node = tr.nodes[nid]
        if node.variable is not None and tr.tensors[node.variable].name == "v":
            return f"worker-{int(tr.tensors[node.variable].value['values'][0]) - 1}"
    raise AssertionError(f"{run.id} has no leaf v")


def _check_runs(tr: gradviz.trace.Trace) -> None:
    """Every call, under its own run, each with its own complete steps."""
    total = THREADS * CALLS
    assert len(tr.runs) == total and tr.notes == []
    assert len({r.id for r in tr.runs}) == total
    assert Counter(r.kind for r in tr.runs) == {"backward": THREADS * ((CALLS + 1) // 2),
                                                "grad": THREADS * (CALLS // 2)}
    for r in tr.runs:
        assert r.steps[0].kind == "compute_dependencies" and r.steps[-1].kind == "done", r.id
        assert all(s.node is None or s.node in r.nodes for s in r.steps), r.id


def test_every_call_of_every_thread_is_recorded_as_torch_ran_it(tmp_path: Path) -> None:
    plain, _ = _run_script(tmp_path, traced=False)
    traced, tr = _run_script(tmp_path, traced=True)
    # The program is unchanged: every gradient and autograd.grad result.
    for k, results in plain["RESULTS"].items():
        assert all(torch.equal(a, b) for a, b in zip(results, traced["RESULTS"][k],
                                                     strict=True)), k
    assert tr.runs_total == THREADS * CALLS
    _check_runs(tr)
    # The executed order of each run is torch's, node for node (by their addresses).
    address = {nid: addr for addr, (_, nid) in tr.torch_source._nodes.items()}
    executed = {r.id: [address[s.node] for s in r.steps if isinstance(s, ExecuteStep)]
                for r in tr.runs}
    observed = {name: [(a, a) for a, _ in seen] for name, seen in traced["OBSERVED"].items()}
    _check_orders(tr.runs, executed, {r.id: _thread_of(tr, r) for r in tr.runs}, observed)
    # The forward ops of every thread: each iteration's sin of that thread's own v, and its
    # model's linear inside the thread's own module scope.
    sins = Counter(tr.tensors[op.inputs[0]].value["values"][0] for op in tr.ops
                   if op.name == "sin")
    assert sins == {float(k + 1): CALLS for k in range(THREADS)}
    linear = [op for op in tr.ops if op.name == "linear"]
    assert len(linear) == THREADS * ((CALLS + 1) // 2)
    assert all(op.scope == ["Linear"] for op in linear)
    # The trace loads back and renders.
    tr.save(tmp_path / "trace.json")
    back = gradviz.load_trace(tmp_path / "trace.json")
    assert len(back.runs) == THREADS * CALLS
    from gradviz.render import draw_backward, player_html, to_svg

    assert "AccumulateGrad" in to_svg(draw_backward(back, run=back.runs[0].id))
    assert "AddmmBackward0" in player_html(back)


def test_the_cli_records_every_call_of_every_thread(tmp_path: Path) -> None:
    script = tmp_path / "threaded.py"
    script.write_text(SCRIPT, encoding="utf-8")
    proc = run("trace", "--engine", "torch", "--keep-runs", "1000", "--out", "o", "-q",
               str(script), str(tmp_path / "seen.json"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    seen = json.loads((tmp_path / "seen.json").read_text())
    tr = gradviz.load_trace(tmp_path / "o" / "trace.json")
    assert len(tr.run_log) == THREADS * CALLS
    _check_runs(tr)
    # Each run's executed order is torch's (by node names: the file holds no addresses).
    executed = {r.id: [tr.nodes[s.node].name for s in r.steps if isinstance(s, ExecuteStep)]
                for r in tr.runs}
    _check_orders(tr.runs, executed, {r.id: _thread_of(tr, r) for r in tr.runs},
                  seen["observed"])
    # The gradients are the untraced program's.
    plain, _ = _run_script(tmp_path, traced=False)
    for k, results in plain["RESULTS"].items():
        for a, b in zip(results, seen["results"][str(k)], strict=True):
            np.testing.assert_array_equal(a.numpy(), np.asarray(b, dtype=np.float32))
    assert (tmp_path / "o" / "backward.svg").stat().st_size > 0
    assert "AddmmBackward0" in (tmp_path / "o" / "steps.html").read_text(encoding="utf-8")


def test_a_call_still_running_in_another_thread_is_closed_when_the_trace_ends(
        tmp_path: Path) -> None:
    import threading

    inside, release = threading.Event(), threading.Event()

    def hook(grad: torch.Tensor) -> torch.Tensor:
        inside.set()
        release.wait(timeout=30)
        return grad

    def work() -> None:
        x = torch.ones(2, requires_grad=True)
        x.register_hook(hook)  # runs before x's AccumulateGrad, in the middle of the call
        (x * 2).sum().backward()
        (x * 3).sum()  # after the block: not recorded

    with gradviz.trace(torch=True) as tr:
        t = threading.Thread(target=work)
        t.start()
        assert inside.wait(timeout=30)
    closed = [(r.id, [s.kind for s in r.steps]) for r in tr.runs]
    ops = [op.name for op in tr.ops]
    release.set()
    t.join(timeout=30)
    assert not t.is_alive()
    # Closed as it stood when the block ended: the nodes run so far, no "done" step.
    assert len(closed) == 1 and closed[0][1][0] == "compute_dependencies"
    assert closed[0][1][-1] != "done"
    run = tr.runs[0]
    assert [tr.nodes[s.node].name for s in run.steps if isinstance(s, ExecuteStep)] == [
        "SumBackward0", "MulBackward0"]
    # Nothing after it: the rest of that call, the thread's later ops.
    assert [(r.id, [s.kind for s in r.steps]) for r in tr.runs] == closed
    assert [op.name for op in tr.ops] == ops == ["ones", "mul", "sum"]
    assert tr.notes == []
    tr.save(tmp_path / "trace.json")
    assert len(gradviz.load_trace(tmp_path / "trace.json").runs) == 1


def test_compare_on_a_threaded_script_reports_without_crashing(tmp_path: Path) -> None:
    script = tmp_path / "threaded.py"
    script.write_text(SCRIPT, encoding="utf-8")
    proc = run("compare", "--out", "c", "-q", str(script), str(tmp_path / "seen.json"),
               cwd=tmp_path)
    # The threads interleave differently in the two runs, so the runs may pair up differently:
    # the engines may "differ" (1), but the report is made.
    assert proc.returncode in (0, 1), proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    assert (tmp_path / "c" / "compare.html").exists()
    for engine in ("torch", "gradviz"):
        assert len(gradviz.load_trace(tmp_path / "c" / engine / "trace.json").run_log) == (
            THREADS * CALLS)
