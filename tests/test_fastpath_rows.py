"""Every row with generated code, on every one of its samples (``op.samples``): the generated
fast path (forward and node ``apply``/``release_variables``, gradviz/ops/generated/) makes what
the plain path makes (``general_dispatch`` and ``OpNode.apply``, what ``GRADVIZ_FAST=0`` runs):
values, dtypes, the node's class, ``next_functions``, saved values, gradients for the same
gradient of the output, version counters and the ``op`` event. The rows come from the table.

A row without samples (``add``, ``mul`` ... whose public forms take more than a row can say) is
compared on the hand-written programs tests/test_ops_gradcheck.py files under it, run through
the public API twice: as it is, and under :func:`plain_path` (what ``GRADVIZ_FAST=0`` runs,
switched in this process): values, the graph, every node's saved values, the inputs' gradients
and versions."""

from __future__ import annotations

import contextlib
import functools
import zlib
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from _graphs import graph_nodes, sig
from test_ops_gradcheck import CASES

import gradviz
from gradviz.autograd import events
from gradviz.ops import OPS, fastpath
from gradviz.ops.dispatch import OpNode, _GeneralOpNode, dispatch, general_dispatch

ROWS = sorted(name for name, op in OPS.items()
              if op.samples and (fastpath.eligible(op) or fastpath.has_node_methods(op)))


def _where(x: Any, args: tuple) -> Any:
    # a tensor of the call by its position; anything else as it is
    for i, a in enumerate(args):
        if x is a:
            return ("arg", i)
    if isinstance(x, gradviz.Tensor):  # another tensor (a keyword argument): its value
        return ("tensor", x.detach().numpy().tolist(), str(x.dtype))
    return x


def _saved(node: Any, args: tuple) -> dict:
    out = {}
    for name in sorted(a for a in dir(node) if a.startswith("_saved_")):
        v = getattr(node, name)
        if isinstance(v, gradviz.Tensor):
            v = (_where(v, args), v.detach().numpy().tolist(), str(v.dtype), v.requires_grad,
                 v.grad_fn is node)
        elif isinstance(v, tuple) and any(isinstance(t, gradviz.Tensor) for t in v):
            v = tuple(_where(t, args) if isinstance(t, gradviz.Tensor) else t for t in v)
        out[name] = v
    return out


def _edges(node: Any, args: tuple) -> list:
    found = []
    for fn, nr in node.next_functions:
        var = getattr(fn, "variable", None)
        found.append((fn.name() if fn is not None else None, nr,
                      _where(var, args) if var is not None else None))
    return found


def _run(op: Any, sample: Any, fast: bool) -> dict:
    args, kwargs = sample.build(np.random.default_rng(zlib.crc32(op.name.encode())))
    seen: list = []
    if op.random:  # the same draws on both paths (NOTE [random rows])
        kwargs.get("generator", gradviz.default_generator).manual_seed(0)
    listener = events.add_listener(lambda ev, data: seen.append((ev, data)))
    # A row generated from its signature takes its samples as its public function does
    # (``xlogy(2.0, y)``): that function, which reads ``op.fast`` at each call, runs them, the
    # fast path taken away for the plain run.
    public = getattr(gradviz, op.function, None) if op.signature is not None else None
    fast_path = op.fast
    try:
        if public is not None:
            op.fast = fast_path if fast else None
            out = public(*args, **kwargs)
        else:
            call = op.fast if fast and op.fast is not None else (dispatch if fast else
                                                                 general_dispatch)
            out = call(*args, **kwargs) if call is op.fast else call(op, *args, **kwargs)
    finally:
        op.fast = fast_path
        events.remove_listener(listener)
    outs = out if isinstance(out, tuple) else (out,)
    node = next(o.grad_fn for o in outs if isinstance(o, gradviz.Tensor)
                and o.grad_fn is not None)
    (ev, data), = [(e, d) for e, d in seen if e == "op"]
    got = {"values": [(o.detach().numpy(), str(o.dtype), o._version) for o in outs],
           "node": type(node).__name__, "edges": _edges(node, args), "saved": _saved(node, args),
           "versions": [a._version for a in args if isinstance(a, gradviz.Tensor)],
           "event": (data["name"], data["node"] is node,
                     [_where(x, args) for x in data["inputs"]],
                     [(k, _where(v, args)) for k, v in sorted(data["kwargs"].items())])}
    rng = np.random.default_rng(1)
    grads = [rng.standard_normal(shape).astype(dt) for shape, dt in node._out_meta]
    plain = _GeneralOpNode.apply if op.general else OpNode.apply
    apply = type(node).apply if fast else plain
    got["grads"] = [g if g is None else np.asarray(g) for g in apply(node, list(grads), False)]
    release = type(node).release_variables if fast else OpNode.release_variables
    got["released"] = release(node)
    return got


def _same(a: Any, b: Any) -> None:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        np.testing.assert_array_equal(a, b)
        assert np.asarray(a).dtype == np.asarray(b).dtype
    elif isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _same(x, y)
    elif isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _same(a[k], b[k])
    else:
        assert a == b or (a != a and b != b), (a, b)


def test_the_rows_with_generated_code_have_samples() -> None:
    # (a row without samples has none to compare on: 185 of the 314 rows with code have some)
    assert len(ROWS) >= 185


@pytest.mark.parametrize("name", ROWS)
def test_generated_code_makes_what_the_plain_path_makes(name: str) -> None:
    op = OPS[name]
    assert (op.fast is not None) == fastpath.eligible(op)
    for sample in op.samples:
        fast, plain = _run(op, sample, True), _run(op, sample, False)
        assert fast.keys() == plain.keys()
        for key in fast:
            try:
                _same(fast[key], plain[key])
            except AssertionError as e:
                raise AssertionError(f"{name} {sample}: {key} differs: {e}") from None


@contextlib.contextmanager
def plain_path() -> Iterator[None]:
    """Every row on the plain path, as under ``GRADVIZ_FAST=0``: its fast path is the general
    dispatch (the generated API calls ``op.fast``), its node class's methods ``OpNode``'s."""
    undo = []
    for op in OPS.values():
        if op.fast is not None:
            undo.append((op, "fast", op.fast))
            op.fast = functools.partial(general_dispatch, op)
        cls = op.node_cls
        for method in ("apply", "release_variables"):
            if cls is not None and method in cls.__dict__:
                undo.append((cls, method, cls.__dict__[method]))
                delattr(cls, method)
    try:
        yield
    finally:
        for owner, name, value in undo:
            setattr(owner, name, value)


PROGRAMS = [pytest.param(name, case, id=f"{name}: {case.id}")
            for name, cases in CASES.items() if name in OPS and not OPS[name].samples
            and (fastpath.eligible(OPS[name]) or fastpath.has_node_methods(OPS[name]))
            for case in cases]


def _program(name: str, case: Any) -> dict:
    inputs = case.inputs()
    if OPS[name].random:
        gradviz.manual_seed(0)
    out = case.fn(*inputs)
    outs = out if isinstance(out, tuple) else (out,)
    nodes = graph_nodes(out)
    got = {"values": [(o.detach().numpy(), str(o.dtype)) for o in outs],
           "graph": [sig(o) for o in outs],
           "saved": [(n.name(), _saved(n, inputs)) for n in nodes],
           "edges": [_edges(n, inputs) for n in nodes]}
    rng = np.random.default_rng(2)
    diff = [o for o in outs if o.requires_grad]
    if diff:
        gradviz.autograd.backward(diff, [gradviz.tensor(rng.standard_normal(o.shape),
                                                        dtype=o.dtype) for o in diff])
    got["grads"] = [None if x.grad is None else x.grad.numpy() for x in inputs
                    if isinstance(x, gradviz.Tensor)]
    got["versions"] = [x._version for x in inputs if isinstance(x, gradviz.Tensor)]
    return got


@pytest.mark.parametrize(("name", "case"), PROGRAMS)
def test_generated_code_runs_the_programs_as_the_plain_path(name: str, case: Any) -> None:
    fast = _program(name, case)
    with plain_path():
        plain = _program(name, case)
    for key in fast:
        try:
            _same(fast[key], plain[key])
        except AssertionError as e:
            raise AssertionError(f"{case.id}: {key} differs: {e}") from None


def test_the_plain_path_is_the_plain_path() -> None:
    x = gradviz.ones(2, requires_grad=True)
    with plain_path():
        y = x * x
        assert type(y.grad_fn).apply is OpNode.apply
    assert type(y.grad_fn).apply is not OpNode.apply


def test_every_differentiable_row_with_generated_code_is_compared() -> None:
    # (as test_ops_gradcheck counts them: a NotImplemented node has no derivative to compare)
    differentiable = {name for name, op in OPS.items()
                      if op.node is not None and op.node != "NotImplemented"
                      and not all(getattr(g, "not_implemented", False)
                                  for g in op.grads.values())}
    code = {name for name, op in OPS.items()
            if fastpath.eligible(op) or fastpath.has_node_methods(op)}
    compared = set(ROWS) | {p.values[0] for p in PROGRAMS}
    assert sorted((code & differentiable) - compared) == []
