"""Traces as versioned JSON: write, read back, and validate (no eval, no pickle).

The format is documented in ``docs/trace-schema.md``. Loading checks every field's type and
reports the first problem with its path (``runs[0].steps[3].kind``) in a :class:`TraceFormatError`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
import tempfile
import types
import typing
from collections.abc import Iterable, Iterator
from typing import IO, Any, Union

from gradviz._version import __version__
from gradviz.trace.model import (
    BackwardRun,
    NodeInfo,
    OpRecord,
    SavedInfo,
    SourceLoc,
    Step,
    TensorInfo,
)

__all__ = ["SCHEMA", "TraceFormatError", "trace_to_dict", "dumps", "save", "load_trace",
           "trace_from_dict", "atomic_write", "encode_json"]

SCHEMA = "gradviz.trace/1"
_SCHEMA_PREFIX = "gradviz.trace/"


class TraceFormatError(ValueError):
    """A file that is not a valid gradviz trace (malformed, another format, newer schema)."""


def trace_to_dict(tr: Any, runs: list[int] | None = None) -> dict[str, Any]:
    """A trace as plain JSON-ready data.

    Args:
        tr: the trace.
        runs: keep only these runs (indices into ``tr.runs``); the others are never converted.

    Example:
        >>> import gradviz
        >>> with gradviz.trace() as tr:
        ...     (gradviz.ones(2, requires_grad=True) * 3).sum().backward()
        >>> [r["id"] for r in trace_to_dict(tr, runs=[])["runs"]]
        []
    """
    chosen = tr.runs if runs is None else [tr.runs[i] for i in runs]
    return {
        "schema": SCHEMA,
        "gradviz_version": __version__,
        "name": tr.name,
        "options": {"values": tr.values, "keep_runs": tr.keep_runs},
        "runs_total": tr.runs_total,
        "notes": list(tr.notes),
        "tensors": [dataclasses.asdict(t) for t in tr.tensors.values()],
        "ops": [dataclasses.asdict(o) for o in tr.ops],
        "nodes": [dataclasses.asdict(n) for n in tr.nodes.values()],
        "runs": [dataclasses.asdict(r) for r in chosen],
    }


def _fields(obj: Any) -> dict[str, Any]:
    """A dataclass's fields as a shallow dict: the encoder walks the values itself, so nothing
    is deep-copied (``dataclasses.asdict`` copied the whole trace before a byte was written)."""
    names = _FIELD_NAMES.get(type(obj))
    if names is None:
        names = _FIELD_NAMES[type(obj)] = tuple(f.name for f in dataclasses.fields(obj))
    return {n: getattr(obj, n) for n in names}


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _default(obj: Any) -> Any:
    """What the encoder does with a value JSON has no type for."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return _fields(obj)
    raise TypeError(f"{type(obj).__name__} is not JSON serializable")


def _non_finite(v: float) -> str:
    # The spelling the recorder uses for non-finite constants (see model._const).
    return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")


def encode_json(obj: Any) -> str:
    """Compact JSON for anything, without recursion: for data the standard encoder refuses.

    What a trace read from a file may hold (NaN, nesting deeper than the recursion limit), a
    cycle or a type JSON does not know: non-finite floats become ``"nan"``/``"inf"``/``"-inf"``
    (the recorder's spelling), unknown objects their ``repr``, a container met again inside
    itself ``"<cycle>"``. Slower than ``json.dumps``: a fallback, not the usual path.

    Example:
        >>> encode_json({"a": [1.5, float("nan")], "b": (None, True)})
        '{"a":[1.5,"nan"],"b":[null,true]}'
    """
    out: list[str] = []
    todo: list[Any] = [obj]  # values to encode, _Lit pieces of syntax, _Close markers
    open_ids: set[int] = set()  # containers being written (the cycle check)
    enc = json.encoder.encode_basestring  # ensure_ascii=False spelling, as the fast path

    while todo:
        item = todo.pop()
        if type(item) is _Lit:
            out.append(item)
            continue
        if type(item) is _Close:
            open_ids.discard(item.key)
            continue
        if dataclasses.is_dataclass(item) and not isinstance(item, type):
            item = _fields(item)
        if isinstance(item, str):
            out.append(enc(item))
        elif item is None or isinstance(item, bool):
            out.append("null" if item is None else ("true" if item else "false"))
        elif isinstance(item, int):
            out.append(int.__repr__(item))
        elif isinstance(item, float):
            out.append(float.__repr__(item) if math.isfinite(item) else enc(_non_finite(item)))
        elif isinstance(item, (dict, list, tuple)):
            if id(item) in open_ids:
                out.append(enc("<cycle>"))
                continue
            open_ids.add(id(item))
            parts: list[Any] = [_Lit("{" if isinstance(item, dict) else "[")]
            if isinstance(item, dict):
                for i, (k, v) in enumerate(item.items()):
                    key = k if isinstance(k, str) else str(k)
                    parts += [_Lit(("," if i else "") + enc(key) + ":"), v]
            else:
                for i, v in enumerate(item):
                    parts += [_Lit(",")] if i else []
                    parts.append(v)
            parts += [_Lit("}" if isinstance(item, dict) else "]"), _Close(id(item))]
            todo.extend(reversed(parts))
        elif hasattr(item, "item") and callable(item.item):  # NumPy scalars
            todo.append(item.item())
        else:
            out.append(enc(repr(item)))
    return "".join(out)


class _Lit(str):
    """A piece of JSON syntax on :func:`encode_json`'s work stack."""


class _Close:
    """The end of a container on :func:`encode_json`'s work stack (ends its cycle check)."""

    __slots__ = ("key",)

    def __init__(self, key: int) -> None:
        self.key = key


def _chunks(tr: Any, indent: int | None) -> Iterator[str]:
    """The JSON text of a trace, a record at a time (NOTE [streamed saving]).

    NOTE [streamed saving]: building the whole document before writing it took about six times
    the trace's own memory (issue #20: 3.4 GB to save a 100k-op chain recorded in 640 MB). Each
    tensor, op, node and engine step is encoded on its own and yielded, so saving needs the
    trace plus one record. With ``indent``, the document's structure is indented and each
    record is one compact line: the C encoder, which Python uses only without indentation,
    writes it about four times faster, and one record per line reads well in a diff. A record
    the standard encoder refuses is written by :func:`encode_json` instead, so one odd value
    never costs the whole file.
    """
    # Records: compact (the C encoder), ", " and ": " as json.dumps writes them.
    encoder = json.JSONEncoder(ensure_ascii=False, allow_nan=False, default=_default)
    nl, colon, comma = ("\n", ": ", ",") if indent is not None else ("", ": ", ", ")

    def pad(depth: int) -> str:
        return nl + " " * ((indent or 0) * depth)

    def encode(value: Any) -> str:
        try:
            return encoder.encode(value)
        except (ValueError, TypeError, RecursionError):
            return encode_json(value)

    def members(items: Iterable[tuple[str, Any]], depth: int) -> Iterator[str]:
        """An object's members; a value that is an iterator is streamed as a list."""
        yield "{"
        first = True
        for key, value in items:
            yield ("" if first else comma) + pad(depth + 1) + encoder.encode(key) + colon
            first = False
            if isinstance(value, Iterator):
                yield from elements(value, depth + 1)
            else:
                yield encode(value)
        yield ("}" if first else pad(depth) + "}")

    def elements(values: Iterator[Any], depth: int) -> Iterator[str]:
        yield "["
        first = True
        for value in values:
            yield ("" if first else comma) + pad(depth + 1)
            first = False
            if isinstance(value, BackwardRun):
                run = _fields(value)
                run["steps"] = iter(value.steps)
                yield from members(run.items(), depth + 1)
            else:
                yield encode(value)
        yield ("]" if first else pad(depth) + "]")

    head = {"schema": SCHEMA, "gradviz_version": __version__, "name": tr.name,
            "options": {"values": tr.values, "keep_runs": tr.keep_runs},
            "runs_total": tr.runs_total, "notes": list(tr.notes)}
    body = {"tensors": iter(tr.tensors.values()), "ops": iter(tr.ops),
            "nodes": iter(tr.nodes.values()), "runs": iter(tr.runs)}
    yield from members([*head.items(), *body.items()], 0)


def dumps(tr: Any, indent: int | None = 1) -> str:
    """JSON text of a trace. The same trace always gives the same text.

    With ``indent``, the structure is indented and each tensor, op, node and step is one line
    (NOTE [streamed saving]); ``indent=None`` gives ``json.dumps``'s compact text.

    Example:
        >>> import gradviz, json
        >>> with gradviz.trace() as tr:
        ...     (gradviz.ones(2, requires_grad=True) * 3).sum().backward()
        >>> json.loads(dumps(tr))["schema"]
        'gradviz.trace/1'
    """
    return "".join(_chunks(tr, indent))


def save(tr: Any, path: str | os.PathLike[str]) -> None:
    """Write a trace's JSON to ``path`` (UTF-8), atomically and a record at a time.

    The text goes to a temporary file next to ``path`` that replaces ``path`` only once it is
    complete, so a failure (an error, MemoryError, Ctrl-C) leaves the previous file as it was.
    A string Python cannot encode (a lone surrogate from an undecodable file name) is written
    as its JSON escape (``\\udcff``), which reads back as the same string.

    Example:
        >>> import gradviz, tempfile, os
        >>> with gradviz.trace() as tr:
        ...     (gradviz.ones(2, requires_grad=True) * 3).sum().backward()
        >>> p = os.path.join(tempfile.mkdtemp(), "t.json"); save(tr, p)
        >>> gradviz.load_trace(p).summary() == tr.summary()
        True
    """
    with atomic_write(path) as fh:
        # ensure_ascii=False keeps names readable; "backslashreplace" turns the only characters
        # UTF-8 refuses (lone surrogates, found only inside JSON strings) into JSON escapes.
        for chunk in _chunks(tr, 1):
            fh.write(chunk)
        fh.write("\n")


# -- writing files atomically --------------------------------------------------------------------
_UMASK: list[int] = []


def _umask() -> int:
    if not _UMASK:  # read once: os.umask can only be read by setting it
        mask = os.umask(0o022)
        os.umask(mask)
        _UMASK.append(mask)
    return _UMASK[0]


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike[str], mode: str = "w", encoding: str = "utf-8",
                 errors: str = "backslashreplace") -> Iterator[IO[Any]]:
    """Open a temporary file next to ``path``; on success it replaces ``path`` in one step.

    NOTE [atomic outputs]: every file gradviz writes goes through here. The temporary file has
    a unique name in the same folder (``os.replace`` is atomic only within one file system), so
    two processes writing the same file never share one, and readers see the old file or the
    new one, never a part. If the block raises anything, even KeyboardInterrupt, the temporary
    file is removed and ``path`` is left as it was.

    Args:
        path: the file to write.
        mode: ``"w"`` (text) or ``"wb"`` (bytes).
        encoding: for text mode.
        errors: for text mode; the default writes an unencodable character as its escape.

    Example:
        >>> import os, tempfile
        >>> p = os.path.join(tempfile.mkdtemp(), "a.txt")
        >>> with atomic_write(p) as fh:
        ...     _ = fh.write("done")
        >>> open(p).read(), os.listdir(os.path.dirname(p))
        ('done', ['a.txt'])
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"mode must be 'w' or 'wb'; got {mode!r}")
    target = os.path.abspath(os.fspath(path))
    folder, name = os.path.split(target)
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder)
    try:
        try:  # the permissions a plain open() would give, not mkstemp's owner-only 0600
            os.fchmod(fd, 0o666 & ~_umask())
        except (AttributeError, OSError):  # no fchmod on Windows
            pass
        if mode == "wb":
            fh: IO[Any] = os.fdopen(fd, "wb")
        else:
            fh = os.fdopen(fd, "w", encoding=encoding, errors=errors)
        with fh:
            yield fh
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


# -- loading -------------------------------------------------------------------------------------
def _fail(path: str, msg: str) -> TraceFormatError:
    return TraceFormatError(f"malformed gradviz trace: {path}: {msg}")


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


def _check(value: Any, tp: Any, path: str) -> Any:
    """Validate ``value`` against a type annotation and build dataclasses on the way."""
    origin = typing.get_origin(tp)
    if tp is Any:
        return value
    if origin in (Union, types.UnionType):
        args = typing.get_args(tp)
        if value is None and type(None) in args:
            return None
        errors = []
        for a in args:
            if a is type(None):
                continue
            try:
                return _check(value, a, path)
            except TraceFormatError as e:
                errors.append(e)
        raise errors[0] if errors else _fail(path, "unexpected null")
    if dataclasses.is_dataclass(tp):
        if not isinstance(value, dict):
            raise _fail(path, f"expected an object, got {type(value).__name__}")
        hints = _hints(tp)
        kwargs = {}
        for f in dataclasses.fields(tp):
            if f.name not in value:
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                    raise _fail(f"{path}.{f.name}", "missing")
                continue
            kwargs[f.name] = _check(value[f.name], hints[f.name], f"{path}.{f.name}")
        unknown = set(value) - {f.name for f in dataclasses.fields(tp)}
        if unknown:
            raise _fail(path, f"unknown field(s) {sorted(unknown)}")
        return tp(**kwargs)
    if origin is list:
        if not isinstance(value, list):
            raise _fail(path, f"expected a list, got {type(value).__name__}")
        (item,) = typing.get_args(tp) or (Any,)
        return [_check(v, item, f"{path}[{i}]") for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise _fail(path, f"expected an object, got {type(value).__name__}")
        _, vt = typing.get_args(tp) or (str, Any)
        return {k: _check(v, vt, f"{path}.{k}") for k, v in value.items()}
    if tp is bool:
        if not isinstance(value, bool):
            raise _fail(path, f"expected true/false, got {type(value).__name__}")
        return value
    if tp is int:
        if not isinstance(value, int) or isinstance(value, bool):
            raise _fail(path, f"expected an integer, got {type(value).__name__}")
        return value
    if tp is str:
        if not isinstance(value, str):
            raise _fail(path, f"expected a string, got {type(value).__name__}")
        return value
    return value


def trace_from_dict(data: Any) -> Any:
    """Rebuild a :class:`~gradviz.trace.recorder.Trace` from :func:`trace_to_dict` data."""
    from gradviz.trace.recorder import Trace

    if not isinstance(data, dict) or "schema" not in data:
        raise TraceFormatError("not a gradviz trace: the JSON has no 'schema' field (expected "
                               f"{SCHEMA!r}); was it written by `gradviz trace` or Trace.save()?")
    schema = data["schema"]
    if not isinstance(schema, str) or not schema.startswith(_SCHEMA_PREFIX):
        raise TraceFormatError(f"not a gradviz trace: schema is {schema!r}, expected {SCHEMA!r}")
    try:
        version = int(schema[len(_SCHEMA_PREFIX):])
    except ValueError:
        raise TraceFormatError(f"not a gradviz trace: unknown schema {schema!r}") from None
    if version > int(SCHEMA.rsplit("/", 1)[1]):
        raise TraceFormatError(f"this trace uses schema {schema!r}, newer than this gradviz "
                               f"understands ({SCHEMA!r}); upgrade gradviz to read it")
    for key, kind in (("tensors", list), ("ops", list), ("nodes", list), ("runs", list),
                      ("options", dict)):
        if not isinstance(data.get(key), kind):
            raise _fail(key, f"expected a {'list' if kind is list else 'object'}")
    options = data["options"]
    values = options.get("values", "small")
    keep = options.get("keep_runs")
    try:
        tr = Trace(values=values, keep_runs=keep, name=_check(data.get("name"), str | None,
                                                              "name"))
    except ValueError as e:
        raise _fail("options", str(e)) from None
    tensors = [_check(t, TensorInfo, f"tensors[{i}]") for i, t in enumerate(data["tensors"])]
    tr.tensors = {t.id: t for t in tensors}
    tr.ops = [_check(o, OpRecord, f"ops[{i}]") for i, o in enumerate(data["ops"])]
    nodes = [_check(n, NodeInfo, f"nodes[{i}]") for i, n in enumerate(data["nodes"])]
    tr.nodes = {n.id: n for n in nodes}
    tr.runs = [_check(r, BackwardRun, f"runs[{i}]") for i, r in enumerate(data["runs"])]
    tr.notes = _check(data.get("notes", []), list[str], "notes")
    tr.runs_total = _check(data.get("runs_total", len(tr.runs)), int, "runs_total")
    _check_references(tr)
    return tr


def _check_references(tr: Any) -> None:
    """Ids must point at things the file defines."""
    for op in tr.ops:
        for i, ref in enumerate(op.outputs):
            if ref not in tr.tensors:
                raise _fail(f"ops[{op.id}].outputs[{i}]", f"unknown tensor {ref!r}")
        if op.node is not None and op.node not in tr.nodes:
            raise _fail(f"ops[{op.id}].node", f"unknown node {op.node!r}")
    for n in tr.nodes.values():
        for i, (nxt, _nr) in enumerate(n.next_functions):
            if nxt is not None and nxt not in tr.nodes:
                raise _fail(f"nodes[{n.id}].next_functions[{i}]", f"unknown node {nxt!r}")
    for r in tr.runs:
        for i, nid in enumerate(r.nodes):
            if nid not in tr.nodes:
                raise _fail(f"runs[{r.id}].nodes[{i}]", f"unknown node {nid!r}")


def load_trace(path: str | os.PathLike[str]) -> Any:
    """Read a trace written by :meth:`Trace.save` (or ``gradviz trace``).

    Raises:
        TraceFormatError: the file is not JSON, not a trace, of a newer schema, or malformed;
            the message names the problem and where it is.
        OSError: the file cannot be read.

    Example:
        >>> import gradviz, tempfile, os
        >>> with gradviz.trace() as tr:
        ...     (gradviz.ones(2, requires_grad=True) * 3).sum().backward()
        >>> p = os.path.join(tempfile.mkdtemp(), "t.json"); tr.save(p)
        >>> gradviz.load_trace(p).summary() == tr.summary()
        True
    """
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise TraceFormatError(f"not a gradviz trace: {os.fspath(path)} is not valid JSON "
                               f"({e.msg} at line {e.lineno}, column {e.colno})") from None
    return trace_from_dict(data)


# Keep the model classes referenced for type-hint resolution in _check.
_MODEL = (SourceLoc, SavedInfo, Step)
