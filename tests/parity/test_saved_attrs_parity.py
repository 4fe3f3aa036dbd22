"""Saved attributes as PyTorch names and fills them: for the matrix products (whose nodes save
``*_sym_strides``, and sizes for inputs that need no gradient), every ``requires_grad`` mask and
transposed operands, gradviz's ``_saved_*`` / ``_raw_saved_*`` names and values are torch's; and
saved-tensor hooks see the same tensors in the same order."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest
import torch

import gradviz

RNG = np.random.default_rng(7)
ARRAYS = {"b": RNG.standard_normal(4), "A": RNG.standard_normal((2, 3)),
          "B": RNG.standard_normal((3, 4)), "At": RNG.standard_normal((3, 2)),
          "Bt": RNG.standard_normal((4, 3)), "v": RNG.standard_normal(3)}
PROGRAMS = {
    "mm": ("A", "B", "A.mm(B)"),
    "mm transposed": ("At", "Bt", "At.t().mm(Bt.t())"),
    "matmul": ("A", "B", "A @ B"),
    "addmm": ("b", "A", "B", "m.addmm(b, A, B)"),
    "addmm scaled": ("b", "A", "B", "m.addmm(b, A, B, beta=0.5, alpha=2.0)"),
    "linear": ("A", "Bt", "b", "m.nn.functional.linear(A, Bt, b)"),
    "mv": ("A", "v", "A.mv(v)"),
}


def _value(v: Any) -> Any:
    if isinstance(v, (torch.Tensor, gradviz.Tensor)):
        return v.detach().numpy().tolist()
    if isinstance(v, (tuple, list)):
        return tuple(v)
    return v


def _saved(node: Any) -> dict[str, Any]:
    return {a: _value(getattr(node, a)) for a in dir(node) if a.startswith("_saved_")}


def _raw(node: Any) -> list[str]:
    return sorted(a for a in dir(node) if a.startswith("_raw_saved_"))


def _rounded(t: Any) -> list:
    # float32 results of the two libraries may differ in the last bit
    return np.round(t.detach().numpy().astype(np.float64), 5).tolist()


CASES = [(name, mask) for name, (*names, _) in PROGRAMS.items()
         for mask in itertools.product((True, False), repeat=len(names)) if any(mask)]


@pytest.mark.parametrize(("name", "mask"), CASES, ids=[f"{n}-{m}" for n, m in CASES])
def test_saved_attributes_match_torch(name: str, mask: tuple) -> None:
    *names, expr = PROGRAMS[name]
    nodes = []
    for lib in (torch, gradviz):
        env = {n: lib.tensor(ARRAYS[n], requires_grad=r) for n, r in zip(names, mask)}
        out = eval(expr, {"m": lib, **env})  # noqa: S307 - our own expressions
        nodes.append(out.grad_fn)
    tn, gn = nodes
    assert gn.name() == tn.name()
    assert _saved(gn) == _saved(tn)
    assert _raw(gn) == _raw(tn)


@pytest.mark.parametrize("expr", ["a * b", "a.mm(b.t())", "(a * b).exp()", "a.pow(3) / b",
                                  "m.where(a > 0, a, b)", "m.addmm(c, a, b.t())"])
def test_saved_tensor_hooks_see_what_torch_packs(expr: str) -> None:
    logs = []
    for lib in (torch, gradviz):
        log: list = []
        a = lib.tensor([[1.0, -2.0], [3.0, 0.5]], requires_grad=True)
        b = lib.tensor([[0.5, 2.0], [-1.0, 4.0]], requires_grad=True) * 1
        c = lib.tensor([0.1, 0.2], requires_grad=True)

        def pack(t, log=log):
            log.append(("pack", _rounded(t), t.requires_grad,
                        None if t.grad_fn is None else t.grad_fn.name()))
            return t

        def unpack(t, log=log):
            log.append(("unpack", _rounded(t)))
            return t

        with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
            out = eval(expr, {"m": lib, "a": a, "b": b, "c": c})  # noqa: S307
        out.sum().backward()
        logs.append((log, _rounded(a.grad)))
    assert logs[0] == logs[1]
