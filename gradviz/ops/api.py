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

from gradviz._factories import check_out, write_out
from gradviz.ops import _args, functional
from gradviz.ops.dispatch import dispatch, dispatch_inplace, general_dispatch
from gradviz.ops.opinfo import OpInfo
from gradviz.ops.schema import NO_DEFAULT, Schema
from gradviz.tensor import Tensor

__all__ = ["publish", "unpublish", "calls", "make_function", "function_source"]

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
    # Named as a file inside the package, so that the tracer takes its frames for gradviz's
    # own and shows the user's line that called it; its lines are given to linecache, so a
    # traceback through it shows them.
    filename = os.path.join(os.path.dirname(__file__), f"<signature of {op.name}>")
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
