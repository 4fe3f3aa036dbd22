"""PyTorch's op database as the oracle: run each OpInfo's sample inputs on torch 2.13 and on
gradviz, and say where they differ.

PyTorch keeps, for every op, sample inputs (``torch.testing._internal.common_methods_invocations
.op_db``, the OpInfos). This module is our own harness around that data: :func:`resolve` finds
the gradviz callable an OpInfo names, :func:`compare_sample` runs one sample on both engines from
the same bytes (leaves with the same ``requires_grad``, the same ``grad_output``) and returns
what differs: raised or not (and the exception's class), the outputs' shapes, dtypes and values,
each output's ``grad_fn`` name and its ``next_functions`` names, and the gradient of every leaf
(``None`` where torch leaves it ``None``). test_opinfo.py runs it; scripts/opinfo_report.py
prints the tally.
"""

from __future__ import annotations

import math
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

import gradviz

DTYPES = (torch.float64, torch.float32)
# How close values and gradients must be: float64 is compared tightly, float32 as PyTorch's own
# tests do for single precision.
TOLERANCE = {torch.float64: (1e-6, 1e-9), torch.float32: (1e-3, 1e-5)}


# Entries whose values are random or uninitialised: compared on structure only (shapes, dtypes,
# grad_fn and next_functions names, raise/ok), as two engines' random streams differ.
RANDOM = frozenset({
    "bernoulli", "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided",
    "multinomial", "normal", "normal.number_mean", "normal.in_place", "rand_like", "randint",
    "randint_like", "randn", "randn_like", "randperm", "uniform", "exponential", "geometric",
    "cauchy", "log_normal", "nn.functional.dropout", "nn.functional.dropout2d",
    "nn.functional.dropout3d", "nn.functional.alpha_dropout",
    "nn.functional.feature_alpha_dropout.with_train",
    "nn.functional.feature_alpha_dropout.without_train", "nn.functional.rrelu",
    # its one sample trains with dropout 0.5
    "nn.functional.multi_head_attention_forward"})


def _is_random(info: Any, sample: Any) -> bool:
    """Whether a sample's values are random: a :data:`RANDOM` entry's, or one that asks for
    dropout (scaled_dot_product_attention's ``dropout_p``)."""
    return entry_id(info) in RANDOM or bool(sample.kwargs.get("dropout_p", 0))


class Unsupported(Exception):
    """A sample holds something gradviz has no counterpart for (a generator, a sparse layout):
    it is not run, and the tally says how many were left out and why."""


@dataclass
class Resolved:
    """How an OpInfo is called on gradviz: a function, or a method of the first argument."""

    name: str
    call: Callable[..., Any]
    how: str  # "function", "method" or "lambda"


def entry_id(info: Any) -> str:
    """An OpInfo's name as test ids and the report give it (``div.floor_rounding``)."""
    return info.name + (f".{info.variant_test_name}" if info.variant_test_name else "")


def resolve(info: Any) -> Resolved | None:
    """The gradviz callable for OpInfo ``info``, or None if gradviz has none.

    ``nn.functional.conv2d`` is looked up as ``gradviz.nn.functional.conv2d``, ``linalg.det`` as
    ``gradviz.linalg.det``; a name gradviz has only as a ``Tensor`` method (``T``, ``mT``,
    ``view_as``) is called on the first argument, as torch's method variant is.
    """
    obj: Any = gradviz
    for part in info.name.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            break
    if callable(obj) and not isinstance(obj, type):
        if getattr(info.op, "__name__", "") == "<lambda>":
            return Resolved(info.name, _on_gradviz(info.op), "lambda")
        return Resolved(info.name, obj, "function")
    if info.method_variant is not None and "." not in info.name:
        attr = getattr(gradviz.Tensor, info.name, None)
        if attr is not None:
            name = info.name
            return Resolved(name, lambda x, *a, **k: _method(x, name, a, k), "method")
    return None


def _on_gradviz(op: Callable[..., Any]) -> Callable[..., Any]:
    """An OpInfo's ``op`` lambda run on gradviz: the same code with its global ``torch`` bound
    to gradviz. Such a lambda reorders the sample before calling the op (``where`` takes the
    condition second, ``polygamma`` the order after the input, ``einsum`` the operands first),
    so calling gradviz's function on the sample as given would compare a different call."""
    names = dict(op.__globals__, torch=gradviz)
    return types.FunctionType(op.__code__, names, op.__name__, op.__defaults__, op.__closure__)


def _method(x: Any, name: str, args: tuple, kwargs: dict) -> Any:
    attr = getattr(x, name)
    return attr(*args, **kwargs) if callable(attr) else attr


def _torch_call(info: Any, how: str) -> Callable[..., Any]:
    """torch's side called as gradviz's is: the function, or the method variant."""
    if how == "method" and info.method_variant is not None:
        return info.method_variant
    return info.op


# -- converting a sample ----------------------------------------------------------------------
def _to_gradviz(value: Any, leaves: list[tuple[torch.Tensor, Any]]) -> Any:
    """``value`` with every torch object replaced by gradviz's (iteratively: no recursion).
    Each torch tensor becomes a gradviz leaf made from the same bytes; ``leaves`` collects the
    pairs of those that require grad."""
    def one(v: Any) -> Any:
        if isinstance(v, torch.Tensor):
            if v.layout != torch.strided or v.is_complex() or v.is_quantized:
                raise Unsupported(f"a {v.layout} / {v.dtype} tensor")
            g = gradviz.tensor(v.detach().numpy().copy(), dtype=_dtype(v.dtype))
            if v.requires_grad:
                g.requires_grad_()
                leaves.append((v, g))
            return g
        if isinstance(v, torch.dtype):
            return _dtype(v)
        if isinstance(v, torch.Size):
            return tuple(v)
        if isinstance(v, torch.device):
            return str(v)
        if isinstance(v, (torch.Generator, torch.memory_format, torch.layout)):
            raise Unsupported(type(v).__name__)
        return v

    if not isinstance(value, (list, tuple, dict)):
        return one(value)
    # Containers rebuilt bottom-up from an explicit stack, keeping lists, tuples and dicts.
    root: list[Any] = [None]
    stack: list[tuple[Any, list[Any], Any]] = [(value, root, 0)]
    pending: list[tuple[Any, list[Any], list[Any], Any]] = []
    while stack:
        item, into, key = stack.pop()
        if isinstance(item, (list, tuple, dict)):
            keys = list(item.keys()) if isinstance(item, dict) else list(range(len(item)))
            slots: list[Any] = [None] * len(keys)
            pending.append((item, slots, into, key))
            for k, kk in enumerate(keys):
                stack.append((item[kk], slots, k))
        else:
            into[key] = one(item)
    for item, slots, into, key in reversed(pending):
        if isinstance(item, dict):
            into[key] = dict(zip(item.keys(), slots))
        elif isinstance(item, tuple) and not hasattr(item, "_fields"):
            into[key] = tuple(slots)
        elif isinstance(item, tuple):
            into[key] = type(item)(*slots)
        else:
            into[key] = slots
    return root[0]


def _dtype(dt: torch.dtype) -> Any:
    name = str(dt).split(".")[-1]
    out = getattr(gradviz, name, None)
    if out is None:
        raise Unsupported(f"dtype {name}")
    return out


def _flat(out: Any) -> list[Any]:
    """The tensors of an op's result, in order (a tensor, a tuple, a named tuple, a list)."""
    items, todo = [], [out]
    while todo:
        v = todo.pop()
        if isinstance(v, (list, tuple)):
            todo.extend(reversed(v))
        else:
            items.append(v)
    return items


# -- comparing --------------------------------------------------------------------------------
def _array(t: Any) -> np.ndarray:
    if isinstance(t, torch.Tensor):
        return t.detach().numpy(force=True)  # force: a ZeroTensor gradient, a conjugate view
    return np.asarray(t.detach().numpy() if hasattr(t, "detach") else t)


def _close(a: np.ndarray, b: np.ndarray, dt: torch.dtype) -> bool:
    if a.shape != b.shape:
        return False
    if a.dtype.kind in "fc" or b.dtype.kind in "fc":
        rtol, atol = TOLERANCE.get(dt, TOLERANCE[torch.float32])
        return bool(np.allclose(a.astype(np.float64), b.astype(np.float64), rtol=rtol,
                                atol=atol, equal_nan=True))
    return bool(np.array_equal(a, b))


def _node(fn: Any) -> str | None:
    """A backward node's class name, as PyTorch shows it (``MulBackward0``)."""
    return None if fn is None else type(fn).__name__


def _nexts(fn: Any) -> list[str | None]:
    return [] if fn is None else [_node(n) for n, _ in fn.next_functions]


@dataclass
class Outcome:
    """What one sample did on the two engines: ``differs`` is empty when they agree."""

    differs: list[str] = field(default_factory=list)
    raised: str | None = None  # torch's exception class, when it raised (and gradviz did too)


def compare_sample(info: Any, resolved: Resolved, sample: Any, dt: torch.dtype,
                   grad_check: bool = True) -> Outcome:
    """Run ``sample`` through torch's op and gradviz's, and say what differs (only the
    structure for a random sample: :func:`_is_random`)."""
    random = _is_random(info, sample)
    leaves: list[tuple[torch.Tensor, Any]] = []
    g_input = _to_gradviz(sample.input, leaves)
    g_args = _to_gradviz(tuple(sample.args), leaves)
    g_kwargs = _to_gradviz(dict(sample.kwargs), leaves)
    out = Outcome()
    try:
        t_out = _torch_call(info, resolved.how)(sample.input, *sample.args, **sample.kwargs)
        t_err = None
    except Exception as e:  # noqa: BLE001 - what torch raises is the expectation
        t_out, t_err = None, type(e).__name__
    try:
        g_out = resolved.call(g_input, *g_args, **g_kwargs)
        g_err = None
    except Exception as e:  # noqa: BLE001 - compared with what torch raised
        g_out, g_err = None, f"{type(e).__name__}: {str(e)[:120]}"
    if t_err is not None or g_err is not None:
        if t_err is None:
            out.differs.append(f"gradviz raised {g_err}")
        elif g_err is None:
            out.differs.append(f"torch raised {t_err}, gradviz did not")
        elif g_err.split(":", 1)[0] != t_err:
            out.differs.append(f"torch raised {t_err}, gradviz {g_err}")
        out.raised = t_err
        return out
    t_flat, g_flat = _flat(t_out), _flat(g_out)
    if len(t_flat) != len(g_flat):
        out.differs.append(f"{len(t_flat)} outputs on torch, {len(g_flat)} on gradviz")
        return out
    for k, (a, b) in enumerate(zip(t_flat, g_flat)):
        if not isinstance(a, torch.Tensor):
            if not (a == b or (isinstance(a, float) and math.isnan(a) and math.isnan(b))):
                out.differs.append(f"output {k}: {a!r} != {b!r}")
            continue
        if not hasattr(b, "detach"):
            out.differs.append(f"output {k}: gradviz returned {type(b).__name__}")
            continue
        if str(a.dtype).split(".")[-1] != str(b.dtype).split(".")[-1]:
            out.differs.append(f"output {k}: dtype {a.dtype} != {b.dtype}")
        if tuple(a.shape) != tuple(b.shape):
            out.differs.append(f"output {k}: shape {tuple(a.shape)} != {tuple(b.shape)}")
        elif not random and not _close(_array(a), _array(b), dt):
            out.differs.append(f"output {k}: values differ")
        tn, gn = _node(a.grad_fn), _node(b.grad_fn)
        if tn != gn:
            out.differs.append(f"output {k}: grad_fn {tn} != {gn}")
        elif tn is not None and _nexts(a.grad_fn) != _nexts(b.grad_fn):
            out.differs.append(f"output {k}: next_functions {_nexts(a.grad_fn)} != "
                               f"{_nexts(b.grad_fn)}")
    if grad_check and not random and not out.differs and leaves:
        out.differs += _compare_grads(t_flat, g_flat, leaves, dt)
    return out


def _compare_grads(t_flat: list[Any], g_flat: list[Any],
                   leaves: list[tuple[torch.Tensor, Any]], dt: torch.dtype) -> list[str]:
    """The gradients of every leaf for the same grad_output on both engines."""
    pairs = [(a, b) for a, b in zip(t_flat, g_flat)
             if isinstance(a, torch.Tensor) and a.requires_grad and a.is_floating_point()]
    if not pairs:
        return []
    rng = np.random.default_rng(0)
    gouts = [rng.standard_normal(tuple(a.shape)) for a, _ in pairs]
    try:
        t_grads = torch.autograd.grad(
            [a for a, _ in pairs], [t for t, _ in leaves],
            [torch.tensor(g, dtype=a.dtype) for g, (a, _) in zip(gouts, pairs)],
            allow_unused=True)
        t_err = None
    except Exception as e:  # noqa: BLE001 - what torch raises is the expectation
        t_grads, t_err = None, type(e).__name__
    try:
        g_grads = gradviz.autograd.grad(
            [b for _, b in pairs], [g for _, g in leaves],
            [gradviz.tensor(g, dtype=b.dtype) for g, (_, b) in zip(gouts, pairs)],
            allow_unused=True)
        g_err = None
    except Exception as e:  # noqa: BLE001 - compared with what torch raised
        g_grads, g_err = None, f"{type(e).__name__}: {str(e)[:120]}"
    if t_err is not None or g_err is not None:
        if t_err is None:
            return [f"backward: gradviz raised {g_err}"]
        if g_err is None:
            return [f"backward: torch raised {t_err}, gradviz did not"]
        return []
    differs = []
    for k, (tg, gg) in enumerate(zip(t_grads, g_grads)):
        if (tg is None) != (gg is None):
            differs.append(f"grad of leaf {k}: {'None' if tg is None else 'a tensor'} on torch, "
                           f"{'None' if gg is None else 'a tensor'} on gradviz")
        elif tg is not None and not _close(_array(tg), _array(gg), dt):
            differs.append(f"grad of leaf {k}: values differ")
    return differs


def samples(info: Any, dt: torch.dtype) -> Iterator[Any]:
    """The OpInfo's samples for ``dt`` on the CPU, with grad where the op supports autograd."""
    grad = bool(info.supports_autograd) and dt.is_floating_point
    torch.manual_seed(0)
    yield from info.sample_inputs("cpu", dt, requires_grad=grad)


@dataclass
class EntryResult:
    """One OpInfo entry's tally."""

    entry: str
    resolved: bool
    run: int = 0
    matched: int = 0
    unsupported: int = 0
    first: list[str] = field(default_factory=list)  # the first differences, for the report


def run_entry(info: Any, max_samples: int | None = None) -> EntryResult:
    """Every sample of ``info`` (float64 and float32, where it supports them) on both engines."""
    result = EntryResult(entry_id(info), False)
    resolved = resolve(info)
    if resolved is None:
        return result
    result.resolved = True
    for dt in DTYPES:
        if dt not in info.dtypes:
            continue
        for k, sample in enumerate(samples(info, dt)):
            if max_samples is not None and k >= max_samples:
                break
            try:
                outcome = compare_sample(info, resolved, sample, dt)
            except Unsupported:
                result.unsupported += 1
                continue
            except Exception as e:  # noqa: BLE001 - counted as a difference, never hidden
                outcome = Outcome([f"comparing failed: {type(e).__name__}: {str(e)[:120]}"])
            result.run += 1
            if outcome.differs:
                if len(result.first) < 3:
                    result.first.append(f"{dt} sample {k}: " + "; ".join(outcome.differs))
            else:
                result.matched += 1
    return result


def op_db() -> list[Any]:
    """PyTorch's OpInfo list (imported at run time from the installed torch)."""
    from torch.testing._internal.common_methods_invocations import op_db as db

    return list(db)


# -- the tally and the list of entries that match ---------------------------------------------
MATCHING = Path(__file__).with_name("opinfo_matching.txt")


def read_matching() -> tuple[int, list[str]]:
    """The committed tally: how many entries gradviz resolved when it was written, and the
    entries that matched on every sample (each must go on matching: test_opinfo.py)."""
    resolved, entries = 0, []
    for line in MATCHING.read_text(encoding="utf-8").splitlines():
        if line.startswith("# resolved:"):
            resolved = int(line.split(":", 1)[1])
        elif line and not line.startswith("#"):
            entries.append(line)
    return resolved, entries


def main(argv: list[str] | None = None) -> int:
    """``python -m tests.parity._opinfo [--write] [ENTRY ...]``: run the OpInfo entries (all,
    or those named), print each one that differs with its first differences and the tally;
    ``--write`` rewrites opinfo_matching.txt from the run (all entries only)."""
    import argparse
    import time

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("entries", nargs="*")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    results = [run_entry(info) for info in op_db()
               if not args.entries or entry_id(info) in args.entries]
    resolved = [r for r in results if r.resolved]
    matching = sorted(r.entry for r in resolved if r.run and r.matched == r.run)
    for r in resolved:
        if r.entry not in matching:
            print(f"{r.entry}: {r.matched} of {r.run} samples match"
                  + (f" ({r.unsupported} not run)" if r.unsupported else ""))
            for line in r.first:
                print(f"    {line}")
    print(f"{len(results)} OpInfo entries, {len(resolved)} resolved by gradviz, "
          f"{len(matching)} matching on every sample "
          f"({sum(r.run for r in resolved)} samples run; {time.perf_counter() - start:.0f} s)")
    if args.write and not args.entries:
        MATCHING.write_text(
            "# OpInfo entries (tests/parity/_opinfo.py) gradviz matches on every sample, float64\n"
            "# and float32: tests/parity/test_opinfo.py keeps each matching. Written by\n"
            "# `python -m tests.parity._opinfo --write`; the run prints the others and why.\n"
            f"# entries: {len(results)}\n# resolved: {len(resolved)}\n"
            + "".join(f"{e}\n" for e in matching), encoding="utf-8")
        print(f"wrote {MATCHING.name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
