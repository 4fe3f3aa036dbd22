"""Loading a trace checks all of it (issue #20): every bundled example's trace loads back and
renders; every malformed file gives ONE line naming the field path, as a TraceFormatError (the
CLI: on stderr, exit code 2); and a property test mutates valid traces at random and finds
nothing else escaping (docs/trace-schema.md, "What loading checks")."""

from __future__ import annotations

import copy
import json
import re
import runpy
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gradviz
from gradviz.trace import TraceFormatError, load_trace
from gradviz.trace import io as _io
from gradviz.trace.io import MAX_DEPTH, trace_from_dict
from gradviz_cli.commands.examples import example_names, example_path
from gradviz_cli.runner import write_outputs

GRADVIZ = Path(sys.executable).with_name("gradviz")


def _seed_trace() -> Any:
    """A small trace with a hook, a custom Function, an in-place op and two runs."""

    class Double(gradviz.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x * 2

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g * 2

    with gradviz.trace() as tr:
        x = gradviz.tensor([1.0, 2.0], requires_grad=True)
        w = gradviz.ones(2, requires_grad=True)
        y = Double.apply(x) * w
        y.register_hook(lambda g: g)
        z = (y ** 2).sum()
        z.backward(retain_graph=True)
        gradviz.autograd.grad((y.exp() + 1).sum(), [w])
    return tr


@pytest.fixture(scope="module")
def base() -> dict[str, Any]:
    return _seed_trace().to_dict()


def _load(tmp_path: Path, text: str | bytes, name: str = "trace.json") -> Any:
    p = tmp_path / name
    p.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass"))
    return load_trace(p)


def _error(tmp_path: Path, doc: Any) -> str:
    text = doc if isinstance(doc, str) else json.dumps(doc)
    with pytest.raises(TraceFormatError) as info:
        _load(tmp_path, text)
    msg = str(info.value)
    assert "\n" not in msg and msg.startswith(str(tmp_path / "trace.json") + ": "), msg
    return msg[len(str(tmp_path / "trace.json")) + 2:]


# -- what gradviz writes, it reads ---------------------------------------------------------------
@pytest.mark.parametrize("name", [*example_names(), "intro"])
def test_every_bundled_example_saves_loads_back_and_renders(name: str, tmp_path: Path,
                                                            monkeypatch: Any) -> None:
    path = example_path(name) or Path(gradviz.__file__).parent / "examples" / f"{name}.py"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", [str(path)])
    # The demo keeps the last run of its loop; so does this test for the long examples.
    keep = 1 if name in ("intro", "rnn_sequence", "mlp_moons") else None
    with gradviz.trace(keep_runs=keep) as tr:
        try:
            runpy.run_path(str(path), run_name="__main__")
        except RuntimeError:  # inplace_error ends in the error it is about
            assert name == "inplace_error"
    saved = tmp_path / "trace.json"
    tr.save(saved)
    again = load_trace(saved)
    assert again.to_json() == tr.to_json()
    (tmp_path / "out").mkdir()
    files = write_outputs(again, tmp_path / "out", ("svg", "dot")).files
    assert {f.name for f in files} >= {"trace.json", "forward.svg", "backward.dot", "steps.html"}


def test_a_trace_with_every_engine_and_an_undecodable_name_loads(tmp_path: Path) -> None:
    from gradviz.trace import compare_engines

    x = gradviz.ones(2, 3, requires_grad=True)
    x.name = b"x_\xff".decode("utf-8", "surrogateescape")
    c = compare_engines(lambda x: (x * x).tanh().sum(), x)
    c.trace.save(tmp_path / "t.json")
    again = load_trace(tmp_path / "t.json")
    assert [r.engine for r in again.runs] == ["pytorch", "singa", "mxnet"]
    assert again.to_json() == c.trace.to_json()
    assert any(t.name == "x_\udcff" for t in again.tensors.values())


# -- one line naming the path, for each kind of problem ------------------------------------------
def _mutate(base: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    doc = copy.deepcopy(base)
    *head, last = [int(p) if p.isdigit() else p for p in path.split("/")]
    target = doc
    for p in head:
        target = target[p]
    if value is _DELETE:
        del target[last]
    else:
        target[last] = value
    return doc


_DELETE = object()


@pytest.mark.parametrize("path, value, message", [
    ("nodes/0/next_functions/0", ["n1", 0, 0],
     r"nodes\[0\]\.next_functions\[0\]: tuple should have at most 2 items"),
    ("nodes/0/next_functions/0", [["n1"], 0],
     r"nodes\[0\]\.next_functions\[0\]\[0\]: expected a string, got a list of 1"),
    ("nodes/0/sequence_nr", -1, r"nodes\[0\]\.sequence_nr: input should be greater than"),
    ("nodes/0/sequence_nr", 2**64, r"nodes\[0\]\.sequence_nr: input should be less than"),
    ("tensors/0/requires_grad", 1, r"tensors\[0\]\.requires_grad: expected true or false, got 1"),
    ("tensors/0/shape", [2, "3"], r"tensors\[0\]\.shape\[1\]: expected an integer, got '3'"),
    ("tensors/0/dtype", "float31", r"tensors\[0\]\.dtype: expected a dtype name"),
    ("tensors/0/id", "x0", r"tensors\[0\]\.id: expected a tensor id like 't0', got 'x0'"),
    ("tensors/0/extra", 1, r"tensors\[0\]\.extra: unknown field"),
    ("tensors/0/name", _DELETE, r"tensors\[0\]\.name: missing"),
    ("tensors/0/value/values", [1.0, [2.0]],
     r"tensors\[0\]\.value: values hold ragged lists or something not a tensor element"),
    ("tensors/0/value/values", [1.0, 2.0, 3.0],
     r"tensors\[0\]\.value: values hold 3 element\(s\) in 1 dimension\(s\), but shape \[2\]"),
    ("tensors/0/value/values", [1.0, "nan!"], r"tensors\[0\]\.value: values hold ragged lists"),
    ("runs/0/steps/1/priority", "n1",
     r"runs\[0\]\.steps\[1\]\.priority: expected an integer, got 'n1'"),
    ("runs/0/steps/1/ready", ["n1"], r"runs\[0\]\.steps\[1\]\.ready: unknown field"),
    ("runs/0/steps/0/node", "n1", r"runs\[0\]\.steps\[0\]\.node: expected null, got 'n1'"),
    ("runs/0/steps/3/index", 7, r"runs\[0\]\.steps\[3\]\.index: is 7, but the step is number 3"),
    ("runs/0/steps/3/kind", "jump", r"runs\[0\]\.steps\[3\]\.kind: expected one of .*'jump'"),
    ("runs/0/engine", "tensorflow", r"runs\[0\]\.engine: input should be 'pytorch'"),
    ("options/keep_runs", 0, r"options\.keep_runs: input should be greater than or equal to 1"),
    ("options/values", "some", r"options\.values: input should be 'small', 'none' or 'all'"),
    ("runs_total", True, r"runs_total: expected an integer, got True"),
    ("notes", [3], r"notes\[0\]: expected a string, got 3"),
    ("module_classes", ["Linear"], r"module_classes: expected an object"),
    ("module_classes", {"fc1": 3}, r"module_classes\.fc1: expected a string, got 3"),
])
def test_a_malformed_field_is_named_by_its_path(base: dict[str, Any], tmp_path: Path, path: str,
                                                value: Any, message: str) -> None:
    assert re.match(message, _error(tmp_path, _mutate(base, path, value)))


@pytest.mark.parametrize("path, value, message", [
    ("runs/0/steps/3/node", "n99", r"runs\[0\]\.steps\[3\]\.node: unknown node id 'n99'$"),
    ("ops/1/inputs/0", "t99", r"ops\[1\]\.inputs\[0\]: unknown tensor id 't99'$"),
    ("tensors/2/grad_fn", "n77", r"tensors\[2\]\.grad_fn: unknown node id 'n77'$"),
    ("tensors/2/op", "op77", r"tensors\[2\]\.op: unknown op id 'op77'$"),
    ("runs/0/roots/0", "t99", r"runs\[0\]\.roots\[0\]: unknown tensor id 't99'$"),
    ("runs/0/graph_root", "n99", r"runs\[0\]\.graph_root: unknown node id 'n99'$"),
    ("runs/0/dependencies", {"n99": 1}, r"runs\[0\]\.dependencies\.n99: unknown node id"),
    ("runs/0/steps/0/counts", {"n98": 0},
     r"runs\[0\]\.steps\[0\]\.counts\.n98: unknown node id 'n98'$"),
    ("nodes/1/id", "n0", r"nodes\[1\]\.id: duplicate node id 'n0'$"),
])
def test_a_dangling_reference_is_named_by_its_path(base: dict[str, Any], tmp_path: Path,
                                                   path: str, value: Any, message: str) -> None:
    assert re.match(message, _error(tmp_path, _mutate(base, path, value)))


def test_numbers_json_has_not_and_python_cannot_read_are_refused(base: dict[str, Any],
                                                                 tmp_path: Path) -> None:
    text = json.dumps(_mutate(base, "tensors/0/value/values/0", "@X@"))
    for token, message in [
        ("NaN", r"tensors\[0\]\.value\.values\[0\]: NaN is not a JSON number"),
        ("-Infinity", r"tensors\[0\]\.value\.values\[0\]: -Infinity is not a JSON number"),
        ("1e999", r"tensors\[0\]\.value\.values\[0\]: 1e999 is too large for a float"),
        ("9" * 5000, r"tensors\[0\]\.value\.values\[0\]: an integer of 5000 digits \(at most "
                     r"4300\)$"),
        # A float overflows with a long mantissa as well as with a long exponent.
        ("1" + "0" * 400 + ".5", r"tensors\[0\]\.value\.values\[0\]: 1000000000000000000"
                                 r"0 is too large for a float"),
    ]:
        assert re.match(message, _error(tmp_path, text.replace('"@X@"', token))), token
    # 4,300 digits is Python's limit: a number that long is read, then refused by the schema
    # (a tensor element is at most a uint64).
    msg = _error(tmp_path, text.replace('"@X@"', "9" * 4300))
    assert msg.startswith("tensors[0].value: values hold ragged lists or something not a "
                          "tensor element, but shape [2] has 2"), msg


def test_nesting_deeper_than_a_trace_needs_is_refused_without_recursion(
        base: dict[str, Any], tmp_path: Path) -> None:
    text = json.dumps(_mutate(base, "ops/0/kwargs", {"deep": "@X@"}), indent=1)
    deep = "[" * (sys.getrecursionlimit() * 3) + "]" * (sys.getrecursionlimit() * 3)
    msg = _error(tmp_path, text.replace('"@X@"', deep))
    assert re.fullmatch(rf"line \d+: nested \d+ levels deep; a gradviz trace nests at most "
                        rf"{MAX_DEPTH}", msg), msg
    # Brackets inside strings are text, not nesting.
    assert _load(tmp_path, text.replace('"@X@"', json.dumps("[" * 5000)))


def test_a_file_cut_off_inside_a_string_is_scanned_once(base: dict[str, Any],
                                                         tmp_path: Path) -> None:
    # A real trace cut off inside a long message full of escaped quotes (a traceback note).
    text = json.dumps(_mutate(base, "notes", ['say \\"hi\\" ' * 4000]))
    for cut in (text[:-10], text[:-10] + "\\"):
        msg = _error(tmp_path, cut)
        assert re.fullmatch(r"line 1, column \d+: not valid JSON \(Unterminated string "
                            r"starting at\)", msg), msg
        # Bounded by construction: the scan that empties strings matches at every quote, so no
        # attempt fails and the text after a quote is never read again (the cause of the time
        # quadratic in the string's length that a 64 KB file took 25 s for).
        quotes = [i for i, c in enumerate(cut) if c == '"']
        assert all(_io._STRING.match(cut, i) for i in quotes)


def test_strings_json_escapes_and_bytes_that_are_not_utf8(base: dict[str, Any],
                                                          tmp_path: Path) -> None:
    doc = _mutate(base, "tensors/0/name", "x\udcff\x1b")  # lone surrogate, as save writes it
    assert _load(tmp_path, json.dumps(doc)).tensors["t0"].name == "x\udcff\x1b"
    raw = json.dumps(_mutate(base, "tensors/0/name", "@X@")).encode().replace(b"@X@", b"x\xff")
    assert re.fullmatch(r"line 1: not UTF-8 text \(byte \d+: b'\\xff'\); a gradviz trace is "
                        r"UTF-8 JSON", _error_bytes(tmp_path, raw))
    msg = _error(tmp_path, json.dumps(_mutate(base, "tensors/0/id", "t\n0")))
    assert msg == "tensors[0].id: expected a tensor id like 't0', got 't\\n0'"


def _error_bytes(tmp_path: Path, raw: bytes) -> str:
    with pytest.raises(TraceFormatError) as info:
        _load(tmp_path, raw)
    return str(info.value).split(": ", 1)[1]


V1 = Path(__file__).resolve().parent / "fixtures" / "trace_v1_hooks.json"


@pytest.fixture(scope="module")
def base_v1() -> dict[str, Any]:
    """A trace as gradviz.trace/1 files were written (read on loading, NOTE [schema versions])."""
    return json.loads(V1.read_text())


@pytest.mark.parametrize("path, value, message", [
    ("nodes/0/id", ["n0"], r"nodes\[0\]\.id: expected a string, got a list of 1"),
    ("nodes", 3, r"nodes: expected a list, got 3"),
    ("runs/0/steps/1/kind", ["enqueue"], r"runs\[0\]\.steps\[1\]\.kind: expected one of "),
    ("runs/0/steps/1/node", {"id": "n3"}, r"runs\[0\]\.steps\[1\]\.node: expected a string, "
                                          r"got an object"),
])
def test_a_malformed_old_schema_file_is_refused_in_one_line(base_v1: dict[str, Any],
                                                            tmp_path: Path, path: str,
                                                            value: Any, message: str) -> None:
    assert _load(tmp_path, json.dumps(base_v1)).runs  # the file as written loads
    with pytest.raises(TraceFormatError) as info:
        _load(tmp_path, json.dumps(_mutate(base_v1, path, value)))
    prefix = f"{tmp_path / 'trace.json'} (schema gradviz.trace/1, read as 2): "
    msg = str(info.value)
    assert "\n" not in msg and msg.startswith(prefix), msg
    assert re.match(message, msg[len(prefix):]), msg


@pytest.mark.parametrize("version, message", [
    ("gradviz.trace/0", "unsupported schema version 'gradviz.trace/0'; this gradviz reads "
                        "'gradviz.trace/2' and 'gradviz.trace/1': record the trace again"),
    ("gradviz.trace/-1", "unsupported schema version 'gradviz.trace/-1'"),
    ("gradviz.trace/01", "unsupported schema version 'gradviz.trace/01'"),
    ("gradviz.trace/3", "this trace uses schema 'gradviz.trace/3', newer than this gradviz"),
    (1, "not a gradviz trace: schema is 1, expected 'gradviz.trace/2'"),
])
def test_only_the_supported_schema_version_loads(base: dict[str, Any], tmp_path: Path,
                                                 version: Any, message: str) -> None:
    assert _error(tmp_path, _mutate(base, "schema", version)).startswith(f"schema: {message}")


def test_the_cli_prints_one_line_and_exits_2(base: dict[str, Any], tmp_path: Path) -> None:
    bad = tmp_path / "trace.json"
    bad.write_text(json.dumps(_mutate(base, "runs/0/steps/3/node", "n99")))
    for cmd in ("render", "steps"):
        proc = subprocess.run([str(GRADVIZ), cmd, str(bad)], capture_output=True, text=True,
                              cwd=tmp_path, env={"COLUMNS": "40", "PATH": "/usr/bin:/bin"})
        assert proc.returncode == 2, (cmd, proc.stderr)
        assert proc.stderr == (f"error: {bad}: runs[0].steps[3].node: unknown node id "
                               "'n99'\n"), proc.stderr
        assert "Traceback" not in proc.stderr


# -- the property: a mutated trace is refused cleanly or renders ---------------------------------
def _locations(doc: Any) -> list[tuple[Any, ...]]:
    """Every path into the document (iteratively)."""
    out: list[tuple[Any, ...]] = []
    todo: list[tuple[tuple[Any, ...], Any]] = [((), doc)]
    while todo:
        loc, v = todo.pop()
        out.append(loc)
        items = v.items() if isinstance(v, dict) else enumerate(v) if isinstance(v, list) else ()
        todo.extend((loc + (k,), x) for k, x in items)
    return out


_SPECIAL = {"@NAN@": "NaN", "@INF@": "-Infinity", "@HUGE@": "7" * 4400, "@BIG@": "1e400",
            "@DEEP@": "[" * 1200 + "]" * 1200}
_VALUES = st.one_of(
    st.sampled_from([None, True, False, 0, -1, 1.5, 2**64, "", "n99", "t99", "op99", "run99",
                     "n0", "t0", "execute", "float32", "\udcff", "\x00\n", [], {}, [None, 0],
                     ["n0", 0, 1], [[]], {"const": 1}, {"tensor": "t99"}, {"shape": [1]}]),
    st.sampled_from(sorted(_SPECIAL)),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.text(max_size=6),
    st.lists(st.integers(-3, 3), max_size=3),
)


def _retype(v: Any) -> Any:
    if isinstance(v, str):
        return int(v[1:]) if v[1:].isdigit() else [v]
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, (int, float)):
        return str(v)
    if isinstance(v, list):
        return {str(i): x for i, x in enumerate(v)}
    if isinstance(v, dict):
        return list(v.values())
    return "null"


@pytest.fixture(scope="module", params=["gradviz.trace/2", "gradviz.trace/1"])
def fuzz_base(request: Any, base: dict[str, Any], base_v1: dict[str, Any]
              ) -> tuple[dict[str, Any], list[tuple[Any, ...]]]:
    """A valid trace of each schema version this gradviz reads, and its fields' paths."""
    doc = base if request.param == "gradviz.trace/2" else base_v1
    return doc, _locations(doc)


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_a_mutated_trace_is_refused_in_one_line_or_renders(
        data: st.DataObject, fuzz_base: tuple[dict[str, Any], list[tuple[Any, ...]]],
        tmp_path_factory: Any) -> None:
    base, locations = fuzz_base
    doc = copy.deepcopy(base)
    for _ in range(data.draw(st.integers(1, 3), label="mutations")):
        loc = data.draw(st.sampled_from(locations), label="where")
        parent, target = None, doc
        try:
            for k in loc:
                parent, target = target, target[k]
        except (KeyError, IndexError, TypeError):
            continue  # an earlier mutation removed the path
        how = data.draw(st.sampled_from(["replace", "delete", "retype", "id", "insert"]))
        if parent is None:
            continue
        key = loc[-1]
        if how == "delete":
            del parent[key]
        elif how == "retype":
            parent[key] = _retype(target)
        elif how == "id" and isinstance(target, str):
            parent[key] = target + data.draw(st.sampled_from(["9", "0", "x", ""]))
        elif how == "insert" and isinstance(target, (list, dict)):
            value = data.draw(_VALUES, label="inserted")
            if isinstance(target, list):
                target.insert(data.draw(st.integers(0, len(target))), value)
            else:
                target[data.draw(st.sampled_from(["extra", "id", "", "\udcff"]))] = value
        else:
            parent[key] = data.draw(_VALUES, label="value")
    text = json.dumps(doc, ensure_ascii=data.draw(st.booleans(), label="ascii"))
    for marker, token in _SPECIAL.items():
        text = text.replace(f'"{marker}"', token)
    if data.draw(st.integers(0, 9), label="truncate?") == 0:
        text = text[:data.draw(st.integers(0, len(text)), label="at")]
    # Bounded by construction, whatever the mutation: the scan before parsing matches at every
    # quote (so it reads the text once, never again from a later quote); the other scans read
    # each bracket once and look at most 300 characters ahead for a suspicious number.
    assert all(_io._STRING.match(text, i) for i, c in enumerate(text) if c == '"')
    folder = tmp_path_factory.mktemp("fuzz")
    path = folder / "trace.json"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    try:
        tr = load_trace(path)
    except TraceFormatError as e:
        msg = str(e)
        assert "\n" not in msg, msg
        assert re.match(rf"{re.escape(str(path))}(?: \(schema gradviz\.trace/1, read as 2\))?: "
                        r"[^:]+: .+", msg), msg
        return
    (folder / "out").mkdir()
    write_outputs(tr, folder / "out", ("svg", "dot"))


def test_trace_from_dict_names_its_source(base: dict[str, Any]) -> None:
    with pytest.raises(TraceFormatError, match=r"^mine: runs\[1\]\.inputs\[0\]: unknown"):
        trace_from_dict(_mutate(base, "runs/1/inputs/0", "t99"), "mine")
