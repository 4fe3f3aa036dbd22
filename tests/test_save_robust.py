"""Issue #20, saving: atomic files, streamed JSON, names Python cannot encode, odd loaded values.

Each test builds its own small trace and files in ``tmp_path``.
"""

from __future__ import annotations

import json
import os
import stat
import tracemalloc
from pathlib import Path

import pytest

import gradviz
from gradviz.render import draw_backward, draw_forward, render
from gradviz.trace import io

SURROGATE_NAME = b"data_\xff".decode("utf-8", "surrogateescape")  # what os.listdir gives


def _small_trace(name: str = "x") -> gradviz.Trace:
    with gradviz.trace() as tr:
        x = gradviz.tensor([1.0, 2.0], requires_grad=True)
        x.name = name
        (x * 3).sum().backward()
    return tr


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_a_name_python_cannot_encode_saves_reloads_and_renders(tmp_path: Path) -> None:
    tr = _small_trace(SURROGATE_NAME)
    path = tmp_path / "trace.json"
    tr.save(path)
    text = path.read_text(encoding="utf-8")  # valid UTF-8: the surrogate is a JSON escape
    assert "data_\\udcff" in text
    again = gradviz.load_trace(path)
    assert [t.name for t in again.tensors.values()][0] == SURROGATE_NAME
    for fmt in ("svg", "dot", "png"):
        render(draw_backward(again), tmp_path / f"b.{fmt}")
        assert (tmp_path / f"b.{fmt}").stat().st_size > 0
    render(draw_forward(again), tmp_path / "f.svg")
    assert ">data_" in (tmp_path / "f.svg").read_text(encoding="utf-8")  # drawn, not lost
    again.to_html(tmp_path / "steps.html")
    assert (tmp_path / "steps.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert _leftovers(tmp_path) == []


@pytest.mark.parametrize("error", [MemoryError, KeyboardInterrupt, OSError])
def test_a_failure_mid_save_keeps_the_previous_file_and_leaves_no_temp(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: type[BaseException]) -> None:
    path = tmp_path / "trace.json"
    _small_trace("before").save(path)
    previous = path.read_bytes()
    calls = []

    def failing_encode(self: json.JSONEncoder, o: object) -> str:
        calls.append(o)
        if len(calls) > 5:  # a few records are already in the temporary file
            raise error("injected")
        return original(self, o)

    original = json.JSONEncoder.encode
    monkeypatch.setattr(json.JSONEncoder, "encode", failing_encode)
    with pytest.raises(error):
        _small_trace("after").save(path)
    assert len(calls) > 5
    assert path.read_bytes() == previous
    assert _leftovers(tmp_path) == [] and sorted(os.listdir(tmp_path)) == ["trace.json"]


def test_a_failure_before_anything_exists_leaves_no_file(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*_: object) -> str:
        raise MemoryError

    monkeypatch.setattr(json.JSONEncoder, "encode", boom)
    with pytest.raises(MemoryError):
        _small_trace().save(tmp_path / "trace.json")
    assert os.listdir(tmp_path) == []


def test_a_trace_holding_nan_and_deep_nesting_saves_and_the_file_is_refused_cleanly(
        tmp_path: Path) -> None:
    """Values the standard encoder refuses (NaN, nesting past the recursion limit) put into a
    trace in memory still save; the loader then refuses the file with one clear line
    (docs/guarantees.md, malformed input), not a traceback."""
    tr = _small_trace()
    tid = next(iter(tr.tensors))
    deep: list = []
    cur = deep
    for _ in range(600):
        cur.append([])
        cur = cur[0]
    tr.tensors[tid].value = {"const": float("nan"), "deep": deep}
    out = tmp_path / "out.json"
    tr.save(out)
    value = json.loads(out.read_text())["tensors"][0]["value"]
    assert value["const"] == "nan"  # the spelling the recorder uses for non-finite numbers
    depth, cur = 0, value["deep"]
    while cur:
        depth, cur = depth + 1, cur[0]
    assert depth == 600
    with pytest.raises(io.TraceFormatError, match=r"out\.json: line \d+: nested "
                       r"60\d levels deep; a gradviz trace nests at most 100$"):
        gradviz.load_trace(out)


def test_the_fallback_encoder_needs_no_recursion_and_handles_odd_values() -> None:
    deep: list = []
    cur = deep
    for _ in range(100_000):
        cur.append([])
        cur = cur[0]
    assert len(io.encode_json(deep)) == 200_002
    loop: list = [1]
    loop.append(loop)
    text = io.encode_json({"a": (1, 2.5, None, True), "b": float("-inf"), "c": loop})
    assert json.loads(text) == {"a": [1, 2.5, None, True], "b": "-inf", "c": [1, "<cycle>"]}


def test_streamed_json_is_the_trace_data_and_compact_text_is_json_dumps() -> None:
    with gradviz.trace() as tr:
        x = gradviz.tensor([1.0, float("nan")], requires_grad=True)
        (x * 2 + gradviz.ones(2)).tanh().sum().backward()
        z = gradviz.ones(3, requires_grad=True)
        (z.exp() * 3).mean().backward()
    with gradviz.trace() as empty:
        pass
    for t in (tr, empty):
        assert json.loads(io.dumps(t)) == io.trace_to_dict(t)
        assert io.dumps(t, indent=None) == json.dumps(io.trace_to_dict(t), ensure_ascii=False,
                                                      allow_nan=False)
    lines = io.dumps(tr).splitlines()
    assert sum(line.lstrip().startswith('{"index": ') for line in lines) == \
        sum(len(r.steps) for r in tr.runs)  # one step per line


def test_saving_needs_about_one_record_of_memory_not_the_whole_document(tmp_path: Path) -> None:
    with gradviz.trace() as tr:
        y = gradviz.tensor([0.1, 0.2, 0.3, 0.4], requires_grad=True)
        for _ in range(600):
            y = (y * 1.0001 + 0.1).tanh()
        y.sum().backward()
    tr.runs  # noqa: B018 - build the model first: that is the trace, not the saving
    path = tmp_path / "trace.json"
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tr.save(path)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    size = path.stat().st_size
    # Building the document (the old way) took several times the file's size.
    assert peak < size / 4, (peak, size)


def test_atomic_write_gives_plain_open_permissions_and_cleans_up(tmp_path: Path) -> None:
    target = tmp_path / "a.bin"
    with io.atomic_write(target, "wb") as fh:
        fh.write(b"\x00\x01")
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask
    with pytest.raises(RuntimeError), io.atomic_write(target, "wb") as fh:
        fh.write(b"partial")
        raise RuntimeError("stop")
    assert target.read_bytes() == b"\x00\x01" and _leftovers(tmp_path) == []
