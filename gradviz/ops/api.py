"""The public API that rows of the derivative table generate, and how each row is reached.

A row declared with ``signature="tan(Tensor self) -> Tensor"`` becomes ``gradviz.tan`` (and
``gradviz.ops.functional.tan``); with ``method=True`` also ``Tensor.tan``, with ``inplace=True``
also ``Tensor.tan_``, with ``with_out=True`` the function takes ``out=`` (NOTE [signature rows] in
gradviz/ops/opinfo.py). The generated function is a plain call of the dispatch point with the
schema's parameters (its source is :func:`function_source`): what a hand-written
``def tan(input): return dispatch(OPS["tan"], input)`` would be, written once. A row with
``function=`` but no signature (an experiment's ``defop``) gets its inputs as positional
parameters and its forward's keyword arguments as keyword-only ones.

:func:`calls` says, for ``docs/ops.md``, how user code reaches a row: its generated API plus the
hand-written forms the row lists in ``calls``.
"""

from __future__ import annotations

import inspect
import linecache
import os
from collections.abc import Callable
from typing import Any

import numpy as np

from gradviz._factories import check_out, write_out
from gradviz.ops import _args, functional
from gradviz.ops.dispatch import dispatch, dispatch_inplace, general_dispatch
from gradviz.ops.opinfo import OpInfo
from gradviz.ops.schema import NO_DEFAULT, Schema
from gradviz.tensor import Tensor, _is_number

__all__ = ["publish", "unpublish", "calls", "make_function", "function_source",
           "make_overloaded", "overload_rows"]

_P = inspect.Parameter


def _signature(op: OpInfo) -> inspect.Signature:
    # PyTorch's functional forms call the first tensor `input` where derivatives.yaml says `self`.
    params = [_P("input" if i == 0 and name == "self" else name, _P.POSITIONAL_OR_KEYWORD)
              for i, name in enumerate(op.inputs)]
    params += [_P(k, _P.KEYWORD_ONLY, default=v) for k, v in op.defaults.items()]
    return inspect.Signature(params, return_annotation="Tensor")


def _docstring(op: OpInfo) -> str:
    doc = op.doc or f"``{op.name}``."
    if op.signature is not None:  # the schema first, as torch's docstrings start
        doc = f"``{op.signature.text}``\n\n    {doc}"
    saved = [n for n in op.saved_names if n not in op.hidden]
    records = f"Records ``{op.node}``" if op.node else "Not differentiable"
    if op.node and saved:
        records += " (saves " + ", ".join(f"``{n}``" for n in saved) + ")"
    text = f"{doc}\n\n    {records}; generated from its row in ``gradviz/ops/derivatives/``.\n"
    if op.example:
        call, *shown = op.example.strip().splitlines()
        lines = ["", "    Example:", "        >>> import gradviz", f"        >>> {call}"]
        lines += [f"        {line}" for line in shown]
        text += "\n".join(lines) + "\n    "
    return text


def function_source(op: OpInfo, inplace: bool = False) -> str:
    """The source of the function generated from ``op``'s signature (with ``inplace``, of its
    in-place method): the schema's parameters, then one call of the dispatch point with the
    row's inputs by position and its other arguments by keyword (through the row's
    ``normalize`` where it has one).

    Example:
        >>> from gradviz.ops import OPS
        >>> print(function_source(OPS["exp"]))
        def exp(input, *, out=None):
            fast = _op.fast
            if fast is not None and out is None:
                return fast(input)
            if out is not None:
                _check_out('exp', out, input)
                return _write_out(out, _general(_op, input)._data)
            return _general(_op, input)
    """
    schema: Schema = op.signature  # type: ignore[assignment]
    first = "self" if inplace else "input"
    params, names, star = [], [], False
    for i, a in enumerate(schema.arguments):
        name = first if i == 0 and a.name == "self" else a.python_name
        names.append(name)
        if a.kwarg_only and not star:
            params.append("*")
            star = True
        params.append(name if a.default is NO_DEFAULT else f"{name}=_defaults[{i}]")
    out = op.with_out and not inplace
    if out:
        params += [] if star else ["*"]
        params.append("out=None")
    if op.normalize is not None:
        call_args = "*_a, **_k"
        lines = [f"_a, _k = _normalize({', '.join(names)})"]
    else:
        by_name = dict(zip((a.name for a in schema.arguments), names))
        call_args = ", ".join([by_name[i] for i in op.inputs]
                              + [f"{a.name}={n}" for a, n in zip(schema.arguments, names)
                                 if a.name not in op.inputs])
        lines = []
    fn_name = f"{schema.name}_" if inplace and not schema.inplace else schema.name
    if inplace:
        lines.append(f"return _inplace(_op, {call_args})")
    else:
        # The row's fast path first (read at each call: it is compiled on first use).
        lines += ["fast = _op.fast", f"if fast is not None{' and out is None' if out else ''}:",
                  f"    return fast({call_args})"]
        if out:
            lines += ["if out is not None:",
                      f"    _check_out({schema.name!r}, out, {', '.join(names)})",
                      f"    return _write_out(out, _general(_op, {call_args})._data)"]
        lines.append(f"return _general(_op, {call_args})")
    body = "\n".join("    " + line for line in lines)
    return f"def {fn_name}({', '.join(params)}):\n{body}"


def _from_signature(op: OpInfo, inplace: bool = False) -> Callable[..., Tensor]:
    """Compile :func:`function_source` (PyTorch generates its bindings from the schema too)."""
    schema: Schema = op.signature  # type: ignore[assignment]
    scope: dict[str, Any] = {
        "_op": op, "_defaults": [a.default for a in schema.arguments],
        "_normalize": op.normalize, "_general": general_dispatch, "_inplace": dispatch_inplace,
        "_check_out": check_out, "_write_out": write_out}
    source = function_source(op, inplace)
    # A file name inside the package: the tracer takes the generated function's frame for
    # gradviz's own (the user's line is the caller's), and tracebacks show its source.
    filename = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                            f"<signature of {op.name}{'_' if inplace else ''}>")
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), scope)  # noqa: S102
    fn = scope[source[len("def "):source.index("(")]]
    fn.__qualname__ = fn.__name__
    fn.op = op
    fn.source = source  # (inspect.getsource cannot read a compiled string)
    fn.__signature__ = schema.python_signature(  # type: ignore[attr-defined]
        "self" if inplace else "input", op.with_out and not inplace)
    return fn


def make_function(op: OpInfo) -> Callable[..., Tensor]:
    """The public function a row asks for: its inputs in, the dispatch point's result out.

    Example:
        >>> from gradviz.ops import OPS
        >>> exp = make_function(OPS["exp"])
        >>> exp.__name__, str(exp.__signature__)
        ('exp', "(input, *, out=None) -> 'Tensor'")
    """
    if op.signature is not None:
        fn = _from_signature(op)
        fn.__module__ = functional.__name__
        fn.__doc__ = _docstring(op)
        return fn
    # The row's fast path hands other calls to the general one; it is read at each call (it
    # is compiled on first use, gradviz/ops/fastpath.py).
    if op.defaults or len(op.inputs) != 1:
        def fn(*args: Any, **kwargs: Any) -> Tensor:
            return dispatch(op, *args, **kwargs)
    elif op.fast is not None:
        def fn(input: Any) -> Tensor:  # the common case: one tensor, no keyword arguments
            return op.fast(input)
    else:
        def fn(input: Any) -> Tensor:
            return dispatch(op, input)
    fn.__name__ = fn.__qualname__ = op.function or op.name
    fn.op = op  # the row it was made from (publish and unpublish recognise their own)
    fn.__module__ = functional.__name__
    fn.__doc__ = _docstring(op)
    fn.__signature__ = _signature(op)  # type: ignore[attr-defined]  # what help() shows
    return fn


def _make_inplace(op: OpInfo) -> Callable[..., Tensor]:
    if op.signature is not None:
        fn = _from_signature(op, inplace=True)
        fn.__doc__ = f"In-place :func:`gradviz.{op.function}` (records ``{op.node}``)."
        return fn

    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        return dispatch_inplace(op, self, *args, **kwargs)

    method.__name__ = method.__qualname__ = f"{op.function}_"
    method.op = op
    method.__doc__ = f"In-place :func:`gradviz.{op.function}` (records ``{op.node}``)."
    return method


# NOTE [overloaded rows]: torch's overloads (pow.Tensor_Tensor, pow.Scalar, pow.Tensor_Scalar)
# are several rows with one public name, each with its own schema. As torch's python_arg_parser
# does, the generated function tries the rows' signatures in order (the table declares them in
# the order torch's parser tries them) and runs the first whose arguments bind and are of the
# kinds the schema says: ``Tensor`` a tensor, ``Scalar`` a number, ``int`` an integer; other
# types are the row's normaliser's to check. A NumPy array counts as a
# tensor for a row with a normaliser (which makes it a constant tensor, as the operators take
# arrays: ``x ** a``), and for no other. No row fits: torch's
# "received an invalid combination of arguments" error, listing the signatures.


def overload_rows(op: OpInfo) -> list[OpInfo]:
    """The rows with a signature that share ``op``'s public name, in the table's order."""
    from gradviz.ops.opinfo import OPS

    return [o for o in OPS.values() if o.function == op.function and o.signature is not None]


def _kind_fits(type_: str, value: Any, arrays: bool = True) -> bool:
    if type_.startswith("Tensor"):
        return isinstance(value, Tensor) or (arrays and isinstance(value, np.ndarray))
    if type_.startswith("Scalar"):
        return _is_number(value)
    if type_ == "int":  # (a bool is not one, as torch's parser says)
        return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
    return True


def _torch_text(schema: Schema, method: bool, out: bool) -> str:
    """A signature as torch's overload error lists it: ``Tensor input, Number exponent, *,
    Tensor out = None`` (the method form without ``self``)."""
    parts, star = [], False
    for i, a in enumerate(schema.arguments):
        if i == 0 and method:
            continue
        if a.kwarg_only and not star:
            parts.append("*")
            star = True
        type_ = "Number" if a.type.startswith("Scalar") else a.type.rstrip("?")
        name = "input" if i == 0 and a.name == "self" and a.is_tensor else a.name
        default = "" if a.default is NO_DEFAULT else f" = {a.default}"
        parts.append(f"{type_} {name}{default}")
    if out:
        parts += [] if star else ["*"]
        parts.append("Tensor out = None")
    return ", ".join(parts)


def _type_name(value: Any) -> str:
    return "Tensor" if isinstance(value, Tensor) else type(value).__name__


def _arity(sig: inspect.Signature) -> tuple[int, int]:
    params = sig.parameters.values()
    return sum(p.default is inspect.Parameter.empty for p in params), len(params)


def _listing(positional: list[str], keywords: list[str]) -> str:
    # torch's quirk, kept: keywords alone end with ", " (``got (exponent=str, )``)
    pos, kw = ", ".join(positional), ", ".join(keywords)
    return f"{pos}, {kw}" if pos and kw else (f"{kw}, " if kw else pos)


def _overload_error(name: str, listed: list[tuple[str, Any, dict, bool]], args: tuple, kwargs: dict,
                    skip: int) -> TypeError:
    """torch's text: the call's argument types (without ``self`` in a method, ``skip=1``), then
    each signature; one without ``out=`` that the call binds to says which arguments are of the
    wrong kind (``(Tensor, !str!)``), as torch's parser does."""
    got = _listing([_type_name(a) for a in args[skip:]],
                   [f"{k}={_type_name(v)}" for k, v in kwargs.items()])
    # One signature that takes as many arguments as given (torch's "plausible" one): its own
    # error, naming the argument of the wrong kind.
    n = len(args) + len(kwargs)
    plausible = [(sig, types, arrays) for _, sig, types, arrays in listed
                 if _arity(sig)[0] <= n <= _arity(sig)[1]]
    if len(plausible) == 1:
        sig, types, arrays = plausible[0]
        try:
            bound = sig.bind(*args, **kwargs).arguments
        except TypeError:
            bound = {}
        positions = list(sig.parameters)
        for k, v in bound.items():
            if k in types and not _kind_fits(types[k], v, arrays):
                where = "" if k in kwargs else f" (position {positions.index(k) + 1 - skip})"
                kind = {"Scalar": "Number"}.get(types[k], types[k].rstrip("?"))
                return TypeError(f"{name}(): argument '{k}'{where} must be {kind}, not "
                                 f"{_type_name(v)}")
    text = ""
    for shown, sig, types, arrays in listed:
        text += f" * ({shown})\n"
        if "Tensor out = None" in shown:
            continue
        try:
            bound = sig.bind(*args, **kwargs).arguments
        except TypeError:
            continue
        names = list(bound)[skip:len(args)]
        marks = _listing(
            [_type_name(v) if _kind_fits(types[n], v, arrays) else f"!{_type_name(v)}!"
             for n, v in zip(names, args[skip:])],
            [f"{k}={_type_name(v)}" if _kind_fits(types.get(k, ""), v, arrays)
             else f"!{k}={_type_name(v)}!" for k, v in kwargs.items()])
        text += ("      didn't match because some of the arguments have invalid types: ("
                 + marks + ")\n")
    return TypeError(f"{name}() received an invalid combination of arguments - got ({got}), but "
                     f"expected one of:\n{text}")


def _overloaded_docstring(rows: list[OpInfo]) -> str:
    """The overloads' schemas and what each records, then their examples, in torch's order."""
    lines = [f"``{rows[0].function}``: torch's overloads, the first whose arguments fit runs "
             "(NOTE [overloaded rows] in gradviz/ops/api.py); generated from their rows in "
             "``gradviz/ops/derivatives/``.", ""]
    for r in rows:
        lines.append(f"* ``{r.signature.text}``: {r.doc or r.name} (records ``{r.node}``)")
    examples = [r.example.strip().splitlines() for r in rows if r.example]
    if examples:
        lines += ["", "Example:", "    >>> import gradviz"]
        for call, *shown in examples:
            lines += [f"    >>> {call}"] + [f"    {line}" for line in shown]
    return "\n    ".join(lines) + "\n    "


def make_overloaded(rows: list[OpInfo], method: bool = False,
                    inplace: bool = False) -> Callable[..., Tensor]:
    """One function (with ``method``, the Tensor method; with ``inplace``, the in-place method)
    from the rows of one public name, picking the row as torch's parser picks an overload
    (NOTE [overloaded rows]).

    Example:
        >>> import gradviz
        >>> gradviz.pow(2, gradviz.tensor([1.0, 3.0])).grad_fn is None, gradviz.pow.overloads
        (True, ('pow_tensor', 'pow_scalar_base', 'pow'))
    """
    if method or inplace:  # the methods are those of a tensor self
        rows = [r for r in rows if r.signature.arguments[0].is_tensor
                and (r.inplace if inplace else r.method)]
    first = "self" if method or inplace else "input"
    candidates = []
    for r in rows:
        fn = _from_signature(r, inplace=True) if inplace else _from_signature(r)
        fn.__doc__ = _docstring(r)
        params = list(r.signature.python_signature(first, r.with_out and first == "input")
                      .parameters.values())
        types = {p.name: a.type for p, a in zip(params, r.signature.arguments)}
        candidates.append((inspect.Signature(params), types, fn, r.normalize is not None))
    texts = [_torch_text(r.signature, method or inplace, r.with_out and not method and not inplace)
             for r in rows]
    name = rows[0].function + ("_" if inplace else "")
    listed = [(t, c[0], c[1], c[3]) for t, c in zip(texts, candidates)]

    def overloaded(*args: Any, **kwargs: Any) -> Tensor:
        for sig, types, fn, arrays in candidates:
            try:
                bound = sig.bind(*args, **kwargs).arguments
            except TypeError:
                continue
            if all(_kind_fits(types[k], v, arrays) for k, v in bound.items() if k in types):
                return fn(*args, **kwargs)
        raise _overload_error(name, listed, args, kwargs, 1 if method or inplace else 0)

    overloaded.__name__ = overloaded.__qualname__ = name
    overloaded.op = rows[0]
    overloaded.overloads = tuple(r.name for r in rows)
    overloaded.functions = {r.name: c[2] for r, c in zip(rows, candidates)}
    overloaded.__doc__ = _overloaded_docstring(rows)
    if not method and not inplace:
        overloaded.__module__ = functional.__name__
    return overloaded


def _publish_overloaded(op: OpInfo, rows: list[OpInfo]) -> None:
    fn = make_overloaded(rows)
    fn.ops = tuple(rows)
    setattr(functional, op.function, fn)
    if op.function not in functional.__all__:
        functional.__all__.append(op.function)
    if any(r.method for r in rows):
        setattr(Tensor, op.function, make_overloaded(rows, method=True))
    if any(r.inplace for r in rows):
        setattr(Tensor, f"{op.function}_", make_overloaded(rows, inplace=True))


def publish(op: OpInfo) -> None:
    """Install the API a row asks for: ``gradviz.ops.functional.<function>`` (and with it
    ``gradviz.<function>``), ``Tensor.<function>``, ``Tensor.<function>_``.

    Publishing a row twice changes nothing (the table's rows are published at import).

    Example:
        >>> import gradviz
        >>> from gradviz.ops import OPS
        >>> before = gradviz.exp
        >>> publish(OPS["exp"]); gradviz.exp is before
        True
    """
    if not op.function or getattr(getattr(functional, op.function, None), "op", None) is op:
        return
    rows = overload_rows(op) if op.signature is not None else []
    if len(rows) > 1:
        if op not in getattr(getattr(functional, op.function, None), "ops", ()):
            _publish_overloaded(op, rows)
        return
    fn = make_function(op)
    setattr(functional, op.function, fn)
    if op.function not in functional.__all__:
        functional.__all__.append(op.function)
    if op.method:
        # torch's parser words a method's missing arguments its own way (gradviz/ops/_args.py);
        # a method of self alone cannot miss any, and keeps the plain function (one call less).
        several = op.signature is not None and len(op.signature.arguments) > 1
        setattr(Tensor, op.function, _args.method(fn, op.function) if several else fn)
    if op.inplace:
        setattr(Tensor, f"{op.function}_", _make_inplace(op))


def unpublish(op: OpInfo) -> None:
    """Take back what :func:`publish` installed for ``op`` (used by :func:`gradviz.ops.remove_op`).

    Example:
        >>> import numpy as np, gradviz
        >>> from gradviz.ops import defop, remove_op
        >>> _ = defop("twice_demo", "TwiceDemoBackward0", lambda a: 2 * a, ("self",),
        ...           function="twice_demo", self=lambda grad: 2 * grad)
        >>> remove_op("twice_demo"); hasattr(gradviz.ops.functional, "twice_demo")
        False
    """
    if not op.function or getattr(getattr(functional, op.function, None), "op", None) is not op:
        return
    delattr(functional, op.function)
    functional.__all__.remove(op.function)
    for name in (op.function, f"{op.function}_"):
        installed = getattr(Tensor, name, None)
        if getattr(installed, "op", None) is op or getattr(
                getattr(installed, "__wrapped__", None), "op", None) is op:
            delattr(Tensor, name)


def calls(op: OpInfo) -> tuple[str, str]:
    """How user code reaches ``op``: (functional forms, Tensor methods), as docs/ops.md shows.

    Example:
        >>> from gradviz.ops import OPS
        >>> calls(OPS["exp"])
        ('`gradviz.exp`', '`.exp()`, `.exp_()`')
    """
    fn, methods = [], []
    if op.function:
        fn.append(f"`gradviz.{op.function}`")
        if op.method:
            methods.append(f"`.{op.function}()`")
        if op.inplace:
            methods.append(f"`.{op.function}_()`")
    extra_fn, extra_methods = op.calls
    return (", ".join(fn + ([extra_fn] if extra_fn else [])),
            ", ".join(methods + ([extra_methods] if extra_methods else [])))
