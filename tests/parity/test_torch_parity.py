"""gradviz against a live torch: random programs give the same values, gradients, graphs and
saved values; the op-level expectations hard-coded elsewhere in the suite are re-derived here.

Known, deliberate differences are handled explicitly (search for NOTE):
* NOTE [saved extras]: attributes only gradviz exposes (gradviz's
  ``ToCopyBackward0._saved_self_dtype``, ``CopyBackwards._saved_src_sym_sizes``) are not compared.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
from _parity import sibling

import gradviz

TOL = dict(rtol=1e-10, atol=1e-10)
N_PROGRAMS = 150


# -- random programs, as source text both libraries run --------------------------------------------
class _Gen:
    """Builds one random program: lines of ``t = <expr>`` over leaves ``a0, a1, ...``."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.leaves: dict[str, np.ndarray] = {}
        self.lines: list[str] = []

    def pick(self, options: list) -> Any:
        return options[self.rng.integers(len(options))]

    def leaf(self, shape: tuple[int, ...]) -> str:
        name = f"a{len(self.leaves)}"
        mag = self.rng.uniform(0.1, 1.0, shape)
        self.leaves[name] = mag * np.where(self.rng.random(shape) < 0.5, -1.0, 1.0)
        return name

    def bcast(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        drop = int(self.rng.integers(0, len(shape) + 1))
        out = tuple(1 if self.rng.random() < 0.4 else n for n in shape[drop:])
        if drop == 0 and len(shape) < 3 and self.rng.random() < 0.2:
            out = (int(self.rng.integers(2, 4)),) + out
        return out

    def program(self) -> tuple[str, dict[str, np.ndarray]]:
        shape = tuple(int(n) for n in self.rng.integers(1, 4, self.rng.integers(0, 4)))
        self.lines.append(f"t = {self.leaf(shape)}")
        for _ in range(int(self.rng.integers(1, 7))):
            shape = self.step(shape)
        return "\n".join(self.lines), self.leaves

    def step(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        kind = self.pick(["unary", "binary", "binary", "reduce", "shape", "matmul", "inplace"])
        nd = len(shape)
        if kind == "unary":
            self.lines.append("t = " + self.pick([
                "-t", "t.tanh()", "t.sigmoid()", "t.tanh().exp()", "t.relu()", "m.relu(t)",
                "(t * t + 1).log()", "(t * t + 1).reciprocal()", "(t * t + 0.5) ** 1.5",
                "t ** 2", "t ** 0", "t ** 1", "2 - t", "2.5 * t", "t * 3", "t / 2",
                "2 / (t * t + 1)", "2 ** t.tanh()", "t - 0.5", "1 + t", "t.clone()",
                "m.neg(t)", "m.sigmoid(t)", "t.float().double()",
            ]))
            return shape
        if kind in ("binary", "inplace"):
            other = self.bcast(shape)
            o = self.leaf(other)
            out = tuple(np.broadcast_shapes(shape, other))
            if kind == "inplace":
                if out != shape:
                    return shape
                self.lines.append("t = t.clone()." + self.pick([
                    f"add_({o})", f"sub_({o})", f"mul_({o})", f"div_({o} * {o} + 0.5)",
                    f"copy_({o})", f"add_({o}, alpha=-2)"]))
                return shape
            self.lines.append("t = " + self.pick([
                f"t + {o}", f"t - {o}", f"{o} - t", f"t * {o}", f"t / ({o} * {o} + 0.5)",
                f"{o} / (t * t + 0.5)", f"(t * t + 0.5) ** {o}", f"m.where({o} > 0, t, {o})",
                f"m.where({o} > 0, t, 0.0)", f"m.add(t, {o}, alpha=2)",
                f"m.sub(t, {o}, alpha=0.5)", f"m.rsub(t, {o})", f"m.mul({o}, t)",
            ]))
            return out
        if kind == "reduce":
            fn = self.pick(["sum", "mean"])
            if nd == 0 or self.rng.random() < 0.25:
                self.lines.append(f"t = t.{fn}()")
                return ()
            k = int(self.rng.integers(1, nd + 1))
            dims = [int(d) - (nd if self.rng.random() < 0.5 else 0)
                    for d in self.rng.permutation(nd)[:k]]
            keep = bool(self.rng.random() < 0.5)
            arg = str(dims[0]) if k == 1 and self.rng.random() < 0.5 else str(tuple(dims))
            self.lines.append(f"t = t.{fn}({arg}, keepdim={keep})")
            norm = {d % nd for d in dims}
            if keep:
                return tuple(1 if i in norm else n for i, n in enumerate(shape))
            return tuple(n for i, n in enumerate(shape) if i not in norm)
        if kind == "shape":
            options = ["unsqueeze", "flatten", "view", "expand-new"]
            if nd >= 2:
                options += ["transpose", "permute", "reshape-T"]
            if nd == 2:
                options += [".T"]
            if nd <= 2:
                options += ["t"]
            if 1 in shape:
                options += ["squeeze", "squeeze-dim", "expand"]
            op = self.pick(options)
            if op == "unsqueeze":
                d = int(self.rng.integers(-nd - 1, nd + 1))
                self.lines.append(f"t = t.unsqueeze({d})")
                return tuple(np.expand_dims(np.zeros(shape), d).shape)
            if op == "flatten":
                self.lines.append("t = t.reshape(-1)")
                return (int(np.prod(shape)),)
            if op == "expand-new":  # a new leading dimension, whatever the shape
                self.lines.append(f"t = t.expand({', '.join(map(str, (2,) + shape))})")
                return (2,) + shape
            if op == "view":  # appending a size-1 dim is a valid view whatever the strides
                self.lines.append(f"t = t.view({', '.join(map(str, shape + (1,)))})")
                return shape + (1,)
            if op == "transpose":
                d0, d1 = (int(x) for x in self.rng.integers(-nd, nd, 2))
                self.lines.append(f"t = t.transpose({d0}, {d1})")
                s = list(shape)
                s[d0], s[d1] = s[d1], s[d0]
                return tuple(s)
            if op == "permute":
                perm = [int(p) for p in self.rng.permutation(nd)]
                self.lines.append(f"t = t.permute{tuple(perm)}")
                return tuple(shape[p] for p in perm)
            if op == "reshape-T":
                self.lines.append("t = t.transpose(0, 1).reshape(-1)")
                return (int(np.prod(shape)),)
            if op in (".T", "t"):
                self.lines.append("t = t.T" if op == ".T" else "t = t.t()")
                return shape[::-1]
            ones = [i for i, n in enumerate(shape) if n == 1]
            if op == "squeeze":
                self.lines.append("t = t.squeeze()")
                return tuple(n for n in shape if n != 1)
            if op == "squeeze-dim":
                d = int(self.pick(ones + [0]))
                self.lines.append(f"t = t.squeeze({d})")
                return tuple(np.squeeze(np.zeros(shape), d).shape) if shape[d] == 1 else shape
            size = list(shape)
            size[int(self.pick(ones))] = int(self.rng.integers(2, 4))
            if self.rng.random() < 0.3:
                size = [int(self.rng.integers(1, 3))] + size
            self.lines.append(f"t = t.expand{tuple(size)}")
            return tuple(size)
        # matmul with a new leaf
        if nd not in (1, 2):
            return shape
        other = (shape[-1],) if self.rng.random() < 0.5 else (shape[-1],
                                                              int(self.rng.integers(1, 4)))
        o = self.leaf(other)
        self.lines.append("t = " + self.pick([f"t @ {o}", f"m.matmul(t, {o})"]))
        return (np.zeros(shape) @ np.zeros(other)).shape


def _run(src: str, leaves: dict[str, np.ndarray], lib: Any) -> tuple[Any, dict[str, Any]]:
    env = {name: lib.tensor(a, dtype=lib.float64, requires_grad=True)
           for name, a in leaves.items()}
    scope = {"m": lib, **env}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(src, scope)  # noqa: S102 - programs generated by this module
    return scope["t"], env


PROGRAMS = [_Gen(seed).program() for seed in range(N_PROGRAMS)]
FOUNDATION_OPS = [
    "add", "sub", "rsub", "rsub_tensor", "mul", "div", "neg", "reciprocal", "pow", "pow_tensor",
    "pow_scalar_base", "exp", "log", "tanh", "sigmoid", "relu", "sum", "sum_dim", "mean",
    "mean_dim", "view", "_unsafe_view", "clone", "transpose", "t", "permute", "expand",
    "unsqueeze", "squeeze", "squeeze_dim", "squeeze_dim_", "to_copy", "mm", "dot", "mv", "where",
    "zero_", "fill_", "copy_",
]


# -- comparing graphs ------------------------------------------------------------------------------
def _edges(node: Any) -> list:
    return list(node.next_functions)


# NOTE [saved extras]: attributes only gradviz exposes (it keeps the dtype and the source's
# sizes where PyTorch's C++ node reads them from elsewhere).
_GRADVIZ_EXTRAS = {("ToCopyBackward0", "_saved_self_dtype"),
                   ("CopyBackwards", "_saved_src_sym_sizes")}


def _compare_saved(tn: Any, gn: Any, where: str) -> None:
    names_t = {a for a in dir(tn) if a.startswith(("_saved_", "_raw_saved_"))}
    names_g = {a for a in dir(gn) if a.startswith(("_saved_", "_raw_saved_"))
               and (type(gn).__name__, a) not in _GRADVIZ_EXTRAS}
    # Every name torch exposes, strides included, and which of them are filled.
    assert names_t == names_g, (where, gn.name(), names_t ^ names_g)
    for attr in sorted(a for a in names_t if a.startswith("_saved_")):
        tv, gv = getattr(tn, attr), getattr(gn, attr)
        label = f"{where} {gn.name()}.{attr}"
        assert (tv is None) == (gv is None), (label, tv, gv)
        if tv is None:
            continue
        if isinstance(tv, torch.Tensor):
            assert isinstance(gv, gradviz.Tensor), label
            assert tuple(tv.shape) == gv.shape, label
            assert str(tv.dtype)[6:] == gv.dtype.name, label
            np.testing.assert_allclose(gv.detach().numpy(), tv.detach().numpy(), err_msg=label,
                                       **TOL)
            continue
        # Dims as written, negative ones read back as uint64, in both (NOTE [saved as given]).
        if isinstance(tv, (tuple, list)):
            assert tuple(tv) == tuple(gv), label
        else:
            assert tv == gv and type(tv) is type(gv), (label, tv, gv)


def compare_graphs(t_out: Any, g_out: Any, t_env: dict, g_env: dict, where: str) -> int:
    """Walk both graphs in lockstep (iteratively): same names, edges, input_nr, leaves, saved
    values. Returns the number of nodes compared."""
    if t_out.grad_fn is None or g_out.grad_fn is None:
        assert t_out.grad_fn is None and g_out.grad_fn is None, where
        return 0
    leaf_of_t = {id(v): k for k, v in t_env.items()}
    leaf_of_g = {id(v): k for k, v in g_env.items()}
    seen: set[int] = set()
    stack = [(t_out.grad_fn, g_out.grad_fn)]
    count = 0
    while stack:
        tn, gn = stack.pop()
        if id(tn) in seen:
            continue
        seen.add(id(tn))
        count += 1
        assert tn.name() == gn.name(), (where, tn.name(), gn.name())
        if tn.name() == "torch::autograd::AccumulateGrad":
            assert leaf_of_t[id(tn.variable)] == leaf_of_g[id(gn.variable)], where
            continue
        _compare_saved(tn, gn, where)
        te, ge = list(tn.next_functions), _edges(gn)
        assert len(te) == len(ge), (where, gn.name(), te, ge)
        for (tc, tnr), (gc, gnr) in zip(te, ge, strict=True):
            assert (tc is None) == (gc is None), (where, gn.name())
            assert tnr == gnr, (where, gn.name())
            if tc is not None:
                stack.append((tc, gc))
    return count


# -- the tests -------------------------------------------------------------------------------------
@pytest.mark.parametrize(("src", "leaves"), PROGRAMS, ids=[f"prog{i}" for i in range(N_PROGRAMS)])
def test_random_program(src: str, leaves: dict[str, np.ndarray]) -> None:
    t_out, t_env = _run(src, leaves, torch)
    g_out, g_env = _run(src, leaves, gradviz)
    where = "\n" + src
    # forward
    assert g_out.shape == tuple(t_out.shape), where
    assert g_out.dtype.name == str(t_out.dtype)[6:], where
    assert g_out.requires_grad == t_out.requires_grad and g_out.is_leaf == t_out.is_leaf, where
    assert g_out._version == t_out._version, where
    np.testing.assert_allclose(g_out.detach().numpy(), t_out.detach().numpy(), err_msg=where,
                               **TOL)
    # graph (before backward frees the saved values)
    compare_graphs(t_out, g_out, t_env, g_env, where)
    assert repr(g_out.grad_fn).split(" ")[0] == repr(t_out.grad_fn).split(" ")[0], where
    # backward with the same upstream gradient
    seed = np.random.default_rng(len(src)).standard_normal(tuple(t_out.shape))
    t_out.backward(torch.tensor(seed))
    g_out.backward(gradviz.tensor(seed, dtype=gradviz.float64))
    for name in leaves:
        tg, gg = t_env[name].grad, g_env[name].grad
        assert (tg is None) == (gg is None), (where, name)
        if tg is not None:
            assert gg.dtype is gradviz.float64 and gg.shape == tuple(tg.shape), (where, name)
            np.testing.assert_allclose(gg.numpy(), tg.numpy(), err_msg=f"{where}\n{name}", **TOL)


def test_programs_cover_the_op_table() -> None:
    """The random battery reaches every differentiable node of the table (so it stays useful)."""
    from gradviz.ops.derivatives import OPS

    reached: set[str] = set()
    for src, leaves in PROGRAMS:
        g_out, _ = _run(src, leaves, gradviz)
        seen: set[int] = set()
        stack = [g_out.grad_fn]
        while stack:
            n = stack.pop()
            if n is not None and id(n) not in seen:
                seen.add(id(n))
                reached.add(n.name())
                stack.extend(c for c, _ in n.next_functions)
    # The foundation ops this generator is written for (fill_/zero_ cut the graph, so they are
    # only in EXPLICIT); other ops have parity tests of their own.
    wanted = {OPS[name].node for name in FOUNDATION_OPS} - {"FillBackward2", "ZeroBackward0"}
    wanted = {"torch::autograd::CopyBackwards" if w == "CopyBackwards" else w for w in wanted}
    missing = wanted - reached
    assert not missing, f"no random program records {sorted(missing)}"


EXPLICIT = [
    "t = a0.reshape(1, 3).T",
    "t = 2 - a0",
    "t = 2 / a0",
    "t = 2 ** a0",
    "t = a0 ** a1",
    "t = a0 ** 2",
    "t = 2 + a0",
    "t = 2 * a0",
    "t = a0.reshape(3, 1).t().reshape(3)",
    "t = a0 @ a2",
    "t = a2.t() @ a0",
    "t = a0 @ a0",
    "t = m.rsub(a0, a1, alpha=3)",
    "t = a0.clone().copy_(a1)",
    "t = a0.clone().zero_()",
    "t = a0.clone().fill_(2.0)",
    "t = a0.clone()\nt += a1\nt *= 2\nt /= a1 * a1 + 1\nt -= 1",
    "t = a0.float()",
    "t = a0.unsqueeze(-1).squeeze(-1)",
    "t = (a2 @ a2.t()).sum((0, -1), keepdim=True).mean()",
    "t = m.where(a0 > 0, a0, a1)",
    "t = (a0 * a1).sum() + (a0 * a1).mean()",
]


@pytest.mark.parametrize("src", EXPLICIT)
def test_explicit_program(src: str) -> None:
    rng = np.random.default_rng(3)
    leaves = {"a0": rng.uniform(0.5, 2, 3), "a1": rng.uniform(0.5, 2, 3),
              "a2": rng.uniform(-1, 1, (3, 2))}
    test_random_program(src, {k: v for k, v in leaves.items() if k in src})


# -- repr and dtypes against torch -----------------------------------------------------------------
def _random_tensors(n: int) -> list[tuple[np.ndarray, str, bool]]:
    rng = np.random.default_rng(2024)
    out = []
    for _ in range(n):
        shape = tuple(int(s) for s in rng.integers(0 if rng.random() < 0.05 else 1, 14,
                                                   rng.integers(0, 4)))
        kind = str(rng.choice(["float32", "float64", "int64", "bool"]))
        a = rng.standard_normal(shape) * 10.0 ** rng.integers(-9, 11)
        if rng.random() < 0.3:
            a = np.round(a)
        if rng.random() < 0.1 and a.size:
            a.flat[0] = np.nan
        if rng.random() < 0.1 and a.size:
            a.flat[-1] = -np.inf
        if kind == "int64":
            a = np.nan_to_num(a, nan=0, posinf=0, neginf=0).clip(-1e15, 1e15).astype(np.int64)
        elif kind == "bool":
            a = a > 0
        out.append((np.asarray(a, dtype=kind), kind, kind.startswith("float") and
                    bool(rng.random() < 0.5)))
    return out


@pytest.mark.parametrize(("arr", "kind", "rg"), _random_tensors(300))
def test_repr_matches_torch(arr: np.ndarray, kind: str, rg: bool) -> None:
    t = torch.tensor(arr, requires_grad=rg)
    g = gradviz.tensor(arr, requires_grad=rg)
    assert repr(g) == repr(t).replace("torch.", "gradviz.")
    if rg:
        assert repr(g * 1) == repr(t * 1).replace("torch.", "gradviz.")


_OPERANDS: dict[str, Callable[[Any], Any]] = {
    "f32": lambda m: m.tensor([1.5, -2.0, 3.0]),
    "f64": lambda m: m.tensor([1.5, -2.0, 3.0], dtype=m.float64),
    "i64": lambda m: m.tensor([1, -2, 3]),
    "i32": lambda m: m.tensor([1, -2, 3], dtype=m.int32),
    "bool": lambda m: m.tensor([True, False, True]),
    "int": lambda m: 2,
    "float": lambda m: 2.5,
    "true": lambda m: True,
}
_BINOPS = ["+", "-", "*", "/", "**", "<", "==", ">="]


_SCALARS = {"int", "float", "true"}
_PAIRS = [(a, b) for a in sorted(_OPERANDS) for b in sorted(_OPERANDS)
          if not (a in _SCALARS and b in _SCALARS)]  # two Python scalars: no tensor involved


@pytest.mark.parametrize("op", _BINOPS)
@pytest.mark.parametrize(("lhs", "rhs"), _PAIRS)
def test_binary_dtype_matches_torch(op: str, lhs: str, rhs: str) -> None:
    src = f"a {op} b"

    def run(m: Any) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return eval(src, {"a": _OPERANDS[lhs](m), "b": _OPERANDS[rhs](m)})  # noqa: S307

    try:
        expected = run(torch)
    except (RuntimeError, TypeError):
        with pytest.raises((RuntimeError, TypeError)):
            run(gradviz)
        return
    got = run(gradviz)
    assert got.dtype.name == str(expected.dtype)[6:]
    np.testing.assert_allclose(got.numpy().astype(np.float64),
                               expected.numpy().astype(np.float64), rtol=1e-6)


# -- the expectations hard-coded in the torch-free test files, re-derived from torch
FWD = sibling("test_ops_forward")
PROMO = sibling("test_type_promotion")
API = sibling("test_tensor_api")


@pytest.mark.parametrize(("src", "dtype", "values"), PROMO.CASES, ids=[c[0] for c in PROMO.CASES])
def test_hard_coded_promotions_are_torchs(src: str, dtype: str, values: object) -> None:
    out = eval(src, {"m": torch})  # noqa: S307 - sources from test_type_promotion
    assert str(out.dtype)[6:] == dtype and out.tolist() == values


@pytest.mark.parametrize(("src", "error", "message"), PROMO.ERRORS,
                         ids=[c[0] for c in PROMO.ERRORS])
def test_hard_coded_promotion_errors_are_torchs(src: str, error: str, message: str) -> None:
    with pytest.raises(Exception) as info:
        eval(src, {"m": torch})  # noqa: S307 - sources from test_type_promotion
    assert type(info.value).__name__ == error and str(info.value) == message


def test_zero_dim_gradients_match_torch() -> None:
    def grads(m: Any) -> list:
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        s = m.tensor(2.0, dtype=m.float64, requires_grad=True)
        out = []
        for f in (lambda: x * s, lambda: x / s, lambda: x ** s, lambda: s - x,
                  lambda: m.maximum(x, s)):
            x.grad = s.grad = None
            y = f()
            y.sum().backward()
            out.append((str(y.dtype)[-7:], str(x.grad.dtype)[-7:], x.grad.tolist(),
                        str(s.grad.dtype)[-7:], round(s.grad.item(), 6)))
        return out

    assert grads(gradviz) == grads(torch)


def _torch_env() -> dict[str, Any]:
    def leaf(a: np.ndarray) -> Any:
        return torch.tensor(a, dtype=torch.float64, requires_grad=True)

    return {"m": torch, "F": torch.nn.functional, "x": leaf(FWD.X), "y": leaf(FWD.Y),
            "w": leaf(FWD.W), "v": leaf(FWD.V), "c": torch.tensor(FWD.Y, dtype=torch.float64)}


def _torch_run(src: str) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return eval(src, _torch_env())  # noqa: S307 - sources from test_ops_forward


@pytest.mark.parametrize(("src", "expected"), FWD.ALL_GRAPHS + FWD.WHERE_GRAPHS,
                         ids=[s for s, _ in FWD.ALL_GRAPHS + FWD.WHERE_GRAPHS])
def test_hard_coded_graphs_are_torchs(src: str, expected: str) -> None:
    out = _torch_run(src)
    assert FWD.sig(out) == expected  # sig() only reads grad_fn, name() and next_functions
    for node in FWD._all_nodes(out):
        saved = sorted(a[len("_saved_"):] for a in dir(node) if a.startswith("_saved_"))
        assert saved == FWD.TORCH_SAVED[node.name()], node.name()


@pytest.mark.parametrize(("src", "expected"), API.REPR_CASES, ids=[s for s, _ in API.REPR_CASES])
def test_hard_coded_reprs_are_torchs(src: str, expected: str) -> None:
    t = eval(src, {"m": torch})  # noqa: S307 - sources from test_tensor_api
    assert repr(t).replace("torch.", "gradviz.") == expected


# -- what autograd.grad captures, against torch ----------------------------------------------------
def _captures(m: Any) -> list[list[float]]:
    """Tensor hooks and node pre-hooks where autograd.grad captures a gradient."""
    x2 = m.tensor([1.0, 2.0], requires_grad=True)
    x1 = x2 * 3
    x1.register_hook(lambda g: g * 10)  # x1's node also runs (for x2): captured before the hook
    out = [g.tolist() for g in m.autograd.grad((x1 * x1).sum(), [x1, x2])]
    a = m.tensor([1.0, 2.0], requires_grad=True)
    b = a * 3
    b.grad_fn.register_prehook(lambda go: (go[0] * 100,))
    out += [g.tolist() for g in m.autograd.grad((b * b).sum(), [b])]  # b's node does not run
    out += [g.tolist() for g in m.autograd.grad((b * b).sum(), [a])]  # it runs: pre-hook too
    c = m.tensor([1.0, 2.0], requires_grad=True)
    d = c * c
    d.register_hook(lambda g: g * 7)  # the root need not run, but its tensor hooks do
    out += [g.tolist() for g in m.autograd.grad(d, [d], m.ones(2))]
    return out


def test_autograd_grad_captures_as_torch() -> None:
    assert _captures(gradviz) == _captures(torch)


@pytest.mark.parametrize("src", [
    "m.empty(3).random_(0)", "m.empty(3).random_(5, 2)", "m.empty(3, dtype=m.uint8).random_(300)",
    "m.empty(3, dtype=m.int16).random_(2**20)", "m.empty(3, dtype=m.int8).random_(200)",
    "m.empty(3, dtype=m.bool).random_(3)", "m.empty(3).random_(2.5)",
    "m.ones(2, requires_grad=True).random_(3)",
])
def test_random_fill_errors_match_torch(src: str) -> None:
    def error(m: Any) -> tuple[str, str]:
        with pytest.raises(Exception) as info:
            eval(src, {"m": m})  # noqa: S307 - sources above
        return type(info.value).__name__, str(info.value).replace("gradviz", "torch")

    assert error(gradviz) == error(torch)


@pytest.mark.parametrize(("src", "expected"), API.LAYOUT_CASES,
                         ids=[c[0] for c in API.LAYOUT_CASES])
def test_hard_coded_layouts_are_torchs(src: str, expected: object) -> None:
    assert eval(src, {"m": torch}) == expected  # noqa: S307 - sources from test_tensor_api


@pytest.mark.parametrize(("src", "expected"), API.ERROR_CASES, ids=[c[0] for c in API.ERROR_CASES])
def test_hard_coded_api_errors_are_torchs(src: str, expected: str) -> None:
    assert API.error_of(src, torch) == expected
