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


MULTINOMIAL_ERRORS = [  # torch 2.13's texts
    ("m.multinomial(m.tensor([-1.0, 1.0]), 1)",
     "probability tensor contains either `inf`, `nan` or element < 0"),
    ("m.multinomial(m.zeros(3), 1)",
     "invalid multinomial distribution (sum of probabilities <= 0)"),
    ("m.multinomial(m.tensor([0.1, 0.9]), 0)", "cannot sample n_sample <= 0 samples"),
    ("m.multinomial(m.ones(2, 2, 2), 1)", "prob_dist must be 1 or 2 dim"),
    ("m.multinomial(m.tensor([1, 2]), 1)",
     "multinomial only supports floating-point dtypes for input, got: Long"),
    ("m.multinomial(m.tensor([0.1, 0.0, 0.9]), 4)",
     "cannot sample n_sample > prob_dist.size(-1) samples without replacement"),
]


def multinomial_error(src: str, m) -> str:
    with pytest.raises(RuntimeError) as info:
        eval(src, {"m": m})  # noqa: S307 - sources above
    return str(info.value)


@pytest.mark.parametrize(("src", "message"), MULTINOMIAL_ERRORS,
                         ids=[c[0] for c in MULTINOMIAL_ERRORS])
def test_multinomial_errors_as_torch(src: str, message: str) -> None:
    assert multinomial_error(src, gradviz) == message


def test_multinomial_draws_by_weight() -> None:
    g = gradviz.Generator().manual_seed(0)
    counts = np.bincount(gradviz.multinomial(gradviz.tensor([1.0, 3.0]), 4000, True,
                                             generator=g).numpy(), minlength=2)
    assert 900 < counts[0] < 1100  # a quarter of the draws
    rows = gradviz.tensor([[0.0, 1.0, 0.0], [1.0, 1.0, 1.0]]).multinomial(3, generator=g)
    assert rows.dtype is gradviz.int64 and rows.shape == (2, 3)
    assert rows[0, 0].item() == 1  # the only category with weight comes first
    assert sorted(rows[1].tolist()) == [0, 1, 2]  # without replacement: each once
