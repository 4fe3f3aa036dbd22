"""The tracer's direct paths record what its event handlers record.

While a trace is the only listener, the dispatch point reports each op straight to the trace's
observer (``events.emit_op``, NOTE [perf: direct observer]) and the engine's ``backward_begin``
is recorded when the dependency counts arrive, its run's nodes taken from them (NOTE [perf:
reachable from the counts] in gradviz/trace/recorder.py). With a second listener registered,
every report becomes an ``(event, data)`` pair handled by ``Trace._on_event`` instead, which
walks the graph itself. The two must give the same trace, to the byte.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradviz as torch
from gradviz import nn
from gradviz.autograd import events


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


PROGRAMS = [_chain, _shared_and_several_roots, _grad_of_some_inputs, _function_inplace_hooks,
            _mlp_steps, _threads, _nested_modules]


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
        for step in run["steps"]:
            if step["kind"] == "enqueue" and -step["priority"] < _LEAF:
                step["priority"] += base
    return data


def _traced(program: Callable[[], None], forwarded: bool, values: str) -> Any:
    def other(event: str, data: dict) -> None:
        pass

    with torch.trace(values=values, keep_runs="all") as tr:
        if forwarded:
            events.add_listener(other)  # two listeners: every report is an event
        try:
            assert (type(events.observer()) is events.Forwarding) == forwarded
            program()
        finally:
            if forwarded:
                events.remove_listener(other)
    return _canonical(tr.to_json())


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
@pytest.mark.parametrize("values", ["small", "none"])
def test_the_direct_paths_record_what_the_events_record(program, values):
    direct = _traced(program, False, values)
    assert direct["ops"] and direct["runs"]
    assert direct == _traced(program, True, values)


def test_a_graph_made_before_the_trace_is_recorded_the_same_both_ways():
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


def test_emit_op_reaches_a_sole_listeners_observer_and_else_every_listener():
    reported, seen = [], []

    class Mine(events.Forwarding):
        def op(self, name, node, inputs, outputs, kwargs, inplace):
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
            pass

        events.add_listener(other)  # a second listener: ops become events for both
        z = y * 3
        events.remove_listener(other)
        ((event, data),) = seen
        assert event == "op" and data["name"] == "mul" and data["outputs"] == (z,)
        assert set(data) == {"name", "node", "inputs", "outputs", "kwargs", "inplace"}
        assert len(reported) == 2
    finally:
        events.remove_listener(listener)
        for fn in saved:
            events.add_listener(fn)


def test_module_scopes_reach_a_sole_listeners_observer_and_else_every_listener():
    reported, seen, arguments = [], [], []

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
            pass

        events.add_listener(other)  # a second listener: scopes become events for both
        model[1](torch.ones(1, 2))
        events.remove_listener(other)
        assert [e for e in seen if e[0] != "op"] == [("module_enter", "ReLU"),
                                                     ("module_exit", "ReLU")]
        assert len(reported) == 6
    finally:
        events.remove_listener(listener)
        for fn in saved:
            events.add_listener(fn)
