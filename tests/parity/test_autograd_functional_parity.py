"""torch.autograd.functional against gradviz.autograd.functional: the hard-coded CASES of
tests/test_autograd_functional.py derived again from torch, and the same functions of random
inputs compared value for value.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from _parity import sibling

import gradviz

CASES = sibling("test_autograd_functional")


@pytest.mark.parametrize(("src", "expected"), CASES.CASES, ids=[c[0] for c in CASES.CASES])
def test_hard_coded_cases_are_torchs(src: str, expected: str) -> None:
    assert CASES.run(src, torch) == expected


PROGRAMS = [
    ("jacobian", lambda m: (lambda t: (t.exp() @ t.T).tanh(),)),
    ("hessian", lambda m: (lambda t: (t.sin() * t).sum(),)),
    ("vjp", lambda m: (lambda t: t.sigmoid() * t, m.ones(2, 3, dtype=m.float64))),
    ("jvp", lambda m: (lambda t: t.softmax(dim=1), m.ones(2, 3, dtype=m.float64))),
    ("hvp", lambda m: (lambda t: (t.exp() * t.cos()).sum(), m.ones(2, 3, dtype=m.float64))),
    ("vhp", lambda m: (lambda t: (t ** 3).sum(), m.ones(2, 3, dtype=m.float64))),
]


@pytest.mark.parametrize(("name", "make"), PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_values_match_torch(name: str, make) -> None:
    y = np.random.default_rng(3).uniform(-1, 1, (2, 3))

    def result(m):
        functional = __import__(f"{m.__name__}.autograd.functional", fromlist=[name])
        out = getattr(functional, name)(*make(m)[:1], m.tensor(y), *make(m)[1:])
        return [t.numpy() for t in (out if isinstance(out, tuple) else (out,))]

    for ours, theirs in zip(result(gradviz), result(torch), strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize(("src", "expected"), CASES.BATCHED, ids=[c[0] for c in CASES.BATCHED])
def test_batched_cases_are_torchs(src: str, expected: str) -> None:
    assert CASES.run_batched(src, torch) == expected
