"""gradviz.Generator, as torch.Generator: seeding, state, and ``generator=`` everywhere random
numbers are drawn. The numbers themselves are NumPy's, not PyTorch's; the API, the seeds and
the errors are torch 2.13's (tests/parity/test_generator_parity.py checks them against torch)."""

from __future__ import annotations

import numpy as np
import pytest

import gradviz
from gradviz import nn
from gradviz.utils.data import DataLoader, TensorDataset, random_split


def api(m) -> list:
    """What torch's Generator API says, with library ``m``."""
    g = m.Generator()
    out: list = [g.initial_seed(), str(g.device)]
    out.append(g.manual_seed(3) is g)
    out.append(g.initial_seed())
    out.append(m.manual_seed(1) is m.default_generator)
    out.append(m.initial_seed())
    state = g.get_state()
    out.append((str(state.dtype)[-5:], state.dim()))
    first = m.rand(3, generator=g)
    g.set_state(state)
    out.append(bool((m.rand(3, generator=g) == first).all()))
    for call in (lambda: m.Generator().manual_seed("x"), lambda: m.randperm(-1),
                 lambda: m.randperm(2.5)):
        try:
            call()
        except (RuntimeError, TypeError) as e:
            out.append((type(e).__name__, str(e)))
    out.append(sorted(m.randperm(5, generator=g).tolist()))
    return out


EXPECTED = [67280421310721, "cpu", True, 3, True, 1, ("uint8", 1), True,
            ("RuntimeError", "manual_seed expected a long, but got str"),
            ("RuntimeError", "Trying to create tensor with negative dimension -1: [-1]"),
            ("TypeError", "randperm(): argument 'n' (position 1) must be int, not float"),
            [0, 1, 2, 3, 4]]


def test_api_as_torch() -> None:
    assert api(gradviz) == EXPECTED


def _draws(g) -> list:
    return [gradviz.rand(2, generator=g).tolist(), gradviz.randn(2, generator=g).tolist(),
            gradviz.randint(0, 100, (3,), generator=g).tolist(),
            gradviz.randperm(4, generator=g).tolist(),
            gradviz.rand_like(gradviz.ones(2), generator=g).tolist(),
            gradviz.randn_like(gradviz.ones(2), generator=g).tolist(),
            gradviz.empty(3).uniform_(generator=g).tolist(),
            gradviz.empty(3).normal_(generator=g).tolist(),
            gradviz.empty(3).random_(10, generator=g).tolist(),
            nn.init.xavier_uniform_(gradviz.empty(2, 2), generator=g).tolist(),
            [p.indices for p in random_split(TensorDataset(gradviz.arange(6.0)), [3, 3],
                                             generator=g)],
            [b[0].tolist() for b in DataLoader(TensorDataset(gradviz.arange(6.0)),
                                               batch_size=3, shuffle=True, generator=g)]]


def test_every_random_function_draws_from_the_generator_it_is_given() -> None:
    gradviz.manual_seed(0)
    first = _draws(gradviz.Generator().manual_seed(42))
    gradviz.manual_seed(1)  # the default generator plays no part
    assert _draws(gradviz.Generator().manual_seed(42)) == first
    assert _draws(gradviz.Generator().manual_seed(43)) != first


def test_the_default_generator_keeps_its_streams() -> None:
    # manual_seed(s) seeds the default generator as NumPy's default_rng(s): seeded programs
    # written before Generator existed draw the same numbers.
    gradviz.manual_seed(5)
    assert gradviz.rand(3).numpy().tolist() == \
        np.random.default_rng(5).random(3).astype(np.float32).tolist()


def test_a_numpy_generator_is_accepted_and_anything_else_refused() -> None:
    a = gradviz.rand(2, generator=np.random.default_rng(1))
    assert a.tolist() == gradviz.rand(2, generator=np.random.default_rng(1)).tolist()
    with pytest.raises(TypeError, match="^rand\\(\\): argument 'generator' must be "
                                        "gradviz.Generator, not int$"):
        gradviz.rand(2, generator=3)
