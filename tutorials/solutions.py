"""Reference solutions and checks for the tutorial exercises.

Every exercise in the notebooks follows one pattern:

1. an ``# Exercise`` cell states the task and holds a stub (``raise NotImplementedError``):
   replace the stub with your own code;
2. the next cell calls ``solutions.check("ex1_2", your_function)``, which runs your function on
   fresh inputs and prints ``✓ ex1_2 ...: correct`` or ``✗ ex1_2 ...: not yet`` with what is
   wrong (it never raises, so the rest of the notebook still runs);
3. stuck? ``solutions.hint("ex1_2")`` prints a hint; ``solutions.show("ex1_2")`` prints the
   reference answer. Nothing is shown until you ask.

The reference answers (``ref_<name>`` / ``Ref<Name>``) live only in this file: read them only
after you have tried. Everything here uses the same public API
the notebooks teach (``import gradviz as torch``).
"""

from __future__ import annotations

import heapq
import inspect
import math
import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

import gradviz as torch
from gradviz.autograd import Function, gradcheck
from gradviz.autograd.engine import compute_dependencies
from gradviz.autograd.graph import AccumulateGrad
from gradviz.engines import mxnet as mx
from gradviz.engines import singa


def _ok(name: str, detail: str = "") -> None:
    print(f"✓ {name}: correct" + (f" ({detail})" if detail else ""))


def _close(got: Any, want: Any, what: str, tol: float = 1e-5) -> None:
    got_a = np.asarray(got.detach().numpy() if isinstance(got, torch.Tensor) else got,
                       dtype=np.float64)
    want_a = np.asarray(want.detach().numpy() if isinstance(want, torch.Tensor) else want,
                        dtype=np.float64)
    assert got_a.shape == want_a.shape, f"{what}: shape {got_a.shape}, expected {want_a.shape}"
    assert np.allclose(got_a, want_a, rtol=tol, atol=tol), (
        f"{what}: got\n{got_a}\nexpected\n{want_a}")


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


# =================================================================================================
# 01 — tensors and backward
# =================================================================================================
def ref_cubic_grad(values: list[float]) -> torch.Tensor:
    x = torch.tensor(values, requires_grad=True)
    (x ** 3 - 2 * x).sum().backward()
    return x.grad


def check_cubic_grad(fn: Callable[[list[float]], torch.Tensor]) -> None:
    for seed in range(3):
        values = _rng(seed).uniform(-2, 2, size=4).tolist()
        got = fn(values)
        assert isinstance(got, torch.Tensor), f"return a tensor, got {type(got).__name__}"
        _close(got, 3 * np.array(values) ** 2 - 2, f"cubic_grad({values})", tol=1e-4)
    _ok("cubic_grad")


def ref_weighted_grad(x: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    z = x ** 2
    z.backward(v)
    return x.grad


def check_weighted_grad(fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> None:
    for seed in range(3):
        rng = _rng(seed)
        data, v = rng.normal(size=(2, 3)), rng.normal(size=(2, 3))
        x = torch.tensor(data, requires_grad=True)
        got = fn(x, torch.tensor(v))
        _close(got, 2 * data * v, "weighted_grad")
        assert x.grad is not None, "x.grad is still None: call backward on z with gradient=v"
        _close(x.grad, 2 * data * v, "x.grad after weighted_grad")
    _ok("weighted_grad")


def ref_sgd_step(w: torch.Tensor, lr: float) -> None:
    with torch.no_grad():
        w -= lr * w.grad
    w.grad = None


def check_sgd_step(fn: Callable[[torch.Tensor, float], None]) -> None:
    w = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
    (w * w).sum().backward()  # w.grad = 2w
    before_id = id(w)
    fn(w, 0.25)
    assert id(w) == before_id, "update w in place (w -= ...), do not rebind it"
    assert w.is_leaf and w.requires_grad, "w must stay a leaf that requires grad (use no_grad)"
    _close(w, [0.5, -1.0, 1.5], "w after one step")
    assert w.grad is None, "reset w.grad to None after the step"
    _ok("sgd_step")


# =================================================================================================
# 02 — looking inside
# =================================================================================================
def ref_node_names(t: torch.Tensor) -> list[str]:
    order, seen, queue = [], {t.grad_fn}, [t.grad_fn]
    while queue:
        node = queue.pop(0)
        order.append(type(node).__name__)
        for nxt, _ in node.next_functions:
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                queue.append(nxt)
    return order


def _graphs_02() -> list[torch.Tensor]:
    x = torch.rand(3, requires_grad=True)
    y = torch.rand(3, requires_grad=True)
    h = x * y
    return [x ** 2 + y ** 3, (h * h + h).sum(), ((x * 3).exp() + 1).sum(), torch.sum(x + y)]


def check_node_names(fn: Callable[[torch.Tensor], list[str]]) -> None:
    for t in _graphs_02():
        want = ref_node_names(t)
        got = list(fn(t))
        assert got == want, f"for a graph ending in {t.grad_fn.name()}: got {got}, expected {want}"
    _ok("node_names")


def ref_leaves_of(t: torch.Tensor) -> list[torch.Tensor]:
    leaves, seen, stack = [], set(), [t.grad_fn]
    while stack:
        node = stack.pop()
        if isinstance(node, AccumulateGrad):
            leaves.append(node.variable)
        for nxt, _ in node.next_functions:
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return leaves


def check_leaves_of(fn: Callable[[torch.Tensor], list[torch.Tensor]]) -> None:
    for t in _graphs_02():
        got = list(fn(t))
        want = {id(v) for v in ref_leaves_of(t)}
        assert len(got) == len({id(v) for v in got}), "list each leaf once"
        assert {id(v) for v in got} == want, (
            "not the same leaf tensors: use AccumulateGrad.variable, which *is* the leaf")
    _ok("leaves_of")


def ref_chain_grad(z: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    node, grad = z.grad_fn, torch.ones_like(z)
    while not isinstance(node, AccumulateGrad):
        grads = node(grad)
        grads = grads if isinstance(grads, tuple) else (grads,)
        node, grad = next((n, g) for (n, _), g in zip(node.next_functions, grads)
                          if n is not None)
    assert node.variable is x
    return grad


def check_chain_grad(fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> None:
    programs = [lambda x: ((x * 3).exp() + 1).sum(), lambda x: (x.sin() * 2).sum(),
                lambda x: (x ** 3).tanh().sum()]
    for prog in programs:
        x = torch.rand(4, requires_grad=True)
        got = fn(prog(x), x)
        prog(x).backward()
        _close(got, x.grad, "chain_grad vs backward()")
    _ok("chain_grad")


# =================================================================================================
# 03 — extending autograd
# =================================================================================================
class RefSquare(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return 2 * x * grad_output


def check_square(cls: type) -> None:
    x = torch.randn(3, 2, dtype=torch.float64, requires_grad=True)
    y = cls.apply(x)
    assert y.grad_fn.name() == f"{cls.__name__}Backward", y.grad_fn.name()
    assert len(y.grad_fn.saved_tensors) == 1, "save x with ctx.save_for_backward(x)"
    _close(y, x.detach() ** 2, "forward")
    assert gradcheck(cls.apply, (x,)), "gradcheck failed"
    _ok("Square", "gradcheck passes")


class RefSigmoid(Function):
    @staticmethod
    def forward(ctx, x):
        y = 1 / (1 + (-x).exp())
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        (y,) = ctx.saved_tensors
        return grad_output * y * (1 - y)


def check_sigmoid(cls: type) -> None:
    x = torch.randn(5, dtype=torch.float64, requires_grad=True)
    y = cls.apply(x)
    _close(y, 1 / (1 + np.exp(-x.detach().numpy())), "forward")
    (saved,) = y.grad_fn.saved_tensors
    _close(saved, y.detach(), "the saved tensor (save the output y, not the input)")
    assert gradcheck(cls.apply, (x,)), "gradcheck failed"
    _ok("Sigmoid", "saves its output, gradcheck passes")


class RefScaleGrad(Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.scale = scale
        return x.clone()

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.scale, None


def check_scale_grad(cls: type) -> None:
    x = torch.randn(4, requires_grad=True)
    y = cls.apply(x, -0.5)
    _close(y, x.detach(), "forward must be the identity")
    (y * 3).sum().backward()
    _close(x.grad, torch.full((4,), -1.5), "x.grad (upstream 3 times scale -0.5)")
    ok = gradcheck(lambda t: cls.apply(t, -0.5),
                   (torch.randn(3, dtype=torch.float64, requires_grad=True),),
                   raise_exception=False)
    assert not ok, "gradcheck should *fail*: the backward is deliberately not the derivative"
    _ok("ScaleGrad", "and gradcheck rightly rejects it")


# =================================================================================================
# 04 — the engine step by step
# =================================================================================================
def ref_dependency_counts(t: torch.Tensor) -> dict:
    deps, seen, stack = {}, {t.grad_fn}, [t.grad_fn]
    while stack:
        for nxt, _ in stack.pop().next_functions:
            if nxt is None:
                continue
            deps[nxt] = deps.get(nxt, 0) + 1
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return deps


def _graphs_04() -> list[torch.Tensor]:
    x = torch.rand(3, requires_grad=True)
    w = torch.rand(3, requires_grad=True)
    h = x * w
    a, b = torch.rand(2, 3, requires_grad=True).unbind(0)
    return [(h * h + h).sum(), (x ** 2 + w ** 3).sum(), (a * b + a).sum(),
            ((x * w).exp() * w).sum()]


def check_dependency_counts(fn: Callable[[torch.Tensor], dict]) -> None:
    for t in _graphs_04():
        got, want = fn(t), compute_dependencies(t.grad_fn)
        names = {n: type(n).__name__ for n in want}
        for node, count in want.items():
            assert got.get(node) == count, (
                f"{names[node]}: got {got.get(node)}, expected {count}")
        assert set(got) == set(want), "count every reachable node (and only those)"
    _ok("dependency_counts")


def ref_predict_order(t: torch.Tensor) -> list:
    deps = ref_dependency_counts(t)
    ready = [(-t.grad_fn.sequence_nr, 0, t.grad_fn)]
    order, arrivals = [], 1
    while ready:
        _, _, node = heapq.heappop(ready)
        order.append(node)
        for nxt, _ in node.next_functions:
            if nxt is None:
                continue
            deps[nxt] -= 1
            if deps[nxt] == 0:
                heapq.heappush(ready, (-nxt.sequence_nr, arrivals, nxt))
                arrivals += 1
    return order


def check_predict_order(fn: Callable[[torch.Tensor], list]) -> None:
    for t in _graphs_04():
        got = list(fn(t))
        with torch.trace(values="none") as tr:
            t.backward(retain_graph=True)
        names = {v.id: v.name for v in tr.nodes.values()}
        want = [names[s.node] for s in tr.steps() if s.kind == "execute"]
        got_names = [type(n).__name__ for n in got]
        assert got_names == want, f"got {got_names}\nthe engine ran {want}"
    _ok("predict_order", "matches the engine's execute steps")


def ref_my_backward(loss: torch.Tensor) -> dict:
    deps = ref_dependency_counts(loss)
    buffers = {loss.grad_fn: [torch.ones_like(loss)]}
    ready = [(-loss.grad_fn.sequence_nr, 0, loss.grad_fn)]
    grads, arrivals = {}, 1
    while ready:
        _, _, node = heapq.heappop(ready)
        buf = buffers.pop(node)
        if isinstance(node, AccumulateGrad):
            grads[id(node.variable)] = buf[0]
            continue
        outs = node(*buf)
        outs = outs if isinstance(outs, tuple) else (outs,)
        for (nxt, nr), g in zip(node.next_functions, outs):
            if nxt is None:
                continue
            slot = buffers.setdefault(nxt, [None] * nxt.num_outputs)
            if g is not None:
                slot[nr] = g if slot[nr] is None else slot[nr] + g
            deps[nxt] -= 1
            if deps[nxt] == 0:
                heapq.heappush(ready, (-nxt.sequence_nr, arrivals, nxt))
                arrivals += 1
    return grads


def check_my_backward(fn: Callable[[torch.Tensor], dict]) -> None:
    x = torch.rand(3, requires_grad=True)
    w = torch.rand(3, requires_grad=True)
    p = torch.rand(2, 3, requires_grad=True)
    a, b = p.unbind(0)
    h = x * w
    loss = (h * h + h).sum() + (a * b + a).sum() + (w.exp() * x).sum()
    got = fn(loss)
    loss.backward()
    for name, leaf in (("x", x), ("w", w), ("p", p)):
        assert id(leaf) in got, f"no gradient for {name} (key the dict by id(leaf))"
        _close(got[id(leaf)], leaf.grad, f"gradient of {name}")
    _ok("my_backward", "same gradients as loss.backward()")


# =================================================================================================
# 05 — three engines
# =================================================================================================
def ref_yield_order(loss: torch.Tensor, params: dict[str, torch.Tensor]) -> list[str]:
    names = {id(p): name for name, p in params.items()}
    return [names[id(p)] for p, _ in singa.backward(loss)]


def check_yield_order(fn: Callable[[torch.Tensor, dict], list[str]]) -> None:
    def program():
        w1 = torch.rand(3, requires_grad=True)
        w2 = torch.rand(3, requires_grad=True)
        b = torch.rand(3, requires_grad=True)
        x = torch.rand(3)
        loss = (((x * w1).tanh() * w2).sigmoid() + b).sum()
        return loss, {"w1": w1, "w2": w2, "b": b}

    loss, params = program()
    got = fn(loss, params)
    loss2, params2 = program()
    want = ref_yield_order(loss2, params2)
    assert list(got) == want, f"got {got}, SINGA yields {want}"
    _ok("yield_order", " → ".join(want))


def ref_singa_sgd(loss: torch.Tensor, lr: float) -> None:
    for p, g in singa.backward(loss):
        with torch.no_grad():
            p -= lr * g


def check_singa_sgd(fn: Callable[[torch.Tensor, float], None]) -> None:
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([0.5], requires_grad=True)
    loss = ((w * w).sum() + b * 3).sum()
    fn(loss, 0.1)
    _close(w, [0.8, 1.6], "w after the update (w - 0.1 * 2w)")
    _close(b, [0.2], "b after the update (b - 0.1 * 3)")
    assert w.grad is None, "SINGA yields gradients; it never writes .grad"
    _ok("singa_sgd")


def ref_mx_grad_twice(grad_req: str) -> torch.Tensor:
    x = mx.attach_grad(torch.tensor([1.0, 2.0, 3.0]), grad_req=grad_req)
    for _ in range(2):
        with mx.record():
            y = (x * x).sum()
        mx.backward(y)
    return x.grad


def check_mx_grad_twice(fn: Callable[[str], torch.Tensor]) -> None:
    _close(fn("write"), [2.0, 4.0, 6.0], "grad_req='write' (the second pass overwrites)")
    _close(fn("add"), [4.0, 8.0, 12.0], "grad_req='add' (the second pass adds)")
    _ok("mx_grad_twice")


# =================================================================================================
# 06 — graph lifetime
# =================================================================================================
def ref_second_derivative(f: Callable[[torch.Tensor], torch.Tensor], x0: float) -> float:
    x = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
    (dx,) = torch.autograd.grad(f(x), x, create_graph=True)
    (ddx,) = torch.autograd.grad(dx, x)
    return ddx.item()


def check_second_derivative(fn: Callable[[Callable, float], float]) -> None:
    cases = [(lambda x: x ** 4, 1.5, 12 * 1.5 ** 2), (lambda x: x.sin(), 0.7, -math.sin(0.7)),
             (lambda x: (x * x).exp(), 0.3, (2 + 4 * 0.09) * math.exp(0.09))]
    for f, x0, want in cases:
        got = fn(f, x0)
        assert abs(float(got) - want) < 1e-6, f"f''({x0}): got {got}, expected {want}"
    _ok("second_derivative")


def ref_hvp(f: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor,
            v: torch.Tensor) -> torch.Tensor:
    x = x.detach().requires_grad_(True)
    (g,) = torch.autograd.grad(f(x), x, create_graph=True)
    (hv,) = torch.autograd.grad((g * v).sum(), x)
    return hv


def check_hvp(fn: Callable[[Callable, torch.Tensor, torch.Tensor], torch.Tensor]) -> None:
    rng = _rng(0)
    a = rng.normal(size=(3, 3))
    a_sym = a + a.T
    A = torch.tensor(a)

    def quad(x):  # 0.5 x^T A x  -> Hessian (A + A^T) / 2
        return 0.5 * (x * (A @ x)).sum()

    x = torch.tensor(rng.normal(size=3))
    v = torch.tensor(rng.normal(size=3))
    _close(fn(quad, x, v), a_sym @ v.numpy() / 2, "hvp of a quadratic form")

    def cubic(x):  # sum x^3 -> Hessian diag(6x)
        return (x ** 3).sum()

    _close(fn(cubic, x, v), 6 * x.numpy() * v.numpy(), "hvp of sum(x**3)")
    _ok("hvp")


def ref_newton_step(f: Callable[[torch.Tensor], torch.Tensor], x0: float) -> float:
    x = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
    (dx,) = torch.autograd.grad(f(x), x, create_graph=True)
    (ddx,) = torch.autograd.grad(dx, x)
    return x0 - dx.item() / ddx.item()


def check_newton_step(fn: Callable[[Callable, float], float]) -> None:
    got = fn(lambda x: (x - 3) ** 2, 10.0)
    assert abs(got - 3.0) < 1e-9, f"a quadratic is solved in one Newton step; got {got}"

    def g(x):
        return x ** 4 - 2 * x

    x = 1.0
    for _ in range(30):
        x = fn(g, x)
    assert abs(4 * x ** 3 - 2) < 1e-8, f"Newton's method should converge to f'(x)=0; got x={x}"
    _ok("newton_step")


# =================================================================================================
# 07 — in-place and versions
# =================================================================================================
def broken(x: torch.Tensor) -> torch.Tensor:
    """The program of exercise 1: it fails in backward."""
    y = x.sigmoid()
    y.mul_(2)  # sigmoid saved its output y; this bumps y's version
    return y.sum()


def ref_fixed(x: torch.Tensor) -> torch.Tensor:
    y = x.sigmoid()
    y = y * 2
    return y.sum()


def check_fixed(fn: Callable[[torch.Tensor], torch.Tensor]) -> None:
    x = torch.randn(4, requires_grad=True)
    try:
        broken(x).backward()
        raise AssertionError("broken() unexpectedly worked")  # pragma: no cover
    except RuntimeError as e:
        assert "inplace operation" in str(e)
    x.grad = None
    out = fn(x)
    _close(out, ref_fixed(x.detach()), "value")
    out.backward()
    s = 1 / (1 + np.exp(-x.detach().numpy()))
    _close(x.grad, 2 * s * (1 - s), "x.grad")
    _ok("fixed")


def ref_sgd_update_(params: list[torch.Tensor], lr: float) -> None:
    with torch.no_grad():
        for p in params:
            p.sub_(lr * p.grad)


def check_sgd_update_(fn: Callable[[list[torch.Tensor], float], None]) -> None:
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([3.0], requires_grad=True)
    (w * w).sum().add(b.sum() * 2).backward()
    versions = (w._version, b._version)
    fn([w, b], 0.5)
    _close(w, [0.0, 0.0], "w after the step")
    _close(b, [2.0], "b after the step")
    assert w.is_leaf and w.grad_fn is None, "the update must not be recorded (no_grad)"
    assert (w._version, b._version) == (versions[0] + 1, versions[1] + 1), (
        "update each parameter with exactly one in-place op: its _version goes up by one")
    _ok("sgd_update_", "one version bump per parameter")


# =================================================================================================
# 08 — hooks
# =================================================================================================
def ref_make_clip_hook(max_norm: float) -> Callable[[torch.Tensor], torch.Tensor | None]:
    def hook(grad):
        norm = grad.norm().item()
        if norm > max_norm:
            return grad * (max_norm / norm)
        return None

    return hook


def check_make_clip_hook(fn: Callable[[float], Callable]) -> None:
    x = torch.tensor([1.0, 2.0, 2.0], requires_grad=True)
    h = x.register_hook(fn(1.5))
    (x * 10).sum().backward()  # gradient [10, 10, 10], norm 17.3
    _close(x.grad.norm(), 1.5, "clipped gradient norm")
    _close(x.grad, [1.5 / math.sqrt(3)] * 3, "clipped gradient (same direction)")
    h.remove()
    x.grad = None
    x.register_hook(fn(100.0))
    (x * 10).sum().backward()
    _close(x.grad, [10.0, 10.0, 10.0], "a gradient under the limit is left alone")
    _ok("make_clip_hook")


def ref_gradient_order(loss: torch.Tensor, named: dict[str, torch.Tensor]) -> list[str]:
    order = []
    handles = [t.register_hook(lambda g, n=name: order.append(n)) for name, t in named.items()]
    loss.backward()
    for h in handles:
        h.remove()
    return order


def check_gradient_order(fn: Callable[[torch.Tensor, dict], list[str]]) -> None:
    def program():
        x = torch.rand(3, requires_grad=True)
        w = torch.rand(3, requires_grad=True)
        h = x * w
        a = h.exp()
        b = h.sin()
        loss = (a * b).sum() + w.sum()
        return loss, {"x": x, "w": w, "h": h, "a": a, "b": b}

    loss, named = program()
    got = fn(loss, named)
    loss2, named2 = program()
    want = ref_gradient_order(loss2, named2)
    assert list(got) == want, f"got {got}, the engine's order is {want}"
    _ok("gradient_order", " → ".join(want))


def ref_intermediate_grad(x: torch.Tensor) -> torch.Tensor:
    y = x.exp()
    y.retain_grad()
    (y * y).sum().backward()
    return y.grad


def check_intermediate_grad(fn: Callable[[torch.Tensor], torch.Tensor]) -> None:
    x = torch.randn(3, requires_grad=True)
    got = fn(x)
    assert got is not None, "y.grad is None: call y.retain_grad() before backward"
    _close(got, 2 * np.exp(x.detach().numpy()), "dloss/dy = 2y")
    _ok("intermediate_grad")


# =================================================================================================
# 09 — training an MLP
# =================================================================================================
def ref_accuracy(model: Any, X: torch.Tensor, y: torch.Tensor) -> float:
    with torch.no_grad():
        return (model(X).argmax(dim=1) == y).float().mean().item()


def check_accuracy(fn: Callable[[Any, torch.Tensor, torch.Tensor], float]) -> None:
    from gradviz import nn
    from gradviz.data import make_moons

    X, y = make_moons(50, noise=0.1, seed=1)
    torch.manual_seed(1)
    model = nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 2))
    got = fn(model, X, y)
    want = ref_accuracy(model, X, y)
    assert abs(float(got) - want) < 1e-9, f"got {got}, expected {want}"
    _ok("accuracy")


def ref_grad_norms(model: Any) -> dict[str, float]:
    return {name: p.grad.norm().item() for name, p in model.named_parameters()
            if p.grad is not None}


def check_grad_norms(fn: Callable[[Any], dict[str, float]]) -> None:
    from gradviz import nn

    torch.manual_seed(2)
    model = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 1))
    model(torch.randn(8, 3)).pow(2).mean().backward()
    got, want = fn(model), ref_grad_norms(model)
    assert set(got) == set(want), f"keys {sorted(got)}, expected {sorted(want)}"
    for k in want:
        assert abs(got[k] - want[k]) < 1e-6, f"{k}: got {got[k]}, expected {want[k]}"
    _ok("grad_norms")


def ref_train(model: Any, X: torch.Tensor, y: torch.Tensor, steps: int = 200,
              lr: float = 0.05) -> float:
    import gradviz.nn.functional as F

    opt = torch.optim.Adam(model.parameters(), lr=lr)
    for _ in range(steps):
        opt.zero_grad()
        loss = F.cross_entropy(model(X), y)
        loss.backward()
        opt.step()
    return loss.item()


def check_train(fn: Callable[..., float]) -> None:
    from gradviz import nn
    from gradviz.data import make_moons

    X, y = make_moons(100, noise=0.1, seed=3)
    torch.manual_seed(3)
    model = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 2))
    before = [p.detach().clone() for p in model.parameters()]
    loss = fn(model, X, y)
    assert any(not np.allclose(b.numpy(), p.detach().numpy())
               for b, p in zip(before, model.parameters())), "the parameters did not change"
    acc = ref_accuracy(model, X, y)
    assert acc >= 0.95, f"training accuracy {acc:.2%}; expected at least 95%"
    _ok("train", f"final loss {float(loss):.3f}, accuracy {acc:.0%}")




# =================================================================================================
# 10 — convolutions
# =================================================================================================
def ref_conv_weight_grad(x: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
    import gradviz.nn.functional as F

    return F.conv2d(x, g)


def check_conv_weight_grad(fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> None:
    import gradviz.nn.functional as F

    for seed, (h, k) in enumerate([(4, 2), (5, 3), (6, 2)]):
        rng = _rng(seed)
        x = torch.tensor(rng.normal(size=(1, 1, h, h)))
        w = torch.tensor(rng.normal(size=(1, 1, k, k)), requires_grad=True)
        g = torch.tensor(rng.normal(size=(1, 1, h - k + 1, h - k + 1)))
        F.conv2d(x, w).backward(g)
        got = fn(x, g)
        assert isinstance(got, torch.Tensor), f"return a tensor, got {type(got).__name__}"
        _close(got, w.grad, f"the kernel gradient ({h}x{h} input, {k}x{k} kernel)")
    _ok("conv_weight_grad", "the kernel gradient is conv2d(x, g)")


def ref_conv_input_grad(g: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    import gradviz.nn.functional as F

    k = w.shape[-1]
    return F.conv2d(g, w.flip(2, 3), padding=k - 1)


def check_conv_input_grad(fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> None:
    import gradviz.nn.functional as F

    for seed, (h, k) in enumerate([(4, 2), (5, 3), (6, 2)]):
        rng = _rng(seed + 10)
        x = torch.tensor(rng.normal(size=(1, 1, h, h)), requires_grad=True)
        w = torch.tensor(rng.normal(size=(1, 1, k, k)))
        g = torch.tensor(rng.normal(size=(1, 1, h - k + 1, h - k + 1)))
        F.conv2d(x, w).backward(g)
        got = fn(g, w)
        assert isinstance(got, torch.Tensor), f"return a tensor, got {type(got).__name__}"
        _close(got, x.grad, f"the input gradient ({h}x{h} input, {k}x{k} kernel)")
    _ok("conv_input_grad", "a full convolution with the flipped kernel")


def ref_saved_tensor_shapes(node: Any) -> dict[str, tuple[int, ...]]:
    shapes = {}
    for name in dir(node):
        if name.startswith("_saved_"):
            value = getattr(node, name)
            if isinstance(value, torch.Tensor):
                shapes[name] = tuple(value.shape)
    return shapes


def check_saved_tensor_shapes(fn: Callable[[Any], dict]) -> None:
    from gradviz import nn

    torch.manual_seed(4)
    for conv, shape in [(nn.Conv2d(1, 3, 3), (2, 1, 6, 6)), (nn.Conv2d(2, 4, 2), (1, 2, 5, 5))]:
        node = conv(torch.randn(*shape)).grad_fn
        got = fn(node)
        assert isinstance(got, dict), f"return a dict, got {type(got).__name__}"
        got = {k: tuple(v) for k, v in got.items()}
        want = {"_saved_input": shape, "_saved_weight": tuple(conv.weight.shape)}
        assert got == want, f"got {got}, expected {want}"
    _ok("saved_tensor_shapes", "the input and the weight")


# =================================================================================================
# 11 — backpropagation through time
# =================================================================================================
def ref_grad_norms_through_time(cell: Any, xs: torch.Tensor) -> list[float]:
    h = torch.zeros(xs.shape[1], cell.hidden_size)
    states = []
    for x in xs:
        h = cell(x, h)
        h.retain_grad()
        states.append(h)
    h.sum().backward()
    return [s.grad.norm().item() for s in states]


def check_grad_norms_through_time(fn: Callable[[Any, torch.Tensor], list[float]]) -> None:
    from gradviz import nn

    for seed, steps in [(5, 6), (6, 12)]:
        torch.manual_seed(seed)
        cell = nn.RNNCell(2, 4)
        xs = torch.randn(steps, 1, 2)
        want = ref_grad_norms_through_time(cell, xs)
        cell.zero_grad()
        got = [float(v) for v in fn(cell, xs)]
        assert len(got) == steps, f"{len(got)} norms for {steps} steps"
        _close(np.array(got), np.array(want), "the gradient norms, first step first")
    _ok("grad_norms_through_time")


def ref_clip_grad_norm_(params: list[torch.Tensor], max_norm: float) -> float:
    grads = [p.grad for p in params if p.grad is not None]
    total = math.sqrt(sum(g.pow(2).sum().item() for g in grads))
    if total > max_norm:
        with torch.no_grad():
            for g in grads:
                g.mul_(max_norm / (total + 1e-6))
    return total


def check_clip_grad_norm_(fn: Callable[[list, float], float]) -> None:
    rng = _rng(7)
    for max_norm in (0.5, 100.0):
        values = [rng.normal(size=(3, 2)), rng.normal(size=4)]
        params = [torch.tensor(v, requires_grad=True) for v in values] + [
            torch.zeros(2, requires_grad=True)]
        for p, v in zip(params, values):
            p.grad = torch.tensor(v * 3)
        total = math.sqrt(sum(float(((3 * v) ** 2).sum()) for v in values))
        got = fn(params, max_norm)
        assert got is not None and abs(float(got) - total) < 1e-6, (
            f"return the total norm before clipping: got {got}, expected {total:.6f}")
        scale = max_norm / (total + 1e-6) if total > max_norm else 1.0
        for p, v in zip(params, values):
            _close(p.grad, 3 * v * scale, f"a gradient after clipping to {max_norm}")
        assert params[2].grad is None, "a parameter without .grad must stay without"
    _ok("clip_grad_norm_", "the direction kept, the norm bounded")


# =================================================================================================
# 12 — saved tensors and memory
# =================================================================================================
def ref_count_saved(fn: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor) -> int:
    from gradviz.autograd.graph import saved_tensors_hooks

    count = 0

    def pack(t: torch.Tensor) -> torch.Tensor:
        nonlocal count
        count += 1
        return t

    with saved_tensors_hooks(pack, lambda t: t):
        fn(x)
    return count


def check_count_saved(fn: Callable[[Callable, torch.Tensor], int]) -> None:
    cases = [(lambda t: (t * t).sum(), 2), (lambda t: t.exp().sum(), 1),
             (lambda t: (t + 1).sum(), 0), (lambda t: (t.exp() * t).sum(), 3)]
    for i, (f, want) in enumerate(cases):
        got = fn(f, torch.randn(3, requires_grad=True))
        assert got == want, f"case {i}: got {got} saved tensors, expected {want}"
    _ok("count_saved")


def ref_run_with_half_precision_saves(fn: Callable[[torch.Tensor], torch.Tensor],
                                      x: torch.Tensor) -> torch.Tensor:
    from gradviz.autograd.graph import saved_tensors_hooks

    with saved_tensors_hooks(lambda t: t.detach().to(torch.float16),
                             lambda t: t.to(torch.float32)):
        return fn(x)


def check_run_with_half_precision_saves(fn: Callable[[Callable, torch.Tensor], Any]) -> None:
    from gradviz.autograd.graph import saved_tensors_hooks

    stored = []

    def f(t: torch.Tensor) -> torch.Tensor:
        return (t.exp() * t).sum()

    data = _rng(12).normal(size=5) / 3 + 1 / 3
    x = torch.tensor(data, dtype=torch.float32, requires_grad=True)
    # An outer hook sees what the learner's inner hooks would hide: only the innermost packs.
    with saved_tensors_hooks(lambda t: stored.append(t.dtype) or t, lambda t: t):
        out = fn(f, x)
    assert isinstance(out, torch.Tensor), f"return fn(x), got {type(out).__name__}"
    assert not stored, "the tensors were saved as they are: pack them in your own hooks"
    out.backward()
    exact = np.exp(data) * (1 + data)
    assert x.grad is not None and x.grad.dtype == torch.float32, "x.grad must be float32"
    _close(x.grad, exact, "x.grad (float16 saves: about 3 correct digits)", tol=1e-2)
    err = np.abs(x.grad.numpy() - exact).max()
    assert err > 1e-7, "the gradient is exactly the float32 one: were the saves float16?"
    _ok("run_with_half_precision_saves", f"largest gradient error {err:.1e}")


# =================================================================================================
# 13 — Watch PyTorch's own engine (these need real PyTorch: pip install gradviz[torch])
# =================================================================================================
def ref_engine_order(tr: Any) -> list[str]:
    run = tr.runs[-1]
    return [tr.nodes[s.node].name for s in run.steps if s.kind == "execute"]


def _torch_programs_13() -> list[Callable[[Any], Any]]:
    """Small real-PyTorch programs (each takes the torch module, returns a scalar loss)."""

    def mlp(pt: Any) -> Any:
        model = pt.nn.Sequential(pt.nn.Linear(3, 5), pt.nn.ReLU(), pt.nn.Linear(5, 2))
        return pt.nn.functional.cross_entropy(model(pt.randn(4, 3)), pt.tensor([0, 1, 1, 0]))

    def shared(pt: Any) -> Any:  # x is used twice: its node waits for both gradients
        x = pt.randn(4, requires_grad=True)
        w = pt.randn(4, requires_grad=True)
        h = (x * w).sin()
        return (h * x + h.exp()).sum()

    def two_layers(pt: Any) -> Any:
        x = pt.randn(6, 2)
        w1 = pt.randn(2, 3, requires_grad=True)
        w2 = pt.randn(3, 1, requires_grad=True)
        return ((x @ w1).tanh() @ w2).pow(2).mean()

    return [mlp, shared, two_layers]


def _torch_and_observed(program: Callable[[Any], Any], seed: int) -> tuple[Any, list[str]]:
    """The program's loss (graph kept) and the node names PyTorch ran, seen by pre-hooks on
    every node (an observer independent of the trace)."""
    import torch as pt  # real PyTorch, only for exercises 13

    pt.manual_seed(seed)
    loss = program(pt)
    seen: list[str] = []
    handles, stack, nodes = [], [loss.grad_fn], {loss.grad_fn}
    while stack:
        node = stack.pop()
        handles.append(node.register_prehook(lambda g, n=node: seen.append(type(n).__name__)))
        for nxt, _ in node.next_functions:
            if nxt is not None and nxt not in nodes:
                nodes.add(nxt)
                stack.append(nxt)
    loss.backward(retain_graph=True)
    for h in handles:
        h.remove()
    return loss, seen


def check_engine_order(fn: Callable[[Any], list[str]]) -> None:
    import torch as pt

    for seed, program in enumerate(_torch_programs_13()):
        loss, observed = _torch_and_observed(program, seed)
        with torch.trace(torch=True) as tr:
            pt.ones(1, requires_grad=True).sum().backward()  # an earlier run, to be skipped
            loss.backward()
        got = list(fn(tr))
        assert got == observed, f"got {got}\nPyTorch ran {observed}"
    _ok("engine_order", "matches hooks on every node")


def ref_predicted_order(loss: Any) -> list[str]:
    deps: dict[Any, int] = {}
    stack, seen = [loss.grad_fn], {loss.grad_fn}
    while stack:
        node = stack.pop()
        for nxt, _ in node.next_functions:
            if nxt is None:
                continue
            deps[nxt] = deps.get(nxt, 0) + 1
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    ready = [(-loss.grad_fn._sequence_nr(), 0, loss.grad_fn)]
    order, arrivals = [], 1
    while ready:
        _, _, node = heapq.heappop(ready)
        order.append(type(node).__name__)
        for nxt, _ in node.next_functions:
            if nxt is None:
                continue
            deps[nxt] -= 1
            if deps[nxt] == 0:
                heapq.heappush(ready, (-nxt._sequence_nr(), arrivals, nxt))
                arrivals += 1
    return order


def check_predicted_order(fn: Callable[[Any], list[str]]) -> None:
    for seed, program in enumerate(_torch_programs_13()):
        import torch as pt

        pt.manual_seed(seed)
        got = list(fn(program(pt)))  # predicted before any backward
        _, observed = _torch_and_observed(program, seed)
        assert got == observed, f"got {got}\nPyTorch ran {observed}"
    _ok("predicted_order", "matches the order PyTorch's engine ran")


# =================================================================================================
# The exercise registry: check / hint / show
# =================================================================================================
@dataclass(frozen=True)
class Exercise:
    """One exercise: what the learner writes, how it is checked, a hint and the answer."""

    name: str  # the function or class the notebook asks for
    check: Callable[[Any], None]  # raises AssertionError (or anything) when the answer is wrong
    answer: Any  # the reference function or class, shown by show()
    hint: str


EXERCISES: dict[str, Exercise] = {}


def _add(key: str, name: str, check_fn: Callable[[Any], None], answer: Any, hint_text: str) -> None:
    EXERCISES[key] = Exercise(name, check_fn, answer, " ".join(hint_text.split()))


_add("ex1_1", "cubic_grad", check_cubic_grad, ref_cubic_grad,
     "Make a leaf with torch.tensor(values, requires_grad=True), build the scalar sum, call "
     ".backward() on it and return the leaf's .grad.")
_add("ex1_2", "weighted_grad", check_weighted_grad, ref_weighted_grad,
     "A non-scalar output needs the gradient argument: z.backward(v). Then read x.grad.")
_add("ex1_3", "sgd_step", check_sgd_step, ref_sgd_step,
     "Update under `with torch.no_grad():` so the update is not recorded, use the in-place "
     "`w -= ...` (a new tensor would not be the leaf), then set w.grad = None.")
_add("ex2_1", "node_names", check_node_names, ref_node_names,
     "Breadth-first from t.grad_fn: a queue (list, pop(0)), a `seen` set so a node shared by "
     "two paths is listed once, and type(node).__name__ for each node. Skip None entries of "
     "next_functions.")
_add("ex2_2", "leaves_of", check_leaves_of, ref_leaves_of,
     "Walk the graph with a stack. A node with a `variable` attribute is an AccumulateGrad: "
     "its .variable is the leaf.")
_add("ex2_3", "chain_grad", check_chain_grad, ref_chain_grad,
     "Start with node = z.grad_fn and grad = torch.ones_like(z). Call the node on the gradient "
     "(node(grad)) to get one gradient per next_functions entry; follow the entry that is not "
     "None until the node has a `variable` (AccumulateGrad).")
_add("ex3_1", "Square", check_square, RefSquare,
     "forward: ctx.save_for_backward(x) and return x * x. backward: (x,) = ctx.saved_tensors "
     "and return the chain rule's 2 * x * grad_output.")
_add("ex3_2", "Sigmoid", check_sigmoid, RefSigmoid,
     "Compute y = 1 / (1 + (-x).exp()) and save y itself (the derivative is y * (1 - y)), not x.")
_add("ex3_3", "ScaleGrad", check_scale_grad, RefScaleGrad,
     "forward returns x.clone() and keeps the scale on ctx; backward returns "
     "(grad_output * ctx.scale, None): one gradient per forward input, None for the number.")
_add("ex4_1", "dependency_counts", check_dependency_counts, ref_dependency_counts,
     "Walk every node once (a stack and a `seen` set), and for each next_functions entry that "
     "is not None add 1 to deps[entry]: every edge counts, even when the node was seen.")
_add("ex4_2", "predict_order", check_predict_order, ref_predict_order,
     "Use your dependency_counts, and a heap of (-sequence_nr, arrival, node): the engine runs "
     "the ready node with the highest sequence_nr first. A node becomes ready when its count "
     "drops to 0.")
_add("ex4_3", "my_backward", check_my_backward, ref_my_backward,
     "The ready queue of ex4_2, plus an input buffer per node: a list with one slot per node "
     "output (node.num_outputs), summing gradients that reach the same slot. Call node(*buffer); "
     "an AccumulateGrad node (hasattr(node, 'variable')) ends the path: store its gradient "
     "under id(node.variable).")
_add("ex5_1", "yield_order", check_yield_order, ref_yield_order,
     "singa.backward(loss) yields (parameter, gradient) pairs; map each parameter back to its "
     "name by id(), since tensors are not hashable by value.")
_add("ex5_2", "singa_sgd", check_singa_sgd, ref_singa_sgd,
     "Loop over singa.backward(loss) and update each parameter in place under no_grad as soon "
     "as its gradient arrives.")
_add("ex5_3", "mx_grad_twice", check_mx_grad_twice, ref_mx_grad_twice,
     "mx.attach_grad(x, grad_req=grad_req), then twice: `with mx.record():` build y, then "
     "mx.backward(y). 'write' overwrites x.grad, 'add' accumulates.")
_add("ex6_1", "second_derivative", check_second_derivative, ref_second_derivative,
     "torch.autograd.grad(f(x), x, create_graph=True) gives a first derivative that is itself "
     "on a graph; differentiate it again with torch.autograd.grad.")
_add("ex6_2", "hvp", check_hvp, ref_hvp,
     "Take g = grad(f(x), x, create_graph=True), then differentiate the scalar (g * v).sum() "
     "with respect to x: that is H @ v without building H.")
_add("ex6_3", "newton_step", check_newton_step, ref_newton_step,
     "Newton's step is x0 - f'(x0) / f''(x0); both derivatives come from exercise 1's recipe.")
_add("ex7_1", "fixed", check_fixed, ref_fixed,
     "sigmoid saves its output. Replace the in-place y.mul_(2) with an out-of-place y = y * 2 "
     "so the saved tensor keeps its version.")
_add("ex7_2", "sgd_update_", check_sgd_update_, ref_sgd_update_,
     "Inside `with torch.no_grad():` call p.sub_(lr * p.grad) for each parameter: in place, "
     "not recorded.")
_add("ex8_1", "make_clip_hook", check_make_clip_hook, ref_make_clip_hook,
     "Return a function hook(grad). If grad.norm().item() is above max_norm, return "
     "grad * (max_norm / norm); otherwise return None (keep the gradient as it is).")
_add("ex8_2", "gradient_order", check_gradient_order, ref_gradient_order,
     "register_hook on every tensor with a hook that appends its name (bind the name with a "
     "default argument: lambda g, n=name: ...), run loss.backward(), then remove the handles.")
_add("ex8_3", "intermediate_grad", check_intermediate_grad, ref_intermediate_grad,
     "y is not a leaf, so its .grad is not kept unless you call y.retain_grad() before "
     "backward().")
_add("ex9_1", "accuracy_of", check_accuracy, ref_accuracy,
     "Under no_grad: model(X).argmax(dim=1) == y gives booleans; .float().mean().item() is "
     "the accuracy.")
_add("ex9_2", "grad_norms", check_grad_norms, ref_grad_norms,
     "model.named_parameters() gives (name, parameter); keep p.grad.norm().item() for those "
     "whose grad is not None.")
_add("ex9_3", "train", check_train, ref_train,
     "torch.optim.Adam(model.parameters(), lr=lr); each step: zero_grad(), "
     "F.cross_entropy(model(X), y), backward(), step(). Return the last loss as a float.")

_add("ex10_1", "conv_weight_grad", check_conv_weight_grad, ref_conv_weight_grad,
     "∂L/∂w[i, j] = Σ g[p, q] · x[p+i, q+j]: slide g over x like a kernel. F.conv2d(x, g) does "
     "exactly that.")
_add("ex10_2", "conv_input_grad", check_conv_input_grad, ref_conv_input_grad,
     "Each g[p, q] goes back to the pixels the kernel touched: a full convolution. Pad g by "
     "k - 1 on every side and convolve with the kernel flipped in both directions "
     "(w.flip(2, 3)).")
_add("ex10_3", "saved_tensor_shapes", check_saved_tensor_shapes, ref_saved_tensor_shapes,
     "Loop over dir(node), keep names starting with '_saved_', getattr each, and keep those "
     "that are torch.Tensor instances: {name: tuple(value.shape)}.")
_add("ex11_1", "grad_norms_through_time", check_grad_norms_through_time,
     ref_grad_norms_through_time,
     "h = torch.zeros(batch, cell.hidden_size); loop h = cell(x, h) over xs, call "
     "h.retain_grad() on each new h and keep it in a list; after h.sum().backward() read each "
     "state's .grad.norm().item().")
_add("ex11_2", "clip_grad_norm_", check_clip_grad_norm_, ref_clip_grad_norm_,
     "total = sqrt(sum of g.pow(2).sum() over the gradients that are not None). If total > "
     "max_norm, multiply each gradient in place (g.mul_) by max_norm / (total + 1e-6) under "
     "no_grad. Return total.")
_add("ex12_1", "count_saved", check_count_saved, ref_count_saved,
     "Inside `with saved_tensors_hooks(pack, unpack):` call fn(x). pack(t) is called once per "
     "saved tensor: count there (nonlocal) and return t unchanged; unpack returns its argument.")
_add("ex12_2", "run_with_half_precision_saves", check_run_with_half_precision_saves,
     ref_run_with_half_precision_saves,
     "pack = lambda t: t.detach().to(torch.float16), unpack = lambda t: t.to(torch.float32); "
     "return fn(x) computed inside saved_tensors_hooks(pack, unpack).")

_add("ex13_1", "engine_order", check_engine_order, ref_engine_order,
     "tr.runs[-1] is the last backward run; its steps whose kind is 'execute' are the nodes "
     "the engine ran, in order. tr.nodes[step.node].name is PyTorch's node name.")
_add("ex13_2", "predicted_order", check_predicted_order, ref_predicted_order,
     "First walk the graph once and count, for every node, the edges that reach it. Then a heap "
     "of (-node._sequence_nr(), arrival, node) starting from loss.grad_fn: pop, record "
     "type(node).__name__, and push each next node whose count drops to 0.")

def _exercise(key: str) -> Exercise:
    if key not in EXERCISES:
        raise KeyError(f"no exercise {key!r}; the exercises are {', '.join(EXERCISES)}")
    return EXERCISES[key]


def failure(key: str, answer: Any) -> str | None:
    """Why ``answer`` fails exercise ``key`` (one line), or None when it passes. Prints nothing
    but what the check itself prints on success.

    >>> failure("ex1_1", lambda values: None)
    'AssertionError: return a tensor, got NoneType'
    """
    ex = _exercise(key)
    try:
        ex.check(answer)
    except NotImplementedError:
        return "NotImplementedError"
    except Exception as e:  # noqa: BLE001 - any failure of the learner's code is "not yet"
        return f"{type(e).__name__}: {e}".rstrip()
    return None


def check(key: str, answer: Any) -> None:
    """Run the checks of exercise ``key`` on your ``answer`` and print ✓ or ✗ with what is
    wrong. It never raises on a wrong answer, so the rest of the notebook runs on.

    >>> check("ex1_1", ref_cubic_grad)
    ✓ cubic_grad: correct
    """
    ex = _exercise(key)
    why = failure(key, answer)
    if why == "NotImplementedError":
        print(f"✗ {key} {ex.name}: not done yet (replace the `raise NotImplementedError` stub; "
              f'solutions.hint("{key}") gives a hint)')
    elif why is not None:
        print(f"✗ {key} {ex.name}: not yet. {why}")
        print(f'  solutions.hint("{key}") gives a hint, solutions.show("{key}") the answer.')


def hint(key: str) -> None:
    """Print the hint of exercise ``key`` (not the answer).

    >>> hint("ex1_2")
    hint for ex1_2 weighted_grad: A non-scalar output needs the gradient argument: z.backward(v). Then read x.grad.
    """  # noqa: E501
    ex = _exercise(key)
    print(f"hint for {key} {ex.name}: {ex.hint}")


def answer_source(key: str) -> str:
    """The reference answer of exercise ``key`` as source text, under the notebook's name."""
    ex = _exercise(key)
    source = textwrap.dedent(inspect.getsource(ex.answer))
    # The reference is called ref_x / RefX here so it never shadows the learner's x.
    return re.sub(rf"^(def|class) {re.escape(ex.answer.__name__)}\b",
                  rf"\1 {ex.name}", source, count=1, flags=re.M)


def show(key: str) -> None:
    """Print the reference answer of exercise ``key``. Try it (and the hint) first.

    >>> show("ex1_1")  # doctest: +ELLIPSIS
    reference answer for ex1_1:
    def cubic_grad(values: list[float]) -> torch.Tensor:
    ...
    """
    print(f"reference answer for {key}:")
    print(answer_source(key), end="")
