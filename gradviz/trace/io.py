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
import re
import tempfile
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any

import numpy as np

from gradviz._version import __version__
from gradviz.trace.model import (
    STEP_TYPES,
    BackwardGraph,
    BackwardRun,
    ModuleSummary,
    NodeInfo,
    OpRecord,
    SavedInfo,
    SourceLoc,
    Step,
    TensorInfo,
    Trace,
    freed_names,
    step_from_dict,
    step_to_dict,
)

__all__ = ["SCHEMA", "TraceFormatError", "trace_to_dict", "dumps", "save", "load_trace",
           "trace_from_dict", "atomic_write", "encode_json"]

SCHEMA = "gradviz.trace/2"
_SCHEMA_PREFIX = "gradviz.trace/"
SCHEMA_V1 = "gradviz.trace/1"  # still read: converted on loading (see _from_v1)


class TraceFormatError(ValueError):
    """A file that is not a valid gradviz trace (malformed, another format, newer schema)."""


def trace_to_dict(tr: Any, runs: list[int] | None = None, copy: bool = True) -> dict[str, Any]:
    """A trace as plain JSON-ready data.

    Args:
        tr: the trace.
        runs: keep only these runs (indices into ``tr.runs``); the others are never converted.
        copy: False shares the values inside (shapes, value summaries, lists) with the trace
            instead of copying them: for data that is only written out (the step player's
            page), several times faster on a big trace. Change nothing in it then.

    Example:
        >>> import gradviz
        >>> with gradviz.trace() as tr:
        ...     (gradviz.ones(2, requires_grad=True) * 3).sum().backward()
        >>> [r["id"] for r in trace_to_dict(tr, runs=[])["runs"]]
        []
        >>> trace_to_dict(tr, copy=False) == trace_to_dict(tr)
        True
    """
    plain = dataclasses.asdict if copy else _plain
    chosen = tr.runs if runs is None else [tr.runs[i] for i in runs]
    return {
        "schema": SCHEMA,
        "gradviz_version": __version__,
        "name": tr.name,
        "options": {"values": tr.values, "keep_runs": tr.keep_runs},
        "runs_total": tr.runs_total,
        "notes": list(tr.notes),
        "module_classes": dict(tr.module_classes),
        "modules": {k: plain(m) for k, m in tr.modules.items()},
        "run_log": [dict(r) for r in tr.run_log],
        "tensors": [plain(t) for t in tr.tensors.values()],
        "ops": [plain(o) for o in tr.ops],
        "nodes": [plain(n) for n in tr.nodes.values()],
        "runs": [_run_dict(r, plain) for r in chosen],
    }


def _run_dict(run: BackwardRun, plain: Callable[[Any], dict[str, Any]] = dataclasses.asdict
              ) -> dict[str, Any]:
    d = plain(dataclasses.replace(run, steps=[]))
    d["steps"] = [step_to_dict(s) for s in run.steps]
    return d


def _plain(obj: Any) -> dict[str, Any]:
    """A dataclass as ``dataclasses.asdict`` gives it, but sharing every value that is not a
    dataclass (no list or dict copied): the model's nested dataclasses (a ``SourceLoc``, a
    node's ``SavedInfo`` list, a gradient graph's nodes) become dicts, level by level."""
    root = _fields(obj)
    todo = [root]
    while todo:
        d = todo.pop()
        for k, v in d.items():
            if _is_record(v):
                d[k] = sub = _fields(v)
                todo.append(sub)
            elif type(v) is list and v and _is_record(v[0]):
                d[k] = subs = [_fields(x) for x in v]
                todo.extend(subs)
            elif type(v) is dict and v and _is_record(next(iter(v.values()))):
                d[k] = subd = {key: _fields(x) for key, x in v.items()}
                todo.extend(subd.values())
    return root


def _is_record(value: Any) -> bool:
    """Whether ``value`` is a dataclass instance (not a class), decided once per type: the
    conversion asks it of every value of a big trace (``dataclasses.is_dataclass`` each time
    was a third of the step player's conversion)."""
    cls = type(value)
    known = _RECORD_TYPES.get(cls)
    if known is None:
        known = _RECORD_TYPES[cls] = dataclasses.is_dataclass(cls)
    return known


_RECORD_TYPES: dict[type, bool] = {}


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
    if _is_record(obj):
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
                run["steps"] = map(step_to_dict, value.steps)
                yield from members(run.items(), depth + 1)
            else:
                yield encode(value)
        yield ("]" if first else pad(depth) + "]")

    head = {"schema": SCHEMA, "gradviz_version": __version__, "name": tr.name,
            "options": {"values": tr.values, "keep_runs": tr.keep_runs},
            "runs_total": tr.runs_total, "notes": list(tr.notes),
            "module_classes": dict(tr.module_classes),
            "modules": {k: dataclasses.asdict(m) for k, m in tr.modules.items()},
            "run_log": list(tr.run_log)}
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
        'gradviz.trace/2'
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
# NOTE [validated loading]: a trace file may come from anywhere, so reading one is three passes,
# each turning every problem into ONE line, ``<file>: <where>: <what>`` (a TraceFormatError):
#   1. parsing: UTF-8, JSON syntax, and what Python's parser would accept but a trace never
#      holds: NaN/Infinity, integers over 4,300 digits (int() refuses them), numbers too large
#      for a float, nesting deeper than MAX_DEPTH (json.loads would recurse into it);
#   2. the schema (gradviz/trace/schema.py, pydantic): every field's type, range and contents;
#   3. references: every tensor, op, node and run id the file mentions, it defines.
MAX_DEPTH = 100  # a trace nests ~10 levels plus a tensor's dimensions (NumPy allows 64)
MAX_DIGITS = 4300  # Python's default int_max_str_digits, whatever the process has set
# A JSON string, or an unterminated one running to the end (a file cut off inside a message).
# Matching from every quote, it never fails and so never scans the rest of the text again from
# a later quote: one pass, where requiring the closing quote took time quadratic in the length.
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)', re.DOTALL)
# What sends a document to the slow parse, which checks every number: a float with 300 digits
# or more may overflow (1e308 is the largest), and so may a three-digit exponent.
_SUSPECT = re.compile(r"NaN|Infinity|[0-9]{300}|[eE][+-]?[0-9]{3}")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _fail(where: str, path: str, msg: str) -> TraceFormatError:
    # repr() of user text keeps the message on one line (newlines and controls as escapes).
    return TraceFormatError(f"{where}: {path}: {msg}".replace("\n", "\\n").replace("\r", "\\r"))


def _key(key: str) -> str:
    """A dict key as a path step: ``.n3``, or ``['a b']`` for a key that is not a name."""
    return f".{key}" if _IDENT.fullmatch(key) else f"[{key!r}]"


def _path(loc: Iterable[Any]) -> str:
    """``("runs", 0, "steps", 3, "node")`` -> ``runs[0].steps[3].node``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _IDENT.fullmatch(part):
            out += ("." if out else "") + part
        else:
            out += f"[{part!r}]"
    return out or "(the document)"


def _show(value: Any) -> str:
    """A short, one-line description of a value found in the file."""
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return f"a list of {len(value)}"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


class _Refused:
    """What the slow parse puts in place of a number a trace cannot hold (found by path)."""

    __slots__ = ("why",)

    def __init__(self, why: str) -> None:
        self.why = why


def _refuse_constant(name: str) -> _Refused:
    return _Refused(f"{name} is not a JSON number (a trace writes it as \"nan\", \"inf\", "
                    "\"-inf\")")


def _parse_int(text: str) -> Any:
    digits = len(text) - text.startswith("-")
    if digits > MAX_DIGITS:
        return _Refused(f"an integer of {digits} digits (at most {MAX_DIGITS})")
    try:
        return int(text)
    except ValueError:  # the process set a lower int_max_str_digits
        return _Refused(f"an integer of {digits} digits is more than this Python reads")


def _parse_float(text: str) -> Any:
    v = float(text)
    return v if math.isfinite(v) else _Refused(f"{text[:20]} is too large for a float")


def _max_depth(text: str) -> tuple[int, int]:
    """The deepest nesting of ``[``/``{`` outside strings, and the offset (in the text with
    strings emptied) where it is first reached. No recursion: a running sum over the brackets,
    in chunks so that a large file needs little extra memory."""
    bare = _STRING.sub('""', text).encode("ascii", "replace")
    deepest, where, depth, chunk = 0, 0, 0, 1 << 22
    for start in range(0, len(bare), chunk):
        arr = np.frombuffer(bare, np.uint8, min(chunk, len(bare) - start), start)
        pos = np.flatnonzero((arr == 91) | (arr == 123) | (arr == 93) | (arr == 125))
        if not pos.size:
            continue
        step = np.where((arr[pos] == 91) | (arr[pos] == 123), 1, -1)
        running = depth + np.cumsum(step)
        top = int(running.argmax())
        if running[top] > deepest:
            deepest, where = int(running[top]), start + int(pos[top])
        depth = int(running[-1])
    return deepest, where


def _find_refused(data: Any) -> tuple[list[Any], _Refused] | None:
    """The path to the first :class:`_Refused` in parsed JSON (iteratively, in file order)."""
    todo: list[tuple[list[Any], Any]] = [([], data)]
    while todo:
        loc, value = todo.pop()
        if isinstance(value, _Refused):
            return loc, value
        if isinstance(value, dict):
            todo.extend((loc + [k], v) for k, v in reversed(value.items()))
        elif isinstance(value, list):
            todo.extend((loc + [i], v) for i, v in reversed(list(enumerate(value))))
    return None


def parse_json(text: str, where: str = "trace") -> Any:
    """JSON text as Python data, refusing what a trace never holds (NOTE [validated loading]).

    Args:
        text: the document.
        where: names the document in errors (the file name).

    Raises:
        TraceFormatError: not JSON, nested deeper than :data:`MAX_DEPTH`, or holding NaN,
            Infinity, an integer over :data:`MAX_DIGITS` digits or a float that overflows.

    Example:
        >>> parse_json('{"a": [1, 2.5, "\\\\udcff"]}')
        {'a': [1, 2.5, '\\udcff']}
        >>> parse_json('{"a": [1, NaN]}', "t.json")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        gradviz.trace.io.TraceFormatError: t.json: a[1]: NaN is not a JSON number (a trace ...)
    """
    deepest, offset = _max_depth(text)
    if deepest > MAX_DEPTH:
        bare = _STRING.sub('""', text)
        line = bare.count("\n", 0, offset) + 1
        raise _fail(where, f"line {line}", f"nested {deepest} levels deep; a gradviz trace "
                    f"nests at most {MAX_DEPTH}")
    slow = _SUSPECT.search(_STRING.sub('""', text)) is not None
    try:
        if slow:
            data = json.loads(text, parse_constant=_refuse_constant, parse_int=_parse_int,
                              parse_float=_parse_float)
        else:
            data = json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as e:
        raise _fail(where, f"line {e.lineno}, column {e.colno}",
                    f"not valid JSON ({e.msg})") from None
    except (ValueError, RecursionError) as e:  # belt and braces: the checks above come first
        raise _fail(where, "(the document)", f"not a JSON document Python can read ({e})"
                    ) from None
    if slow or "NaN" in text or "Infinity" in text:
        found = _find_refused(data)
        if found is not None:
            raise _fail(where, _path(found[0]), found[1].why)
    return data


_PATTERNS = {"^t[0-9]{1,18}$": "a tensor id like 't0'", "^op[0-9]{1,18}$": "an op id like 'op0'",
             "^[ng][0-9]{1,18}$": "a node id like 'n0'", "^run[0-9]{1,18}$": "a run id like 'run0'"}
_KINDS = {"string_type": "a string", "int_type": "an integer", "bool_type": "true or false",
          "float_type": "a number", "list_type": "a list", "tuple_type": "a list",
          "dict_type": "an object", "model_type": "an object", "model_attributes_type":
          "an object", "none_required": "null"}


def _schema_error(err: dict[str, Any], where: str) -> TraceFormatError:
    """One pydantic error as one line naming its field path."""
    from gradviz.trace import schema  # NOTE [lazy schema]

    loc = list(err["loc"])
    # Drop the names of union branches: our "<...>" tags, a step's kind after its index.
    loc = [p for i, p in enumerate(loc) if not (isinstance(p, str) and (
        p.startswith("<") or p == "[key]"
        or (p in schema.UNION_TAGS and i >= 2 and loc[i - 2] == "steps")))]
    kind, value = err["type"], err.get("input")
    if kind == "missing":
        msg = "missing"
    elif kind == "extra_forbidden":
        msg = "unknown field"
    elif kind in _KINDS:
        msg = f"expected {_KINDS[kind]}, got {_show(value)}"
    elif kind == "string_pattern_mismatch":
        pattern = err.get("ctx", {}).get("pattern", "")
        msg = f"expected {_PATTERNS.get(pattern, 'a dtype name like float32')}, got {_show(value)}"
    elif kind in ("union_tag_invalid", "union_tag_not_found"):
        loc.append("kind")
        tag = value.get("kind") if isinstance(value, dict) else value
        msg = f"expected one of {', '.join(schema.STEP_KINDS)}, got {_show(tag)}"
        if kind == "union_tag_not_found":
            msg = "missing"
    elif kind == "value_error":
        msg = str(err["msg"]).removeprefix("Value error, ")
    else:
        text = str(err["msg"])
        msg = f"{text[:1].lower()}{text[1:]}, got {_show(value)}"
    return _fail(where, _path(loc), msg)


def _check_schema(data: Any, where: str) -> None:
    """The document's version, then every field (pass 2 of NOTE [validated loading])."""
    # NOTE [lazy schema]: pydantic and the models cost ~80 ms at import; only loading needs them.
    from pydantic import ValidationError

    from gradviz.trace import schema

    if not isinstance(data, dict) or "schema" not in data:
        raise _fail(where, "schema", f"missing: not a gradviz trace (expected {SCHEMA!r}); was "
                    "it written by `gradviz trace` or Trace.save()?")
    version = data["schema"]
    if version != SCHEMA:
        tail = version[len(_SCHEMA_PREFIX):] if isinstance(version, str) else ""
        if isinstance(version, str) and version.startswith(_SCHEMA_PREFIX) and tail.isdigit() \
                and tail[0] != "0" and int(tail) > int(SCHEMA.rsplit("/", 1)[1]):
            msg = (f"this trace uses schema {version!r}, newer than this gradviz understands "
                   f"({SCHEMA!r}); upgrade gradviz to read it")
        elif isinstance(version, str) and version.startswith(_SCHEMA_PREFIX):
            msg = (f"unsupported schema version {version!r}; this gradviz reads {SCHEMA!r} and "
                   f"{SCHEMA_V1!r}: record the trace again with this gradviz")
        else:
            msg = f"not a gradviz trace: schema is {_show(version)}, expected {SCHEMA!r}"
        raise _fail(where, "schema", msg)
    try:
        schema.TraceModel.model_validate(data)
    except ValidationError as e:
        raise _schema_error(e.errors(include_url=False)[0], where) from None


# NOTE [schema versions] gradviz.trace/2 (this gradviz) changed only the steps: each is flat
# (``{"index", "kind", "node", <its fields>, "engine_data"}``, model.py's typed steps), an
# ``enqueue`` holds the node's ``priority`` instead of the whole ready queue, an ``execute`` no
# queue at all, and a ``release_saved`` the names of the saved tensors it freed. A /1 file is
# converted to that, then checked as a /2 one; its errors name the converted fields.
def _from_v1(data: dict[str, Any]) -> dict[str, Any]:
    """A ``gradviz.trace/1`` document as ``gradviz.trace/2`` (a shallow copy; what is not in
    the expected shape is left for the schema check to report)."""
    out = dict(data, schema=SCHEMA)
    # Ids are read only where they are strings: anything else is for the schema check to name.
    listed = data.get("nodes")
    nodes = {n["id"]: n for n in listed if isinstance(n, dict) and isinstance(n.get("id"), str)
             } if isinstance(listed, list) else {}
    runs = data.get("runs")
    if not isinstance(runs, list):
        return out
    out["runs"] = [_run_from_v1(r, nodes) if isinstance(r, dict) else r for r in runs]
    return out


def _run_from_v1(run: dict[str, Any], nodes: dict[Any, Any]) -> dict[str, Any]:
    steps = run.get("steps")
    if not isinstance(steps, list):
        return run
    lifo = run.get("engine") == "singa"  # SINGA's queue is a stack: the newest first
    pushes = 0
    new = []
    for s in steps:
        if not isinstance(s, dict) or not isinstance(s.get("data", {}), dict) \
                or not isinstance(s.get("kind"), str) or s["kind"] not in STEP_TYPES:
            new.append(s)
            continue
        fields = dict(s.get("data", {}))
        own = {f.name for f in dataclasses.fields(STEP_TYPES[s["kind"]])} - {
            "index", "node", "engine_data"}
        step = {k: v for k, v in s.items() if k != "data"}
        node_id = s.get("node")
        kind, node = s["kind"], nodes.get(node_id, {}) if isinstance(node_id, str) else {}
        fields.pop("ready", None)  # the queue is replayed now (gradviz/trace/replay.py)
        if kind == "enqueue":
            seq = node.get("sequence_nr", 0) if isinstance(node, dict) else 0
            fields["priority"] = -pushes if lifo else -seq if isinstance(seq, int) else 0
            pushes += 1
        elif kind == "release_saved" and isinstance(node, dict):
            saved = node.get("saved", [])
            try:
                fields["saved"] = freed_names([SavedInfo(**sv) for sv in saved])
            except TypeError:  # a malformed node: the schema check reports it
                fields["saved"] = []
        step.update({k: v for k, v in fields.items() if k in own})
        engine = {k: v for k, v in fields.items() if k not in own}
        if engine:
            step["engine_data"] = engine
        new.append(step)
    return dict(run, steps=new)


def _source(d: dict[str, Any] | None) -> SourceLoc | None:
    return None if d is None else SourceLoc(**d)


def _tensor(d: dict[str, Any]) -> TensorInfo:
    return TensorInfo(**{**d, "source": _source(d.get("source"))})


def _node(d: dict[str, Any]) -> NodeInfo:
    return NodeInfo(**{**d, "saved": [SavedInfo(**s) for s in d.get("saved", [])]})


def _run(d: dict[str, Any]) -> BackwardRun:
    g = d.get("gradient_graph")
    graph = None if g is None else BackwardGraph(
        nodes={k: _node(v) for k, v in g.get("nodes", {}).items()}, roots=g.get("roots", []),
        tensors={k: _tensor(v) for k, v in g.get("tensors", {}).items()})
    return BackwardRun(**{**d, "steps": [step_from_dict(s) for s in d.get("steps", [])],
                          "source": _source(d.get("source")), "gradient_graph": graph})


def trace_from_dict(data: Any, where: str = "trace") -> Any:
    """Build a :class:`~gradviz.trace.model.Trace` from parsed ``trace.json`` data,
    checking every field and every reference first (NOTE [validated loading]).

    Args:
        data: the parsed JSON (:func:`trace_to_dict`'s shape).
        where: names the document in errors (the file name).

    Raises:
        TraceFormatError: one line naming the first problem and its field path.

    Example:
        >>> import gradviz
        >>> with gradviz.trace() as tr:
        ...     (gradviz.ones(2, requires_grad=True) * 3).sum().backward()
        >>> data = trace_to_dict(tr)
        >>> trace_from_dict(data).summary() == tr.summary()
        True
        >>> data["runs"][0]["steps"][1]["node"] = "n99"
        >>> trace_from_dict(data, "trace.json")
        Traceback (most recent call last):
        ...
        gradviz.trace.io.TraceFormatError: trace.json: runs[0].steps[1].node: unknown node id 'n99'
    """
    if isinstance(data, dict) and data.get("schema") == SCHEMA_V1:
        where = f"{where} (schema {SCHEMA_V1}, read as {SCHEMA.rsplit('/', 1)[1]})"
        data = _from_v1(data)
    _check_schema(data, where)
    options = data.get("options", {})
    tr = Trace(name=data.get("name"), values=options.get("values", "small"),
               keep_runs=options.get("keep_runs"))
    tr.tensors = {}
    for i, t in enumerate(data["tensors"]):
        if t["id"] in tr.tensors:
            raise _fail(where, f"tensors[{i}].id", f"duplicate tensor id {t['id']!r}")
        tr.tensors[t["id"]] = _tensor(t)
    tr.ops = [OpRecord(**{**o, "source": _source(o.get("source"))}) for o in data["ops"]]
    tr.nodes = {}
    for i, n in enumerate(data["nodes"]):
        if n["id"] in tr.nodes:
            raise _fail(where, f"nodes[{i}].id", f"duplicate node id {n['id']!r}")
        tr.nodes[n["id"]] = _node(n)
    tr.runs = [_run(r) for r in data["runs"]]
    tr.notes = list(data.get("notes", []))
    tr.module_classes = dict(data.get("module_classes", {}))  # optional: older files lack it
    tr.modules = {k: ModuleSummary(inputs=[tuple(s) for s in m.get("inputs", [])],
                                   outputs=[tuple(s) for s in m.get("outputs", [])],
                                   parameters=m.get("parameters", 0), calls=m.get("calls", 0))
                  for k, m in data.get("modules", {}).items()}  # optional too
    tr.runs_total = data.get("runs_total", len(tr.runs))
    tr.run_log = [dict(r) for r in data.get("run_log", [])]  # optional: older files lack it
    _check_references(tr, where)
    return tr


def _check_references(tr: Any, where: str) -> None:
    """Pass 3 of NOTE [validated loading]: every id the file mentions, it defines."""
    tensors, nodes = tr.tensors, tr.nodes
    ops = {}
    for i, op in enumerate(tr.ops):
        if op.id in ops:
            raise _fail(where, f"ops[{i}].id", f"duplicate op id {op.id!r}")
        ops[op.id] = op

    def need(ref: Any, known: Any, what: str, path: str) -> None:
        if ref is not None and ref not in known:
            raise _fail(where, path, f"unknown {what} id {ref!r}")

    for i, t in enumerate(tensors.values()):
        need(t.grad_fn, nodes, "node", f"tensors[{i}].grad_fn")
        need(t.op, ops, "op", f"tensors[{i}].op")
    for i, op in enumerate(tr.ops):
        for j, ref in enumerate(op.inputs):
            if isinstance(ref, str):
                need(ref, tensors, "tensor", f"ops[{i}].inputs[{j}]")
        for j, ref in enumerate(op.outputs):
            need(ref, tensors, "tensor", f"ops[{i}].outputs[{j}]")
        need(op.node, nodes, "node", f"ops[{i}].node")
        for key, v in op.kwargs.items():
            if isinstance(v, dict) and set(v) == {"tensor"}:
                need(v["tensor"], tensors, "tensor", f"ops[{i}].kwargs{_key(key)}")
    for i, n in enumerate(nodes.values()):
        _check_node(n, f"nodes[{i}]", nodes, tensors, ops, need)
    runs: set[str] = set()
    for i, r in enumerate(tr.runs):
        at = f"runs[{i}]"
        if r.id in runs:
            raise _fail(where, f"{at}.id", f"duplicate run id {r.id!r}")
        runs.add(r.id)
        for name in ("roots", "inputs"):
            for j, ref in enumerate(getattr(r, name)):
                need(ref, tensors, "tensor", f"{at}.{name}[{j}]")
        for j, (ref, _nr) in enumerate(r.root_edges):
            need(ref, nodes, "node", f"{at}.root_edges[{j}][0]")
        for j, ref in enumerate(r.nodes):
            need(ref, nodes, "node", f"{at}.nodes[{j}]")
        need(r.graph_root, nodes, "node", f"{at}.graph_root")
        for ref in r.dependencies:
            need(ref, nodes, "node", f"{at}.dependencies{_key(ref)}")
        gnodes: dict[str, Any] = {}
        if r.gradient_graph is not None:
            g, gat = r.gradient_graph, f"{at}.gradient_graph"
            gnodes = g.nodes
            for key, gn in gnodes.items():
                if gn.id != key:
                    raise _fail(where, f"{gat}.nodes{_key(key)}.id",
                                f"is {gn.id!r}, not its key {key!r}")
                _check_node(gn, f"{gat}.nodes{_key(key)}", gnodes, {**tensors, **g.tensors},
                            ops, need)
            for j, (ref, _nr) in enumerate(g.roots):
                need(ref, gnodes, "gradient-graph node", f"{gat}.roots[{j}][0]")
            for key, t in g.tensors.items():
                if t.id != key:
                    raise _fail(where, f"{gat}.tensors{_key(key)}.id",
                                f"is {t.id!r}, not its key {key!r}")
        for j, s in enumerate(r.steps):
            _check_step(s, f"{at}.steps[{j}]", j, nodes, tensors, gnodes, need, where)


def _check_node(n: NodeInfo, at: str, nodes: Any, tensors: Any, ops: Any, need: Any) -> None:
    for j, (ref, _nr) in enumerate(n.next_functions):
        need(ref, nodes, "node", f"{at}.next_functions[{j}][0]")
    need(n.variable, tensors, "tensor", f"{at}.variable")
    need(n.forward_op, ops, "op", f"{at}.forward_op")
    for j, sv in enumerate(n.saved):
        need(sv.tensor, tensors, "tensor", f"{at}.saved[{j}].tensor")


def _check_step(s: Step, at: str, index: int, nodes: Any, tensors: Any, gnodes: Any,
                need: Any, where: str) -> None:
    if s.index != index:  # the player and `gradviz steps` number steps by position
        raise _fail(where, f"{at}.index", f"is {s.index}, but the step is number {index}")
    need(s.node, nodes, "node", f"{at}.node")
    need(getattr(s, "source", None), nodes, "node", f"{at}.source")
    if s.kind == "leaf_grad":
        need(s.tensor, tensors, "tensor", f"{at}.tensor")  # type: ignore[attr-defined]
    for ref in getattr(s, "counts", ()):
        need(ref, nodes, "node", f"{at}.counts{_key(ref)}")
    for j, (ref, _nr, _c) in enumerate(getattr(s, "tensor_counts", None) or ()):
        need(ref, nodes, "node", f"{at}.tensor_counts[{j}][0]")
    need(getattr(s, "gnode", None), gnodes, "gradient-graph node", f"{at}.gnode")
    need(s.engine_data.get("gnode"), gnodes, "gradient-graph node", f"{at}.engine_data.gnode")


def load_trace(path: str | os.PathLike[str]) -> Any:
    """Read a trace written by :meth:`Trace.save` (or ``gradviz trace``), checking all of it.

    Raises:
        TraceFormatError: the file is not UTF-8 JSON, not a trace, of another schema version,
            or malformed (NOTE [validated loading]); the message is one line,
            ``<path>: <field path>: <problem>``.
        OSError: the file cannot be read.

    Example:
        >>> import gradviz, tempfile, os
        >>> with gradviz.trace() as tr:
        ...     (gradviz.ones(2, requires_grad=True) * 3).sum().backward()
        >>> p = os.path.join(tempfile.mkdtemp(), "t.json"); tr.save(p)
        >>> gradviz.load_trace(p).summary() == tr.summary()
        True
    """
    where = os.fspath(path)
    with open(path, "rb") as fh:
        raw = fh.read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw.count(b"\n", 0, e.start) + 1
        raise _fail(where, f"line {line}", f"not UTF-8 text (byte {e.start}: "
                    f"{raw[e.start:e.start + 1]!r}); a gradviz trace is UTF-8 JSON") from None
    return trace_from_dict(parse_json(text, where), where)
