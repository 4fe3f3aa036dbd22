"""A row's signature in PyTorch's schema notation, and what it says about the Python API.

PyTorch declares each op once, in ``native_functions.yaml``, as a schema::

    softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor

and generates its Python bindings, its ``Tensor`` method and its documentation from it. A row of
gradviz's table carries the same text (``defop(..., signature=...)``); :func:`parse` reads it
into a :class:`Schema`, whose :meth:`Schema.python_signature` is the signature of the generated
function (the first ``self`` is called ``input`` there, as torch's Python functions call it).
The grammar is the part of torch's that the table uses: ``name[.overload](args) -> returns``,
each argument ``Type name[=default]``, a lone ``*`` before the keyword-only ones; types such as
``Tensor``, ``Tensor?``, ``Tensor[]``, ``Tensor(a!)``, ``int[2]``, ``int[1]?``, ``Scalar``,
``ScalarType?``, ``Generator?``.
"""

from __future__ import annotations

import ast
import inspect
import keyword
from dataclasses import dataclass
from typing import Any

__all__ = ["Argument", "Schema", "parse", "NO_DEFAULT"]

NO_DEFAULT: Any = inspect.Parameter.empty

# Defaults that are names in torch's schemas, as the Python value they stand for (``reduction=
# Mean`` is the integer 1 in aten; the memory formats and layouts stay their names).
_NAMED_DEFAULTS = {"None": None, "True": True, "False": False, "Mean": 1, "Sum": 2}


@dataclass(frozen=True)
class Argument:
    """One argument of a schema: ``int[1]? dim=None`` is type ``int[1]?``, name ``dim``,
    default ``None``."""

    name: str
    type: str
    default: Any = NO_DEFAULT
    kwarg_only: bool = False

    @property
    def is_tensor(self) -> bool:
        """``Tensor``, ``Tensor?``, ``Tensor(a!)``, ``Tensor[]`` ...: what a row's inputs are."""
        return self.type.startswith("Tensor")

    @property
    def python_name(self) -> str:
        """The name as a Python parameter: a keyword (``from`` of ``uniform_``) gains ``_``."""
        return self.name + "_" if keyword.iskeyword(self.name) else self.name


@dataclass(frozen=True)
class Schema:
    """A parsed schema: ``name``, ``overload`` (``"int"`` of ``softmax.int``, else ``""``), the
    arguments in order, and the returns as written."""

    name: str
    overload: str
    arguments: tuple[Argument, ...]
    returns: str
    text: str

    @property
    def inplace(self) -> bool:
        """An in-place schema (``add_``): its first argument is written (``Tensor(a!) self``)."""
        return self.name.endswith("_") and not self.name.endswith("__")

    def argument(self, name: str) -> Argument:
        """The argument called ``name``."""
        for a in self.arguments:
            if a.name == name:
                return a
        raise KeyError(name)

    def python_signature(self, first: str = "input", out: bool = False) -> inspect.Signature:
        """The generated function's signature: the first argument named ``first`` (``input``
        for ``gradviz.softmax``, ``self`` for ``Tensor.softmax``), arguments after ``*``
        keyword-only, and a keyword-only ``out=None`` when the row has an out= variant.

        Example:
            >>> str(parse("softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor")
            ...     .python_signature())
            "(input, dim, dtype=None) -> 'Tensor'"
        """
        P = inspect.Parameter  # noqa: N806
        params = []
        for i, a in enumerate(self.arguments):
            name = first if i == 0 and a.name == "self" else a.python_name
            kind = P.KEYWORD_ONLY if a.kwarg_only else P.POSITIONAL_OR_KEYWORD
            params.append(P(name, kind, default=a.default))
        if out:
            params.append(P("out", P.KEYWORD_ONLY, default=None))
        return inspect.Signature(params, return_annotation="Tensor")


def _split(text: str) -> list[str]:
    """Split ``text`` at the commas outside brackets and quotes."""
    parts, depth, quote, start = [], 0, "", 0
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def _default(text: str, schema: str) -> Any:
    """A default as written in a schema, as a Python value; lists become tuples (immutable
    defaults, and torch's Python layer takes either)."""
    if text in _NAMED_DEFAULTS:
        return _NAMED_DEFAULTS[text]
    if text.isidentifier():  # contiguous_format, strided ...: kept as the name
        return text
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        raise ValueError(f"schema {schema!r}: cannot read the default {text!r}") from None
    return tuple(value) if isinstance(value, list) else value


def parse(text: str) -> Schema:
    """Read a schema (an ``aten::`` prefix is allowed and dropped).

    Example:
        >>> s = parse("sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, "
        ...           "ScalarType? dtype=None) -> Tensor")
        >>> s.name, s.overload, [a.name for a in s.arguments if a.kwarg_only]
        ('sum', 'dim_IntList', ['dtype'])
        >>> s.argument("keepdim").default, s.argument("dim").default is NO_DEFAULT
        (False, True)
    """
    body = text.strip().removeprefix("aten::")
    try:
        head, rest = body.split("(", 1)
        depth, close = 1, -1
        for i, ch in enumerate(rest):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0:
                close = i
                break
        args_text, tail = rest[:close], rest[close + 1:].strip()
        if close < 0 or not tail.startswith("->"):
            raise ValueError
    except ValueError:
        raise ValueError(f"schema {text!r}: expected 'name(args) -> returns'") from None
    name, _, overload = head.strip().partition(".")
    if not name.isidentifier():
        raise ValueError(f"schema {text!r}: {name!r} is not an op name")
    arguments: list[Argument] = []
    kwarg_only = False
    for part in _split(args_text):
        if part == "*":
            kwarg_only = True
            continue
        decl, eq, default = part.partition("=")
        pieces = decl.split()
        if len(pieces) != 2 or not pieces[1].isidentifier():
            raise ValueError(f"schema {text!r}: cannot read the argument {part!r}")
        value = _default(default.strip(), text) if eq else NO_DEFAULT
        arguments.append(Argument(pieces[1], pieces[0], value, kwarg_only))
    names = [a.name for a in arguments]
    if len(set(names)) != len(names):
        raise ValueError(f"schema {text!r}: an argument name appears twice")
    return Schema(name, overload, tuple(arguments), tail[2:].strip(), text.strip())
