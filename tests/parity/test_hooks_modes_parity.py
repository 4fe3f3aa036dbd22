"""Hooks, grad modes, anomaly mode and gradcheck: the same programs on gradviz and on torch give
the same values, the same errors and the same warnings (issue #14).

Each program is Python source run with ``m`` bound to the library; it leaves what it observed in
``result`` (plain Python values). The outcome is that result, or the exception's type and text;
with the warnings raised meanwhile (category and first line). Texts are compared after
:func:`_norm`: gradviz says ``gradviz.`` where torch says ``torch.``, torch's C++ warnings end
with "(Triggered internally at ...)", and gradviz may add detail after torch's text (the shapes
of a hook's wrong result), so gradviz's text must *start with* torch's.
"""

from __future__ import annotations

import re
import textwrap
import warnings
from typing import Any

import numpy as np
import pytest
import torch

import gradviz

_PRELUDE = '''
def f64(v, rg=True):
    return m.tensor(v, dtype=m.float64, requires_grad=rg)

class NoGradForSecond(m.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        return a * b
    @staticmethod
    def backward(ctx, g):
        return g, None

class Fails(m.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 1
    @staticmethod
    def backward(ctx, g):
        raise ValueError("boom")

class FailsTwice(m.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x
    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return Fails.apply(g * 2 * x)

class WrongGrad(m.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        return a * 2
    @staticmethod
    def backward(ctx, g):
        return g * 3

class WrongDouble(m.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a ** 2
    @staticmethod
    def backward(ctx, g):
        a, = ctx.saved_tensors
        return g * 2 * a.detach()

def inference_ones(**kw):
    with m.inference_mode():
        return m.ones(2, **kw)

x3 = m.tensor([1.0, 2.0, 3.0], dtype=m.float64, requires_grad=True)
'''

PROGRAMS: dict[str, str] = {
    # -- hooks and autograd.grad --------------------------------------------------------------
    "grad runs input tensor hooks only": """
        log = []
        x = f64([1.0, 2.0]); y = x * 2
        y.register_hook(lambda g: log.append(("tensor", g.tolist())))
        y.grad_fn.register_prehook(lambda go: log.append("pre"))
        y.grad_fn.register_hook(lambda gi, go: log.append("post"))
        y.retain_grad()
        g = m.autograd.grad((y * 3).sum(), y)
        result = log, g[0].tolist(), y.grad.tolist()
    """,
    "grad runs a needed input node with its hooks": """
        log = []
        x = f64([1.0, 2.0]); y = x * 2
        y.register_hook(lambda g: (log.append("y-tensor"), g * 10)[1])
        y.grad_fn.register_prehook(lambda go: log.append("y-pre"))
        y.grad_fn.register_hook(lambda gi, go: log.append("y-post"))
        x.register_hook(lambda g: log.append("x-tensor"))
        x.register_post_accumulate_grad_hook(lambda t: log.append("x-post-acc"))
        r = m.autograd.grad((y * 3).sum(), [y, x])
        result = log, [t.tolist() for t in r], x.grad
    """,
    "split outputs without gradient": """
        calls = []
        x = m.arange(6.0).reshape(3, 2).requires_grad_()
        a, b, c = x.split(1)
        b.register_hook(lambda g: calls.append(("b", g)))
        c.register_hook(lambda g: calls.append(("c", g)))
        b.retain_grad()
        (a * 2).sum().backward()
        result = calls, x.grad.tolist(), b.grad
    """,
    "unbind output without gradient": """
        calls = []
        x = m.arange(6.0).reshape(3, 2).requires_grad_()
        a, b, _ = x.unbind(0)
        a.register_hook(lambda g: calls.append(("a", g.tolist())))
        b.register_hook(lambda g: calls.append(("b", g)))
        (a * 2).sum().backward()
        result = calls
    """,
    "a hook cannot replace a missing gradient": """
        x = m.arange(6.0).reshape(3, 2).requires_grad_()
        a, b = x.split(2)
        b.register_hook(lambda g: m.ones(1, 2))
        (a * 2).sum().backward()
    """,
    "a node without gradient runs its hooks": """
        calls = []
        x = f64([1.0, 2.0]); w = f64([3.0, 4.0]); u = w * 1
        u.register_hook(lambda g: calls.append(("u", g)))
        u.grad_fn.register_prehook(lambda go: calls.append(("u-pre", go)))
        u.grad_fn.register_hook(lambda gi, go: calls.append(("u-post", gi, go)))
        w.register_hook(lambda g: calls.append(("w", g)))
        w.register_post_accumulate_grad_hook(lambda t: calls.append(("w-post-acc", t.grad)))
        NoGradForSecond.apply(x, u).sum().backward()
        result = calls, w.grad, x.grad.tolist()
    """,
    "multi-grad hook on later backward calls": """
        calls = []
        a, b = f64([1.0, 2.0]), f64([3.0, 4.0]); c = a * b
        m.autograd.graph.register_multi_grad_hook(
            (a, b, c), lambda gs: calls.append([g is not None for g in gs]))
        out = (c * 2).sum()
        for inputs in [None, [a], [b], [c], [a, b], None]:
            out.backward(inputs=inputs, retain_graph=True)
        m.autograd.grad(out, [c], retain_graph=True)
        result = calls
    """,
    "multi-grad hook all on a tensor without grad": """
        a = f64([1.0, 2.0])
        m.autograd.graph.register_multi_grad_hook((a, m.ones(2)), lambda gs: None)
    """,
    "multi-grad hook any on a tensor without grad": """
        calls = []
        a = f64([1.0, 2.0])
        m.autograd.graph.register_multi_grad_hook((a, m.ones(2)), lambda g: calls.append(g),
                                                  mode="any")
        (a * 2).sum().backward()
        result = calls
    """,
    "increment_version of a number": """
        m.autograd.graph.increment_version(3)
    """,
    "increment_version of a list holding a number": """
        a = m.ones(1)
        try:
            m.autograd.graph.increment_version([a, 3])
        except RuntimeError as e:
            result = str(e), a._version
    """,
    "multi-grad hook under autograd.grad of a leaf": """
        a, b = f64([1.0, 2.0]), f64([3.0, 4.0])
        m.autograd.graph.register_multi_grad_hook((a, b), lambda gs: None)
        m.autograd.grad((a * b).sum(), [a])
    """,
    "post-accumulate-grad hook changes .grad": """
        seen = []
        x = f64([1.0, 2.0]); seed = m.ones(2, dtype=m.float64)
        def hook(t):
            seen.append((t is x, t.grad.tolist()))
            t.grad.mul_(10)
        x.register_post_accumulate_grad_hook(hook)
        (x * 2).sum().backward()
        (x * 2).sum().backward(create_graph=True)
        (x * 1).backward(seed, inputs=[x])
        result = seen, x.grad.tolist(), seed.tolist()
    """,
    "post-accumulate-grad hook returns a value": """
        x = f64([1.0, 2.0])
        x.register_post_accumulate_grad_hook(lambda t: t * 2)
        (x * 2).sum().backward()
    """,
    "materialize_grads under create_graph": """
        x = f64([1.0, 2.0]); w = f64([1.0, 2.0])
        r = m.autograd.grad((x * 2).sum(), [x, w], create_graph=True, materialize_grads=True)
        s = m.autograd.grad((x * 2).sum(), [x, w], materialize_grads=True)
        result = ([(t.tolist(), t.requires_grad, t.grad_fn is None) for t in r],
                  [(t.tolist(), t.requires_grad) for t in s])
    """,
    "hook changes the dtype under create_graph": """
        x = m.tensor([1.0, 2.0], requires_grad=True); y = x * 2
        y.register_hook(lambda g: g.double())
        m.autograd.grad(y.sum(), x, create_graph=True)
    """,
    "GradientEdge as outputs": """
        x = f64([1.0, 2.0]); y = x * 2; s = (x * 3).sum()
        edge = m.autograd.graph.get_gradient_edge(y)
        g1 = m.autograd.grad(edge, x, m.ones(2, dtype=m.float64), retain_graph=True)
        g2 = m.autograd.grad([edge, s], x, [m.ones(2, dtype=m.float64), None], retain_graph=True)
        m.autograd.backward(edge, m.ones(2, dtype=m.float64))
        m.autograd.backward(m.autograd.graph.get_gradient_edge(s))
        result = g1[0].tolist(), g2[0].tolist(), x.grad.tolist()
    """,
    "GradientEdge output without its gradient": """
        x = f64([1.0, 2.0])
        m.autograd.grad(m.autograd.graph.get_gradient_edge(x * 2), x)
    """,
    "GradientEdge output with a gradient of the wrong shape": """
        x = f64([1.0, 2.0])
        m.autograd.backward(m.autograd.graph.get_gradient_edge(x * 2), m.ones(3))
    """,
    "materialize_grads with an unreached GradientEdge": """
        x = f64([1.0, 2.0]); y = x * 2
        m.autograd.grad((x * 3).sum(), [x, m.autograd.graph.get_gradient_edge(y)],
                        materialize_grads=True)
    """,
    "reentrant backward 2000 deep": """
        class Nested(m.autograd.Function):
            @staticmethod
            def forward(ctx, x, depth):
                ctx.depth = depth
                return x * 1
            @staticmethod
            def backward(ctx, g):
                if ctx.depth > 0:
                    with m.enable_grad():
                        inner = m.ones(1, requires_grad=True)
                        Nested.apply(inner, ctx.depth - 1).sum().backward()
                        seen.append(inner.grad.item())
                return g * 3, None
        seen = []
        x = f64([1.0])
        Nested.apply(x, 2000).sum().backward()
        result = x.grad.tolist(), len(seen), set(seen), m.is_grad_enabled()
    """,
    "raw saved indices of IndexBackward0": """
        log = []
        a = m.arange(12.0).reshape(3, 4).requires_grad_(); i = m.tensor([0, 2])
        b = a[i]; c = a[None, i]
        raw = b.grad_fn._raw_saved_indices
        raw[0].register_hooks(lambda t: log.append("pack") or t,
                              lambda p: log.append("unpack") or p)
        b.sum().backward()
        result = (type(raw).__name__, len(raw), len(c.grad_fn._raw_saved_indices), log,
                  a.grad.tolist())
    """,
    "raw saved None index": """
        a = m.arange(12.0).reshape(3, 4).requires_grad_()
        c = a[None, m.tensor([0, 2])]  # kept: torch crashes if its node is gone meanwhile
        c.grad_fn._raw_saved_indices[0].register_hooks(lambda t: t, lambda p: p)
    """,
    "threshold double backward": """
        x = f64([-1.0, 0.5, 2.0]); seed = f64([1.0, 2.0, 3.0])
        (g,) = m.autograd.grad(m.nn.functional.threshold(x, 0.1, 20.0), x, seed,
                               create_graph=True)
        node = g.grad_fn
        info = (node.name(), node._saved_self.tolist(), node._saved_threshold,
                [n.variable is v for (n, _), v in zip(node.next_functions, (seed, x))])
        (g * g).sum().backward()
        result = info, g.tolist(), seed.grad.tolist(), x.grad.tolist()
    """,
    "relu gradient and double backward": """
        x = m.tensor([-1.0, 0.0, 2.0], requires_grad=True)
        m.relu(x).backward(m.tensor([float("nan"), float("inf"), 1.0]))
        seed = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        (g,) = m.autograd.grad(m.relu(x), x, seed, create_graph=True)
        node = g.grad_fn
        result = (x.grad.tolist(), node.name(), node._saved_threshold,
                  node._saved_self.tolist(), [n.name() for n, _ in node.next_functions],
                  g.tolist())
    """,
    "node called with no gradient": "x = f64([1.0, 2.0]); (x * 2).grad_fn()",
    "node called with two gradients": "x = f64([1.0, 2.0]); (x * 2).grad_fn(x, x)",
    "unbind node called with one gradient": "x = f64([1.0, 2.0]); x.unbind(0)[0].grad_fn(x[0])",
    "AccumulateGrad called with none": "x = f64([1.0]); (x * 2).grad_fn.next_functions[0][0]()",
    "node called by hand": """
        x = f64([1.0, 2.0]); a, _ = x.unbind(0)
        gx, other = (x * 2).grad_fn(m.ones(2, dtype=m.float64))
        result = gx.tolist(), other, a.grad_fn(m.tensor(1.0, dtype=m.float64), None).tolist()
    """,
    "retain_grad and hook handles": """
        log = []
        x = f64([1.0, 2.0]); x.retain_grad()
        y = x * 2; y.retain_grad(); y.retain_grad()
        h = y.grad_fn.register_hook(lambda gi, go: log.append("post")); h.remove(); h.remove()
        with y.register_hook(lambda g: log.append("ctx")):
            pass
        (y * y).sum().backward(retain_graph=True); first = y.grad.tolist()
        (y * y).sum().backward()
        result = x.retains_grad, y.retains_grad, first, y.grad.tolist(), log
    """,
    "hook order": """
        log = []
        x = f64([1.0, 2.0]); y = x * 2
        y.register_hook(lambda g: log.append("tensor1"))
        y.grad_fn.register_prehook(lambda go: log.append("pre"))
        y.retain_grad()
        y.register_hook(lambda g: (log.append("tensor2"), g * 10)[1])
        y.grad_fn.register_hook(lambda gi, go: log.append("post"))
        x.register_hook(lambda g: log.append("leaf"))
        x.register_post_accumulate_grad_hook(lambda t: log.append("post_acc"))
        y.sum().backward()
        result = log, y.grad.tolist(), x.grad.tolist()
    """,
    "hooks removed or added during backward": """
        log = []; hs = []
        x = f64([1.0, 2.0]); y = x * 2
        def first(g):
            log.append("first"); hs[1].remove(); y.register_hook(lambda g: log.append("added"))
        hs.append(y.register_hook(first)); hs.append(y.register_hook(lambda g: log.append("2nd")))
        y.sum().backward(retain_graph=True); y.sum().backward()
        result = log
    """,
    # -- grad modes ------------------------------------------------------------------------
    "inference_mode basics": """
        x = m.ones(2, requires_grad=True)
        with m.inference_mode():
            inside = (m.is_inference_mode_enabled(), m.is_grad_enabled())
            y = x * 2
            with m.enable_grad():
                e = (m.is_grad_enabled(), (x * 2).requires_grad)
        with m.no_grad():
            with m.inference_mode(mode=False):
                off = (m.is_grad_enabled(), m.is_inference_mode_enabled(), (x * 2).requires_grad)
        result = (inside, e, off, y.requires_grad, y.is_inference(), y.grad_fn is None,
                  x.is_inference(), m.is_inference_mode_enabled())
    """,
    "inference_mode decorators": """
        x = m.ones(2, requires_grad=True)
        @m.inference_mode()
        def f(a): return (a * 2).is_inference(), m.is_inference_mode_enabled()
        @m.inference_mode
        def g(a): return (a * 2).is_inference()
        @m.inference_mode(False)
        def h(a): return (a * 2).requires_grad
        result = f(x), g(x), h(x)
    """,
    "inference tensor saved for backward": "m.ones(2, requires_grad=True) * inference_ones()",
    "inference tensor saved by a custom Function": """
        class Keep(m.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                ctx.save_for_backward(b); return a * 1
            @staticmethod
            def backward(ctx, g):
                return g, None
        Keep.apply(m.ones(2, requires_grad=True), inference_ones())
    """,
    "inference tensor in an op that saves nothing": """
        inf = inference_ones()
        x = m.ones(2, requires_grad=True)
        result = (x + inf).grad_fn.name(), (inf * 2).is_inference(), inf.clone().is_inference()
    """,
    "in-place on an inference tensor": "inference_ones().add_(1)",
    "in-place on an inference tensor under no_grad": """
        inf = inference_ones()
        with m.no_grad():
            inf.mul_(2)
    """,
    "setitem on an inference tensor": "inference_ones()[0] = 3.0",
    "in-place on a view of an inference tensor": "inference_ones().view(2).zero_()",
    "in-place on an inference tensor in inference mode": """
        inf = inference_ones()
        with m.inference_mode():
            inf.fill_(5.0)
        result = inf.tolist()
    """,
    "in-place on a normal tensor in inference mode": """
        n = m.ones(2)
        with m.inference_mode():
            n.add_(1); v = n.view(2); v.add_(1); vi = v.is_inference()
        result = n._version, n.is_inference(), vi, n.tolist()
    """,
    "version of an inference tensor": "inference_ones()._version",
    "requires_grad_ on an inference tensor": "inference_ones().requires_grad_()",
    "requires_grad = True on an inference tensor": "inference_ones().requires_grad = True",
    "what stays an inference tensor": """
        inf = inference_ones()
        result = (inf.detach().is_inference(), inf.data.is_inference(),
                  inf.view(2).is_inference(), repr(inf))
    """,
    "an inference leaf that requires grad": """
        p = inference_ones(requires_grad=True)
        (p * 2).sum().backward()
        result = p.requires_grad, p.is_leaf, p.is_inference(), p.grad.tolist()
    """,
    "decorated generators": """
        result = []
        for make in (m.no_grad, m.enable_grad, lambda: m.set_grad_enabled(False),
                     m.inference_mode):
            deco = make()
            @deco
            def gen(n):
                for _ in range(n):
                    sent = yield (m.is_grad_enabled(), m.is_inference_mode_enabled())
                    if sent is not None:
                        yield ("sent", sent, m.is_grad_enabled())
            with m.no_grad():
                g = gen(2)
            seen = [(v, m.is_grad_enabled()) for v in g]
            g = gen(3); first = next(g); sent = g.send(5)
            try:
                g.throw(ValueError("x"))
            except ValueError:
                thrown = m.is_grad_enabled()
            result.append((seen, first, sent, thrown, m.is_grad_enabled()))
    """,
    "decorating a class": """
        class A:
            def __init__(self):
                self.mode = m.is_grad_enabled()
        made = m.no_grad()(A)
        result = type(made).__name__, made().mode, m.is_grad_enabled()
    """,
    "set_grad_enabled with an int": "m.set_grad_enabled(1)",
    "set_grad_enabled as a function and a context manager": """
        m.set_grad_enabled(False); a = m.is_grad_enabled(); m.set_grad_enabled(True)
        with m.set_grad_enabled(False):
            b = m.is_grad_enabled()
        result = a, b, m.is_grad_enabled()
    """,
    "increment_version on an inference tensor": """
        inf, normal = inference_ones(), m.ones(2)
        m.autograd.graph.increment_version(inf)
        m.autograd.graph.increment_version([inf, normal])
        result = normal._version, inf.is_inference()
    """,
    # -- anomaly mode ----------------------------------------------------------------------
    "detect_anomaly warns when made": """
        d = m.autograd.detect_anomaly()
        before = m.is_anomaly_enabled(), m.is_anomaly_check_nan_enabled()
        m.set_anomaly_enabled(True, False)
        on = m.is_anomaly_enabled(), m.is_anomaly_check_nan_enabled()
        m.set_anomaly_enabled(False)
        result = before, on, m.is_anomaly_enabled()
    """,
    "detect_anomaly is not a decorator": "m.autograd.detect_anomaly()(lambda: None)",
    "anomaly without forward information": """
        y = Fails.apply(m.ones(2, requires_grad=True))
        with m.autograd.detect_anomaly():
            y.sum().backward()
    """,
    "anomaly with forward information": """
        with m.autograd.detect_anomaly():
            y = Fails.apply(m.ones(2, requires_grad=True))
            y.sum().backward()
    """,
    "anomaly in a nested backward": """
        with m.autograd.detect_anomaly():
            a = m.ones(2, requires_grad=True)
            y = FailsTwice.apply(a)
            (ga,) = m.autograd.grad(y.sum(), a, create_graph=True)
            ga.sum().backward()
    """,
    "anomaly with a parent recorded without it": """
        a = m.ones(2, requires_grad=True)
        y = FailsTwice.apply(a)
        with m.autograd.detect_anomaly():
            (ga,) = m.autograd.grad(y.sum(), a, create_graph=True)
            ga.sum().backward()
    """,
    "anomaly nan": """
        with m.autograd.detect_anomaly():
            a = m.tensor([0.0], requires_grad=True)
            (a / a).sum().backward()
    """,
    "anomaly check_nan=False": """
        with m.autograd.detect_anomaly(check_nan=False):
            a = m.tensor([0.0], requires_grad=True)
            (a / a).sum().backward()
        result = np.isnan(a.grad.tolist()).tolist()
    """,
    "anomaly with warnings as errors": """
        with m.autograd.detect_anomaly():
            y = Fails.apply(m.ones(2, requires_grad=True))
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                y.sum().backward()
    """,
    "detect_anomaly with warnings as errors": """
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            m.autograd.detect_anomaly()
    """,
    # -- gradcheck -------------------------------------------------------------------------
    "gradcheck mismatch": "m.autograd.gradcheck(WrongGrad.apply, (x3,))",
    "gradcheck mismatch without raising": """
        result = m.autograd.gradcheck(WrongGrad.apply, (x3,), raise_exception=False)
    """,
    "gradcheck float32": """
        result = m.autograd.gradcheck(lambda a: a * 2, (m.tensor([1.0, 2.0], requires_grad=True),))
    """,
    "gradcheck not reentrant": """
        import itertools
        calls = itertools.count()
        class NonDet(m.autograd.Function):
            @staticmethod
            def forward(ctx, a): return a * 2
            @staticmethod
            def backward(ctx, g): return g * (2 + next(calls) * 1e-9)
        ok = m.autograd.gradcheck(NonDet.apply, (x3,), nondet_tol=1e-5)
        ok_fast = m.autograd.gradcheck(NonDet.apply, (x3,), nondet_tol=1e-5, fast_mode=True)
        m.autograd.gradcheck(NonDet.apply, (x3,))
    """,
    "gradcheck stride 0": """
        e = m.tensor([1.0], dtype=m.float64).expand(3).detach().requires_grad_()
        m.autograd.gradcheck(lambda a: a * 2, (e,))
    """,
    "gradcheck stride 0 of an input not checked": """
        e = m.tensor([[1.0], [2.0]], dtype=m.float64).expand(2, 3)
        result = m.autograd.gradcheck(lambda a, c: a * c.sum(), (x3, e))
    """,
    "gradcheck numerical expected zero": "m.autograd.gradcheck(lambda a: a.detach() * 2, (x3,))",
    "gradcheck numerical expected zero fast": """
        m.autograd.gradcheck(lambda a: a.detach() * 2, (x3,), fast_mode=True)
    """,
    "gradcheck output beside a non-differentiable one": """
        result = (m.autograd.gradcheck(lambda a: (a * 2, a.detach() * 2), (x3,)),
                  m.autograd.gradcheck(lambda a: a.detach() * 0, (x3,)),
                  m.autograd.gradcheck(lambda a: (a * 2, a.long()), (x3,)))
    """,
    "gradcheck backward not multiplied by grad_output": """
        class Plus(m.autograd.Function):
            @staticmethod
            def forward(ctx, a): return a * 2
            @staticmethod
            def backward(ctx, g): return g * 2 + 1e-12
        m.autograd.gradcheck(Plus.apply, (x3,))
    """,
    "gradcheck undefined output grads": """
        class U(m.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.set_materialize_grads(False)
                return a * 2, a * 3
            @staticmethod
            def backward(ctx, g1, g2):
                if g1 is None and g2 is None:
                    raise RuntimeError("no gradient at all")
                return (0 if g1 is None else g1 * 2) + (0 if g2 is None else g2 * 3)
        ok = m.autograd.gradcheck(U.apply, (x3,), check_undefined_grad=False)
        m.autograd.gradcheck(U.apply, (x3,))
    """,
    "gradcheck calls fn with grad mode on": """
        seen = set()
        def fn(a):
            seen.add(m.is_grad_enabled()); return a * 2
        result = m.autograd.gradcheck(fn, (x3,)), sorted(seen)
    """,
    "gradcheck inputs as tensor, list, with numbers": """
        result = (m.autograd.gradcheck(lambda a: a * 2, x3),
                  m.autograd.gradcheck(lambda a: a * 2, [x3]),
                  m.autograd.gradcheck(lambda a, k: a * k, (x3, 3.0)),
                  m.autograd.gradcheck(lambda a: [a * 2, a.exp()], (x3,), fast_mode=True))
    """,
    "gradcheck no input requires grad": "m.autograd.gradcheck(lambda a: a * 2, (x3.detach(),))",
    "gradcheck without backward ad": """
        m.autograd.gradcheck(lambda a: a * 2, (x3,), check_backward_ad=False)
    """,
    "gradcheck non-contiguous input": """
        t = m.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=m.float64).t().detach().requires_grad_()
        result = m.autograd.gradcheck(lambda a: a.exp(), (t,))
    """,
    "gradgradcheck": """
        result = (m.autograd.gradgradcheck(lambda a: a ** 3, (x3,)),
                  m.autograd.gradgradcheck(WrongGrad.apply, (x3,)),
                  m.autograd.gradgradcheck(WrongDouble.apply, (x3,), raise_exception=False),
                  m.autograd.gradgradcheck(lambda a: a ** 3, (x3,),
                                           (m.ones(3, dtype=m.float64),)))
    """,
    "gradgradcheck wrong double backward": "m.autograd.gradgradcheck(WrongDouble.apply, (x3,))",
}

# Messages whose numbers are random (fast mode's random vectors, gradgradcheck's random
# grad_outputs): only their first line is compared.
FIRST_LINE_ONLY = {"gradgradcheck wrong double backward"}

HOOK_RESULTS = {
    "post: wrong size": ("post", "lambda gi, go: (m.ones(3), gi[1])"),
    "post: not a tensor": ("post", "lambda gi, go: (3, gi[1])"),
    "post: None drops": ("post", "lambda gi, go: (None, gi[1])"),
    "post: a list": ("post", "lambda gi, go: [gi[0], gi[1]]"),
    "post: wrong dtype": ("post", "lambda gi, go: (gi[0].double(), gi[1])"),
    "post: too many": ("post", "lambda gi, go: (gi[0], gi[1], gi[1])"),
    "pre: wrong size": ("pre", "lambda go: (m.ones(3),)"),
    "pre: not a tensor": ("pre", "lambda go: (3,)"),
    "pre: None drops": ("pre", "lambda go: (None,)"),
    "pre: a list": ("pre", "lambda go: [go[0] * 2]"),
    "pre: not a tuple": ("pre", "lambda go: go[0] * 2"),
    "pre: wrong dtype": ("pre", "lambda go: (go[0].double(),)"),
    "pre: too many": ("pre", "lambda go: (go[0], go[0])"),
    "tensor: a list": ("tensor", "lambda g: [g]"),
    "tensor: 0-d": ("tensor", "lambda g: m.tensor(1.0)"),
    "tensor: wrong dtype": ("tensor", "lambda g: g.double()"),
    "tensor: named hook": ("tensor", "named"),
    "leaf: wrong dtype": ("leaf", "lambda g: g.double()"),
    "tensor: a bool tensor": ("tensor", "lambda g: g > 0"),
    "pre: a meta tensor": ("pre", "lambda go: (m.ones(2, device='meta'),)"),
    "post: replaces None": ("post1", "lambda gi, go: (gi[0], gi[0])"),
}


def _hook_program(kind: str, hook: str) -> str:
    register = {"post": "y.grad_fn.register_hook", "post1": "y1.grad_fn.register_hook",
                "pre": "y.grad_fn.register_prehook", "tensor": "y.register_hook",
                "leaf": "x.register_hook"}[kind]
    return f"""
        def named(g):
            return m.ones(3)
        x = m.tensor([1.0, 2.0], requires_grad=True)
        w = m.tensor([3.0, 4.0], requires_grad=True)
        y = x * w
        y1 = x * 2
        {register}({hook})
        (y1 if "{kind}" == "post1" else y).sum().backward()
        result = x.grad if x.grad is None else x.grad.tolist(), w.grad and w.grad.tolist()
    """


PROGRAMS.update({f"hook result, {name}": _hook_program(*spec)
                 for name, spec in HOOK_RESULTS.items()})


def _norm(text: str) -> str:
    text = re.sub(r" \(Triggered internally at [^)]*\)", "", text)
    return text.replace("gradviz.", "torch.").rstrip()


def _plain(value: Any) -> Any:
    """Tensors and nodes as comparable plain values."""
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "tolist") and hasattr(value, "requires_grad"):
        return ("tensor", value.tolist())
    return value


def run(src: str, lib: Any) -> tuple[Any, list[tuple[str, str]]]:
    env: dict[str, Any] = {"m": lib, "np": np, "warnings": warnings}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec(textwrap.dedent(_PRELUDE), env)
        try:
            exec(textwrap.dedent(src), env)
            outcome: Any = ("ok", _plain(env.get("result")))
        except Exception as e:  # noqa: BLE001 - the outcome is what is compared
            outcome = (type(e).__name__, _norm(str(e)))
    shown = [(w.category.__name__, _norm(str(w.message)).split("\n")[2 if str(
                 w.message).startswith("\n\n") else 0])
             for w in caught if w.category in (UserWarning, FutureWarning)]
    return outcome, shown


def _same(gv_value: Any, th_value: Any) -> bool:
    if isinstance(th_value, float) and isinstance(gv_value, float):
        return bool(np.isclose(gv_value, th_value, rtol=1e-9, atol=1e-12, equal_nan=True))
    if isinstance(th_value, list) and isinstance(gv_value, list):
        return len(gv_value) == len(th_value) and all(map(_same, gv_value, th_value))
    return gv_value == th_value


@pytest.mark.parametrize("name", PROGRAMS)
def test_same_outcome_and_warnings_as_torch(name: str) -> None:
    src = PROGRAMS[name]
    (gv_kind, gv_value), gv_warnings = run(src, gradviz)
    (th_kind, th_value), th_warnings = run(src, torch)
    assert gv_kind == th_kind, (gv_kind, gv_value, th_kind, th_value)
    if gv_kind == "ok":
        assert _same(gv_value, th_value), (gv_value, th_value)
    elif name in FIRST_LINE_ONLY:
        assert gv_value.split("\n")[0] == th_value.split("\n")[0]
    else:
        assert gv_value.startswith(th_value), (gv_value, th_value)
    assert [k for k, _ in gv_warnings] == [k for k, _ in th_warnings], (gv_warnings, th_warnings)
    for (_, gv_text), (_, th_text) in zip(gv_warnings, th_warnings):
        assert gv_text == th_text, (gv_text, th_text)


def test_fast_mode_failure_reports_like_torch() -> None:
    """Fast mode's numbers are random on both sides; the message's layout is not."""
    src = "m.autograd.gradcheck(WrongGrad.apply, (x3,), fast_mode=True)"
    (gv_kind, gv_text), _ = run(src, gradviz)
    (th_kind, th_text), _ = run(src, torch)
    assert gv_kind == th_kind == "GradcheckError"

    def layout(text: str) -> list[str]:
        return [re.sub(r"-?\d+\.\d+(e-?\d+)?", "N", line) for line in text.split("\n")]

    assert layout(gv_text) == layout(th_text)
