"""The tracer's observer records the same rows whether it is called directly or through the
dict adapter an outside listener gets.

A trace is an :class:`events.Observer` called directly by the dispatch point (``events.emit_op``,
NOTE [perf: direct observer]), the three engines and custom Functions; the PyTorch engine's
``backward_begin`` is recorded when the dependency counts arrive, its run's nodes taken from
them (NOTE [perf: reachable from the counts] in gradviz/trace/recorder.py). Here the same
observer is also fed through ``events.Forwarding`` (what ``add_listener(fn)`` registers) and a
listener that replays each ``(event, data)`` as the call it came from (tests/_replay_events.py):
the two must give the same trace, to the byte, so an outside listener sees every fact the trace
records.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

import _replay_events
import numpy as np
import pytest

import gradviz as torch
from gradviz import nn
from gradviz.autograd import events
from gradviz.engines import mxnet as mx
from gradviz.engines import singa
from gradviz.trace import naming


def _chain() -> None:
    x = torch.tensor(np.linspace(0.1, 0.4, 4), requires_grad=True)
    y = x
    for _ in range(4):
        y = (y * 1.0001 + 0.001).tanh()
    y.sum().backward()


def _shared_and_several_roots() -> None:
    a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    s = a * b  # used by both roots: a node two edges point at
    u, v = (s.exp() + a).sum(), (s * s).mean()
    torch.autograd.backward([u, v], retain_graph=True)  # a GraphRoot over two roots
    w = s.sin().sum()
    w.backward(retain_graph=True)
    w.backward()


def _grad_of_some_inputs() -> None:
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    z = torch.tensor([3.0, 4.0], requires_grad=True)
    y = (x * z).sum() + (z ** 2).sum()
    (gx,) = torch.autograd.grad(y, [x], create_graph=True)
    gx.sum().backward()
    x.backward(torch.ones(2))  # a leaf as the root: its AccumulateGrad is the graph root


class _Double(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a * 2

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad * 2 + a * 0


def _function_inplace_hooks() -> None:
    x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
    y = _Double.apply(x)
    y.retain_grad()
    y.register_hook(lambda g: g * 3)
    h = y.clone()
    h.mul_(2)
    h.add_(1, alpha=2)
    k = torch.where(x > 0, h, x)  # a keyword-free op with a bool tensor input
    (k.relu() * k).sum().backward()


def _made_before(x: torch.Tensor) -> Callable[[], None]:
    # The graph is built before the trace begins: its nodes are first seen by backward_begin.
    y = (x * 3).exp().sum()

    def run() -> None:
        y.backward()

    return run


def _mlp_steps() -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    data, target = torch.randn(5, 3), torch.tensor([0, 1, 1, 0, 1])
    for _ in range(3):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(data), target)
        loss.backward()
        opt.step()


def _threads() -> None:
    x = torch.ones(3, requires_grad=True)

    def work(k: int) -> None:
        (x * k).tanh().sum().backward()

    for k in range(2):  # one after another: the trace's order does not depend on scheduling
        t = threading.Thread(target=work, args=(k + 1,))
        t.start()
        t.join()


class _Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.acts = nn.ModuleList([nn.Tanh(), nn.ReLU()])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for act in self.acts:
            x = act(self.fc(x))
        return nn.Identity()(x)  # not registered: its scope is named by its class


def _nested_modules() -> None:
    # Module scopes in scopes, a module called twice, one the model does not own, and one
    # whose forward raises: every enter has its exit (NOTE [perf: direct module scopes]).
    torch.manual_seed(0)
    model = nn.Sequential(_Block(), _Block())
    out = model(torch.randn(2, 3))
    boom = nn.Linear(2, 2)
    try:
        boom(out)  # 3 features into a Linear(2, 2): raises inside its scope
    except RuntimeError:
        pass
    model[1](out).sum().backward()


def _singa_steps() -> None:
    # SINGA: its own counts (tensor_counts), a stack's priorities, yielded gradients.
    w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    b = torch.tensor([0.1, 0.2, 0.3], requires_grad=True)
    loss = ((w * 2).exp() + b * w).sum()
    for p, g in singa.backward(loss):
        with torch.no_grad():
            p -= 0.1 * g
    for _ in singa.backward((w * 3).sum()):  # stopped early: the pass ends unfinished
        break


def _mxnet_steps() -> None:
    # MXNet: its gradient graph, gradient-graph nodes, grad_req, create_graph.
    x = mx.attach_grad(torch.tensor([1.0, 2.0, 3.0]), grad_req="add")
    w = mx.attach_grad(torch.tensor([0.5, -1.0, 2.0]))
    for _ in range(2):
        with mx.record():
            loss = (x * w + x * x).sum()
        mx.backward(loss)
    with mx.record():
        y = (x ** 3 * w).sum()
        (dx,) = mx.grad(y, [x], create_graph=True)
        z = (dx * dx).sum()
    mx.backward(z)


class _Boom(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        return a * 1

    @staticmethod
    def backward(ctx, grad):
        raise KeyError("from backward")


def _saved_hooks_and_an_error() -> None:
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t * 1, lambda p: p):
        y = (x * x).exp().sum()
    y.backward()
    try:
        _Boom.apply(x).sum().backward()
    except KeyError:
        pass


PROGRAMS = [_chain, _shared_and_several_roots, _grad_of_some_inputs, _function_inplace_hooks,
            _mlp_steps, _threads, _nested_modules, _singa_steps, _mxnet_steps,
            _saved_hooks_and_an_error]


_LEAF = 2**63  # leaves' AccumulateGrad nodes have the largest sequence number


def _canonical(text: str) -> Any:
    """The trace's JSON with sequence numbers counted from the trace's first node: the counter
    is global, so two runs of one program differ there and nowhere else (an enqueue step's
    priority is minus its node's sequence number)."""
    data = json.loads(text)
    base = min((n["sequence_nr"] for n in data["nodes"] if n["sequence_nr"] < _LEAF),
               default=0)
    for n in data["nodes"]:
        if n["sequence_nr"] < _LEAF:
            n["sequence_nr"] -= base
    for run in data["runs"]:
        if run["engine"] != "pytorch":  # SINGA's priorities count its pushes
            continue
        for step in run["steps"]:
            if step["kind"] == "enqueue" and -step["priority"] < _LEAF:
                step["priority"] += base
    return data


@pytest.fixture
def replay_is_internal(monkeypatch: pytest.MonkeyPatch) -> None:
    """The replaying listener's frames count as gradviz's own, as the adapter's do."""
    monkeypatch.setitem(naming._INTERNAL, _replay_events.__file__, True)


def _traced(program: Callable[[], None], forwarded: bool, values: str) -> Any:
    before = events.listeners()
    with torch.trace(values=values, keep_runs="all") as tr:
        (mine,) = [o for o in events.listeners() if o not in before]  # the trace's observer
        assert isinstance(mine, events.Observer) and events.observer() is mine
        if forwarded:  # the same observer, told through event dicts instead
            events.remove_observer(mine)
            replay = events.add_listener(_replay_events.Replay(mine))
            assert type(events.observer()) is events.Forwarding
        try:
            program()
        finally:
            if forwarded:
                events.remove_listener(replay)
                events.add_observer(mine)
    return _canonical(tr.to_json())


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
@pytest.mark.parametrize("values", ["small", "none"])
def test_the_direct_paths_record_what_the_events_record(program, values, replay_is_internal):
    direct = _traced(program, False, values)
    assert direct["ops"] and direct["runs"]
    assert direct == _traced(program, True, values)


def test_the_engines_own_steps_are_recorded(replay_is_internal):
    # What only SINGA, MXNet and the hooks report is in the traces compared above.
    kinds = {}
    for program in (_singa_steps, _mxnet_steps, _saved_hooks_and_an_error):
        data = _traced(program, True, "small")
        kinds[program.__name__] = {(run["engine"], step["kind"]) for run in data["runs"]
                                   for step in run["steps"]}
    assert {("singa", "leaf_grad"), ("singa", "enqueue"), ("singa", "done")} <= \
        kinds["_singa_steps"]
    assert {("mxnet", "gradient_node"), ("mxnet", "leaf_grad"), ("mxnet", "execute")} <= \
        kinds["_mxnet_steps"]
    assert {("pytorch", "unpack_hook"), ("pytorch", "error")} <= \
        kinds["_saved_hooks_and_an_error"]


def test_a_graph_made_before_the_trace_is_recorded_the_same_both_ways(replay_is_internal):
    traces = []
    for forwarded in (False, True):
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        run = _made_before(x)
        traces.append(_traced(run, forwarded, "small"))
    assert traces[0] == traces[1]
    assert "ExpBackward0" in [n["name"] for n in traces[0]["nodes"]]


def test_a_run_lists_its_nodes_in_the_order_a_stack_walk_meets_them():
    # What the run's nodes are is independent of how they were found: root first, then the
    # order of a depth-first walk with a stack (the last edge pushed is followed first).
    with torch.trace() as tr:
        a = torch.tensor([1.0, 2.0], requires_grad=True)
        b = torch.tensor([3.0, 4.0], requires_grad=True)
        ((a * b) + (a.exp() * 2)).sum().backward()
    names = [tr.nodes[n].name for n in tr.run().nodes]
    # Sum -> Add -> (a * b, exp(a) * 2); exp(a) * 2 is followed first, down to a's
    # AccumulateGrad, then a * b adds b's.
    assert names == ["SumBackward0", "AddBackward0", "MulBackward0", "MulBackward0",
                     "ExpBackward0", "AccumulateGrad", "AccumulateGrad"]
    acc = [tr.nodes[n] for n in tr.run().nodes if tr.nodes[n].name == "AccumulateGrad"]
    assert [tr.tensors[n.variable].name for n in acc] == ["a", "b"]


def test_emit_op_reaches_an_observer_directly_and_listeners_as_events():
    reported, seen, others = [], [], []

    class Mine(events.Forwarding):
        def op(self, name, node, inputs, outputs, kwargs, inplace, function=False):
            reported.append((name, node is not None, len(inputs), len(outputs), inplace))

    def listener(event: str, data: dict) -> None:
        seen.append((event, data))

    saved = events.listeners()
    for fn in saved:
        events.remove_listener(fn)
    try:
        events.add_listener(listener, Mine())
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        y.add_(1)
        assert reported == [("mul", True, 2, 1, False), ("add_", True, 2, 1, True)]
        assert seen == []  # the observer took the ops

        def other(event: str, data: dict) -> None:
            others.append((event, data))

        events.add_listener(other)  # a second listener: it gets events, the observer calls
        z = y * 3
        events.remove_listener(other)
        assert seen == [] and len(reported) == 3 and reported[-1][0] == "mul"
        ((event, data),) = others
        assert event == "op" and data["name"] == "mul" and data["outputs"] == (z,)
        assert set(data) == {"name", "node", "inputs", "outputs", "kwargs", "inplace"}
    finally:
        events.remove_listener(listener)
        for fn in saved:
            events.add_listener(fn)


def test_module_scopes_reach_an_observer_directly_and_listeners_as_events():
    reported, seen, arguments, others = [], [], [], []

    class Mine(events.Forwarding):
        def module_enter(self, module, name, args):
            reported.append(("enter", type(module).__name__, name))
            arguments.append(args)

        def module_exit(self, module, name, output):
            reported.append(("exit", type(module).__name__, name, output is not None))

    def listener(event: str, data: dict) -> None:
        seen.append((event, data.get("name")))

    saved = events.listeners()
    for fn in saved:
        events.remove_listener(fn)
    model = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    try:
        events.add_listener(listener, Mine())
        model(torch.ones(1, 2))
        assert reported == [("enter", "Sequential", "Sequential"), ("enter", "Linear", "0"),
                            ("exit", "Linear", "0", True), ("enter", "ReLU", "1"),
                            ("exit", "ReLU", "1", True), ("exit", "Sequential", "Sequential", True)]
        assert [e for e in seen if e[0] != "op"] == []  # the observer took the scopes
        x = arguments[0][0]  # each call's positional arguments, as a forward pre-hook gets them
        assert [len(a) for a in arguments] == [1, 1, 1] and x.shape == (1, 2)

        def other(event: str, data: dict) -> None:
            others.append((event, data))

        events.add_listener(other)  # a second listener: it gets events, the observer calls
        relu = model[1]
        out = relu(torch.ones(1, 2))
        events.remove_listener(other)
        assert [e for e in seen if e[0] != "op"] == []
        assert reported[6:] == [("enter", "ReLU", "ReLU"), ("exit", "ReLU", "ReLU", True)]
        scopes = [(e, d) for e, d in others if e != "op"]
        assert [(e, d["name"]) for e, d in scopes] == [("module_enter", "ReLU"),
                                                        ("module_exit", "ReLU")]
        assert set(scopes[0][1]) == {"module", "name", "args"} and scopes[0][1]["module"] is relu
        assert set(scopes[1][1]) == {"module", "name", "output"}
        assert scopes[1][1]["output"] is out
    finally:
        events.remove_listener(listener)
        for fn in saved:
            events.add_listener(fn)
