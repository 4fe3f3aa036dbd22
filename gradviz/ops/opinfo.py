"""What one row of the derivative table is: :class:`OpInfo`, and :func:`defop` that declares it.

The rows themselves are in :mod:`gradviz.ops.derivatives`; this module only says what a row holds
and checks it, so that the table file holds derivatives and nothing else (as PyTorch keeps
``derivatives.yaml`` apart from the code generated from it).

A row drives everything else about its op: the dispatch point builds its node class, saves what
its formulas ask for and exposes it as ``_saved_*``; a row with ``function`` also becomes a public
function (``gradviz.<function>``), a ``Tensor`` method (``method``) and an in-place method
(``inplace``); ``docs/ops.md`` is generated from the rows; the generic tests gradcheck every
row's ``samples`` and check its node name and saved names. ``docs/ops.md`` ("Add an op") shows
the whole path.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gradviz.ops.schema import Schema, parse

__all__ = ["OpInfo", "OPS", "defop", "saved_for"]


@dataclass(eq=False)
class OpInfo:
    """One row of the derivative table (see :func:`defop` for the fields a row declares)."""

    name: str
    node: str | None  # PyTorch's node class name; None for ops that are never differentiable
    forward: Callable[..., Any]
    inputs: tuple[str, ...]
    grads: dict[str, Callable[..., Any]] = field(default_factory=dict)
    broadcasts: bool = False  # elementwise over broadcast inputs: reduce grads to input shapes
    promotes: bool = False  # int inputs with float scalars give the default float, not float64
    view: bool = False  # the output shares the first input's storage and version counter
    quiet: bool = False  # may divide by zero etc.: run without NumPy's warnings, as PyTorch does
    doc: str = ""
    # Filled in by defop: per input, the formula's parameter names after the gradient.
    needs: tuple[tuple[str, ...] | None, ...] = ()
    saved_names: tuple[str, ...] = ()
    attr_names: tuple[str, ...] = ()  # saved names that are forward keyword arguments
    defaults: dict[str, Any] = field(default_factory=dict)  # the forward's keyword defaults
    node_cls: type | None = None
    # Filled in by the dispatch point: which names to save for each mask of inputs needing grad.
    save_plans: dict[int, tuple[tuple[str, int, Any], ...]] = field(default_factory=dict)
    fast: Callable[..., Any] | None = None  # the row's fast path (gradviz/ops/fastpath.py)
    # Ops whose forward returns several outputs, or takes a list of tensors, take the general
    # dispatch path (NOTE [multi-output and variadic ops] in gradviz/ops/dispatch.py).
    multi: bool = False  # the forward returns a tuple of outputs; formulas get `grads`, a list
    outputs: tuple[str, ...] = ()  # names of a multi-output op's outputs, for saving them
    nondiff_outputs: tuple[int, ...] = ()  # outputs that never carry a gradient (indices ...)
    variadic: bool = False  # the one input is a list of tensors (cat, stack)
    hidden: tuple[str, ...] = ()  # saved for the formulas but not shown as `_saved_*` (as torch)
    broadcast_idx: tuple[int, ...] = ()  # the inputs whose gradients are summed to their shape
    general: bool = False  # multi or variadic (a plain attribute: dispatch reads it every call)
    # The public API the row generates, and how user code reaches it (docs/ops.md's columns).
    function: str | None = None  # generate gradviz.<function>
    method: bool = False  # ... and Tensor.<function>
    inplace: bool = False  # ... and Tensor.<function>_
    example: str = ""  # the generated function's doctest: a call, then its printed result
    calls: tuple[str, str] = ("", "")  # other functional forms and methods that record the row
    samples: tuple = ()  # gradviz.ops.samples.Sample: inputs for the generic gradcheck tests
    # The forward draws random numbers (bernoulli, normal ...): NOTE [random rows].
    random: bool = False
    # NOTE [signature rows]: the row's schema in PyTorch's notation, which generates its API.
    signature: Schema | None = None
    normalize: Callable[..., Any] | None = None  # maps a Python call onto the row's arguments
    with_out: bool = False  # ... and the out= variant of the generated function
    internal: str = ""  # why the row has no public form of its own (a backward-only node ...)


OPS: dict[str, OpInfo] = {}

# NOTE [random rows]
# A row whose forward samples (bernoulli, normal, poisson, exponential_ ...) draws from
# gradviz's generator (``generator=``, else the default one), so two runs of it on the same
# inputs differ. The generic suites run a row's forward several times and compare the results
# (gradcheck's finite differences, fast path against general path), so they honour the flag:
# for a ``random`` row they re-seed the default generator (``gradviz.manual_seed``) before each
# forward, which makes the row a deterministic function of its inputs. Its formulas are
# PyTorch's, which for these ops define the gradient as zero (``zeros_like(grad)``): the
# sample is not differentiated through. Where finite differences of the seeded forward are
# not zero (``normal``'s output moves with ``mean``), the sample says so with ``fd=`` and is
# checked against torch's zero gradient instead (tests/test_ops_random.py); parity tests
# compare such rows' graphs, saved values, gradients and the moments of their samples, since
# torch draws other numbers from the same seed.


def saved_for(op: OpInfo, bits: int) -> list[str]:
    """The names ``op``'s node saves when the inputs flagged in ``bits`` (bit i: input i) need
    gradients, in alphabetical order (PyTorch's nodes save in that order), by PyTorch's rule
    (``guard_for`` in its autograd codegen). A *tensor* (an input, the result or an output)
    or a tensor's strides that only one formula reads is saved only when that formula's
    input needs a gradient, if the op has several differentiable inputs; everything else a
    formula names (sizes, numbers, tensors read by several formulas) is saved whichever
    inputs need gradients, and forward arguments always.

    Example:
        >>> saved_for(OPS["addmm"], 0b001)  # only the bias needs a gradient
        ['alpha', 'beta', 'mat1_sym_sizes', 'mat2_sym_sizes']
    """
    differentiable = [needs for needs in op.needs if needs is not None]
    uses: dict[str, int] = {}
    for needs in differentiable:
        for n in needs:
            uses[n] = uses.get(n, 0) + 1
    tensors = (*op.inputs, "result", *op.outputs)
    names: list[str] = []
    for i, needs in enumerate(op.needs):
        for n in needs or ():
            if n in names:
                continue
            guarded = (len(differentiable) > 1 and uses[n] == 1
                       and (n in tensors or n.endswith("_sym_strides")))
            if bits >> i & 1 or not guarded:
                names.append(n)
    names.extend(n for n in op.attr_names if n not in names)
    return sorted(names)  # PyTorch's node keeps (and saves) its fields in alphabetical order


def defop(name: str, node: str | None, forward: Callable[..., Any], inputs: tuple[str, ...],
          *, broadcasts: bool | tuple[str, ...] = False, promotes: bool = False,
          view: bool = False, quiet: bool = False, doc: str = "", multi: bool = False,
          outputs: tuple[str, ...] = (), nondiff_outputs: tuple[int, ...] = (),
          variadic: bool = False, hidden: tuple[str, ...] = (), function: str | None = None,
          method: bool = False, inplace: bool = False, example: str = "",
          calls: tuple[str, str] = ("", ""), samples: tuple = (), random: bool = False,
          signature: str | None = None, normalize: Callable[..., Any] | None = None,
          with_out: bool = False, internal: str = "", **grads: Callable[..., Any]) -> OpInfo:
    """Declare an op: its forward, its node name, and one backward formula per input name.

    ``broadcasts`` is True (every input broadcasts) or the names of the inputs that do (addmm's
    ``self``). ``multi``/``outputs``/``nondiff_outputs`` describe a forward returning a tuple;
    ``variadic`` a single input that is a list of tensors, whose formula returns a list.
    ``function``/``method``/``inplace`` ask for the public function and methods to be generated
    (by :func:`gradviz.ops.defop`, or at import for the table's own rows), with ``doc`` and
    ``example`` as the docstring; ``calls`` documents the hand-written ways to reach the row;
    ``samples`` are the inputs its generic tests use; ``random`` marks a forward that draws
    from gradviz's generator (NOTE [random rows]).

    ``signature`` is the op's schema in PyTorch's notation (NOTE [signature rows]): it names the
    generated function (``function`` is taken from it) and gives its parameters; ``normalize``
    maps a call onto the row's arguments where torch's Python layer differs from the schema;
    ``with_out`` adds the ``out=`` variant (not ``out``: that may be an input's formula);
    ``internal`` says why a row has no public form of its own (a backward-only node, an
    overload reached through another row's function ...).

    Example:
        >>> import numpy as np
        >>> row = defop("twice_demo", "TwiceDemoBackward0", lambda a: 2 * a, ("self",),
        ...             self=lambda grad: 2 * grad)
        >>> row.saved_names, OPS.pop("twice_demo") is row
        ((), True)

    (:func:`gradviz.ops.defop` declares a row *and* publishes its API; use that one.)
    """
    unknown = set(grads) - set(inputs)
    if unknown:
        raise ValueError(f"{name}: formulas for unknown inputs {sorted(unknown)}")
    schema = parse(signature) if signature is not None else None
    if schema is not None:
        if function not in (None, schema.name):
            raise ValueError(f"{name}: function={function!r} but the signature names "
                             f"{schema.name!r}")
        function = schema.name
    if internal and (function or signature):
        raise ValueError(f"{name}: internal={internal!r} but the row generates a function")
    if (method or inplace or with_out) and not function:
        raise ValueError(f"{name}: method=True and inplace=True need function=<its name>")
    needs = tuple(
        tuple(list(inspect.signature(grads[i]).parameters)[1:]) if i in grads else None
        for i in inputs)
    saved: list[str] = []
    for names in needs:
        for n in names or ():
            if n not in saved:
                saved.append(n)
    defaults = {}
    # A NumPy ufunc's keywords (out=, where= ...) are NumPy's, not the op's; a C function
    # without a signature (np.dot before NumPy 2.3, which Python 3.10 gets) has no defaults.
    if not isinstance(forward, np.ufunc):
        try:
            params = inspect.signature(forward).parameters.values()
        except ValueError:
            params = ()
        defaults = {p.name: p.default for p in params if p.default is not inspect.Parameter.empty}
    derived = ("_sym_sizes", "_sym_numel", "_dtype", "_args_sizes", "_sym_sizes_opt",
               "_sym_strides")
    attrs = tuple(n for n in sorted(saved) if n not in inputs and n != "result"
                  and n not in outputs and not n.endswith(derived)
                  and "_sym_argsize_" not in n)
    op = OpInfo(name, node, forward, inputs, grads, bool(broadcasts), promotes, view, quiet, doc,
                needs, tuple(sorted(saved)), attrs, defaults)
    op.multi, op.outputs, op.nondiff_outputs = multi or bool(outputs), outputs, nondiff_outputs
    op.variadic, op.hidden = variadic, hidden
    op.general = op.multi or variadic
    op.broadcast_idx = tuple(i for i, n in enumerate(inputs)
                             if broadcasts is True or (broadcasts and n in broadcasts))
    op.function, op.method, op.inplace, op.example = function, method, inplace, example
    op.calls, op.samples, op.random = calls, tuple(samples), random
    op.signature, op.normalize, op.with_out, op.internal = schema, normalize, with_out, internal
    if schema is not None:
        _check_signature(op, schema)
    if name in OPS:
        raise ValueError(f"op {name!r} declared twice")
    OPS[name] = op
    return op


# NOTE [signature rows]
# As in PyTorch's native_functions.yaml, a row's schema is the one declaration of its public
# API: gradviz/ops/api.py generates from it the function (gradviz.<name>), the Tensor method
# (``method=True``), the in-place method (``inplace=True``) and the ``out=`` variant
# (``with_out=True``), with the schema's argument names, order, keyword-only marker and defaults.
# The schema's arguments are of two kinds: the row's inputs (passed to the dispatch point by
# position, in the row's order) and everything else, passed to the forward as keywords. So a
# schema must name every input, in the row's order, and its other arguments must be keywords
# the forward takes, with the forward's defaults; a row whose Python call differs from the
# schema (torch.sum's ``dim`` may be a tuple, an int list is spelled out ...) gives
# ``normalize``, a callable taking the call's arguments in schema order and returning the
# dispatch point's ``(inputs, keywords)``, and is checked for its inputs only. A mismatch
# raises here, at import, naming the row.


def _check_signature(op: OpInfo, schema: Schema) -> None:
    """Raise if ``schema`` does not fit ``op`` (NOTE [signature rows])."""
    names = [a.name for a in schema.arguments]
    where = f"{op.name}: signature {schema.text!r}"
    missing = [i for i in op.inputs if i not in names]
    if missing:
        raise ValueError(f"{where} does not name the row's inputs {missing}")
    order = [n for n in names if n in op.inputs]
    if order != list(op.inputs):
        raise ValueError(f"{where} names the inputs in the order {order}, the row in the order "
                         f"{list(op.inputs)}")
    if op.normalize is not None:
        return
    try:
        params = inspect.signature(op.forward).parameters
    except (TypeError, ValueError):  # a ufunc or a C function: it takes its inputs only
        params = {}
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    for a in schema.arguments:
        if a.name in op.inputs:
            continue
        if a.name not in params and not takes_any:
            raise ValueError(f"{where}: the forward takes no keyword {a.name!r} (give the row a "
                             "normalize= that maps the call onto its arguments)")
        default = op.defaults.get(a.name, a.default)
        if a.default is not inspect.Parameter.empty and not _same(default, a.default):
            raise ValueError(f"{where}: {a.name} defaults to {a.default!r} in the schema, to "
                             f"{default!r} in the forward")


def _same(a: Any, b: Any) -> bool:
    """Equal defaults: a list and a tuple with the same items are (the schema writes lists)."""
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return tuple(a) == tuple(b)
    if isinstance(a, bool) or isinstance(b, bool):  # False == 0, but not as a default
        return a is b
    return bool(a == b)
