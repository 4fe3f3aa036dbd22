"""A corpus of bad (and borderline) inputs, run on gradviz and on torch and compared.

Each snippet is a line of Python run with ``m`` bound to the library (``gradviz`` or ``torch``),
``F`` to its ``nn.functional``, ``np`` to NumPy and a few tensors made the same way on both:
``x`` (2, 3) float ones, ``g`` the same requiring grad, ``s`` a 0-d float, ``i`` an int64
vector, ``b`` a bool vector, ``e`` an empty (0, 3) tensor. The outcome of a snippet is "ok" or
the exception's type and first line. :func:`compare` sorts each snippet into

* ``same``: both ok, or both raise the same type and gradviz's text starts with torch's
  (gradviz may add a sentence saying what to do);
* ``same type``: the same exception type, another text;
* ``disagree``: one side raises and the other does not, or the types differ;
* ``internal``: gradviz raised something torch never raises for bad input (an exception class
  of NumPy's, an ``AttributeError``, a ``ZeroDivisionError`` ...), whatever torch did.

Run ``python tests/parity/bad_input.py`` for the table (it needs torch).
"""

from __future__ import annotations

import sys
import warnings
from collections import Counter
from typing import Any

import numpy as np

SNIPPETS: tuple[str, ...] = (
    # -- 0-d tensors and dims --------------------------------------------------------------------
    "s.sum(0)", "s.sum(-1)", "s.sum(1)", "s.mean(0)", "s.mean(-1)", "s.amax(0)", "s.amin(-1)",
    "s.squeeze(0)", "s.squeeze(-1)", "s.unsqueeze(0)", "s.unsqueeze(-1)", "s.unsqueeze(2)",
    "s.var(0)", "s.std(0)", "s.softmax(0)", "s.log_softmax(-1)", "s.max(0)", "s.min(0)",
    "s.argmax(0)", "s.prod(0)", "s.logsumexp(0)", "s.norm(dim=0)", "s.cumsum(0)",
    "m.gather(s, 0, m.tensor(0))", "s.split(1, 0)", "s.chunk(1, 0)", "s.flatten()",
    "s.transpose(0, -1)", "s.t()", "s.permute(())", "s.expand(3)", "s.view(1)", "s.view(-1)",
    "s.reshape(())", "s[None]", "s[...]", "s[0]", "s.item()", "s.tolist()", "s.unbind(0)",
    "m.stack([s, s])", "m.cat([s, s])", "s.select(0, 0)", "s.narrow(0, 0, 1)", "s.repeat(2)",
    "s.sum((0,))", "s.sum(())", "s.all(0)", "s.any(-1)", "s.index_select(0, m.tensor([0]))",
    # -- Python protocols ------------------------------------------------------------------------
    "int(x)", "float(x)", "bool(x)", "int(s)", "float(s)", "bool(s)", "complex(s)",
    "int(m.tensor([3]))", "float(m.tensor([2.5]))", "len(s)", "len(x)", "iter(s)",
    "x.__index__()", "m.tensor(3).__index__()", "[1, 2, 3][m.tensor(1)]", "x // 2", "x % 2",
    "2 // x", "2 % x", "i // 2", "i % 2", "x ** 2", "2 ** x", "-b", "~x", "~i", "x & x",
    "i & i", "i | 1", "i ^ i", "x ^ x", "b ^ b", "abs(x)", "round(s)", "divmod(x, 2)",
    "x < 'a'", "x == None", "x != None", "x + None", "x + 'a'", "x * [1, 2, 3]", "hash(x)",
    "x in x", "1.0 in x", "x.__bool__()", "list(x)", "list(s)", "reversed(x)", "x @ 2",
    "x[..., ...]", "x[..., 0, ...]", "x[None, ..., None]", "x[::-1]", "x[:, ::0]",
    "x[5]", "x[-3]", "x[:, 7]", "x[0, 0, 0]", "x['a']", "x[1.5]", "x[m.tensor(5)]",
    "x[m.tensor([0, 5])]", "x[m.tensor([True])]", "x[b]", "x[i.float()]", "x[[0, 1], [0]]",
    "x[m.tensor([[0]]), m.tensor([0, 1, 2])]", "x[0] = m.ones(4)", "x[0] = 'a'",
    "x[:, 0] = m.ones(2, 2)", "s[0] = 1", "x[b] = 1",
    # -- factories and arguments -----------------------------------------------------------------
    "m.ones(2, requires_grad='yes')", "m.ones(2, requires_grad=1)", "m.zeros(-1)",
    "m.ones(2, 3.0)", "m.ones((2, 3.5))", "m.ones('a')", "m.zeros(2, dtype='float')",
    "m.tensor([[1], [1, 2]])", "m.tensor('abc')", "m.tensor([1, 'a'])", "m.tensor(None)",
    "m.tensor([1.0], dtype=m.int64)", "m.arange(0, 10, 0)", "m.arange(10, 0)",
    "m.arange(0, 10, -1)", "m.linspace(0, 1, -1)", "m.eye(-1)", "m.full((2,), 'a')",
    "m.randint(5, 2, (3,))", "m.randint(0, 5, 3)", "m.rand(-2)", "m.randn(2, 3.0)",
    "m.empty(2, -3)", "m.ones(2).new_ones(3)", "m.tensor([1, 2]).float().requires_grad_('a')",
    "i.requires_grad_()", "m.tensor([1, 2], requires_grad=True)", "b.requires_grad_()",
    "m.ones(10**12)", "m.zeros(10**10, 10**10)", "m.ones(2**63)", "m.full((10**11,), 1.0)",
    # -- shapes ----------------------------------------------------------------------------------
    "x.view(2, 3.0)", "x.view(4)", "x.view(-1, -1)", "x.view(0, -1)", "x.view('a')",
    "x.view(m.float64)", "x.reshape(4)", "x.reshape(-1, -1)", "x.reshape(2, -1, 4)",
    "x.t().view(6)", "x.transpose(0, 5)", "x.transpose(0)", "x.permute(0)", "x.permute(0, 0)",
    "x.permute(0, 2)", "x.expand(4, 2)", "x.expand(2)", "x.expand(-1, -1, -1)",
    "x.expand(1, 2, 3)", "x.unsqueeze(5)", "x.unsqueeze(-4)", "x.squeeze(5)",
    "x.flatten(5)", "x.flatten(1, 0)", "x.repeat(2)", "x.repeat(-1, 1)", "x.chunk(0)",
    "x.split(0)", "x.split([1, 1])", "x.split([1, 1], 0)", "x.narrow(0, 5, 1)",
    "x.narrow(0, 0, 5)", "x.narrow(2, 0, 1)", "x.select(0, 5)", "x.select(5, 0)",
    "x.unbind(5)", "x.t().t().t()", "m.ones(2, 3, 4).t()",
    # -- reductions ------------------------------------------------------------------------------
    "x.sum(5)", "x.sum(-3)", "x.sum((0, 0))", "x.sum('a')", "x.mean(5)", "i.mean()",
    "i.var()", "b.sum()", "b.mean()", "x.max(5)", "e.max()", "e.min()", "e.amax()",
    "e.amax(0)", "e.max(0)", "e.max(1)", "e.argmax()", "e.sum()", "e.mean()", "e.prod()",
    "x.std(correction=3)", "x.var(unbiased=True, correction=1)", "x.norm('nuc')",
    "x.norm(p='a')", "x.logsumexp(5)", "x.softmax(5)", "x.softmax()", "x.argmax(5)",
    "x.all(5)", "x.prod(5)", "x.cumsum(5)",
    # -- binary ops and broadcasting -------------------------------------------------------------
    "x + m.ones(4)", "x * m.ones(2)", "x - m.ones(3, 2)", "x / m.ones(2, 3, 4)",
    "x + np.ones(3)", "np.ones(3) + x", "x * np.float64(2)", "x + m.ones(3, dtype=m.int64)",
    "b - b", "b - 1", "x - b", "i / 0", "i // 0", "i % 0", "x / 0", "s / 0",
    "m.maximum(x, 1)", "m.minimum(x, m.ones(4))", "m.where(x > 0, x, m.ones(4))",
    "m.where(x, x, x)", "m.where(b, 1, 2)", "m.where(x > 0, 1.0, 'a')",
    "x.masked_fill(m.ones(3, dtype=m.bool), 0)", "x.masked_fill(x, 0)",
    "x.masked_fill(x > 0, m.ones(2))", "x.clamp()", "x.clamp(1, 0)", "x.clamp(min='a')",
    "i.clamp(0.5)", "x.pow('a')", "m.pow(2, 'a')", "x.add(1, alpha='a')", "x.add(x, x)",
    "m.add(x)", "m.add()", "x.mul()", "x.eq(m.ones(4))", "x.allclose(m.ones(4))",
    "m.equal(x, m.ones(4))",
    # -- linear algebra --------------------------------------------------------------------------
    "x @ x", "m.mm(x, x)", "m.mm(x, m.ones(3))", "m.mm(x, i.view(2, 1))",
    "m.mm(x, m.ones(3, 2, dtype=m.float64))", "m.bmm(x, x)", "m.bmm(x[None], x[None])",
    "m.dot(x, x)", "m.dot(m.ones(3), m.ones(4))", "m.dot(m.ones(3), i.float())",
    "m.mv(x, m.ones(2))", "m.mv(x, x)", "m.matmul(s, x)", "m.matmul(m.ones(4), x)",
    "m.outer(x, x)", "m.addmm(m.ones(2), x, m.ones(3, 4))",
    # -- indexing ops ----------------------------------------------------------------------------
    "x.index_select(0, m.tensor([5]))", "x.index_select(0, m.tensor([0.0]))",
    "x.index_select(5, m.tensor([0]))", "x.gather(1, m.tensor([[5]]))",
    "x.gather(1, m.tensor([[0.0]]))", "x.gather(1, m.tensor([0]))",
    "x.scatter(1, m.tensor([[5]]), 1.0)", "x.scatter(1, m.tensor([[0]]), 'a')",
    "x.scatter_add(1, m.tensor([[0]]), m.ones(2))", "x.index_put((m.tensor([5]),), m.ones(3))",
    "m.cat([x, m.ones(3)])", "m.cat([x, m.ones(2, 4)], 0)", "m.cat([])", "m.cat(x)",
    "m.cat([x, x], 5)", "m.stack([x, m.ones(3, 2)])", "m.stack([])", "m.stack([x, x], 5)",
    "m.cat([x, i.view(1, 2)], 1)",
    # -- autograd --------------------------------------------------------------------------------
    "(g * 2).backward()", "x.backward()", "g.backward()", "g.sum().backward(m.ones(2))",
    "g.sum().backward(m.ones(()))", "g.sum().backward('a')", "g.numpy()", "g.add_(1)",
    "g.zero_()", "g.sum().grad_fn.next_functions[0][0]()", "g.grad.zero_()",
    "m.autograd.grad(g.sum(), x)", "m.autograd.grad(g.sum(), [])", "m.autograd.grad(x, g)",
    "m.autograd.grad(g.sum(), g, grad_outputs=m.ones(3))",
    "g.detach().requires_grad_(True).backward()",
    "g.retain_grad()", "x.retain_grad()", "g.register_hook(1)", "x.register_hook(print)",
    "g.sum().backward(); g.sum().backward()",
    "y = g.exp(); y.sum().backward(); y.sum().backward()",
    "y = g * 2; g.data.add_(1); y.sum().backward()",
    "y = g.sigmoid(); y.mul_(2); y.sum().backward()",
    "g.view(3, 2).add_(1)", "g[0].add_(1)", "h = g * 1; h.t().add_(1); h.sum().backward()",
    "g.requires_grad = False", "(g * 2).requires_grad = False", "x.grad = m.ones(2)",
    "g.grad = m.ones(2)", "g.grad = 1", "g.grad = m.ones(2, 3, dtype=m.float64)",
    "m.autograd.backward([g.sum(), g.sum()], [None])", "g.detach_()", "(g * 1).detach_()",
    # -- nn.functional ---------------------------------------------------------------------------
    "F.softmax(x, 5)", "F.log_softmax(x)", "F.relu(i)", "F.gelu(i)", "F.tanh(i)",
    "F.cross_entropy(x, m.tensor([0, 5]))", "F.cross_entropy(x, m.tensor([0.0, 1.0]))",
    "F.cross_entropy(x, m.tensor([0]))", "F.cross_entropy(x, m.tensor([0, 1]), reduction='x')",
    "F.nll_loss(x, m.tensor([0, 3]))", "F.nll_loss(x, m.tensor([0, -5]))",
    "F.linear(x, m.ones(4, 4))", "F.linear(x, m.ones(2, 3), m.ones(4))",
    "F.mse_loss(x, m.ones(3, 2))", "F.mse_loss(x, i.view(2, 1))",
    "F.binary_cross_entropy(x, m.ones(2, 3) * 2)", "F.binary_cross_entropy(x * 2, x)",
    "F.binary_cross_entropy_with_logits(x, m.ones(3))", "F.l1_loss(x, m.ones(4))",
    "F.dropout(x, 1.5)", "F.dropout(x, -0.1)", "F.embedding(m.tensor([5]), x)",
    "F.embedding(m.tensor([0.0]), x)", "F.layer_norm(x, (4,))", "F.layer_norm(x, 3)",
    "F.leaky_relu(x, 'a')", "x.sum(dim=None)",
    "m.nn.Linear(2, 3)(x)", "m.nn.Linear(-1, 3)", "m.nn.Linear(3, 2)(i.view(1, 2).float())",
    "m.nn.Sequential(m.nn.Linear(3, 2), 5)", "m.nn.Dropout(2)",
    "m.nn.Embedding(3, 2)(m.tensor([3]))",
    "m.optim.SGD([], lr=0.1)", "m.optim.SGD([x], lr=-1)", "m.optim.SGD([g], lr=0.1, momentum=-1)",
    "m.optim.Adam([g], lr=0.1, betas=(1.5, 0.9))", "m.optim.SGD(g, lr=0.1)",
    # -- dtypes and conversions ------------------------------------------------------------------
    "x.to('cuda')", "x.to('meta')", "x.to(5)", "x.to('float')", "x.type(m.int64)",
    "x.long().exp()", "i.exp()", "i.sqrt()", "b.abs()", "b.neg()", "i.sigmoid()",
    "x.numpy().dtype", "i.float().log()", "m.tensor([1, 2]).double().int().float()",
    "x.item()", "m.ones(1).item()", "e.item()", "x.tolist()",
    # -- added with issue #20: what the fixes above brought in -----------------------------------
    "(g // 2).grad_fn.name()", "(g // 2).sum().backward()", "(2 % g).sum().backward()",
    "(g % 2).grad_fn.name()", "(g % g).grad_fn.name()", "m.floor_divide(x, 0)",
    "m.remainder(i, m.tensor([0, 1]))", "b // b", "i & 1.5", "b & i", "2 | i", "~s",
    "m.bitwise_not(x)", "i.bitwise_and_(1.5)", "m.neg(b)", "'a' in x", "m.ones(2).flip(0, 0)",
    "x.flip(5)", "x.cumsum()", "g.cumsum(-1).grad_fn.name()", "x.type('a')", "x.type(5)",
    "m.tensor(3.).__index__()", "complex(x)", "x == 'a'", "x < None", "2 @ x",
    "m.ones(2).new_ones(2, 3.0)", "m.ones(2).new_full((2,), 'a')", "m.zeros(2, requires_grad=1)",
    "m.full((2,), 1.0, requires_grad='a')", "m.tensor([1.0], requires_grad='a')",
    "m.empty(2, requires_grad='a')", "m.rand(2, requires_grad='a')", "m.eye(2, -1)",
    "m.tensor([[1, 2], [1]])", "m.tensor([1.0, None])", "x.narrow(0, 1, -1)", "m.cat([x, s])",
    "x.expand(3, 3)", "x.repeat(2, -1)", "x.reshape(2, 3.0)", "x.expand(2, 3.0)",
    "g.sum().grad_fn(m.ones(()), m.ones(()))", "g.requires_grad = 'a'",
    "F.binary_cross_entropy(x * 0.5, -m.ones(2, 3))", "m.clamp(x, max='a')",
    "g.grad = m.ones(3, dtype=m.float64)",
)

# What torch raises for bad input; anything else from gradviz is an internal error (NumPy's
# AxisError is a ValueError and an IndexError subclass: caught by its module, below).
TORCH_TYPES = {"RuntimeError", "TypeError", "ValueError", "IndexError", "NotImplementedError",
               "OverflowError", "ZeroDivisionError", "KeyError", "AttributeError",
               "AssertionError", "StopIteration"}


def _setup(m: Any) -> dict[str, Any]:
    return {"m": m, "F": m.nn.functional, "np": np, "x": m.ones(2, 3),
            "g": m.ones(2, 3, requires_grad=True), "s": m.tensor(1.5),
            "i": m.tensor([1, 2]), "b": m.tensor([True, False]), "e": m.ones(0, 3)}


def outcome(m: Any, snippet: str) -> tuple[str, str, str]:
    """``("ok", "", "")`` or ``(exception type, first line of its text, its module)``."""
    env = _setup(m)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(compile(snippet, "<snippet>", "exec"), env)  # noqa: S102 - this file's corpus
    except Exception as exc:  # noqa: BLE001 - every outcome is recorded
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return type(exc).__name__, text, type(exc).__module__
    return "ok", "", ""


def classify(gv: tuple[str, str, str], th: tuple[str, str, str]) -> str:
    gtype, gtext, gmod = gv
    ttype, ttext, _ = th
    if gtype != "ok" and (gmod.startswith("numpy") or gtype not in TORCH_TYPES
                          or (gtype != ttype and gtype in {"AttributeError", "KeyError",
                                                           "ZeroDivisionError"})):
        return "internal"
    if gtype == ttype == "ok":
        return "same"
    if gtype != ttype:
        return "disagree"
    # torch's first line, with torch's module name spelled gradviz's
    expected = ttext.replace("torch.", "gradviz.")
    return "same" if gtext.startswith(expected) or gtext.startswith(ttext) else "same type"


def compare(gradviz_mod: Any, torch_mod: Any) -> dict[str, tuple[str, tuple, tuple]]:
    """``{snippet: (class, gradviz outcome, torch outcome)}`` for the whole corpus."""
    result = {}
    for snippet in SNIPPETS:
        gv, th = outcome(gradviz_mod, snippet), outcome(torch_mod, snippet)
        result[snippet] = (classify(gv, th), gv, th)
    return result


def main() -> None:
    import torch

    import gradviz

    result = compare(gradviz, torch)
    counts = Counter(c for c, _, _ in result.values())
    width = max(len(s) for s in result)
    for snippet, (cls, gv, th) in result.items():
        if cls != "same" or "-v" in sys.argv:
            print(f"{cls:9} {snippet:{width}}  gradviz: {gv[0]}: {gv[1][:70]}")
            print(f"{'':9} {'':{width}}  torch:   {th[0]}: {th[1][:70]}")
    print(f"\n{len(result)} snippets: " + ", ".join(f"{k} {v}" for k, v in counts.most_common()))


if __name__ == "__main__":
    main()
