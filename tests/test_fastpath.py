"""The fast paths (gradviz/ops/fastpath.py) make exactly what the general dispatch makes: the
same values, dtype, node class, next_functions, saved values and ``op`` event, and they hand
every call they do not take to the general path."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradviz
from gradviz.autograd import events
from gradviz.ops import OPS
from gradviz.ops.dispatch import general_dispatch
from gradviz.ops.fastpath import eligible

RNG = np.random.default_rng(3)


def leaf(*shape: int, dtype: Any = np.float64) -> gradviz.Tensor:
    return gradviz.tensor(RNG.uniform(0.5, 1.5, shape).astype(dtype), requires_grad=True)


# (row, args builder, kwargs): calls of the shapes the fast paths take.
CALLS = [
    ("mul", lambda: (leaf(3, 4), leaf(3, 4)), {}),
    ("mul", lambda: (leaf(3, 4), 1.5), {}),
    ("mul", lambda: (leaf(3, 4, dtype=np.float32), 2), {}),
    ("add", lambda: (leaf(3, 4), leaf(3, 4).detach()), {"alpha": 2}),
    ("sub", lambda: (leaf(4), 0.5), {"alpha": 1}),
    ("div", lambda: (leaf(2, 2), leaf(2, 2)), {}),
    ("tanh", lambda: (leaf(5),), {}),
    ("exp", lambda: (leaf(5) * 1,), {}),
    ("sigmoid", lambda: (leaf(2, 3),), {}),
    ("relu", lambda: (leaf(2, 3) - 1,), {}),
    ("softmax", lambda: (leaf(2, 3),), {"dim": 1}),
    ("pow", lambda: (leaf(3),), {"exponent": 2.5}),
    ("sum", lambda: (leaf(2, 3),), {}),
    ("mean_dim", lambda: (leaf(2, 3),), {"dim": (1,), "keepdim": True}),
    ("mm", lambda: (leaf(2, 3), leaf(3, 4)), {}),
    ("maximum", lambda: (leaf(3), leaf(3)), {}),
    ("leaky_relu", lambda: (leaf(3) - 1,), {"negative_slope": 0.1}),
    ("where", lambda: (leaf(3), leaf(3)), {"condition": gradviz.tensor([True, False, True])}),
    # views of one input (the result shares the input's storage and version)
    ("t", lambda: (leaf(2, 3),), {}),
    ("t", lambda: (gradviz.nn.Parameter(leaf(2, 3).detach()),), {}),  # a Tensor subclass
    ("transpose", lambda: (leaf(2, 3, 4) * 1,), {"dim0": 0, "dim1": 2}),
    ("view", lambda: (leaf(2, 3),), {"size": (3, 2)}),
    ("select", lambda: (leaf(2, 3),), {"dim": 1, "index": 2}),
    ("slice", lambda: (leaf(4, 3),), {"dim": 0, "start": 1, "end": 3, "step": 1}),
    ("unsqueeze", lambda: (leaf(3),), {"dim": 0}),
    # -- more (opsrand): random rows, both paths under the same seed (NOTE [random rows])
    ("bernoulli", lambda: (leaf(2, 3) / 2,), {}),
    ("normal_tensor_float", lambda: (leaf(2, 3),), {"std": 0.5}),
    ("normal_tensor_tensor", lambda: (leaf(2, 3), leaf(2, 3)), {}),
    ("poisson", lambda: (leaf(4),), {"generator": gradviz.Generator()}),
]


def _saved(node: Any) -> dict[str, Any]:
    out = {}
    for name in sorted(a for a in dir(node) if a.startswith("_saved_")):
        v = getattr(node, name)
        # a saved output must stay connected to its node (create_graph differentiates it)
        out[name] = ((v.detach().numpy().tolist(), v.requires_grad, v.grad_fn is node)
                     if isinstance(v, gradviz.Tensor) else v)
    return out


def _run(call: Any, row: str, args: tuple, kwargs: dict) -> tuple:
    seen: list = []
    if OPS[row].random:  # the same draws on both paths (NOTE [random rows])
        gen = kwargs.get("generator", gradviz.default_generator)
        gen.manual_seed(0)
    listener = events.add_listener(lambda ev, data: seen.append((ev, data)))
    try:
        out = call(OPS[row], *args, **kwargs)
    finally:
        events.remove_listener(listener)
    node = out.grad_fn
    (ev, data), = seen
    view = (out._base is (args[0]._base if args[0]._base is not None else args[0]),
            out._version_counter is args[0]._version_counter,
            out._view_meta is not None and out._view_meta.chain) if OPS[row].view else None
    return (out.detach().numpy(), out.dtype, type(node), node.next_functions, _saved(node),
            (ev, data["name"], data["node"] is node, data["inputs"], data["kwargs"]), view)


@pytest.mark.parametrize(("row", "make", "kwargs"), CALLS, ids=[c[0] for c in CALLS])
def test_fast_path_makes_what_the_general_path_makes(row: str, make: Any, kwargs: dict) -> None:
    assert OPS[row].fast is not None, f"{row} has no fast path"
    args = make()
    fast = _run(lambda op, *a, **k: op.fast(*a, **k), row, args, kwargs)
    general = _run(general_dispatch, row, args, kwargs)
    np.testing.assert_array_equal(fast[0], general[0])
    assert fast[1:4] == general[1:4]
    assert fast[6] == general[6]  # a view: of the same base, sharing its version counter
    assert fast[4] == general[4]
    assert fast[5][:3] == general[5][:3] and fast[5][3] == general[5][3]


def test_calls_the_fast_path_does_not_take_go_the_general_way() -> None:
    x = gradviz.ones(2, 3, requires_grad=True)
    # broadcasting, an integer tensor, a NumPy operand: the general path's results and errors
    assert (x * gradviz.ones(3)).grad_fn._in_meta is None  # (2, 3) * (3,): other needs no grad
    y = gradviz.ones(3, requires_grad=True)
    assert (x * y).grad_fn._in_meta[1][0] == (3,)
    assert (gradviz.tensor([1, 2]) * 2.5).dtype == gradviz.float32
    with pytest.raises(RuntimeError, match="must match the size"):
        x * gradviz.ones(4, requires_grad=True)


def test_a_view_made_by_the_fast_path_follows_its_base() -> None:
    base = leaf(2, 3) * 1
    v = base.t()
    assert OPS["t"].fast.__name__ == "t_fast" and v.grad_fn.name() == "TBackward0"
    base.mul_(2)  # the base changes: the view's history is regenerated, as PyTorch does
    assert v.grad_fn.name() == "AsStridedBackward0"
    v.sum().backward()
    with gradviz.no_grad():  # made with grad mode off: requires grad, no node
        w = leaf(2, 3).t()
    assert w.requires_grad and w.grad_fn is None


def test_every_eligible_row_has_a_fast_path() -> None:
    assert all((op.fast is not None) == eligible(op) for op in OPS.values())
    assert sum(op.fast is not None for op in OPS.values()) > 40


def test_a_result_broadcast_by_a_keyword_takes_the_general_path() -> None:
    t = gradviz.ones(3, requires_grad=True)
    out = gradviz.where(gradviz.ones(2, 3) > 0, t, 0.0)  # condition (2, 3) broadcasts t (3,)
    assert out.shape == (2, 3) and out.grad_fn._in_meta[0][0] == (3,)
    out.sum().backward()
    np.testing.assert_array_equal(t.grad.numpy(), [2.0, 2.0, 2.0])
