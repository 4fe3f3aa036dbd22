"""The benchmark scripts compute the right things (never how fast: no test times anything)."""

from __future__ import annotations

import doctest
import sys
from pathlib import Path

import numpy as np
import pytest

import gradviz as gv

BENCH = Path(__file__).resolve().parent.parent / "benchmarks"
sys.path.insert(0, str(BENCH))

import chain_floor  # noqa: E402
import compare  # noqa: E402
import minimal_engine  # noqa: E402
import mlp_floor  # noqa: E402
import real_models  # noqa: E402
import run  # noqa: E402
import workloads  # noqa: E402


def test_the_minimal_engine_computes_the_chains_gradient():
    start = np.linspace(0.1, 0.4, 4)
    x = minimal_engine.Var(start.copy(), requires_grad=True)
    xg = gv.tensor(start, requires_grad=True)
    y, yg = x, xg
    for _ in range(30):
        y = (y * 1.0001 + 0.001).tanh()
        yg = (yg * 1.0001 + 0.001).tanh()
    minimal_engine.backward(y.sum())
    yg.sum().backward()
    np.testing.assert_allclose(x.grad, xg.grad.numpy(), rtol=1e-12)
    assert doctest.testmod(minimal_engine).failed == 0


def test_run_names_only_existing_workloads(monkeypatch):
    asked = []
    monkeypatch.setattr(run, "measure", lambda name, repeat: asked.append(name) or None)
    # (with torch installed, main() would trace the two real models whole, and with Chromium
    # open the player: minutes of work this test does not look at)
    monkeypatch.setattr(real_models, "measure", lambda rounds: asked.append("real") or {})
    monkeypatch.setattr(run, "player", lambda: None)
    run.main(["--rounds", "1", "--repeat", "1"])
    if run.importlib.util.find_spec("torch") is not None:
        assert asked.pop() == "real"
    assert asked and set(asked) <= set(workloads.WORKLOADS)
    assert {"chain_minimal", "million_gradviz", "render_20000", "cnn_gradviz"} <= set(asked)


def test_rounds_combine_as_median_of_medians_and_the_span_of_all_runs(monkeypatch):
    fake = iter([{"median": 3.0, "min": 2.0, "max": 4.0}, {"median": 1.0, "min": 0.5, "max": 9.0},
                 {"median": 2.0, "min": 1.5, "max": 2.5}])
    monkeypatch.setattr(run, "measure", lambda name, repeat: next(fake))
    out = run.measure_rounds(["chain_numpy"], repeat=1, rounds=3)
    assert out["chain_numpy"] == {"median": 2.0, "min": 0.5, "max": 9.0,
                                  "rounds": [3.0, 1.0, 2.0]}


def test_a_ratio_is_the_median_of_the_rounds_ratios():
    a = {"median": 2.0, "rounds": [2.0, 4.0, 1.0]}
    b = {"median": 1.0, "rounds": [1.0, 1.0, 2.0]}
    assert run.ratio(a, b) == 2.0  # rounds: 2, 4, 0.5
    assert run.ratio({"median": 3.0, "rounds": None}, b) == 3.0  # no rounds: the medians
    assert run.ratio(a, None) is None


def test_an_unknown_workload_is_refused(capsys):
    assert workloads.main(["no_such_workload"]) == 2
    assert "chain_minimal" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["chain_numpy", "chain_minimal"])
def test_a_workload_reports_median_min_max(name, monkeypatch):
    monkeypatch.setattr(workloads, "CHAIN_OPS", 30)
    res = getattr(workloads, name)(2)
    assert set(res) == {"median", "min", "max"}
    assert 0 < res["min"] <= res["median"] <= res["max"]



def test_the_cnn_step_workload_runs_and_trains():
    res = workloads.cnn_gradviz(1)
    assert set(res) == {"median", "min", "max"} and res["min"] > 0
    X, y = workloads._cnn_data()
    assert X.shape == (workloads.BATCH, 1, 8, 8) and X.dtype == np.float32 and X.max() == 1.0
    assert y.shape == (workloads.BATCH,) and set(y.tolist()) == set(range(10))
    step = workloads._cnn_step(gv)
    losses = [step().item() for _ in range(30)]  # the same batch again and again: it fits it
    assert losses[-1] < losses[0] / 2


@pytest.mark.parametrize("engine", [True, False])
def test_the_mlp_floor_trains_exactly_as_gradviz_does(engine):
    # The floor (benchmarks/mlp_floor.py) is only a floor of the same work if it computes the
    # same numbers: after a few steps its parameters equal those of workloads._mlp_step's model
    # bit for bit, with the engine and with the applies called by hand.
    params, step = mlp_floor.floor_params_and_step(engine)
    for _ in range(3):
        step()
    gv.manual_seed(0)
    real_step = workloads._mlp_step(gv)
    for _ in range(3):
        real_step()
    model_params = [p for p in _mlp_step_params(real_step)]
    assert len(params) == len(model_params) == 6
    for mine, theirs in zip(params, model_params):
        np.testing.assert_array_equal(mine.detach().numpy(), theirs.detach().numpy())


def _mlp_step_params(step):
    # workloads._mlp_step closes over its optimizer; its parameter groups hold the model's.
    opt = next(c.cell_contents for c in step.__closure__
               if isinstance(c.cell_contents, gv.optim.Optimizer))
    return [p for group in opt.param_groups for p in group["params"]]


def test_the_chain_floor_computes_gradviz_gradient_through_the_engine(monkeypatch):
    # chain_floor.py's tensors run gradviz's own engine: its backward goes through run_backward
    # (counted here), and the gradient is gradviz's bit for bit.
    from gradviz.autograd import wrappers

    calls = []
    real = wrappers.run_backward
    monkeypatch.setattr(wrappers, "run_backward",
                        lambda *a, **k: calls.append(1) or real(*a, **k))
    start = np.linspace(0.1, 0.4, 4)
    x, xg = chain_floor.leaf(start), gv.tensor(start, requires_grad=True)
    y, yg = x, xg
    for _ in range(30):
        y = (y * 1.0001 + 0.001).tanh()
        yg = (yg * 1.0001 + 0.001).tanh()
    y.sum().backward()
    yg.sum().backward()
    assert len(calls) == 2
    np.testing.assert_array_equal(x.grad.numpy(), xg.grad.numpy())
    assert doctest.testmod(chain_floor).failed == 0


def test_the_recording_floor_sees_every_event_a_trace_records():
    # benchmarks/trace_floor.py is a floor of the same work only if it is told of the same
    # events: as many ops and engine steps of each kind as a real trace records, each op's
    # output value as it was then (a later in-place op must not change it).
    import trace_floor

    def program():
        x = gv.tensor([1.0, 2.0, 3.0], requires_grad=True)
        u = x * 2
        y = u.tanh()
        u.add_(100.0)  # in place: not the value u had when made
        (y * y + u).sum().backward()
        return x

    with trace_floor.recording_floor("small") as floor:
        program()
    with gv.trace(values="small") as tr:
        program()
    kinds = [entry[0] for entry in floor.log]
    steps = [s.kind for s in tr.steps()]
    for kind in ("enqueue", "execute", "accumulate", "release_saved"):
        assert kinds.count(kind) == steps.count(kind) > 0, kind
    op_names = [k for k in kinds if k not in ("enqueue", "execute", "accumulate",
                                              "release_saved")]
    assert op_names == [op.name for op in tr.ops]
    mul = next(entry for entry in floor.log if entry[0] == "mul")
    np.testing.assert_array_equal(mul[-1][0], [2.0, 4.0, 6.0])
    assert mul[6].co_name == "program"  # the user's frame, where the op came from


@pytest.mark.parametrize("values", ["small", "none"])
def test_the_recording_floor_takes_snapshots_by_the_trace_policy(values):
    import trace_floor

    from gradviz.trace.model import expand_snapshot, summarize

    big = np.arange(10_000, dtype=np.float64)  # beyond the small and medium sizes: stats
    with trace_floor.recording_floor(values) as floor:
        out = gv.tensor(big, requires_grad=True) * 3
    snap = floor.log[0][-1][0]
    assert expand_snapshot(snap, values) == summarize(out.detach(), values)


@pytest.mark.parametrize("name", ["chain_recording_floor", "mlp_recording_floor"])
def test_the_recording_floor_workloads_run(name, monkeypatch):
    monkeypatch.setattr(workloads, "CHAIN_OPS", 30)
    res = getattr(workloads, name)(1)
    assert set(res) == {"median", "min", "max"} and res["min"] > 0


def test_compare_pairs_each_round_and_flags_a_slowdown(monkeypatch, tmp_path, capsys):
    """compare.py: every round runs both versions; a ratio is the median of new/old per
    round; a workload worse than the tolerance fails the run (exit status 1)."""
    old, new = tmp_path / "old", tmp_path / "new"
    for tree in (old, new):
        (tree / "gradviz").mkdir(parents=True)
    seconds = {("old", "a"): [1.0, 1.0, 1.0], ("new", "a"): [0.5, 0.6, 0.7],
               ("old", "b"): [1.0, 2.0, 1.0], ("new", "b"): [1.2, 2.0, 1.1]}
    asked: list[tuple[str, str]] = []

    def fake(tree, name, repeat):
        asked.append((tree.name, name))
        return seconds[(tree.name, name)].pop(0)

    monkeypatch.setattr(compare, "run_once", fake)
    got = compare.compare(old, new, ["a", "b"], rounds=3, repeat=1)
    assert got["a"] == (1.0, 0.6, 0.6)
    assert got["b"] == (1.0, 1.2, 1.1)
    # interleaved: each round both versions of each workload, the first version alternating
    assert asked[:4] == [("old", "a"), ("new", "a"), ("old", "b"), ("new", "b")]
    assert asked[4:6] == [("new", "a"), ("old", "a")]
    monkeypatch.setattr(compare, "compare", lambda *a: got)
    assert compare.main([str(old), str(new), "--workloads", "a,b"]) == 1
    out = capsys.readouterr().out
    assert "| b | 1 | 1.2 | 1.100  worse |" in out and "| a | 1 | 0.6 | 0.600 |" in out


def test_compare_exports_a_git_revision(tmp_path):
    tree = compare.export("HEAD", tmp_path)
    assert (tree / "benchmarks" / "workloads.py").is_file()
    assert (tree / "gradviz" / "__init__.py").is_file()
    with pytest.raises(SystemExit, match="neither a folder nor a git revision"):
        compare.export("no-such-revision-here", tmp_path)


def test_real_models_reports_wall_and_cpu_ratios_against_the_goal(capsys):
    results = {"A model": {"plain": 2.0, "traced": 2.6, "ratio": 1.3, "cpu_ratio": 1.25,
                           "plain_peak": 4e8, "traced_peak": 5e8, "trace_bytes": 1.2e6,
                           "steps": 530, "load": 0.4, "per_step": 0.05}}
    rows = real_models.report(results)
    assert rows == [("A model: whole process traced / plain", 1.3, real_models.GOAL)]
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("| A model"))
    assert line == ("| A model | 2.0 s | 2.6 s | 1.30 | 1.25 | 400 / 500 MB | 1.2 MB | 530 | "
                    "0.40 s | 50.0 ms |")
