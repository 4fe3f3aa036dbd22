"""Every trace gradviz writes loads back (issue #29): each bundled example and random programs on
each engine are traced, saved, loaded with ``load_trace`` (the schema check), drawn and written
as the CLI writes them (``write_outputs``), and every run is replayed (``replay.states``).
``tests/parity/test_trace_writes_torch.py`` does the same for real PyTorch (``nn.LSTM``,
``nn.GRU``, a CNN, a Transformer layer) with :func:`round_trip` from here.

The CLI's summary shows the trace's notes too (``gradviz trace``, ``gradviz render``), and the
trace is data: a ``Trace`` dataclass that ``io`` writes and reads, which the recorder fills."""

from __future__ import annotations

import ast
import dataclasses
import runpy
import sys
from pathlib import Path
from typing import Any

import pytest
from _cli import run, write
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_properties import build, leaves, operand_shapes, programs

import gradviz
from gradviz.trace import Recorder, Trace, load_trace
from gradviz.trace import io as trace_io
from gradviz.trace.io import trace_to_dict
from gradviz.trace.replay import states
from gradviz_cli.commands.examples import example_names, example_path
from gradviz_cli.runner import write_outputs

SETTINGS = dict(deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow,
                                       HealthCheck.function_scoped_fixture])


def round_trip(tr: Any, folder: Path, formats: tuple[str, ...] = ("svg", "dot")) -> Any:
    """Save ``tr`` into ``folder``, load it back (schema-checked), draw it and write the CLI's
    outputs from the loaded trace, and replay every run; return the loaded trace."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "trace.json"
    tr.save(path)
    back = load_trace(path)
    assert type(back) is Trace  # plain data: loading rebuilds no recorder
    assert back.to_json() == tr.to_json()  # nothing lost or changed on the way
    out = folder / "out"
    out.mkdir(exist_ok=True)
    files = write_outputs(back, out, formats).files
    assert {f.name for f in files} >= {"trace.json", "steps.html", f"backward.{formats[0]}"}
    for r in back.runs:
        replayed = list(states(r))
        assert len(replayed) == len(r.steps)
    return back


# -- the trace is data ----------------------------------------------------------------------------
def test_the_trace_is_a_dataclass_that_io_writes_field_by_field() -> None:
    # What trace.json holds is the dataclass's fields, and nothing else of the recorder's.
    fields = {f.name for f in dataclasses.fields(Trace)}
    written = set(trace_to_dict(Trace())) - {"schema", "gradviz_version", "options"}
    assert written | {"values", "keep_runs"} == fields
    # The recorder is such a trace; no recorder attribute leaks into the file.
    with gradviz.tracer() as tr:
        (gradviz.ones(2, requires_grad=True) * 3).sum().backward()
    assert isinstance(tr, Trace) and type(tr) is Recorder
    assert set(trace_to_dict(tr)) == set(trace_to_dict(Trace()))


def test_a_trace_made_by_hand_draws_saves_and_loads(tmp_path: Path) -> None:
    # A renderer or a test builds a Trace directly (no recording): the same path as a loaded one.
    with gradviz.tracer() as rec:
        x = gradviz.tensor([1.0, -2.0], requires_grad=True)
        (x * x).sum().backward()
    tr = Trace(tensors=dict(rec.tensors), ops=list(rec.ops), nodes=dict(rec.nodes),
               runs=list(rec.runs), runs_total=1, name="by hand")
    assert tr.summary() == rec.summary()
    back = round_trip(tr, tmp_path / "hand")
    assert back.name == "by hand" and back.run().steps[-1].kind == "done"
    assert [t.name for t in back.tensors.values()] == [t.name for t in rec.tensors.values()]


def test_io_builds_traces_without_the_recorder() -> None:
    # Reading a file never touches the recording machinery (it used to rebuild a recorder).
    tree = ast.parse(Path(trace_io.__file__).read_text(encoding="utf-8"))
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert "gradviz.trace.recorder" not in imported and "gradviz.trace.model" in imported


# -- the bundled examples, as `gradviz trace --example NAME` runs them ---------------------------
@pytest.mark.parametrize("name", example_names())
def test_every_bundled_examples_trace_loads_back(name: str, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    path = example_path(name)
    assert path is not None
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", [str(path)])
    with gradviz.trace(name=name) as tr:
        try:
            runpy.run_path(str(path), run_name="__main__")
        except RuntimeError:  # inplace_error ends in the error it is about
            assert name == "inplace_error"
    round_trip(tr, tmp_path / "t")


# -- random programs, each way a pass can be run -------------------------------------------------
HOW = ["backward", "backward twice", "autograd.grad", "engines", "values none", "values all",
       "hook", "keep_runs 1"]


def _trace_program(prog: tuple, seed: int, how: str) -> Any:
    start, steps = prog
    fn = build(start, steps)
    xs = leaves(operand_shapes(start, steps), seed)
    if how == "engines":  # gradviz's engine, SINGA's and MXNet's, each with its engine_data
        return gradviz.compare_engines(lambda *a: fn(*a).sum(), *xs).trace
    values = {"values none": "none", "values all": "all"}.get(how, "small")
    with gradviz.trace(values=values, keep_runs=1 if how == "keep_runs 1" else None) as tr:
        out = fn(*xs)
        if how == "hook" and out.requires_grad and out.grad_fn is not None:
            out.register_hook(lambda g: g * 2)
        loss = (out * out).sum()
        if how == "autograd.grad":
            gradviz.autograd.grad(loss, xs[:1])
        else:
            loss.backward(retain_graph=how in ("backward twice", "keep_runs 1"))
            if how in ("backward twice", "keep_runs 1"):
                loss.backward()
    return tr


@settings(max_examples=30, **SETTINGS)
@given(prog=programs(max_steps=4), seed=st.integers(0, 2**32 - 1), how=st.sampled_from(HOW))
def test_a_random_programs_trace_loads_back(prog: tuple, seed: int, how: str,
                                            tmp_path_factory: pytest.TempPathFactory) -> None:
    tr = _trace_program(prog, seed, how)
    back = round_trip(tr, tmp_path_factory.mktemp("prog"), formats=("dot",))
    assert len(back.runs) == len(tr.runs) >= 1


def test_gradient_edges_as_outputs_and_inputs_are_recorded(tmp_path: Path) -> None:
    """autograd.grad with a GradientEdge as an output or an input: the tracer crashed on it
    (AttributeError: 'GradientEdge' object has no attribute '_vc'). A run's roots are the
    tensors among its outputs, its root edges one per output, its inputs the tensors."""
    from gradviz.autograd.graph import get_gradient_edge

    with gradviz.trace() as tr:
        x = gradviz.ones(2, requires_grad=True)
        y = x * 2
        z = (y * 3).sum()
        (gy,) = gradviz.autograd.grad(z, get_gradient_edge(y), retain_graph=True)
        (gx,) = gradviz.autograd.grad(get_gradient_edge(z), x, grad_outputs=gradviz.tensor(1.0))
    assert gy.tolist() == [3.0, 3.0] and gx.tolist() == [6.0, 6.0]
    first, second = tr.runs
    z_node = tr.tensors[first.roots[0]].grad_fn
    assert first.root_edges == second.root_edges == [[z_node, 0]]
    assert (first.inputs, second.roots) == ([], [])
    assert second.inputs == [tr.known_tensor_id(x)]
    round_trip(tr, tmp_path)


def test_text_longer_than_a_trace_holds_is_cut_when_recorded(tmp_path: Path) -> None:
    # A name, a source line and an error message past the loader's limit (NOTE [text limit]).
    long = 100_001
    script = write(tmp_path / "long.py", f"""
        import gradviz
        x = gradviz.ones(2, requires_grad=True)
        x.name = "n" * {long}
        y = x * 2 if True else "{'s' * long}"
        def hook(g):
            raise ValueError("e" * {long})
        y.register_hook(hook)
        y.sum().backward()
    """)
    with gradviz.trace() as tr:
        with pytest.raises(ValueError):
            runpy.run_path(str(script))
    back = round_trip(tr, tmp_path / "t")
    assert back.runs[0].error["message"] == "e" * 99_999 + "\u2026"
    assert any(t.name == "n" * 99_999 + "\u2026" for t in back.tensors.values())
    assert any(op.source is not None and len(op.source.code) == 100_000 for op in back.ops)


# -- the CLI's summary shows the trace's notes ---------------------------------------------------
def _dropping_runs(tmp_path: Path) -> Path:
    # keep_runs=1 drops the first run: the trace notes it ("keep_runs=1: ..."). The script's name
    # and an escape sequence in its error show the notes made visible, each once.
    return write(tmp_path / "two_runs.py", """
        import gradviz
        x = gradviz.ones(2, requires_grad=True)
        (x * 2).sum().backward()
        (x * 3).sum().backward()
        raise ValueError("bad\\x1b[31m")
    """)


def test_trace_and_render_print_the_traces_notes_each_once(tmp_path: Path) -> None:
    script = _dropping_runs(tmp_path)
    done = run("trace", "--keep-runs", "1", "-o", "out", str(script), cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    notes = [line for line in done.stdout.splitlines() if line.startswith("note: ")]
    saved = load_trace(tmp_path / "out" / "trace.json").notes
    assert any(n.startswith("keep_runs=1") for n in saved)
    assert "the script raised ValueError: bad\x1b[31m" in saved
    # every note of trace.json, made visible (the escape as \x1b, never sent to the terminal)
    for note in saved:
        shown = "note: " + note.replace("\x1b", "\\x1b")
        assert sum(line == shown for line in notes) == 1, (note, done.stdout)
    assert "\x1b" not in done.stdout
    assert "note: the trace up to that point was written" in notes
    assert len(notes) == len(set(notes)) == len(saved) + 1

    again = run("render", str(tmp_path / "out" / "trace.json"), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    shown = [line for line in again.stdout.splitlines() if line.startswith("note: ")]
    assert shown == ["note: " + n.replace("\x1b", "\\x1b") for n in saved] + [
        "note: trace.json is the input trace: left as it was"]


def test_quiet_prints_no_notes(tmp_path: Path) -> None:
    script = _dropping_runs(tmp_path)
    done = run("trace", "-q", "--keep-runs", "1", "-o", "out", str(script), cwd=tmp_path)
    assert done.returncode == 1 and done.stdout == ""
    assert "ValueError" in done.stderr and "note:" not in done.stderr
    again = run("render", "-q", str(tmp_path / "out" / "trace.json"), cwd=tmp_path)
    assert again.returncode == 0 and again.stdout == "" and again.stderr == ""
