"""What the drawings and the step player show of a traced program is the program's own record.

The issue "every number and box a learner sees is the program's true state": the programs of
tests/test_trace_truth.py record, themselves, each leaf's value and ``.grad`` just before every
backward call, its ``.grad`` just after, the loss and a hidden activation, and (tensor hooks)
the gradient each call gave those. Here every box of the backward drawing of each run, of the
forward drawing and of the step drawings, and the player's leaf ``.grad`` panel at the first and
last step of each run, must show exactly those numbers, formatted by the very function that
formats them on screen (``_short``/``_data_line`` in gradviz/render/graphviz.py; for the player,
``fmtNum``/``fmtValues``/``summaryEl`` of gradviz/render/templates/player.js, ported below).
The bundled examples are checked the same way, recorded by a wrapper around ``backward``. The
torch twin is tests/parity/test_trace_truth_drawn_torch.py.
"""

from __future__ import annotations

import runpy
import sys
import time
import xml.etree.ElementTree as ET
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import gradviz
from gradviz.render import graphviz as gv
from gradviz.render._format import clip, shape_str
from gradviz.render.html import write_player
from gradviz.trace.model import run_numbers, summarize
from tests.test_trace_truth import PROGRAMS, Record, leaf_truth

pytest_plugins = ("_browser",)  # the `driver` fixture: headless Chromium

SVG = "{http://www.w3.org/2000/svg}"
EXAMPLES = Path(gradviz.__file__).resolve().parent / "examples"


# -- reading the drawings -------------------------------------------------------------------
def svg_boxes(svg: str) -> dict[str, list[str]]:
    """Each node's text lines, by its ``<title>``: its trace id (NOTE [drawing ids])."""
    out: dict[str, list[str]] = {}
    for g in ET.fromstring(svg.encode("utf-8")).iter(f"{SVG}g"):
        if "node" in (g.get("class") or "").split():
            out[g.findtext(f"{SVG}title") or ""] = ["".join(t.itertext())
                                                    for t in g.iter(f"{SVG}text")]
    return out


def shown(arr: np.ndarray | None) -> dict[str, Any] | None:
    """The program's array as the trace summarises a value (values="all")."""
    return None if arr is None else summarize(arr, "all")


def label(*lines: str) -> list[str]:
    """Label lines as a drawing writes them (empty ones left out, each clipped to 60)."""
    return [clip(line, 60) for line in lines if line]


def run_leaves(tr: Any, k: int) -> dict[str, Any]:
    """Run ``k``'s leaves (its AccumulateGrad variables) by name."""
    return {tr.tensors[n.variable].name: tr.tensors[n.variable]
            for n in (tr.nodes[i] for i in tr.runs[k].nodes)
            if n.kind == "accumulate_grad" and n.variable is not None}


def made_ids(tr: Any, k: int, names: Any) -> dict[str, str]:
    """The trace ids of what run ``k``'s forward pass made: ``loss`` is the tensor backward
    was called on; any other name is the output of the op of that name in the run's forward
    pass (these programs run one forward pass per backward call)."""
    run = tr.runs[k]
    out = {"loss": run.roots[0]}
    segment = int(run.id[3:])
    for name in names:
        if name != "loss":
            ops = [op for op in tr.ops if op.name == name and op.segment == segment]
            assert len(ops) == 1, (k, name, [op.name for op in tr.ops])
            out[name] = ops[0].outputs[0]
    return out


# -- the checks -----------------------------------------------------------------------------
def backward_truth(tr: Any, rec: Record, runs: Any = None) -> None:
    """Each run's backward drawing (of ``runs``, default all): a leaf box is the leaf's value
    before the call and its .grad after; the loss box is the loss and the gradient the call
    seeded it with."""
    for k in range(len(tr.runs)) if runs is None else runs:
        run = tr.runs[k]
        boxes = svg_boxes(gv.to_svg(gv.draw_backward(tr, run=k, detail="values")))
        leaves = run_leaves(tr, k)
        assert set(leaves) == set(rec.before[k]), (k, sorted(leaves))
        for name, t in leaves.items():
            value = rec.before[k][name]
            assert boxes[t.id] == label(name, shape_str(value.shape), gv._data_line(shown(value)),
                                        f".grad {gv._short(shown(rec.after[k][name]))}"), \
                f"run {k + 1}: {name}"
        loss = rec.made[k]["loss"]
        assert boxes[run.roots[0]][1:] == label(
            shape_str(loss.shape), gv._data_line(shown(loss)),
            f"grad {gv._short(shown(rec.made_grad[k]['loss']))}"), f"run {k + 1}: loss"


def forward_truth(tr: Any, rec: Record) -> None:
    """The forward drawing: each leaf version's box holds the value the runs that read it saw
    and the .grad the last of those runs left ("grad: its gradient in the last backward run");
    each recorded tensor the forward pass made holds the program's value, and, if the last run
    went through it, the gradient that run gave it (the program's tensor hook)."""
    boxes = svg_boxes(gv.to_svg(gv.draw_forward(tr, detail="values")))
    last = len(tr.runs) - 1
    grad_of: dict[str, np.ndarray] = {}  # leaf version -> .grad after its last run
    for k in range(len(tr.runs)):
        for name, t in run_leaves(tr, k).items():
            grad_of[t.id] = rec.after[k][name]
    for k in range(len(tr.runs)):
        for name, t in run_leaves(tr, k).items():
            value = rec.before[k][name]
            assert boxes[t.id] == label(
                name, f"{shape_str(value.shape)} {value.dtype}", gv._data_line(shown(value)),
                f"grad {gv._short(shown(grad_of[t.id]))}"), f"run {k + 1}: {name}"
        last_ids = made_ids(tr, last, rec.made[last])
        for name, tid in made_ids(tr, k, rec.made[k]).items():
            value = rec.made[k][name]
            grad = rec.made_grad[last][name] if tid == last_ids[name] else None
            assert boxes[tid][1:] == label(
                f"{shape_str(value.shape)} {value.dtype}", gv._data_line(shown(value)),
                f"grad {gv._short(shown(grad))}" if grad is not None else ""), \
                f"run {k + 1}: {name}"


def steps_truth(tr: Any, rec: Record) -> None:
    """The step drawings: at the last step of each run a leaf shows the .grad the program had
    after the call; at step 0 it shows no .grad, or the one it had before the call."""
    for k in range(len(tr.runs)):
        leaves = run_leaves(tr, k)
        end = svg_boxes(gv.to_svg(gv.draw_step(tr, k, -1)))
        start = svg_boxes(gv.to_svg(gv.draw_step(tr, k, 0)))
        for name, t in leaves.items():
            shape = shape_str(rec.before[k][name].shape)
            assert end[t.id] == label(name, shape, f".grad {gv._short(shown(rec.after[k][name]))}")
            before = rec.grad_before[k].get(name)
            assert start[t.id] in (label(name, shape),
                                   label(name, shape, f".grad {gv._short(shown(before))}")
                                   if before is not None else None), (k, name, start[t.id])


def drawings_truth(tr: Any, rec: Record) -> None:
    leaf_truth(tr, rec)  # the model first: a wrong drawing of a wrong model says less
    backward_truth(tr, rec)
    forward_truth(tr, rec)
    steps_truth(tr, rec)


# -- the player's formatting (gradviz/render/templates/player.js), ported ---------------------
def _significant(v: float, digits: int) -> Decimal:
    """``v`` rounded to ``digits`` significant digits as JavaScript rounds (a tie goes away
    from zero), exactly: Decimal holds the double's exact value."""
    d = Decimal(v)
    top = d.adjusted()
    r = d.quantize(Decimal(1).scaleb(top - digits + 1), rounding=ROUND_HALF_UP)
    if r.adjusted() > top:  # 9.9996 -> 10.00: one digit fewer after the point
        r = d.quantize(Decimal(1).scaleb(top - digits + 2), rounding=ROUND_HALF_UP)
    return r


def js_num(v: Any) -> str:
    """player.js ``fmtNum``."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return str(v).lower() if isinstance(v, bool) else str(v)
    if float(v).is_integer():
        return str(int(v))
    a = abs(v)
    if a < 1e-3 or a >= 1e5:  # toExponential(3)
        r = _significant(v, 4)
        e = r.adjusted()
        mantissa = r.scaleb(-e)
        return f"{mantissa:.3f}e{'+' if e >= 0 else '-'}{abs(e)}"
    x = float(_significant(v, 4))  # Number(v.toPrecision(4)), then String(): shortest form
    return str(int(x)) if x.is_integer() else repr(x)


def js_values(values: Any, budget: int) -> str:
    """player.js ``fmtValues``, walked as the JS walks it (iteratively): each list writes its
    items until ``budget`` numbers are written, then one "…"."""
    if not isinstance(values, list):
        return js_num(values)
    left = budget
    out: list[str] = []
    # frames: [list, next index]; the text of each list is written as it is walked
    frames: list[list[Any]] = [[values, 0]]
    out.append("[")
    while frames:
        frame = frames[-1]
        items, i = frame
        if i >= len(items):
            out.append("]")
            frames.pop()
            continue
        if left <= 0:
            out.append(", …" if i else "…")
            out.append("]")
            frames.pop()
            continue
        if i:
            out.append(", ")
        frame[1] = i + 1
        item = items[i]
        if isinstance(item, list):
            out.append("[")
            frames.append([item, 0])
        else:
            left -= 1
            out.append(js_num(item))
    return "".join(out)


def js_summary(summary: dict[str, Any] | None) -> str:
    """The text of player.js ``summaryEl`` for a summary with values (values="all")."""
    if summary is None:
        return "None"
    shape = "[" + ", ".join(str(d) for d in summary["shape"]) + "]"
    return f"shape {shape} {summary['dtype']}" + js_values(summary["values"], 24)


# -- the player -----------------------------------------------------------------------------
_LEAVES_JS = """
return Array.from(document.querySelectorAll('[data-role="leaves"] tr')).map(
  (tr) => [tr.querySelector('th').textContent, tr.querySelector('td').textContent]);
"""


def _open(driver: Any, page: Path, run: int, step: int) -> None:
    driver.get("about:blank")  # a new hash on the same file would not reload the page
    driver.get(f"{page.as_uri()}#run={run}&step={step}")
    end = time.monotonic() + 10
    want = str(step)
    while driver.execute_script(
            "return document.querySelector('.gv-player').dataset.step") != want:
        assert time.monotonic() < end, f"the player did not open run {run} step {step}"
        time.sleep(0.05)


def player_truth(driver: Any, tr: Any, rec: Record, page: Path) -> None:
    """The player's leaf .grad panel at the last step of each run (#run=N&step=K, N as the
    drawings number runs): the .grad the program had after the call; at step 0: before it."""
    write_player(tr, page)
    for k, number in enumerate(run_numbers(tr)):
        names = sorted(run_leaves(tr, k))
        for step, grads in ((len(tr.runs[k].steps) - 1, rec.after[k]),
                            (0, rec.grad_before[k])):
            _open(driver, page, number, step)
            rows = driver.execute_script(_LEAVES_JS)
            want = {f"{name}.grad": js_summary(shown(grads.get(name))) for name in names}
            assert dict(rows) == want, f"run {number} step {step}"
            assert len(rows) == len(want)


# -- the tests ------------------------------------------------------------------------------
def _traced(name: str) -> tuple[Any, Record]:
    rec = Record()
    with gradviz.trace(values="all", keep_runs="all") as tr:
        PROGRAMS[name](rec)
    return tr, rec


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_drawings_show_what_the_program_recorded(name: str) -> None:
    tr, rec = _traced(name)
    drawings_truth(tr, rec)


@pytest.mark.browser
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_player_shows_what_the_program_recorded(name: str, driver: Any,
                                                    tmp_path: Path) -> None:
    tr, rec = _traced(name)
    player_truth(driver, tr, rec, tmp_path / "steps.html")


def test_the_ported_player_format() -> None:
    """js_num is fmtNum: 4 significant digits, a tie away from zero, exponent form outside
    [1e-3, 1e5), integers bare; js_values cuts as fmtValues does."""
    assert [js_num(v) for v in (2.0, -0.0, 0.1024, 1.0625, -1.0625, 0.99996, 123456.0,
                                123456.5, 0.00012346, 2.5e-5, 99999.5)] == \
        ["2", "0", "0.1024", "1.063", "-1.063", "1", "123456", "1.235e+5", "1.235e-4",
         "2.500e-5", "100000"]
    assert js_values([[1.5, 2.0], [3.0, 4.0]], 3) == "[[1.5, 2], [3, …]]"
    assert js_values([[1.5, 2.0], [3.0, 4.0]], 2) == "[[1.5, 2], …]"
    assert js_values(3.25, 24) == "3.25"


# -- the bundled examples -------------------------------------------------------------------
def graph_leaves(root: Any) -> list[Any]:
    """The leaves ``root.backward()`` reaches: its graph's AccumulateGrad variables, found by
    walking ``next_functions`` (iteratively) from ``root.grad_fn``."""
    out: list[Any] = []
    todo = [root.grad_fn]
    seen: set[int] = set()
    while todo:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        variable = getattr(node, "variable", None)
        if variable is not None and all(v is not variable for v in out):
            out.append(variable)
        todo.extend(nxt for nxt, _ in node.next_functions)
    return out


def record_backward(monkeypatch: pytest.MonkeyPatch, cls: type, rec: Record) -> None:
    """Make every ``cls.backward`` call record, as the programs above do themselves, its
    leaves (keyed by ``id()``; see :func:`by_name`) before and their ``.grad`` after, and the
    tensor it was called on: the examples are run as they are, so the record wraps the call."""
    real = cls.backward

    def backward(self: Any, *args: Any, **kwargs: Any) -> Any:
        leaves = {str(id(t)): t for t in graph_leaves(self)}
        rec.call(leaves, self)
        out = real(self, *args, **kwargs)
        rec.take(rec.after, {k: t.grad for k, t in leaves.items()})
        return out

    monkeypatch.setattr(cls, "backward", backward)


def by_name(rec: Record, names: dict[str, Any]) -> None:
    """Key the record by the names the program gives its leaves (``names``: name -> tensor)."""
    of = {str(id(t)): name for name, t in names.items()}
    for calls in (rec.before, rec.after, rec.grad_before):
        for k, call in enumerate(calls):
            calls[k] = {of[key]: v for key, v in call.items()}


def run_example(monkeypatch: pytest.MonkeyPatch, name: str) -> tuple[Any, Record]:
    rec = Record()
    path = str(EXAMPLES / f"{name}.py")
    monkeypatch.setattr(sys, "argv", [path])  # as `python <example>.py`: no arguments
    record_backward(monkeypatch, gradviz.Tensor, rec)
    with gradviz.trace(values="all", keep_runs="all") as tr:
        ns = runpy.run_path(path, run_name="__main__")
    monkeypatch.undo()
    if "model" in ns:
        by_name(rec, dict(ns["model"].named_parameters()))
    else:  # polynomial: the four coefficients
        by_name(rec, {k: ns[k] for k in "abcd"})
    return tr, rec


@pytest.mark.parametrize("name", ["mlp_moons", "polynomial", "cnn_digits"])
def test_bundled_examples_show_what_they_computed(name: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """mlp_moons (20 steps) and cnn_digits (its default 3 steps) run as shipped; polynomial
    with GRADVIZ_POLY_STEPS=5, its own knob, instead of 2,000 steps."""
    monkeypatch.setenv("GRADVIZ_POLY_STEPS", "5")
    tr, rec = run_example(monkeypatch, name)
    assert len(rec.before) == {"mlp_moons": 20, "polynomial": 5, "cnn_digits": 3}[name]
    leaf_truth(tr, rec)
    backward_truth(tr, rec, runs=[len(tr.runs) - 1])
