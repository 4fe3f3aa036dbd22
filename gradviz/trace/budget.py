"""What a long recording keeps: folding identical iterations, the ``keep_runs`` budget.

NOTE [long runs] What a training loop's trace holds by default (``keep_runs=None``):
- every backward run listed in ``run_log`` (id, kind, roots, nodes, steps, source line,
  error): a few numbers per run, however long the loop;
- each run in full (backward graph, steps, values) with the forward ops of its iteration
  (the ops since the run before it), except that a run whose iteration has the same
  structure as the next one's (the same ops in the same order, with the same numbers of
  inputs and outputs, in-place flags, module scopes and source lines: the same code run
  again; compared from its first op that records a node, as before it come ops without
  grad, the previous step's update or a loop's set-up) is folded into it: so a loop
  keeps ONE iteration, the last, with the note "iteration 20 of 20, identical structure
  folded", while two backward calls on different code are both kept;
- at most DETAILED_RUNS runs in full: beyond, the oldest is dropped (and noted).
Memory and file size are bounded by DETAILED_RUNS iterations plus a line per run; the
records of a dropped iteration are discarded before any model object or value summary is
built from them (NOTE [perf: lazy trace]). The budget (docs/guarantees.md) is checked by
`make bench` on PyTorch's 2,000-step polynomial example. ``keep_runs=N`` instead keeps the
last N runs and every forward op since the first of them.

The methods below are the recorder's (:class:`~gradviz.trace.recorder.Recorder` mixes this class
in): they read and rewrite its records, raw (``_rec_ops``, ``_rec_tensors``, ``_rec_nodes``,
before a reader asked for the model) or built (``_ops``, ``_tensors``, ``_nodes``, ``_runs``),
and ``_run_segments``, which says which forward ops belong to which run's iteration (a run's
segment is the number of runs finished when it began; each op records the segment it ran in).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from gradviz.trace.model import BackwardRun, OpRecord, run_id_number

__all__ = ["RunBudget", "DETAILED_RUNS"]

# With keep_runs=None, at most this many backward runs are kept in full (NOTE [long runs]).
DETAILED_RUNS = 8


def _from_graph(ops: list[tuple]) -> list[tuple]:
    """Raw ops from the first that recorded a backward node (NOTE [long runs])."""
    for k, o in enumerate(ops):
        if o[4] is not None:
            return ops[k:]
    return []


class RunBudget:
    """The recorder's budget: called by it after each finished run (:meth:`_after_run`)."""

    # The recorder's state these methods use (set by Recorder.__init__).
    keep_runs: int | str | None
    keep_run: str | None
    runs_total: int
    run_log: list[dict[str, Any]]
    notes: list[str]
    _runs: list[BackwardRun]
    _ops: list[OpRecord]
    _tensors: dict[str, Any]
    _nodes: dict[str, Any]
    _run_segments: dict[str, int]

    def _after_run(self, run: BackwardRun, steps: int) -> None:
        """Log a finished run, then bound what is kept (NOTE [long runs])."""
        self.run_log.append({
            "id": run.id, "kind": run.kind, "engine": run.engine, "roots": len(run.roots),
            "nodes": len(run.nodes), "steps": steps,
            "source": None if run.source is None else str(run.source),
            "error": None if run.error is None else run.error.get("type")})
        if self.keep_runs == "all":
            return
        if self.keep_runs is not None:
            if len(self._runs) > self.keep_runs:
                self._prune()
            return
        # This iteration's structure: its ops from the first that records a node on, as what
        # comes before ran without grad (the previous step's update, a loop's set-up). NOTE
        # [perf]: found from the end (ops are recorded in segment order), and kept for the next
        # run to compare with.
        seg = self._run_segments.get(run.id, 0)
        self._unpack()
        # The model is built already when real PyTorch records (torch_source.py builds it as
        # it goes) or a reader asked for it: then the iteration is read from the built ops,
        # and a run is dropped from the built model (_prune), else from the raw records.
        built = bool(self._tensors or self._ops or self._nodes)
        if built:
            mine_built = [op for op in self._ops if op.segment == seg]
            first = next((k for k, op in enumerate(mine_built) if op.node is not None), None)
            ours = () if first is None else tuple(
                (op.name, len(op.inputs), len(op.outputs), op.inplace, tuple(op.scope),
                 None if op.source is None else (op.source.file, op.source.line))
                for op in mine_built[first:])
        else:
            mine = []
            for o in reversed(self._rec_ops):
                if o[9] < seg:
                    break
                if o[9] == seg:
                    mine.append(o)
            mine.reverse()
            ours = self._signature(_from_graph(mine))
        (before_seg, before), self._last_signature = self._last_signature, (seg, ours)
        runs = self._runs
        if len(runs) < 2:
            return
        prev = runs[-2]
        prev_seg = self._run_segments.get(prev.id, 0)
        # Folded only when prev is the iteration right before (not another thread's run).
        if (ours and before_seg == prev_seg == seg - 1 and ours == before
                and prev.id != self.keep_run):
            self._folded += 1
            gone = prev
        elif len(runs) > DETAILED_RUNS:
            self._differing += 1
            gone = next(r for r in runs if r.id != self.keep_run)
        else:
            return
        if built:
            self._prune(drop=gone)
        else:
            self._drop_run(gone)
        self.notes = [n for n in self.notes if not n.startswith("forward graph: iteration")]
        total = self.runs_total
        note = f"forward graph: iteration {total} of {total}"
        if self._folded:
            note += f", identical structure folded ({self._folded} earlier iterations)"
        if self._differing:
            note += (f"; {self._differing} older runs of other structures dropped (at most "
                     f"{DETAILED_RUNS} kept in full)")
        self.notes.append(note + "; every backward run is listed in run_log")

    def _drop_run(self, gone_run: BackwardRun) -> None:
        """Forget ``gone_run`` now; the forward ops of its iteration and what only they refer to
        go with the next :meth:`_collect` (NOTE [perf]: one pass for many runs, as finding what
        is still referred to costs about the same for one run as for thirty)."""
        self._runs = [r for r in self._runs if r is not gone_run]
        self._unbuilt = [u for u in self._unbuilt if u[0] is not gone_run]
        self._to_drop.append(self._run_segments.pop(gone_run.id, 0))
        if len(self._to_drop) >= 32:
            self._collect()

    def _collect(self) -> None:
        """Drop the raw records of the iterations of the runs :meth:`_drop_run` forgot, keeping
        what the rest refers to (NOTE [long runs])."""
        dropped, self._to_drop = set(self._to_drop), []
        self._unpack()
        runs, segments = self._runs, self._run_segments
        kept_segments = set(segments.values())
        last_dropped = max(dropped)
        kept_ops, gone = [], set()
        for o in self._rec_ops:
            if o[9] <= last_dropped and o[9] not in kept_segments:
                gone.add(o[0])
            else:
                kept_ops.append(o)
        # What the kept records refer to, to a fixed point (the loader checks every id).
        live_t = set(self._tids.live())
        live_n: set[str] = set()
        for r in runs:
            live_t.update(r.roots)
            live_t.update(r.inputs)
            live_n.update(r.nodes)
            if r.graph_root is not None:
                live_n.add(r.graph_root)
        for o in kept_ops:
            live_t.update(i for i in o[2] if type(i) is str)
            live_t.update(o[3])
            live_t.update(v["tensor"] for _, v in o[5] if isinstance(v, dict) and "tensor" in v)
            if o[4] is not None:
                live_n.add(o[4])
        raw_t, raw_n = self._rec_tensors, self._rec_nodes
        todo_t, todo_n = list(live_t), list(live_n)
        while todo_t or todo_n:
            new_n = []
            for tid in todo_t:
                rec = raw_t.get(tid)
                if rec is not None and rec[5] is not None and rec[5] not in live_n:
                    live_n.add(rec[5])
                    new_n.append(rec[5])
            new_t = []
            for nid in todo_n:
                rec = raw_n.get(nid)
                if rec is None:
                    continue
                nexts = rec[3]
                for k in range(0, len(nexts), 2):
                    if nexts[k] is not None and nexts[k] not in live_n:
                        live_n.add(nexts[k])
                        new_n.append(nexts[k])
                for tid in (rec[5], *(sv[1] for sv in rec[6])):
                    if tid is not None and tid not in live_t:
                        live_t.add(tid)
                        new_t.append(tid)
            todo_t, todo_n = new_t, new_n
        tensors = {}
        for tid, rec in raw_t.items():
            if tid in live_t:
                if rec is not None and rec[7] in gone:  # made by a dropped op
                    rec = (*rec[:7], None, *rec[8:])
                tensors[tid] = rec
        self._rec_tensors = tensors
        self._rec_nodes = {k: v for k, v in raw_n.items() if k in live_n}
        self._rec_ops = kept_ops
        self._tnames = {k: v for k, v in self._tnames.items() if k in tensors}
        self._tgrads = {k: v for k, v in self._tgrads.items() if k in tensors}
        self._unnamed &= tensors.keys()
        self._op_count_dropped += len(gone)
        self._trim_versions()

    @staticmethod
    def _signature(ops: Any) -> tuple:
        """What makes two iterations the same: the ops in order, their input and output counts,
        in-place flags, module scopes and source lines (the same code run again, not two
        statements that happen to run the same ops)."""
        return tuple((o[1], len(o[2]), len(o[3]), o[6], o[7], o[8]) for o in ops)

    def _prune(self, keep: int | None = None, drop: BackwardRun | None = None) -> None:
        """Keep only the last ``keep_runs`` runs and the forward ops that led to them; or, with
        ``drop``, forget that run and the forward ops of its iteration (a folded one).

        NOTE [interrupted pruning]: a signal raises in the program wherever it runs (SIGTERM,
        Ctrl-C: the CLI then writes what was recorded), also in here, which real PyTorch's
        loops run after every iteration. So nothing is changed until all is computed, and the
        new state is then stored by plain assignments, which Python runs without checking for
        signals between them: an interrupted prune leaves the trace as it was, whole."""
        keep = self.keep_runs if keep is None else keep
        self._build_model()
        if drop is not None:
            gone_seg = self._run_segments.get(drop.id, int(drop.id[3:]))
            runs = [r for r in self._runs if r is not drop]
        else:
            runs = self._runs[-keep:]
        kept = {id(r) for r in runs}
        # NOTE [perf]: the steps of dropped runs are never built.
        unbuilt = [u for u in self._unbuilt if id(u[0]) in kept]
        kept_ids = {r.id for r in runs}
        segments = {k: v for k, v in self._run_segments.items() if k in kept_ids}
        first_segment = segments.get(runs[0].id, int(runs[0].id[3:]))
        if drop is not None:  # the dropped run's iteration, unless a kept run is of it
            kept_segs = set(segments.values())

            def gone(op: OpRecord) -> bool:
                return op.segment <= gone_seg and op.segment not in kept_segs
        else:
            def gone(op: OpRecord) -> bool:
                return op.segment < first_segment
        ops = [op for op in self._ops if not gone(op)]
        dropped = len(self._ops) - len(ops)
        live_nodes: set[str] = set()
        live_tensors: set[str] = set()
        for run in runs:
            live_nodes.update(run.nodes)
            live_tensors.update(run.roots)
            live_tensors.update(run.inputs)
        for op in ops:
            live_tensors.update(i for _, i in op.tensor_args())
            live_tensors.update(op.outputs)
            if op.node:
                live_nodes.add(op.node)
        # What is kept must refer only to what is kept (the loader checks every reference):
        # tensors still alive (a later op may use them: an RNN's hidden state, a weight), and,
        # to a fixed point, kept tensors' grad_fn, kept nodes' next nodes and their tensors.
        live_tensors.update(self._tids.live())
        all_nodes, all_tensors = self._nodes, self._tensors
        todo = list(live_nodes)
        while True:
            for nid in todo:
                n = all_nodes.get(nid)
                if n is not None:
                    live_tensors.update(t for t in (n.variable, *(s.tensor for s in n.saved))
                                        if t is not None)
            grown = {f for nid in todo if nid in all_nodes
                     for f, _ in all_nodes[nid].next_functions if f is not None}
            grown.update(t.grad_fn for k, t in all_tensors.items()
                         if k in live_tensors and t.grad_fn is not None)
            todo = list((grown & all_nodes.keys()) - live_nodes)
            if not todo:
                break
            live_nodes.update(todo)
        kept_ops = {op.id for op in ops}
        # A tensor or node whose op was dropped with its segment: a copy without the link (the
        # object itself may still be in the state an interruption leaves).
        tensors = {k: (t if t.op is None or t.op in kept_ops else dataclasses.replace(t, op=None))
                   for k, t in all_tensors.items() if k in live_tensors}
        nodes = {k: (n if n.forward_op is None or n.forward_op in kept_ops
                     else dataclasses.replace(n, forward_op=None))
                 for k, n in all_nodes.items() if k in live_nodes}
        unnamed = self._unnamed & tensors.keys()
        notes = self.notes
        if dropped and drop is None:
            first = run_id_number(runs[0].id)  # NOTE [run numbers]
            notes = [n for n in notes if not n.startswith("keep_runs")] + [
                f"keep_runs={keep}: forward ops and runs before backward run "
                f"{first if first is not None else runs[0].id} were dropped"]
        # The commit: plain stores, no call between them (NOTE [interrupted pruning]).
        self._runs = runs
        self._unbuilt = unbuilt
        self._run_segments = segments
        self._ops = ops
        self._nodes = nodes
        self._tensors = tensors
        self._unnamed = unnamed
        self.notes = notes
        self._trim_versions()
