"""The public API that rows of the derivative table generate, and how each row is reached.

A row declared with ``function="tan"`` becomes ``gradviz.tan`` (and ``gradviz.ops.functional.tan``);
with ``method=True`` also ``Tensor.tan``, with ``inplace=True`` also ``Tensor.tan_``. The
generated function is a plain call of the dispatch point, with the row's inputs as positional
parameters and its forward's keyword arguments as keyword-only parameters: what a hand-written
``def tan(input): return dispatch(OPS["tan"], input)`` would be, written once.

:func:`calls` says, for ``docs/ops.md``, how user code reaches a row: its generated API plus the
hand-written forms the row lists in ``calls``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from gradviz.ops import functional
from gradviz.ops.dispatch import dispatch, dispatch_inplace
from gradviz.ops.opinfo import OpInfo
from gradviz.tensor import Tensor

__all__ = ["publish", "unpublish", "calls", "make_function"]

_P = inspect.Parameter


def _signature(op: OpInfo) -> inspect.Signature:
    # PyTorch's functional forms call the first tensor `input` where derivatives.yaml says `self`.
    params = [_P("input" if i == 0 and name == "self" else name, _P.POSITIONAL_OR_KEYWORD)
              for i, name in enumerate(op.inputs)]
    params += [_P(k, _P.KEYWORD_ONLY, default=v) for k, v in op.defaults.items()]
    return inspect.Signature(params, return_annotation="Tensor")


def _docstring(op: OpInfo) -> str:
    doc = op.doc or f"``{op.name}``."
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


def make_function(op: OpInfo) -> Callable[..., Tensor]:
    """The public function a row asks for: its inputs in, the dispatch point's result out.

    Example:
        >>> from gradviz.ops import OPS
        >>> exp = make_function(OPS["exp"])
        >>> exp.__name__, str(exp.__signature__)
        ('exp', "(input) -> 'Tensor'")
    """
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
        setattr(Tensor, op.function, fn)
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
        if getattr(getattr(Tensor, name, None), "op", None) is op:
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
