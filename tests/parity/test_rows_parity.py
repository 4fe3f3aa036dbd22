"""Every row that generates public API matches torch's function of the same name, sample by
sample: values, gradients, the node's name and its ``_saved_*`` names, for the function, the
``Tensor`` method and the in-place method (on a non-leaf clone, as in-place ops require)."""

from __future__ import annotations

import zlib

import numpy as np
import pytest
import torch

import gradviz
from gradviz.ops import OPS

# (row, style) for every form a row generates.
FORMS = [(name, style) for name, op in sorted(OPS.items()) if op.function and op.samples
         for style, made in (("function", True), ("method", op.method), ("in place", op.inplace))
         if made]


def _saved(node: object) -> list[str]:
    return sorted(a for a in dir(node) if a.startswith(("_saved_", "_raw_saved_")))


def _call(mod: object, name: str, style: str, args: tuple, kwargs: dict) -> object:
    x, *rest = args
    if style == "function":
        return getattr(mod, name)(*args, **kwargs)
    if style == "method":
        return getattr(x, name)(*rest, **kwargs)
    return getattr(x * 1, name + "_")(*rest, **kwargs)


def _torch(a: object) -> object:
    if isinstance(a, gradviz.Tensor):
        return torch.tensor(a.detach().numpy(), requires_grad=a.requires_grad)
    return a


@pytest.mark.parametrize(("name", "style"), FORMS)
def test_row_matches_torch(name: str, style: str) -> None:
    op = OPS[name]
    for sample in op.samples:
        args, kwargs = sample.build(np.random.default_rng(zlib.crc32(name.encode())))
        targs = tuple(_torch(a) for a in args)
        out = _call(gradviz, op.function, style, args, kwargs)
        tout = _call(torch, op.function, style, targs, kwargs)
        np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-12)
        assert out.grad_fn.name() == tout.grad_fn.name()
        assert _saved(out.grad_fn) == _saved(tout.grad_fn)
        out.sum().backward()
        tout.sum().backward()
        for a, ta in zip(args, targs):
            if isinstance(a, gradviz.Tensor) and a.requires_grad:
                # (force: sgn's gradient is a ZeroTensor in torch)
                np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(force=True), rtol=1e-12,
                                           atol=1e-12)
