"""Issue #16: a training loop's trace is readable and bounded by default (NOTE [long runs])."""

from __future__ import annotations

import json
import runpy
from pathlib import Path

import pytest

import gradviz

EXAMPLES = Path(gradviz.__file__).parent / "examples"


def _poly(steps: int, monkeypatch, **options) -> gradviz.trace:
    monkeypatch.setenv("GRADVIZ_POLY_STEPS", str(steps))
    with gradviz.trace(**options) as tr:
        runpy.run_path(str(EXAMPLES / "polynomial.py"), run_name="__main__")
    return tr


def test_every_run_is_listed_and_one_iteration_is_kept(monkeypatch):
    tr = _poly(20, monkeypatch)
    assert [r["id"] for r in tr.run_log] == [f"run{k}" for k in range(20)]
    assert all(r["steps"] > 0 and r["nodes"] > 0 for r in tr.run_log)
    # the first iteration has no SGD update before it; its forward ops are the same: folded
    assert [r.id for r in tr.runs] == ["run19"]
    assert any(n.startswith("forward graph: iteration 20 of 20, identical structure folded")
               for n in tr.notes), tr.notes
    # one iteration's forward graph: each op of the loop body once since run0
    last_ops = [op.name for op in tr.ops if op.segment == 19]
    assert last_ops.count("pow") == 3 and last_ops.count("sum") == 1
    # one iteration, not twenty (and the SGD update after the last backward)
    assert {op.segment for op in tr.ops} == {19, 20}
    assert all(op.node is None for op in tr.ops if op.segment == 20)


def test_an_mlp_loop_draws_one_iteration(monkeypatch):
    import sys

    monkeypatch.setattr(sys, "argv", ["mlp_moons.py"])
    with gradviz.trace() as tr:
        runpy.run_path(str(EXAMPLES / "mlp_moons.py"), run_name="__main__")
    assert len(tr.run_log) == 20 and [r.id for r in tr.runs] == ["run19"]
    assert sum(op.name == "addmm" for op in tr.ops) == 2  # two Linear layers, one pass
    assert any("iteration 20 of 20, identical structure folded" in n for n in tr.notes)
    assert [t.name for t in tr.tensors.values()].count("logits") == 1


def test_different_graphs_are_both_kept():
    with gradviz.trace() as tr:
        x = gradviz.tensor([1.0, 2.0], requires_grad=True)
        (x * 2).sum().backward()
        (x.exp() + 1).sum().backward()
    assert len(tr.runs) == 2 and not any("folded" in n for n in tr.notes)


def test_at_most_eight_runs_are_kept_in_full():
    with gradviz.trace() as tr:
        x = gradviz.tensor([1.0, 2.0], requires_grad=True)
        for k in range(12):  # each iteration a different graph: k + 1 multiplications
            y = x
            for _ in range(k + 1):
                y = y * 2
            y.sum().backward()
    assert len(tr.run_log) == 12 and len(tr.runs) == 8
    assert any("4 older runs of other structures dropped" in n for n in tr.notes), tr.notes


def test_keep_runs_overrides_the_default(monkeypatch):
    tr = _poly(10, monkeypatch, keep_runs=3)
    assert [r.id for r in tr.runs] == ["run7", "run8", "run9"] and len(tr.run_log) == 10
    tr = _poly(5, monkeypatch, keep_runs="all")
    assert len(tr.runs) == 5
    from gradviz.trace.io import trace_from_dict, trace_to_dict

    again = trace_from_dict(trace_to_dict(tr))
    assert again.keep_runs == "all" and len(again.runs) == 5
    with pytest.raises(ValueError, match="keep_runs"):
        gradviz.trace(keep_runs="some")


def test_the_file_stays_small(monkeypatch, tmp_path):
    tr = _poly(200, monkeypatch)
    path = tmp_path / "trace.json"
    tr.save(path)
    assert path.stat().st_size < 1_000_000
    data = json.loads(path.read_text())
    assert len(data["run_log"]) == 200
    again = gradviz.load_trace(path)
    assert again.run_log == tr.run_log and again.summary() == tr.summary()


def _raw(tr) -> int:
    """How many raw records the trace holds unread, a measure of its memory."""
    return (len(tr._raw_tensors) + len(tr._raw_nodes) + len(tr._raw_ops)
            + sum(len(steps) for _, steps in tr._unbuilt))


def _built(tr) -> int:
    return len(tr.tensors) + len(tr.ops) + len(tr.nodes) + sum(len(r.steps) for r in tr.runs)


def test_memory_does_not_grow_with_the_number_of_iterations(monkeypatch):
    short, long = _poly(100, monkeypatch), _poly(400, monkeypatch)
    # Unread, forgotten iterations are collected in batches of 32: at most that many linger.
    per_iteration = 60  # ~20 ops, ~25 tensors, ~12 nodes of the loop body
    assert _raw(long) <= 33 * per_iteration and _raw(short) <= 33 * per_iteration
    assert _built(long) == _built(short)  # reading collects them: the same records remain
    assert len(long.run_log) == 400 and len(short.run_log) == 100


def test_two_statements_with_the_same_ops_are_not_folded():
    with gradviz.trace() as tr:
        w = gradviz.tensor([1.0, -2.0], requires_grad=True)
        (w * 3).sum().backward()
        (w * w).sum().backward()
    assert len(tr.runs) == 2 and len(tr.ops) == 4
