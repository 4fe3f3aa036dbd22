"""Small programs whose backward runs the replay tests walk (tests/test_replay.py).

``tests/fixtures/trace_v1_<name>.json`` are these programs' traces as gradviz wrote them in
schema ``gradviz.trace/1``, before the ready queue was recorded as changes (they were made with
``python tests/_replay_programs.py`` on main at 2f60c99, before the format changed).
"""

from __future__ import annotations

import os
import sys

import gradviz
from gradviz.trace.compare import compare_engines


def intro() -> None:
    gradviz.manual_seed(0)
    x = gradviz.rand(2, 2, requires_grad=True)
    y = gradviz.rand(2, 2, requires_grad=True)
    z = x ** 2 + y ** 3
    z.backward(gradviz.ones_like(x))


def mlp() -> None:
    gradviz.manual_seed(0)
    net = gradviz.nn.Sequential(gradviz.nn.Linear(2, 3), gradviz.nn.Tanh(),
                                gradviz.nn.Linear(3, 1))
    data = gradviz.rand(4, 2)
    loss = (net(data) ** 2).mean()
    loss.backward()


class Scale(gradviz.autograd.Function):
    @staticmethod
    def forward(ctx, a, k):
        ctx.save_for_backward(a)
        ctx.k = k
        return a * k

    @staticmethod
    def backward(ctx, grad_output):
        (a,) = ctx.saved_tensors
        return grad_output * ctx.k + a * 0, None


def custom_function() -> None:
    a = gradviz.tensor([1.0, 2.0], requires_grad=True)
    b = Scale.apply(a, 5.0)
    (b * b).sum().backward()


def multi_output() -> None:
    x = gradviz.arange(6.0).reshape(2, 3).requires_grad_()
    p, q = x.unbind(0)
    (p * q + p).sum().backward()


def hooks() -> None:
    x = gradviz.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    y.retain_grad()
    y.register_hook(lambda g: g * 3)
    z = y.exp()
    z.grad_fn.register_prehook(lambda gs: None)
    z.grad_fn.register_hook(lambda gi, go: None)
    z.sum().backward()


def retain_graph() -> None:
    w = gradviz.tensor([0.5, -1.0], requires_grad=True)
    loss = (w.tanh() * w).sum()
    loss.backward(retain_graph=True)
    loss.backward()


def autograd_grad() -> None:
    a = gradviz.tensor([1.0, 2.0], requires_grad=True)
    b = gradviz.tensor([3.0, 4.0], requires_grad=True)
    c = gradviz.tensor([0.5, 0.25], requires_grad=True)
    out = (a * b + b * c).sum()
    gradviz.autograd.grad(out, [a, b])


def wide() -> None:
    x = gradviz.ones(3, requires_grad=True)
    gradviz.stack([x * i for i in range(6)]).sum().backward()


def error() -> None:
    a = gradviz.tensor([1.0, 2.0], requires_grad=True)
    b = a.exp()
    b.mul_(2)
    try:
        b.sum().backward()
    except RuntimeError:
        pass


PROGRAMS = {f.__name__: f for f in (intro, mlp, custom_function, multi_output, hooks,
                                     retain_graph, autograd_grad, wide, error)}


def record(name: str) -> gradviz.Trace:
    """``name``'s program, traced."""
    with gradviz.trace(name=name) as tr:
        PROGRAMS[name]()
    return tr


def engines() -> gradviz.Trace:
    """One program under the three engines (SINGA and MXNet steps)."""
    x = gradviz.tensor([1.0, 2.0], requires_grad=True)
    y = gradviz.tensor([0.5, 3.0], requires_grad=True)
    return compare_engines(lambda x, y: (x * y + x ** 2).sum(), x, y).trace


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__),
                                                             "fixtures")
    for name in PROGRAMS:
        record(name).save(os.path.join(out, f"trace_v1_{name}.json"))
    engines().save(os.path.join(out, "trace_v1_engines.json"))
