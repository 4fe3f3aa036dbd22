"""PyTorch's argument-parser texts where Python's own differ (issue #20).

A Tensor method written in Python gets Python's binding errors ("missing 1 required positional
argument: 'dim'"); torch's parser words them its own way (``missing 1 required positional
arguments: "dim"``, and counts arguments without ``self``). :func:`method` wraps a function
installed as a Tensor method so that such an error, and an overload error a function raised in
its function form (``got (Tensor, max=str)``), read as torch's method form.

Example:
    >>> import gradviz
    >>> try:
    ...     gradviz.ones(2, 3).transpose(0)
    ... except TypeError as e:
    ...     print(e)
    transpose() missing 1 required positional arguments: "dim1"
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

from gradviz._factories import invalid_combination

__all__ = ["method", "function", "raw", "overload_error", "parser_text"]

# Functions whose torch overload error names a single signature: (function form, method form).
_SIGNATURES: dict[str, tuple[str, str]] = {
    name: ("(Tensor input, Tensor other, *, Number alpha = 1, Tensor out = None)",
           "(Tensor other, *, Number alpha = 1)") for name in ("add", "sub")}

_MISSING = re.compile(r"^.*?\(\) missing (\d+) required positional arguments?: (.*)$")
_TAKES = re.compile(r"^.*?\(\) takes (?:from (\d+) to )?(\d+) positional arguments? but (\d+) "
                    r"(?:was|were) given$")


def overload_error(fn: str, args: tuple, kwargs: dict, method: bool = False) -> TypeError:
    """torch's "received an invalid combination of arguments" error for a call of ``fn`` (as a
    function, or with ``method`` as a Tensor method: ``args`` then leave ``self`` out).

    Example:
        >>> overload_error("add", (), {})
        TypeError('add() received an invalid combination of arguments - got (), but expected (Tensor input, Tensor other, *, Number alpha = 1, Tensor out = None)')
    """  # noqa: E501 - a doctest's output is one line
    err = invalid_combination(fn, args, kwargs)
    sig = _SIGNATURES.get(fn)
    if sig is not None:
        head = str(err).split(", but expected", 1)[0]
        err = TypeError(f"{head}, but expected {sig[1] if method else sig[0]}")
    # A method wrapper restates a function-form error without `self` (see `method`).
    err.torch_call = (fn, args, kwargs)  # type: ignore[attr-defined]
    return err


def parser_text(name: str, message: str, method: bool) -> str | None:
    """torch's wording of one of Python's binding errors, or None if it is another error.

    Example:
        >>> parser_text("add", "add() takes 2 positional arguments but 3 were given", True)
        'add() takes 1 positional argument but 2 were given'
    """
    m = _MISSING.match(message)
    if m is not None:
        n, names = int(m[1]), re.findall(r"'([^']*)'", m[2])
        # torch's quirk, kept: "1 ... arguments", "2 ... argument".
        return (f"{name}() missing {n} required positional argument{'s' if n == 1 else ''}: "
                + ", ".join(f'"{a}"' for a in names))
    m = _TAKES.match(message)
    if m is not None:
        shift = 1 if method else 0  # torch does not count `self`
        low = None if m[1] is None else int(m[1]) - shift
        high, given = int(m[2]) - shift, int(m[3]) - shift
        took = f"from {low} to {high} positional arguments" if low is not None else (
            f"{high} positional argument{'' if high == 1 else 's'}")
        return f"{name}() takes {took} but {given} {'was' if given == 1 else 'were'} given"
    return None


def method(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    """``fn`` as the Tensor method ``name``, its argument errors worded as torch's.

    Example:
        >>> import gradviz
        >>> from gradviz.ops import functional as F
        >>> try:
        ...     method(F.cumsum, "cumsum")(gradviz.ones(2))
        ... except TypeError as e:
        ...     print(e)
        cumsum() missing 1 required positional arguments: "dim"
    """
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(self, *args, **kwargs)
        except TypeError as e:
            tb = e.__traceback__
            # Raised while binding the arguments: `fn`'s frame never started.
            if tb is not None and tb.tb_next is None:
                if name in _SIGNATURES and not kwargs and "missing" in str(e):
                    raise overload_error(name, args, kwargs, method=True) from None
                text = parser_text(name, str(e), method=True)
                if text is not None:
                    raise TypeError(text) from None
            called = getattr(e, "torch_call", None)
            if called is not None and called[1][:1] and called[1][0] is self:
                raise overload_error(called[0], called[1][1:], called[2], method=True) from None
            raise

    functools.update_wrapper(call, fn)
    call.__name__ = name
    return call


def function(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    """``fn`` as the function ``gradviz.<name>``, its argument errors worded as torch's (an
    overload error naming the signature for the functions torch words so, such as ``add``).

    Example:
        >>> import gradviz
        >>> try:
        ...     gradviz.add(gradviz.ones(2))
        ... except TypeError as e:
        ...     print(e)  # doctest: +ELLIPSIS
        add() received an invalid combination of arguments - got (Tensor), but expected (...)
    """
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except TypeError as e:
            tb = e.__traceback__
            if tb is None or tb.tb_next is not None:  # raised inside `fn`: not a binding error
                raise
            if name in _SIGNATURES:
                raise overload_error(name, args, kwargs) from None
            text = parser_text(name, str(e), method=False)
            if text is None:
                raise
            raise TypeError(text) from None

    functools.update_wrapper(call, fn)
    call._torch_raw = fn  # type: ignore[attr-defined]
    return call


def raw(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The function :func:`function` wrapped (operators such as ``x + y`` call it directly:
    their arguments are always bound, and the extra frame would cost on every op)."""
    return getattr(fn, "_torch_raw", fn)
