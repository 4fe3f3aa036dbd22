"""Every trace gradviz writes of real PyTorch loads back (issue #29): ``nn.LSTM``, ``nn.GRU``, a
small CNN, a Transformer layer and the odd cases (several roots, ``autograd.grad``, dtypes NumPy
lacks, an error with a huge message, several threads) are traced, saved, loaded with
``load_trace``, drawn and replayed by ``round_trip`` of ``tests/test_trace_writes.py``;
``gradviz trace``, ``render`` and ``steps`` on an ``nn.LSTM`` script, whose order PyTorch runs
differs from the one derived from sequence numbers, and the summary shows that note."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch
from _parity import sibling

import gradviz

MAX_TEXT = 100_000  # the longest string a trace holds (NOTE [text limit] in model.py)
_writes = sibling("test_trace_writes")
round_trip = _writes.round_trip
_cli = sibling("_cli")


def lstm() -> None:
    torch.nn.LSTM(4, 4)(torch.randn(3, 1, 4))[0].sum().backward()


def gru() -> None:
    torch.nn.GRU(4, 4, num_layers=2)(torch.randn(3, 2, 4))[0].sum().backward()


def cnn() -> None:
    net = torch.nn.Sequential(torch.nn.Conv2d(1, 2, 3), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
                              torch.nn.Flatten(), torch.nn.Linear(2 * 3 * 3, 3))
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for _ in range(2):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(net(torch.randn(2, 1, 8, 8)),
                                                 torch.tensor([0, 2]))
        loss.backward()
        opt.step()


def transformer_layer() -> None:
    layer = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0)
    layer(torch.randn(3, 2, 8)).pow(2).mean().backward()


def lstm_training_loop() -> None:
    net = torch.nn.LSTM(3, 2)
    for _ in range(3):
        net.zero_grad()  # fill_/zero_ of .grad as the loop goes
        net(torch.randn(2, 1, 3))[0].sum().backward()


def several_roots() -> None:  # PyTorch starts at a GraphRoot node
    x = torch.ones(2, requires_grad=True)
    torch.autograd.backward([(x * 2).sum(), (x.exp() * 3).sum()])


def autograd_grad() -> None:
    x = torch.randn(3, requires_grad=True)
    w = torch.randn(3, requires_grad=True)
    (g,) = torch.autograd.grad((x * w).tanh().sum(), [x], create_graph=True)
    g.sum().backward()


def dtypes_numpy_lacks() -> None:
    x = torch.ones(2, requires_grad=True)
    torch.ones(2, dtype=torch.float8_e4m3fn).float()
    torch.quantize_per_tensor(torch.ones(2), 0.1, 0, torch.qint8).dequantize()
    torch.ones(2, dtype=torch.uint16) * 2
    (x * 2).sum().backward()


def huge_error() -> None:
    x = torch.ones(2, requires_grad=True)
    y = x * 2

    def hook(g: torch.Tensor) -> torch.Tensor:
        raise ValueError("x" * (MAX_TEXT + 10))

    y.register_hook(hook)
    y.sum().backward()


def threads() -> None:  # forward and backward from several threads at once (issue #33)
    import threading

    shared = torch.randn(3, requires_grad=True)

    def work(k: int) -> None:
        layer = torch.nn.Linear(3, 2)
        for i in range(4):
            out = (layer(shared * (k + 1)).tanh() ** 2).sum()
            if i % 2:
                torch.autograd.grad(out, [shared])
            else:
                out.backward()

    workers = [threading.Thread(target=work, args=(k,)) for k in range(3)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()


PROGRAMS: dict[str, Callable[[], None]] = {f.__name__: f for f in (
    lstm, gru, cnn, transformer_layer, lstm_training_loop, several_roots, autograd_grad,
    dtypes_numpy_lacks, huge_error, threads)}


@pytest.mark.parametrize("name", PROGRAMS)
def test_every_trace_of_real_pytorch_loads_back(name: str, tmp_path: Path) -> None:
    torch.manual_seed(0)
    with gradviz.trace(torch=True, keep_runs="all") as tr:
        try:
            PROGRAMS[name]()
        except ValueError:
            assert name == "huge_error"
    assert tr.runs and all(r.engine == "torch" for r in tr.runs)
    back = round_trip(tr, tmp_path)
    assert len(back.runs) == len(tr.runs)
    if name == "huge_error":
        assert len(back.runs[0].error["message"]) == MAX_TEXT
    if name == "threads":
        assert len(back.runs) == 12 and not back.notes  # every call of every thread


def test_the_order_note_is_one_line_for_a_whole_loop() -> None:
    torch.manual_seed(0)
    with gradviz.trace(torch=True, keep_runs="all") as tr:
        lstm_training_loop()
    observed = [r for r in tr.runs if r.steps[0].engine_data == {"order": "observed"}]
    assert len(observed) == 3  # nn.LSTM on the CPU: every run
    order = [n for n in tr.notes if "differs from the order PyTorch ran" in n]
    assert len(order) == 1 and order[0].startswith("backward run 1: ")
    assert order[0].endswith("(also in 2 later runs)") and len(order[0]) < 300


LSTM_SCRIPT = """
    import torch
    torch.manual_seed(0)
    lstm = torch.nn.LSTM(4, 4)
    out, _ = lstm(torch.randn(3, 1, 4))
    out.sum().backward()
"""


def test_the_cli_reads_back_an_lstm_trace_and_shows_its_notes(tmp_path: Path) -> None:
    script = _cli.write(tmp_path / "lstm.py", LSTM_SCRIPT)
    done = _cli.run("trace", "-o", "out", str(script), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    saved = gradviz.load_trace(tmp_path / "out" / "trace.json")
    assert saved.runs[0].steps[0].engine_data == {"order": "observed"}
    notes = [line for line in done.stdout.splitlines() if line.startswith("note: ")]
    assert [n for n in notes if "differs from the order PyTorch ran" in n] == [
        f"note: {n}" for n in saved.notes if "differs from the order PyTorch ran" in n]
    assert len(notes) == len(set(notes)) and {f"note: {n}" for n in saved.notes} <= set(notes)

    render = _cli.run("render", str(tmp_path / "out" / "trace.json"), cwd=tmp_path)
    assert render.returncode == 0, render.stderr
    assert "differs from the order PyTorch ran" in render.stdout
    steps = _cli.run("steps", "--plain", str(tmp_path / "out" / "trace.json"), cwd=tmp_path)
    assert steps.returncode == 0, steps.stderr
    assert "backward of" in steps.stdout and "(torch engine)" in steps.stdout

    quiet = _cli.run("trace", "-q", "-o", "out2", str(script), cwd=tmp_path)
    assert quiet.returncode == 0 and quiet.stdout == "", quiet.stdout


def test_gradient_edges_are_recorded_as_on_gradviz() -> None:
    """autograd.grad with GradientEdge outputs and inputs: the runs' roots, root edges and
    inputs are the same on both engines (tests/test_trace_writes.py holds gradviz's)."""

    def program(lib: Any) -> Any:
        with gradviz.trace(torch=lib is torch) as tr:
            x = lib.ones(2, requires_grad=True)
            y = x * 2
            z = (y * 3).sum()
            edge = lib.autograd.graph.get_gradient_edge
            lib.autograd.grad(z, edge(y), retain_graph=True)
            lib.autograd.grad(edge(z), x, grad_outputs=lib.tensor(1.0))
        return [(r.roots, r.root_edges, r.inputs, [tr.nodes[e[0]].name for e in r.root_edges])
                for r in tr.runs]

    assert program(torch) == program(gradviz)


def test_an_op_a_signal_stopped_half_way_leaves_a_trace_that_loads(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SIGTERM or Ctrl-C raise wherever the program is, also between the torch source
    registering an op's outputs and the op itself; the CLI then writes what was recorded, which
    must load (it named an op the trace never held: 'tensors[5].op: unknown op id')."""
    from gradviz.trace import torch_source

    real = torch_source.OpRecord
    calls = {"n": 0}

    def interrupted(*args: Any, **kwargs: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt  # as the signal handler would, at this very point
        return real(*args, **kwargs)

    monkeypatch.setattr(torch_source, "OpRecord", interrupted)
    with pytest.raises(KeyboardInterrupt), gradviz.trace(torch=True) as tr:
        w = torch.tensor([1.0, 2.0], requires_grad=True)
        (w * w).sum().backward()
        (w * 3).exp().sum().backward()
    made = [t for t in tr.tensors.values() if t.op is not None]
    assert made and all(t.op in {op.id for op in tr.ops} for t in made)
    tr.save(tmp_path / "trace.json")
    back = gradviz.load_trace(tmp_path / "trace.json")
    assert [op.name for op in back.ops] == ["tensor", "mul"]  # sum never registered
