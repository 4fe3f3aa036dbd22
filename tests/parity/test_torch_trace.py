"""Tracing real PyTorch (gradviz/trace/torch_source.py): the recorded engine steps are what
torch's engine did, and tracing changes nothing in the traced program.

Each program runs twice from the same seed: untraced, and inside ``gradviz.trace(torch=True)``.
The results (values, ``.grad``, ``autograd.grad`` results, what user hooks saw) must be equal;
the recorded execution order must equal the order seen by an independent observer (torch's own
autograd logging, which puts a pre-hook on every node of each backward call: torch's code, not
ours), and every recorded leaf gradient and captured gradient must equal torch's.
"""

from __future__ import annotations

import logging
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

import gradviz
from gradviz.trace.model import AccumulateStep, ExecuteStep, LeafGradStep

EXAMPLES = Path(gradviz.__file__).parent / "examples"


def _as_torch(code: str) -> str:
    """A gradviz example as the torch program it mirrors (its imports changed back)."""
    return (code.replace("import gradviz as torch", "import torch")
            .replace("gradviz.autograd.function", "torch.autograd.function"))


def _example(name: str) -> Callable[[], dict[str, Any]]:
    code = _as_torch((EXAMPLES / f"{name}.py").read_text())

    def run() -> dict[str, Any]:
        ns: dict[str, Any] = {"__name__": "__main__"}  # as `python example.py` runs it
        exec(compile(code, str(EXAMPLES / f"{name}.py"), "exec"), ns)
        return {k: v for k, v in ns.items() if isinstance(v, torch.Tensor)}

    return run


def mlp_step() -> dict[str, Any]:
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(5, 4)
    target = torch.tensor([0, 2, 1, 1, 0])
    loss = torch.nn.functional.cross_entropy(model(x), target)
    opt.zero_grad()
    loss.backward()
    grads = {f"grad_{k}": p.grad.clone() for k, p in model.named_parameters()}
    opt.step()
    return {"loss": loss, **grads, **{k: p for k, p in model.named_parameters()}}


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 3 * x ** 2 * g


def custom_function() -> dict[str, Any]:
    x = torch.randn(3, requires_grad=True)
    y = (Cube.apply(x) * x).sum()
    y.backward()
    return {"x": x, "y": y}


def retain_graph_twice() -> dict[str, Any]:
    x = torch.randn(4, requires_grad=True)
    y = (x.exp() * x).sum()
    y.backward(retain_graph=True)
    first = x.grad.clone()
    y.backward()
    return {"first": first, "x": x}


def hooks() -> dict[str, Any]:
    seen: list[Any] = []
    x = torch.randn(3, requires_grad=True)
    w = torch.randn(3, requires_grad=True)
    h = x * w
    h.retain_grad()
    x.register_hook(lambda g: g * 2)  # changes what reaches x.grad
    out = h.tanh().sum()
    out.grad_fn.register_prehook(lambda go: (go[0] * 3,))  # changes what the root receives
    h.grad_fn.register_hook(lambda gi, go: (gi[0] + 1, gi[1]))  # changes what MulBackward0 sends
    w.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.clone()))
    out.backward()
    return {"x": x, "w": w, "h_grad": h.grad, "seen": seen[0]}


def multi_root() -> dict[str, Any]:
    x = torch.randn(3, requires_grad=True)
    a = (x * 2).sum()
    b = (x ** 2).mean()
    torch.autograd.backward([a, b], [torch.tensor(1.0), torch.tensor(0.5)])
    return {"x": x}


def grad_with_inputs() -> dict[str, Any]:
    x = torch.randn(3, requires_grad=True)
    w = torch.randn(3, requires_grad=True)
    h = (x * w).sin()
    out = (h * h).sum()
    gx, gh = torch.autograd.grad(out, [x, h], retain_graph=True)
    (gw,) = torch.autograd.grad(out, [w])
    return {"gx": gx, "gh": gh, "gw": gw, "x_grad_none": torch.tensor(x.grad is None)}


def backward_with_inputs() -> dict[str, Any]:
    x = torch.randn(3, requires_grad=True)
    w = torch.randn(3, requires_grad=True)
    (x * w).sum().backward(inputs=[x])
    return {"x": x, "w_none": torch.tensor(w.grad is None)}


def inplace_error() -> dict[str, Any]:
    a = torch.rand(5, 5, requires_grad=True)
    b = a * 1
    c = b * b
    b.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation") as err:
        c.sum().backward()
    return {"message": str(err.value), "a_grad_none": torch.tensor(a.grad is None)}


PROGRAMS: dict[str, Callable[[], dict[str, Any]]] = {
    "seed_backward": _example("seed_backward"),
    "higher_order_example": _example("higher_order"),
    "inplace_error": inplace_error,
    "custom_function_example": _example("custom_function"),
    "mlp_step": mlp_step,
    "custom_function": custom_function,
    "retain_graph_twice": retain_graph_twice,
    "hooks": hooks,
    "multi_root": multi_root,
    "grad_with_inputs": grad_with_inputs,
    "backward_with_inputs": backward_with_inputs,
}


class _Observer(logging.Handler):
    """torch's autograd debug logging: a pre-hook on every node of every backward call,
    logging "Executing: <node repr> ...", in the order the engine runs them."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.addresses: list[int] = []
        self.trace: Any = None
        # Each node's trace id when it ran: a leaf's AccumulateGrad gets a new id for each
        # version of the leaf (NOTE [versions]), so the map is read at that moment.
        self.ids: list[str | None] = []

    def emit(self, record: logging.LogRecord) -> None:
        m = re.match(r"Executing: <[\w.]+ object at (0x[0-9a-f]+)>", record.getMessage())
        if m:
            self.addresses.append(int(m.group(1), 16))
            if self.trace is not None:
                hit = self.trace.torch_source._nodes.get(self.addresses[-1])
                self.ids.append(None if hit is None else hit[1])


def _run(program: Callable[[], dict[str, Any]], traced: bool
         ) -> tuple[dict[str, Any], gradviz.trace.Trace | None, list[int]]:
    torch.manual_seed(0)
    log = logging.getLogger("torch.autograd.graph")
    observer = _Observer()
    old = log.level
    log.addHandler(observer)
    log.setLevel(logging.DEBUG)
    log.propagate = False
    try:
        if traced:
            # every run kept: identical iterations would fold, and the order is compared whole
            with gradviz.trace(values="all", torch=True, keep_runs="all") as tr:
                observer.trace = tr
                out = program()
        else:
            tr = None
            out = program()
    finally:
        log.removeHandler(observer)
        log.setLevel(old)
        log.propagate = True
    return out, tr, observer.ids if traced else observer.addresses


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, torch.Tensor):  # the values, and the gradients of leaves
        return torch.equal(a, b) and not a.is_leaf or (a.grad is None) == (b.grad is None) and (
            a.grad is None or torch.equal(a.grad, b.grad))
    return a == b


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_recorded_engine_is_torchs_engine(name: str) -> None:
    program = PROGRAMS[name]
    plain, _, plain_order = _run(program, traced=False)
    traced, tr, observed = _run(program, traced=True)
    # Nothing changes: every value and gradient, what user hooks saw, the number of nodes run.
    assert plain.keys() == traced.keys()
    for k in plain:
        assert _same(plain[k], traced[k]), k
    assert len(plain_order) == len(observed)
    # The recorded order is the observed one, and the order derived from sequence numbers
    # agrees with it (else a note would say so).
    recorded = [s.node for r in tr.runs for s in r.steps
                if isinstance(s, ExecuteStep) and tr.nodes[s.node].kind != "graph_root"]
    assert recorded == observed
    assert recorded, "no node ran"
    assert tr.notes == []
    assert all(r.engine == "torch" for r in tr.runs)


def _values(summary: dict[str, Any]) -> np.ndarray:
    return np.asarray(summary["values"], dtype=np.float64)


@pytest.mark.parametrize("name", ["mlp_step", "custom_function", "retain_graph_twice", "hooks",
                                  "multi_root", "seed_backward", "backward_with_inputs"])
def test_recorded_leaf_grads_are_torchs(name: str) -> None:
    out, tr, _ = _run(PROGRAMS[name], traced=True)
    written: dict[str, list[dict[str, Any]]] = {}  # leaf name -> .grad after each run
    for r in tr.runs:
        for s in r.steps:
            if isinstance(s, LeafGradStep):
                written.setdefault(tr.tensors[s.tensor].name, []).append(s.after)
    assert written, "no leaf gradient recorded"
    checked = 0
    for k, t in out.items():  # every leaf the program returned, by its name
        if isinstance(t, torch.Tensor) and t.is_leaf and t.grad is not None:
            np.testing.assert_array_equal(_values(written[k][-1]), t.grad.numpy())
            checked += 1
    assert checked
    if name == "retain_graph_twice":
        np.testing.assert_array_equal(_values(written["x"][0]), out["first"].numpy())
    if name == "hooks":  # what the user's post-accumulate-grad hook saw is what we recorded
        np.testing.assert_array_equal(_values(written["w"][-1]), out["seen"].numpy())


def test_autograd_grad_results_are_the_captured_gradients() -> None:
    out, tr, _ = _run(grad_with_inputs, traced=True)
    first, second = tr.runs
    assert first.kind == second.kind == "grad"
    for run, key, name in ((first, "gx", "x"), (first, "gh", "h"), (second, "gw", "w")):
        tid = next(t.id for t in tr.tensors.values() if t.name == name)
        assert tid in run.inputs
        info = tr.tensors[tid]
        node = info.grad_fn or next(n.id for n in tr.nodes.values() if n.variable == tid)
        sent = [s for s in run.steps if isinstance(s, AccumulateStep) and s.node == node]
        # the buffer the engine captured for that input, after every edge into it
        np.testing.assert_allclose(_values(sent[-1].buffer), out[key].numpy(), rtol=1e-6)
        if info.is_leaf:  # captured, not accumulated: its AccumulateGrad never runs
            assert not any(isinstance(s, ExecuteStep) and s.node == node for s in run.steps)


def test_an_engine_error_is_the_runs_last_step() -> None:
    out, tr, _ = _run(inplace_error, traced=True)
    run = tr.run()
    assert run.error == {"type": "RuntimeError", "message": out["message"]}
    assert run.steps[-1].kind == "error" and run.steps[-1].message == out["message"]
    mul_b = [op for op in tr.ops if op.name == "mul_"]
    assert mul_b and mul_b[0].inplace and tr.tensors[mul_b[0].outputs[0]].name == "b (v1)"


def test_a_derived_order_that_disagrees_is_noted_and_the_observed_order_kept(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from gradviz.trace import torch_source

    # A wrong rule (the lowest sequence number first) stands in for a derivation that misses.
    monkeypatch.setattr(torch_source._BackwardCall, "_priority",
                        lambda self, nid: self.src.trace._nodes[nid].sequence_nr % 2 ** 63)
    _, tr, observed = _run(mlp_step, traced=True)
    assert len(tr.notes) == 1 and "differs from the order PyTorch ran" in tr.notes[0]
    recorded = [s.node for r in tr.runs for s in r.steps if isinstance(s, ExecuteStep)]
    assert recorded == observed
    # and the replayed ready queue runs them in that observed order
    from gradviz.trace.replay import timeline

    for r in tr.runs:
        assert r.steps[0].engine_data == {"order": "observed"}
        assert [e[0] for e in timeline(r).executed] == [
            s.node for s in r.steps if isinstance(s, ExecuteStep)]
    # and the trace loads back, saying so (engine_data, docs/trace-schema.md)
    tr.save(tmp_path / "trace.json")
    back = gradviz.load_trace(tmp_path / "trace.json")
    assert back.runs[0].steps[0].engine_data == {"order": "observed"}


def test_one_trace_holds_gradviz_and_torch() -> None:
    with gradviz.trace(torch=True) as tr:
        g = gradviz.tensor([1.0, 2.0], requires_grad=True)
        (g * g).sum().backward()
        t = torch.tensor([1.0, 2.0], requires_grad=True)
        (t * t).sum().backward()
    assert [r.engine for r in tr.runs] == ["pytorch", "torch"]
    assert [op.name for op in tr.ops] == ["mul", "sum", "tensor", "mul", "sum"]
    assert len({op.id for op in tr.ops}) == 5 and len(set(tr.nodes)) == len(tr.nodes)
    assert [tr.tensors[op.inputs[0]].name for op in tr.ops if op.name == "mul"] == ["g", "t"]
    np.testing.assert_array_equal(_values(tr.tensors[tr._tids.get(t)].grad), [2.0, 4.0])
    np.testing.assert_array_equal(_values(tr.tensors[tr._tids.get(g)].grad), [2.0, 4.0])


def test_release_saved_and_retain_graph() -> None:
    _, tr, _ = _run(retain_graph_twice, traced=True)
    kept, freed = tr.runs
    assert kept.retain_graph and not any(s.kind == "release_saved" for s in kept.steps)
    released = {s.node: s.saved for s in freed.steps if s.kind == "release_saved"}
    names = {tr.nodes[n].name: saved for n, saved in released.items()}
    assert names == {"MulBackward0": ["other", "self"], "ExpBackward0": ["result"]}


def test_forward_ops_sources_scopes_and_links() -> None:
    _, tr, _ = _run(mlp_step, traced=True)
    by_name = {op.name: op for op in tr.ops}
    linear = [op for op in tr.ops if op.name == "linear"]
    assert [op.scope for op in linear] == [["Sequential", "0"], ["Sequential", "2"]]
    assert tr.module_classes["Sequential/0"] == "Linear"
    ce = by_name["cross_entropy"]
    assert ce.source is not None and ce.source.code.startswith("loss = torch.nn.functional")
    assert tr.nodes[ce.node].name == "NllLossBackward0"
    assert tr.nodes[linear[0].node].name == "AddmmBackward0"
    loss = next(t for t in tr.tensors.values() if t.name == "loss")
    assert loss.grad_fn == ce.node
    params = [tr.tensors[i].name for op in linear for i in op.inputs[1:]]
    assert params == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert all(tr.tensors[i].is_param for op in linear for i in op.inputs[1:])


def test_saved_values_and_custom_node() -> None:
    _, tr, _ = _run(custom_function, traced=True)
    names = {n.name: n for n in tr.nodes.values()}
    assert names["CubeBackward"].kind == "custom"
    mul = names["MulBackward0"]
    assert {s.name for s in mul.saved} == {"self", "other"}
    acc = names["AccumulateGrad"]
    assert tr.tensors[acc.variable].name == "x"


def test_trace_saves_loads_and_renders(tmp_path: Path) -> None:
    _, tr, _ = _run(mlp_step, traced=True)
    path = tmp_path / "trace.json"
    tr.save(path)
    back = gradviz.load_trace(path)  # schema-checked
    assert [r.engine for r in back.runs] == ["torch"]
    assert len(back.run().steps) == len(tr.run().steps)
    from gradviz.render import draw_backward, player_html, to_svg

    svg = to_svg(draw_backward(back, show_saved=True))
    assert "AddmmBackward0" in svg and "NllLossBackward0" in svg
    html = player_html(back)
    assert "AddmmBackward0" in html


def test_graph_of_print_graph_and_make_dot_for_torch_tensors() -> None:
    x = torch.ones(2, requires_grad=True)
    w = torch.nn.Parameter(torch.full((2,), 3.0))
    y = (x * w).exp().sum()
    g = gradviz.graph_of(y)
    assert sorted(n.name for n in g.nodes.values()) == [
        "AccumulateGrad", "AccumulateGrad", "ExpBackward0", "MulBackward0", "SumBackward0"]
    assert {t.name for t in g.tensors.values()} >= {"x", "w", "y"}
    dot = gradviz.make_dot(y, params={"w": w}, show_saved=True, show_attrs=True)
    src = dot.source
    assert "w\n (2)" in src and "lightblue" in src and "darkolivegreen1" in src
    assert "orange" in src and "self_sym_sizes: [2]" in src
    from gradviz.render import to_svg

    assert "ExpBackward0" in to_svg(dot)
    gx = gradviz.tensor([1.0, 2.0], requires_grad=True)
    gdot = gradviz.make_dot((gx * gx).sum(), params={"gx": gx})
    assert "gx\n (2)" in gdot.source and "MulBackward0" in gdot.source


def test_import_gradviz_does_not_import_torch() -> None:
    code = ("import sys, gradviz, gradviz.render, gradviz.trace; "
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_tracing_is_removed_after_the_block() -> None:
    before = torch.autograd._engine_run_backward
    with gradviz.trace(torch=True) as tr:
        assert torch.autograd._engine_run_backward is not before
        x = torch.ones(2, requires_grad=True)
        (x * 2).sum().backward()
    assert torch.autograd._engine_run_backward is before
    counts = (len(tr.ops), len(tr.runs))
    (x * 3).sum().backward()  # after the block: nothing more is recorded
    assert (len(tr.ops), len(tr.runs)) == counts == (3, 1)


def test_the_default_policy_bounds_a_torch_training_loop() -> None:
    from gradviz.trace.budget import DETAILED_RUNS

    torch.manual_seed(0)
    with gradviz.trace(torch=True) as tr:
        model = torch.nn.Linear(3, 2)
        for k in range(DETAILED_RUNS + 4):
            out = model(torch.randn(4, 3)).pow(2)
            # a different structure each time: kept in full up to DETAILED_RUNS
            for _ in range(k):
                out = out * 1.0
            out.mean().backward()
    assert len(tr.runs) == DETAILED_RUNS and len(tr.run_log) == DETAILED_RUNS + 4
    assert {e["engine"] for e in tr.run_log} == {"torch"}


def test_identical_iterations_fold_on_torch_as_on_gradviz() -> None:
    """Both engines keep a loop's last iteration and fold the identical ones before it."""
    def loop(lib: Any) -> Any:
        lib.manual_seed(0)
        with gradviz.trace(torch=lib is torch) as tr:
            w = lib.ones(3, requires_grad=True)
            x = lib.arange(3.0)
            for _ in range(5):
                (w * x).sum().backward()
                with lib.no_grad():
                    w -= 0.1 * w.grad
        return tr

    for tr in (loop(torch), loop(gradviz)):
        assert [r.id for r in tr.runs] == ["run4"] and len(tr.run_log) == 5
        assert "identical structure folded (4 earlier iterations)" in " ".join(tr.notes)
        graph_ops = [op.name for op in tr.ops if op.node is not None]
        assert graph_ops == ["mul", "sum"], graph_ops


def test_each_modules_summary_and_module_boxes_agree_between_engines() -> None:
    """Trace.modules (shapes taken and returned, parameters, calls) and the boxes ``depth``
    draws are the same on real PyTorch as on gradviz, for one program."""
    def run(lib: Any) -> Any:
        lib.manual_seed(0)
        nn = lib.nn
        model = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.Flatten(),
                              nn.Sequential(nn.Linear(4, 4), nn.Tanh()), nn.LSTM(4, 3))
        with gradviz.trace(torch=lib is torch) as tr:
            for _ in range(2):
                out, (h, c) = model(lib.rand(2, 1, 4, 3))
                (out.sum() + h.sum()).backward()
        return tr

    ours, theirs = run(gradviz), run(torch)
    assert theirs.modules == ours.modules
    assert theirs.modules["Sequential/4"].outputs == [(2, 3), (1, 3), (1, 3)]
    assert theirs.modules["Sequential"].calls == 2
    for draw in (gradviz.render.draw_forward, gradviz.render.draw_backward):
        titles = [sorted(g.title for g in draw(tr, depth=1).plan.groups.values())
                  for tr in (ours, theirs)]
        assert titles[0] == titles[1] and "Sequential.4: LSTM" in titles[0]


def test_keep_runs_bounds_a_torch_training_loop(tmp_path: Path) -> None:
    torch.manual_seed(0)
    with gradviz.trace(torch=True, keep_runs=2) as tr:
        model = torch.nn.Linear(3, 2)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(5):
            loss = model(torch.randn(4, 3)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    assert [r.id for r in tr.runs] == ["run3", "run4"] and tr.runs_total == 5
    # Dropped nodes are let go: the source holds only nodes the trace still has (a leaf's
    # AccumulateGrad is registered anew for each version, its older records stay with
    # the runs that walked them).
    held = {nid for _, nid in tr.torch_source._nodes.values()}
    assert held <= tr.nodes.keys()
    assert tr.nodes.keys() == {n for r in tr.runs for n in r.nodes}
    tr.save(tmp_path / "t.json")
    assert len(gradviz.load_trace(tmp_path / "t.json").runs) == 2


def test_draw_backward_and_show_take_torch_tensors(tmp_path: Path, capsys) -> None:
    from gradviz.render import draw_backward, to_svg

    x = torch.ones(3, requires_grad=True)
    y = (x.sin() * 2).sum()
    svg = to_svg(draw_backward(y, show_saved=True))
    assert "SinBackward0" in svg and "AccumulateGrad" in svg
    shown = gradviz.show(y, open_browser=False)
    assert "MulBackward0" in shown._repr_svg_()


def test_sparse_and_meta_tensors_are_recorded() -> None:
    def program() -> dict[str, Any]:
        x = torch.randn(3, 3, requires_grad=True)
        s = x.to_sparse()  # no NumPy view: shown densified
        y = torch.sparse.sum(s * 2)
        y.backward()
        q = torch.empty(3, device="meta") * 2  # no values at all: shape and dtype only
        return {"x": x, "y": y, "q_shape": list(q.shape)}

    plain, _, _ = _run(program, traced=False)
    traced, tr, _ = _run(program, traced=True)
    for k in plain:
        assert _same(plain[k], traced[k]), k
    sparse = next(t for t in tr.tensors.values() if t.name == "s")
    assert sparse.shape == [3, 3] and len(sparse.value["values"]) == 3
    meta = [t.value for t in tr.tensors.values() if "values" not in t.value]
    assert meta and all(v == {"shape": [3], "dtype": "float32"} for v in meta)
    assert tr.runs[0].steps[-1].kind == "done" and tr.notes == []
    leaf = [s for s in tr.runs[0].steps if isinstance(s, LeafGradStep)]
    np.testing.assert_array_equal(_values(leaf[0].after), traced["x"].grad.numpy())


def test_each_input_buffer_shown_is_what_its_node_received() -> None:
    """NOTE [torch gradients: summarised as seen]: the buffer an ``accumulate`` step shows is
    the running sum of what was sent into that slot. Its last value must equal what the
    receiving node got (captured by its pre-hook, independently), also where the engine adds
    into its own buffer in place, for values shown in full and as stats, with several roots."""

    def program() -> dict[str, Any]:
        small = torch.randn(3, requires_grad=True)
        big = torch.randn(40, 30, requires_grad=True)  # more than SMALL: stats, not values
        h = small.exp()  # h feeds three edges: its slot sums three gradients
        y = (h * 2 + h.sin() + h * h).sum()
        b = big.tanh()
        z = (b @ b.t()).sum() + (b * 3).sum()  # b feeds three edges too
        torch.autograd.backward([y, z])  # two roots: GraphRoot sends first
        return {"small": small, "big": big}

    _, tr, _ = _run(program, traced=True)
    (run,) = tr.runs
    last: dict[tuple[str, int], dict[str, Any]] = {}
    fed: dict[tuple[str, int], int] = {}
    for s in run.steps:
        if isinstance(s, AccumulateStep):
            last[(s.node, s.input_nr)] = s.buffer
            fed[(s.node, s.input_nr)] = fed.get((s.node, s.input_nr), 0) + 1
    assert max(fed.values()) >= 3
    checked = 0
    for s in run.steps:
        if isinstance(s, ExecuteStep) and tr.nodes[s.node].kind != "graph_root":
            for nr, got in enumerate(s.grad_outputs):
                shown = last.get((s.node, nr))
                if got is None or shown is None:
                    continue
                if "values" in got:
                    np.testing.assert_allclose(_values(shown), _values(got), rtol=1e-6)
                else:
                    for k in ("min", "max", "mean"):
                        assert shown["stats"][k] == pytest.approx(got["stats"][k], rel=1e-5)
                checked += 1
    assert checked >= len(fed)


def test_a_gradient_a_tensor_hook_changed_in_place_is_shown_changed() -> None:
    """A node's received gradient reuses the sender's summary only while it is the same,
    unchanged tensor: a hook that writes into it (a new version) must show the new values."""

    def program() -> dict[str, Any]:
        w = torch.tensor([0.5, 1.0, 2.0], requires_grad=True)
        u = w * 2
        u.register_hook(lambda g: g.mul_(3))  # in place, before MulBackward0 runs
        u.exp().sum().backward()
        return {"w": w, "sent": (w * 2).exp().detach()}

    out, tr, _ = _run(program, traced=True)
    executed = {tr.nodes[s.node].name: s for s in tr.run().steps if isinstance(s, ExecuteStep)}
    np.testing.assert_allclose(_values(executed["ExpBackward0"].grad_inputs[0]),
                               out["sent"].numpy(), rtol=1e-6)
    np.testing.assert_allclose(_values(executed["MulBackward0"].grad_outputs[0]),
                               3 * out["sent"].numpy(), rtol=1e-6)
