"""The cheap tracer records exactly what the eager one did (performance issue #9).

The recorder keeps raw tuples and value snapshots while recording and builds the model objects
when a reader first asks (NOTE [perf: lazy trace] in gradviz/trace/recorder.py). These tests pin
what that must not change: when values are captured, what a reader sees whenever it reads, what
the trace keeps alive, and the NumPy behaviour the shared stats of transposes rely on.
"""

from __future__ import annotations

import gc
import json
import math
import warnings
import weakref

import numpy as np
import pytest

import gradviz as torch
from gradviz.trace.model import COPY_BYTES, buffer_stats, expand_snapshot, snapshot, summarize


def _program():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = torch.ones(80, requires_grad=True)  # > 64 elements: summarized by stats
    y = (x * 2).exp()
    z = (w * 3).sum() + y.sum()
    z.backward()
    h = x.tanh()
    (h * h).sum().backward()
    return x, w


def test_reading_while_recording_changes_nothing():
    # Two traces see the same events; one is read after every step, the other only at the end.
    with torch.trace() as lazy, torch.trace() as eager:
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = x * 3
        assert len(eager.ops) == 1 and eager.tensors and not eager.runs
        s = y.sum()
        s.backward(retain_graph=True)
        assert len(eager.runs) == 1 and eager.run().steps
        unnamed = y * 1  # a temporary named only when the block ends
        s.backward()
        assert eager.summary()
        del unnamed
    assert lazy.to_json() == eager.to_json()


def test_values_are_the_values_when_reported():
    with torch.trace() as tr:
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        big = torch.ones(100, requires_grad=True)
        a = x * 2
        b = big * 1
        with torch.no_grad():
            a.add_(10)  # changes a's array after its op was recorded
            b.mul_(5)
        a.sum().backward()
    first = tr.tensors[tr.ops[0].outputs[0]]
    assert first.value["values"] == [2.0, 4.0]
    second = tr.tensors[tr.ops[1].outputs[0]]
    assert second.value["stats"] == {"min": 1.0, "max": 1.0, "mean": 1.0}
    assert tr.tensors[tr.ops[2].outputs[0]].value["values"] == [12.0, 14.0]


def test_grad_is_the_value_written_not_what_a_hook_made_of_it():
    with torch.trace() as tr:
        w = torch.tensor([1.0, 2.0], requires_grad=True)

        def zero_grad(p):  # returns None: a post-accumulate-grad hook must (PyTorch)
            p.grad.mul_(0)

        w.register_post_accumulate_grad_hook(zero_grad)
        (w * 3).sum().backward()
    assert w.grad.tolist() == [0.0, 0.0]
    leaf = next(s for s in tr.run().steps if s.kind == "leaf_grad")
    assert leaf.after["values"] == [3.0, 3.0]
    assert tr.tensors[leaf.tensor].grad["values"] == [3.0, 3.0]


def test_a_grad_added_to_in_place_is_the_value_after_the_add():
    # The run's memo of snapshots (Trace._value) knows arrays as they were reported; .grad is
    # snapshotted anew. Here the second pass's root gradient is x.grad's very array (reported,
    # so in the memo, as [3, 3]), which AccumulateGrad then adds into: the step and x's .grad
    # must show [9, 9], not the memo's [3, 3].
    with torch.trace(values="small") as tr:
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        (x * 3).sum().backward()  # a fresh .grad: [3, 3]
        y = x * 2
        y.backward(x.grad)  # [3, 3] * 2 added in place into x.grad
    assert x.grad.tolist() == [9.0, 9.0]
    first, second = ([s for s in r.steps if s.kind == "leaf_grad"] for r in tr.runs)
    assert first[0].before is None and first[0].after["values"] == [3.0, 3.0]
    assert second[0].before["values"] == [3.0, 3.0]
    assert second[0].after["values"] == [9.0, 9.0]
    assert tr.tensors[second[0].tensor].grad["values"] == [9.0, 9.0]


def test_a_grad_a_tensor_hook_changed_in_place_is_the_value_written():
    # The gradient the pass sent ([3, 3], in the run's memo) becomes .grad without a copy,
    # but a hook on the leaf doubled it in place first: .grad and its step show [6, 6].
    with torch.trace(values="small") as tr:
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        x.register_hook(lambda g: g.mul_(2))
        (x * 3).sum().backward()
    assert x.grad.tolist() == [6.0, 6.0]
    (leaf,) = [s for s in tr.run().steps if s.kind == "leaf_grad"]
    assert leaf.after["values"] == [6.0, 6.0]
    assert tr.tensors[leaf.tensor].grad["values"] == [6.0, 6.0]


def test_names_and_grads_set_after_a_read_reach_the_model():
    with torch.trace() as tr:
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        tmp = x * 2
        assert tr.tensors[tr.ops[0].outputs[0]].name == tmp_id(tr)
        renamed = tmp  # noqa: F841  (the tracer reads the user's variables)
        out = (tmp + 1).sum()
        out.backward()
    assert tr.tensors[tr.ops[0].outputs[0]].name in ("tmp", "renamed")
    assert tr.tensors[tr.ops[0].inputs[0]].grad["values"] == [2.0, 2.0]


def tmp_id(tr):
    return tr.ops[0].outputs[0]


def _graph(x, backward):
    # Built in a function of its own: the tracer reads the user's frame.f_locals for variable
    # names, and CPython 3.11 then keeps that dict (with y) until the frame's next such read.
    y = (x * 2).exp()
    refs = weakref.ref(y.grad_fn), weakref.ref(y)
    if backward:
        y.sum().backward()
    return refs


def test_the_trace_keeps_no_graph_alive():
    was = gc.isenabled()
    gc.collect()
    gc.disable()  # reference counting alone must free the graph
    try:
        with torch.trace() as tr:
            x = torch.tensor([1.0, 2.0], requires_grad=True)
            for backward in (True, False):  # freed whether or not a backward pass ran
                node, out = _graph(x, backward)
                assert node() is None and out() is None
        assert [n.name for n in tr.nodes.values()].count("ExpBackward0") == 2
    finally:
        if was:
            gc.enable()


def test_ids_of_dead_tensors_are_not_reused():
    with torch.trace(values="none") as tr:
        x = torch.ones(2, requires_grad=True)
        for _ in range(3000):  # many short-lived tensors (and sweeps of the id map)
            x * 2
        y = x * 3
        y.sum().backward()
    outputs = [op.outputs[0] for op in tr.ops]
    assert len(set(outputs)) == len(outputs) == 3002
    assert tr.ops[-1].inputs == [tr.ops[-2].outputs[0]]
    assert all(op.inputs[0] == tr.ops[0].inputs[0] for op in tr.ops[:-1])


def test_keep_runs_bounds_what_is_held_unread():
    w = torch.ones(3, requires_grad=True)
    with torch.trace(keep_runs=2) as tr:
        for _ in range(30):
            (w * w).sum().backward()
            assert len(tr._runs) <= 2 and len(tr._unbuilt) <= 2
    assert [r.id for r in tr.runs] == ["run28", "run29"]
    assert len(tr.ops) == 4


def test_json_round_trip_of_a_lazy_trace(tmp_path):
    with torch.trace() as tr:
        _program()
    path = tmp_path / "t.json"
    tr.save(path)
    again = torch.load_trace(path)
    assert again.to_json() == tr.to_json()
    assert json.loads(path.read_text())["schema"] == "gradviz.trace/2"


# -- summaries and snapshots ---------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["small", "none", "all"])
@pytest.mark.parametrize("value", [
    np.arange(5.0), np.array(2.5), np.array([np.nan, np.inf, -np.inf, 1.0]),
    np.array([1e308, 1e308]), np.arange(12.0).reshape(3, 4).T, np.arange(200, dtype=np.int32),
    np.linspace(-1, 1, 300, dtype=np.float32).reshape(20, 15),
    np.concatenate([np.arange(99.0), [np.nan]]), np.array([True, False]), np.array(["a", "b"]),
])
def test_a_snapshot_stands_for_its_summary(mode, value):
    snap = snapshot(value, mode)
    expected = summarize(value, mode)
    value_before = value.copy()
    if value.dtype.kind == "f" and value.size:
        value[...] = 7  # the array changes after the snapshot was taken
    assert json.dumps(expand_snapshot(snap, mode)) == json.dumps(expected)
    assert json.dumps(summarize(value_before, mode)) == json.dumps(expected)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int64])
@pytest.mark.parametrize("shape", [(256, 784), (65, 3), (7, 11, 13), (2, 40000)])
def test_transposes_share_the_very_same_stats(dtype, shape):
    # NOTE [perf: value snapshots] relies on NumPy reducing a full contiguous view of a buffer
    # over all axes in memory order. If a NumPy release changes that, this test says so.
    a = (np.random.default_rng(0).standard_normal(shape) * 1000).astype(dtype)
    for view in (a.T, np.moveaxis(a, 0, -1)):
        assert buffer_stats(view) == buffer_stats(a)
        lo, hi, mean = buffer_stats(view)
        assert (lo, hi) == (float(view.min()), float(view.max()))
        # NOTE [perf: block sums]: the mean to ~1e-8 of the mean magnitude, not bit for bit.
        magnitude = float(np.abs(view).mean(dtype=np.float64))
        assert abs(mean - float(view.mean(dtype=np.float64))) <= 1e-7 * magnitude
        shared: dict = {}
        snapshot(a, "small", shared)
        assert expand_snapshot(snapshot(view, "small", shared)) == summarize(view, "small")


def test_stats_of_views_are_shared_only_over_the_whole_buffer():
    a = np.arange(200.0)
    shared: dict = {}
    snapshot(a, "small", shared)
    half = a[:100]  # part of the buffer: its own stats
    assert expand_snapshot(snapshot(half, "small", shared))["stats"]["max"] == 99.0
    strided = a[::2]
    assert expand_snapshot(snapshot(strided, "small", shared)) == summarize(strided, "small")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("size", [8191, 8192, 8192 + 255, 200_704])
def test_a_large_mean_is_close_to_the_exact_one(dtype, size):
    # NOTE [perf: block sums]: blocks summed in the array's dtype, block sums in float64; the
    # partial last block and the sizes around the threshold included. An offset makes the sum
    # cancel little, the hardest case for a float32 running sum.
    x = (np.random.default_rng(size).standard_normal(size) + 1000.0).astype(dtype)
    exact = math.fsum(x.astype(np.float64).tolist()) / size
    _, _, mean = buffer_stats(x)
    assert abs(mean - exact) <= (1e-7 if dtype == np.float32 else 1e-13) * exact


@pytest.mark.filterwarnings("error")
def test_a_large_mean_that_overflows_a_block_is_still_right():
    # A float32 block sum of values near float32's maximum is inf: the summary's finite-values
    # path (model._stats) recomputes the mean in float64, so the stored mean is finite.
    x = np.full(10_000, 3e38, dtype=np.float32)
    summary = summarize(x, "small")
    assert summary["stats"]["mean"] == pytest.approx(float(np.float32(3e38)))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int32])
@pytest.mark.parametrize("shape", [(65,), (64, 129), (8191,), (8192,), (128, 128), (2, 3, 1365)])
def test_a_medium_value_is_kept_as_a_copy_with_the_very_same_summary(dtype, shape):
    # NOTE [perf: value snapshots]: up to COPY_BYTES, a contiguous value is copied as it is laid
    # out and summarized when read; the summary must be the one taken at once, bit for bit, in
    # either memory order.
    layouts = (lambda a: a, lambda a: a.T, lambda a: np.moveaxis(a, 0, -1))
    for layout in layouts:
        a = (np.random.default_rng(1).standard_normal(shape) * 100 + 3).astype(dtype)
        value = layout(a)
        snap = snapshot(value, "small")
        expected = json.dumps(summarize(value, "small"))
        contiguous = value.flags.c_contiguous or value.flags.f_contiguous
        if value.nbytes <= COPY_BYTES and contiguous:
            assert type(snap) is np.ndarray and not np.shares_memory(snap, value)
        else:  # stats taken at once: no copy of a large or scattered value is kept
            assert type(snap) is tuple
        value[...] = 0  # changed after the snapshot: the summary is still the one before
        assert json.dumps(expand_snapshot(snap, "small")) == expected


def test_a_strided_medium_value_is_summarized_at_once():
    # Not contiguous: a copy would be laid out anew and could sum in another order.
    a = np.arange(2000.0)[::2]
    snap = snapshot(a, "small")
    assert type(snap) is tuple and snap[2:5] == (0.0, 1998.0, 999.0)


@pytest.mark.parametrize("size", [100, 10_000])  # summed directly, and by blocks
def test_garbage_values_are_summarized_without_a_warning(size):
    """An uninitialised tensor (torch.empty) may hold signalling NaNs: summarising it must not
    raise a RuntimeWarning in the user's program, and its stats are of the finite values."""
    arr = np.zeros(size, np.float32)
    arr[3:5] = np.array([0x7F800001, 0x7FA00000], np.uint32).view(np.float32)
    arr[7] = 2.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = summarize(arr)
    assert out["stats"] == {"min": 0.0, "max": 2.0, "mean": 2.0 / (size - 2)}
    assert out["head"][3:5] == ["nan", "nan"]
