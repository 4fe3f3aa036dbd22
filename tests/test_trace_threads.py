"""Issue #20, threads: one ``gradviz.trace()`` recording backward passes run on several real
threads files every run, and every step, under its own run id."""

from __future__ import annotations

import threading

import gradviz

THREADS, PASSES = 4, 60


def _work(k: int, barrier: threading.Barrier) -> None:
    barrier.wait()  # start together, so the threads' events really interleave
    for _ in range(PASSES):
        x = gradviz.ones(k + 1, requires_grad=True)  # thread k's tensors have k + 1 elements
        (x * 2).sum().backward()


def test_every_run_of_every_thread_is_recorded_under_its_own_id() -> None:
    barrier = threading.Barrier(THREADS)
    with gradviz.trace(keep_runs="all") as tr:  # every run in full, not only the last
        threads = [threading.Thread(target=_work, args=(k, barrier)) for k in range(THREADS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
    assert not any(t.is_alive() for t in threads)
    total = THREADS * PASSES
    assert tr.runs_total == total and len(tr.runs) == total
    assert [r["id"] for r in tr.run_log] == [r.id for r in tr.runs]
    assert len({r.id for r in tr.runs}) == total
    assert len(tr.ops) == 2 * total  # mul and sum, on every thread
    per_size = {k + 1: 0 for k in range(THREADS)}
    for r in tr.runs:
        kinds = [s.kind for s in r.steps]
        # One pass of (x * 2).sum(): the same 12 steps, in order, with nothing of another run.
        assert kinds[0] == "compute_dependencies" and kinds[-1] == "done", (r.id, kinds)
        assert len(kinds) == 12, (r.id, kinds)
        assert [s.index for s in r.steps] == list(range(12))
        assert all(s.node is None or s.node in r.nodes for s in r.steps), r.id
        (leaf,) = [s for s in r.steps if s.kind == "leaf_grad"]
        leaf_size = tr.tensors[leaf.data["tensor"]].shape[0]
        root_op = tr.tensors[r.roots[0]].op
        mul = next(op for op in tr.ops if op.outputs[0] in
                   [i for o in tr.ops if o.id == root_op for i in o.inputs])
        assert tr.tensors[mul.inputs[0]].shape[0] == leaf_size  # the run's own leaf
        per_size[leaf_size] += 1
    assert per_size == {k + 1: PASSES for k in range(THREADS)}


def test_a_run_still_open_in_another_thread_is_closed_when_the_trace_ends() -> None:
    inside, release = threading.Event(), threading.Event()

    def hook(grad: object) -> object:
        inside.set()
        release.wait(timeout=30)
        return grad

    def work() -> None:
        x = gradviz.ones(2, requires_grad=True)
        x.register_hook(hook)
        (x * 2).sum().backward()

    with gradviz.trace() as tr:
        t = threading.Thread(target=work)
        t.start()
        assert inside.wait(timeout=30)
    release.set()
    t.join(timeout=30)
    assert tr.runs_total == 1
    assert tr.runs[0].steps[0].kind == "compute_dependencies"
    assert tr.runs[0].steps[-1].kind != "done"  # closed as it stood
