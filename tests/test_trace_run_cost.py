"""Issue #16, the per-run cost of tracing: what a short ``with gradviz.trace()`` block leaves
behind and what it costs to set up (no durations asserted: the counts that made it slow)."""

from __future__ import annotations

import gc
import threading
import weakref

import gradviz


def _record(**kwargs: object) -> gradviz.Trace:
    x = gradviz.tensor([1.0, 2.0, 3.0], requires_grad=True)
    # torch=False: with torch imported (the parity tests import it) a trace records PyTorch too,
    # and its TorchSource and the trace refer to each other.
    with gradviz.trace(torch=False, **kwargs) as tr:
        (x * 2).sum().backward()
    return tr


def test_a_dropped_trace_is_freed_without_the_cyclic_collector() -> None:
    # A trace holding bound methods of itself was a reference cycle: it and everything it
    # recorded stayed alive until a full collection found it.
    gc.disable()
    try:
        for kwargs in ({}, {"keep_runs": 1}, {"values": "all", "keep_runs": "all"}):
            tr = _record(**kwargs)
            assert len(tr.runs) == 1 and len(tr.runs[0].steps) == 12  # read: built, then freed
            ref = weakref.ref(tr)
            del tr
            assert ref() is None, kwargs
            unread = weakref.ref(_record(**kwargs))  # never read: raw records only
            assert unread() is None, kwargs
    finally:
        gc.enable()


def test_a_trace_entered_again_starts_each_thread_afresh() -> None:
    # __exit__ leaves the recording thread's idle state fresh without parking it (the same
    # state _switch_to would give it); a second block on the same trace records as the first.
    tr = gradviz.trace(keep_runs="all")
    x = gradviz.tensor([1.0, 2.0], requires_grad=True)
    for _ in range(2):
        with tr:
            (x * 3).sum().backward()
    assert [r.id for r in tr.runs] == ["run0", "run1"]
    assert [len(r.steps) for r in tr.runs] == [12, 12]
    kinds = [[s.kind for s in r.steps] for r in tr.runs]
    assert kinds[0] == kinds[1]
    first, second = ([s for s in r.steps if s.kind == "leaf_grad"][0] for r in tr.runs)
    assert first.before is None and first.after["values"] == [3.0, 3.0]
    assert second.before["values"] == [3.0, 3.0] and second.after["values"] == [6.0, 6.0]


def test_a_run_open_on_another_thread_is_closed_at_exit() -> None:
    inside, release = threading.Event(), threading.Event()

    def hook(grad):  # holds the other thread inside its backward pass
        inside.set()
        release.wait(10)
        return grad

    x = gradviz.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.register_hook(hook)
    with gradviz.trace() as tr:
        (x * 5).sum().backward()  # this thread's run, finished
        t = threading.Thread(target=lambda: y.sum().backward())
        t.start()
        assert inside.wait(10)
    release.set()
    t.join(10)
    assert len(tr.run_log) == 2 and all(r["steps"] > 0 for r in tr.run_log)
