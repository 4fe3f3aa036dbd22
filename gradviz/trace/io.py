"""Traces as versioned JSON: write, read back, and validate (no eval, no pickle).

The format is documented in ``docs/trace-schema.md``. Loading checks every field's type and
reports the first problem with its path (``runs[0].steps[3].kind``) in a :class:`TraceFormatError`.
"""

from __future__ import annotations

import dataclasses
import json
import os
import types
import typing
from typing import Any, Union

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
           "trace_from_dict"]

SCHEMA = "gradviz.trace/1"
_SCHEMA_PREFIX = "gradviz.trace/"


class TraceFormatError(ValueError):
    """A file that is not a valid gradviz trace (malformed, another format, newer schema)."""


def trace_to_dict(tr: Any) -> dict[str, Any]:
    """A trace as plain JSON-ready data."""
    from gradviz import __version__

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
        "runs": [dataclasses.asdict(r) for r in tr.runs],
    }


def dumps(tr: Any, indent: int | None = 1) -> str:
    """JSON text of a trace. The same trace always gives the same text."""
    return json.dumps(trace_to_dict(tr), indent=indent, ensure_ascii=False, allow_nan=False)


def save(tr: Any, path: str | os.PathLike[str]) -> None:
    """Write a trace's JSON to ``path`` (UTF-8)."""
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(dumps(tr))
        fh.write("\n")


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
