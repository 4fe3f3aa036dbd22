"""``gradviz.trace()``: record what the dispatch point and the engines report, as plain data.

The recorder is one listener (see :mod:`gradviz.autograd.events`). It turns live tensors and
nodes into string ids the moment it first sees them, keeping only weak references to map the
same object to the same id, so tracing never keeps a graph alive and never changes a result.
"""

from __future__ import annotations

import functools
import linecache
import os
import sys
import weakref
from collections.abc import Iterator
from types import FrameType
from typing import Any

import numpy as np

from gradviz.autograd import events
from gradviz.autograd.graph import AccumulateGrad, GraphRoot, Node, SavedVariable
from gradviz.tensor import Tensor
from gradviz.trace.model import (
    BackwardGraph,
    BackwardRun,
    NodeInfo,
    OpRecord,
    SavedInfo,
    SourceLoc,
    Step,
    TensorInfo,
    dtype_name,
    summarize,
)

__all__ = ["Trace", "trace"]

_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
# Bundled examples are user code: their lines are what a learner wants to see.
_USER_DIRS_INSIDE = (os.path.join(_PKG_DIR, "examples") + os.sep,)
VALUE_MODES = ("small", "none", "all")


@functools.lru_cache(maxsize=4096)
def _is_internal(filename: str) -> bool:
    path = os.path.abspath(filename) if not filename.startswith("<") else filename
    return path.startswith(_PKG_DIR) and not path.startswith(_USER_DIRS_INSIDE)


def user_frame(depth: int = 1) -> FrameType | None:
    """The innermost frame outside gradviz's own code (the user's line)."""
    f: FrameType | None = sys._getframe(depth)
    while f is not None and _is_internal(f.f_code.co_filename):
        f = f.f_back
    return f


_SOURCES: dict[tuple[Any, int], SourceLoc] = {}


def _source(frame: FrameType | None) -> SourceLoc | None:
    """The frame's line as a SourceLoc; one shared object per code line (NOTE [perf]: a loop
    calls the same lines over and over, and reading source text is slow)."""
    if frame is None:
        return None
    key = (frame.f_code, frame.f_lineno)
    loc = _SOURCES.get(key)
    if loc is None:
        file, line = frame.f_code.co_filename, frame.f_lineno
        loc = SourceLoc(file=file, line=line, code=linecache.getline(file, line).strip(),
                        function=frame.f_code.co_name)
        if len(_SOURCES) < 100_000:  # bounded: code objects are kept alive by the keys
            _SOURCES[key] = loc
    return loc


def _jsonable(v: Any) -> Any:
    """Keyword arguments and constants as JSON-safe values."""
    if isinstance(v, (bool, int, str)) or v is None:
        return v
    if isinstance(v, float):
        return v if np.isfinite(v) else str(v)
    if isinstance(v, (tuple, list)):
        return [_jsonable(x) for x in v]
    if isinstance(v, (np.integer, np.floating, np.bool_)):
        return _jsonable(v.item())
    if isinstance(v, np.dtype):
        return str(v)
    if isinstance(v, Tensor):
        return summarize(v, "small")
    return repr(v)


class _Ids:
    """Stable string ids for live objects, without keeping them alive."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.count = 0
        self._map: dict[int, tuple[weakref.ref, str]] = {}

    def get(self, obj: Any) -> str | None:
        entry = self._map.get(id(obj))
        if entry is not None and entry[0]() is obj:
            return entry[1]
        return None

    def new(self, obj: Any) -> str:
        ident = f"{self.prefix}{self.count}"
        self.count += 1
        key = id(obj)
        self._map[key] = (weakref.ref(obj, lambda _r, k=key: self._map.pop(k, None)), ident)
        return ident



class Trace:
    """A recording of forward ops, backward graphs and engine steps.

    Use :func:`trace` to make one. Attributes are plain data (see :mod:`gradviz.trace.model`):
    ``tensors``, ``ops``, ``nodes`` (every backward node seen), ``runs`` (one per backward pass).

    Example:
        >>> import gradviz
        >>> with gradviz.trace() as tr:
        ...     x = gradviz.tensor([1.0, 2.0], requires_grad=True)
        ...     y = (x * x).sum()
        ...     y.backward()
        >>> [op.name for op in tr.ops], [n.name for n in tr.nodes.values()]
        (['mul', 'sum'], ['MulBackward0', 'AccumulateGrad', 'SumBackward0'])
    """

    def __init__(self, values: str = "small", keep_runs: int | None = None,
                 name: str | None = None) -> None:
        if values not in VALUE_MODES:
            raise ValueError(f"values must be one of {', '.join(VALUE_MODES)}; got {values!r}")
        if keep_runs is not None and (not isinstance(keep_runs, int) or keep_runs < 1):
            raise ValueError(f"keep_runs must be a positive integer or None; got {keep_runs!r}")
        self.values = values
        self.keep_runs = keep_runs
        self.name = name
        self.tensors: dict[str, TensorInfo] = {}
        self.ops: list[OpRecord] = []
        self.nodes: dict[str, NodeInfo] = {}
        self.runs: list[BackwardRun] = []
        self.notes: list[str] = []
        self.runs_total = 0
        self._tids = _Ids("t")
        self._nids = _Ids("n")
        self._op_count = 0
        self._scope: list[str] = []
        self._run: BackwardRun | None = None
        self._ready: list[str] = []
        self._deps: dict[str, int] = {}
        self._summaries: dict[int, tuple[Any, dict[str, Any]]] = {}  # see _value
        self._handlers: dict[str, Any] = {}  # event name -> bound _on_<event> (or False)
        self._engine_data: dict[str, Any] | None = None  # an event's extra plain data
        self._frame: FrameType | None = None
        self._active = False

    # -- context manager -----------------------------------------------------------------------
    def __enter__(self) -> Trace:
        if self._active:
            raise RuntimeError("this trace is already recording")
        self._frame = user_frame(2)
        self._active = True
        events.add_listener(self._on_event)
        return self

    def __exit__(self, *exc: object) -> None:
        events.remove_listener(self._on_event)
        self._active = False
        if self._run is not None:  # an exception escaped mid-backward: close the run
            self._finish_run()
        if self._frame is not None:
            self._name_from_frame(self._frame)
        self._frame = None

    @property
    def recording(self) -> bool:
        return self._active

    # -- ids -------------------------------------------------------------------------------------
    def _tensor(self, t: Tensor, frame: FrameType | None = None) -> str:
        tid = self._tids.get(t)
        if tid is not None:
            info = self.tensors.get(tid)
            if frame is not None and info is not None and info.name == tid:
                info.name = self._var_name(t, frame) or tid  # assigned to a variable since
            return tid
        tid = self._tids.new(t)
        self.tensors[tid] = self._tensor_info(tid, t, frame, None)
        if t.grad_fn is not None:
            self.tensors[tid].grad_fn = self._node(t.grad_fn)
        return tid

    def _tensor_info(self, tid: str, t: Tensor, frame: FrameType | None,
                     source: SourceLoc | None) -> TensorInfo:
        name = t.name or (self._var_name(t, frame) if frame is not None else None) or tid
        return TensorInfo(
            id=tid, name=name, shape=list(t.shape), dtype=dtype_name(t._data.dtype),
            requires_grad=t.requires_grad, is_leaf=t.grad_fn is None,
            is_param=type(t).__name__ == "Parameter", output_nr=t._output_nr, source=source,
            value=summarize(t._data, self.values))

    @staticmethod
    def _var_name(t: Tensor, frame: FrameType) -> str | None:
        for k, v in frame.f_locals.items():
            if v is t and not k.startswith("_"):
                return k
        return None

    def _name_from_frame(self, frame: FrameType) -> None:
        """Give auto-named tensors the names of the user's variables that hold them."""
        for k, v in list(frame.f_locals.items()):
            if isinstance(v, Tensor) and not k.startswith("_"):
                tid = self._tids.get(v)
                if tid is not None and self.tensors.get(tid) and self.tensors[tid].name == tid:
                    self.tensors[tid].name = k

    def _node(self, node: Node) -> str:
        """The id of ``node``, registering it and any unregistered nodes below it (iteratively)."""
        nid = self._nids.get(node)
        if nid is not None:
            return nid
        pending = [node]
        order: list[Node] = []
        while pending:  # discover unregistered nodes, then register children first
            n = pending.pop()
            if self._nids.get(n) is not None or n in order:
                continue
            order.append(n)
            for nxt, _ in n.next_functions:
                if nxt is not None and self._nids.get(nxt) is None:
                    pending.append(nxt)
        ids = {id(n): self._nids.new(n) for n in order}
        for n in order:
            self.nodes[ids[id(n)]] = self._node_info(ids[id(n)], n)
        return ids[id(node)]

    def _node_info(self, nid: str, n: Node) -> NodeInfo:
        if isinstance(n, AccumulateGrad):
            kind = "accumulate_grad"
        elif isinstance(n, GraphRoot):
            kind = "graph_root"
        elif hasattr(n, "_forward_cls"):
            kind = "custom"
        else:
            kind = "op"
        info = NodeInfo(
            id=nid, name=type(n).__name__, kind=kind, sequence_nr=n._seq,
            next_functions=[[None if nxt is None else self._nids.get(nxt), nr]
                            for nxt, nr in n.next_functions],
            num_outputs=n.num_outputs)
        if kind == "accumulate_grad":
            info.variable = self._tensor(n.variable)
        info.saved = [self._saved(name, v) for name, v in n._inspect_saved()]
        return info

    def _saved(self, name: str, v: Any) -> SavedInfo:
        if type(v) is SavedVariable:
            if v._tensor is not None:
                return SavedInfo(name=name, tensor=self._tensor(v._tensor),
                                 value=summarize(v.data, "none"))
            return SavedInfo(name=name, is_output=True, value=summarize(v.data, self.values))
        if v is None or isinstance(v, (bool, int, float, str, tuple, list)):
            return SavedInfo(name=name, value={"const": _jsonable(v)})
        return SavedInfo(name=name, value={"const": repr(v)})

    def _value(self, v: Any) -> dict[str, Any] | None:
        """A gradient's summary. NOTE [perf]: within a backward run the same array is reported
        several times (sent, added to a buffer, received), so summaries are cached by identity
        for the run; the cache holds the arrays, so an id cannot be reused meanwhile."""
        if v is None:
            return None
        cache = self._summaries
        hit = cache.get(id(v))
        if hit is not None and hit[0] is v:
            return hit[1]
        s = summarize(v, self.values)
        cache[id(v)] = (v, s)
        return s

    # -- events ----------------------------------------------------------------------------------
    def _on_event(self, event: str, data: dict[str, Any]) -> None:
        handler = self._handlers.get(event)
        if handler is None:
            handler = self._handlers[event] = getattr(self, "_on_" + event, False)
        if handler:
            # Engines may attach plain JSON data ("engine_data"): it joins the step's data.
            self._engine_data = data.get("engine_data")
            handler(data)

    def _on_module_enter(self, data: dict[str, Any]) -> None:
        self._scope.append(str(data.get("name") or type(data.get("module")).__name__))

    def _on_module_exit(self, data: dict[str, Any]) -> None:
        if self._scope:
            self._scope.pop()

    def _on_op(self, data: dict[str, Any]) -> None:
        frame = user_frame(3)
        source = _source(frame)
        inputs: list[Any] = []
        for a in data["inputs"]:
            if isinstance(a, Tensor):
                inputs.append(self._tensor(a, frame))
            else:
                inputs.append({"const": _jsonable(a)})
        node = data["node"]
        nid = self._node(node) if node is not None else None
        op_id = f"op{self._op_count}"
        self._op_count += 1
        outputs = []
        for t in data["outputs"]:
            old_id = self._tids.get(t) if data["inplace"] else None
            # An in-place result is a new version of a tensor: it gets a new id, so the forward
            # graph stays acyclic, and is named after the old one.
            tid = self._tids.new(t)
            info = self._tensor_info(tid, t, None, source)
            if old_id is not None and old_id in self.tensors:
                info.name = f"{self.tensors[old_id].name.split(' (v')[0]} (v{t._version})"
            info.op = op_id
            info.grad_fn = nid if t.grad_fn is node and node is not None else (
                self._node(t.grad_fn) if t.grad_fn is not None else None)
            self.tensors[tid] = info
            outputs.append(tid)
        if nid is not None:
            self.nodes[nid].forward_op = op_id
        self.ops.append(OpRecord(
            id=op_id, name=data["name"], inputs=inputs, outputs=outputs, node=nid,
            # A tensor passed by keyword (nll_loss's target, where's condition) is linked by id.
            kwargs={k: {"tensor": self._tensor(v, frame)} if isinstance(v, Tensor)
                    else _jsonable(v) for k, v in data.get("kwargs", {}).items()},
            inplace=bool(data["inplace"]), scope=list(self._scope), source=source,
            segment=self.runs_total))

    def _on_backward_begin(self, data: dict[str, Any]) -> None:
        frame = user_frame(3)
        roots = [self._tensor(t, frame) for t in data["roots"]]
        graph_root = data["graph_root"]
        root_id = self._node(graph_root)
        reachable = self._reachable(graph_root)
        self._run = BackwardRun(
            id=f"run{self.runs_total}", engine=data.get("engine", "pytorch"),
            kind="backward" if data.get("accumulate_grad", True) else "grad", roots=roots,
            root_edges=[[self.tensors[r].grad_fn or self._leaf_node(t), t._output_nr]
                        for r, t in zip(roots, data["roots"])],
            nodes=reachable, graph_root=root_id,
            retain_graph=bool(data.get("retain_graph")),
            create_graph=bool(data.get("create_graph")),
            inputs=[self._tensor(t, frame) for t in data.get("inputs", ())],
            source=_source(frame))
        graph = data.get("gradient_graph")  # MXNet's explicit gradient graph
        if graph is not None:
            self._run.gradient_graph = graph.to_model(self._node, self._tensor)
        self._ready = []
        self._deps = {}
        self._summaries.clear()

    def _leaf_node(self, t: Tensor) -> str | None:
        extra = t._extra
        acc = extra.grad_acc() if extra is not None and extra.grad_acc is not None else None
        return None if acc is None else self._node(acc)

    def _reachable(self, root: Node) -> list[str]:
        seen = {id(root)}
        order = [root]
        stack = [root]
        while stack:
            for nxt, _ in stack.pop().next_functions:
                if nxt is not None and id(nxt) not in seen:
                    seen.add(id(nxt))
                    order.append(nxt)
                    stack.append(nxt)
        return [self._node(n) for n in order]

    def _step(self, kind: str, node: Node | None = None, **data: Any) -> None:
        run = self._run
        if run is None:
            return
        nid = None if node is None else self._node(node)
        if self._engine_data:
            data.update(self._engine_data)
        run.steps.append(Step(index=len(run.steps), kind=kind, node=nid, data=data))

    def _on_dependencies(self, data: dict[str, Any]) -> None:
        if self._run is None:
            return
        self._deps = {self._node(n): c for n, c in data["counts"].items()}
        self._run.dependencies = dict(self._deps)
        extra = {}
        if "tensor_counts" in data:  # SINGA counts each (node, output) tensor too
            extra["tensor_counts"] = [[self._node(n), nr, c]
                                      for (n, nr), c in data["tensor_counts"].items()]
        self._step("compute_dependencies", counts=dict(self._deps), **extra)

    def _on_enqueue(self, data: dict[str, Any]) -> None:
        self._ready = [self._node(n) for n in data["ready"]]
        self._step("enqueue", data["node"], ready=list(self._ready))

    def _on_execute(self, data: dict[str, Any]) -> None:
        node = data["node"]
        nid = self._node(node)
        if nid in self._ready:
            self._ready.remove(nid)
        self._step("execute", node, grad_outputs=[self._value(g) for g in data["grad_outputs"]],
                   grad_inputs=[self._value(g) for g in data["grad_inputs"]],
                   ready=list(self._ready))

    def _on_accumulate(self, data: dict[str, Any]) -> None:
        target = self._node(data["node"])
        self._deps[target] = data["remaining"]
        src = data.get("from")
        self._step("accumulate", data["node"], input_nr=data["input_nr"],
                   source=None if src is None else self._node(src),
                   grad=self._value(data["grad"]), buffer=self._value(data["buffer"]),
                   remaining=data["remaining"])

    def _on_leaf_grad(self, data: dict[str, Any]) -> None:
        tid = self._tensor(data["tensor"])
        after = self._value(data["after"])
        self.tensors[tid].grad = after
        self._step("leaf_grad", data["node"], tensor=tid, before=self._value(data["before"]),
                   after=after)

    def _on_hook(self, data: dict[str, Any]) -> None:
        fn = data.get("fn")
        self._step("hook", data.get("node"), hook=data["kind"],
                   fn=getattr(fn, "__qualname__", None) if fn is not None else None)

    def _on_release_saved(self, data: dict[str, Any]) -> None:
        self._step("release_saved", data["node"])

    def _on_gradient_node(self, data: dict[str, Any]) -> None:
        self._step("gradient_node", data.get("node"), gnode=data["gnode"], op=data["op"],
                   input_nr=data.get("input_nr", 0),
                   inputs=[self._value(g) for g in data["inputs"]],
                   output=self._value(data["output"]))

    def _on_error(self, data: dict[str, Any]) -> None:
        exc = data["error"]
        err = {"type": type(exc).__name__, "message": str(exc)}
        if self._run is not None:
            self._run.error = err
        self._step("error", data.get("node"), **err)
        self._finish_run()

    def _on_backward_end(self, data: dict[str, Any]) -> None:
        self._step("done")
        self._finish_run()

    def _finish_run(self) -> None:
        run = self._run
        if run is None:
            return
        self._run = None
        self._summaries.clear()
        self.runs.append(run)
        self.runs_total += 1
        if self.keep_runs is not None and len(self.runs) > self.keep_runs:
            self._prune()

    def _prune(self) -> None:
        """Keep only the last ``keep_runs`` runs and the forward ops that led to them."""
        self.runs = self.runs[-self.keep_runs:]
        first_segment = int(self.runs[0].id[3:])
        dropped = sum(1 for op in self.ops if op.segment < first_segment)
        self.ops = [op for op in self.ops if op.segment >= first_segment]
        live_nodes: set[str] = set()
        live_tensors: set[str] = set()
        for run in self.runs:
            live_nodes.update(run.nodes)
            live_tensors.update(run.roots)
            live_tensors.update(run.inputs)
        for op in self.ops:
            live_tensors.update(i for i in op.inputs if isinstance(i, str))
            live_tensors.update(op.outputs)
            live_tensors.update(v["tensor"] for v in op.kwargs.values()
                                if isinstance(v, dict) and "tensor" in v)
            if op.node:
                live_nodes.add(op.node)
        live_tensors.update(n.variable for k, n in self.nodes.items()
                            if k in live_nodes and n.variable)
        self.nodes = {k: v for k, v in self.nodes.items() if k in live_nodes}
        self.tensors = {k: v for k, v in self.tensors.items() if k in live_tensors}
        if dropped:
            self.notes = [n for n in self.notes if not n.startswith("keep_runs")]
            self.notes.append(f"keep_runs={self.keep_runs}: forward ops and runs before "
                              f"{self.runs[0].id} were dropped")

    # -- queries -----------------------------------------------------------------------------------
    def backward_graph(self, run: int | str = -1) -> BackwardGraph:
        """The backward graph one run walked (by index or id), as a :class:`BackwardGraph`."""
        r = self.run(run)
        nodes = {n: self.nodes[n] for n in r.nodes if n in self.nodes}
        leaves = {n.variable: self.tensors[n.variable] for n in nodes.values()
                  if n.variable in self.tensors}
        return BackwardGraph(nodes=nodes, roots=[list(e) for e in r.root_edges], tensors=leaves)

    def run(self, run: int | str = -1) -> BackwardRun:
        """One backward run, by position (``-1``: the last) or id (``"run0"``)."""
        if not self.runs:
            raise IndexError("this trace has no backward runs (backward() was never called)")
        if isinstance(run, str):
            for r in self.runs:
                if r.id == run:
                    return r
            raise KeyError(f"no run {run!r}; runs are {[r.id for r in self.runs]}")
        return self.runs[run]

    def steps(self, run: int | str = -1) -> Iterator[Step]:
        """The engine steps of one run, in order."""
        return iter(self.run(run).steps)

    def summary(self) -> str:
        """One line per count: ops, tensors, nodes, backward runs, steps.

        Example:
            >>> import gradviz
            >>> with gradviz.trace() as tr:
            ...     (gradviz.ones(2, requires_grad=True) * 2).sum().backward()
            >>> print(tr.summary())
            gradviz trace: 2 ops, 3 tensors, 3 backward nodes, 1 backward run, 12 steps
        """
        steps = sum(len(r.steps) for r in self.runs)
        runs = len(self.runs)
        text = (f"gradviz trace: {len(self.ops)} ops, {len(self.tensors)} tensors, "
                f"{len(self.nodes)} backward nodes, {runs} backward run{'s' if runs != 1 else ''},"
                f" {steps} steps")
        if self.runs_total > runs:
            text += f" ({self.runs_total} runs recorded, last {runs} kept)"
        return text

    def __repr__(self) -> str:
        return f"<Trace {self.summary()[len('gradviz trace: '):]}>"

    # -- notebook display (see gradviz.render.jupyter; imported only when a notebook asks) -------
    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None, **_: Any
                          ) -> dict[str, str]:
        from gradviz.render.jupyter import trace_mimebundle

        return trace_mimebundle(self, include, exclude)

    def _repr_html_(self) -> str:
        """The HTML step player (or, without it, the backward graph's SVG)."""
        return self._repr_mimebundle_(include=["text/html"])["text/html"]

    def _repr_svg_(self) -> str | None:
        """The SVG of the last backward run's graph (None for an empty trace)."""
        return self._repr_mimebundle_(include=["image/svg+xml"]).get("image/svg+xml")

    # -- serialisation (see gradviz.trace.io) ------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        from gradviz.trace.io import trace_to_dict

        return trace_to_dict(self)

    def to_json(self, indent: int | None = 1) -> str:
        """The trace as JSON text (schema documented in ``docs/trace-schema.md``)."""
        from gradviz.trace.io import dumps

        return dumps(self, indent=indent)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write :meth:`to_json` to ``path``."""
        from gradviz.trace.io import save

        save(self, path)

    def to_html(self, path: str | os.PathLike[str] | None = None,
                run: int | str | None = None) -> str:
        """The HTML step player: one self-contained page (see :mod:`gradviz.render.html`).

        Args:
            path: also write the page there (UTF-8).
            run: show only this backward run (index or id); default: every run, selectable.

        Example:
            >>> import gradviz
            >>> with gradviz.trace() as tr:
            ...     (gradviz.ones(2, requires_grad=True) * 2).sum().backward()
            >>> tr.to_html("steps.html")[:15]  # doctest: +SKIP
            '<!DOCTYPE html>'
        """
        from gradviz.render.html import player_html, write_player

        if path is not None:
            return write_player(self, path, run=run)
        return player_html(self, run=run)


def trace(values: str = "small", keep_runs: int | None = None, name: str | None = None
          ) -> Trace:
    """Record everything inside a ``with`` block: forward ops, backward graphs, engine steps.

    Args:
        values: ``"small"`` keeps full values of tensors up to 64 elements and summaries
            (shape, dtype, min/max/mean, first elements) beyond; ``"none"`` keeps shapes and
            dtypes only; ``"all"`` keeps every value.
        keep_runs: keep only the last N backward runs and the forward ops since the first kept
            one (bounded memory in a training loop); ``None`` keeps everything.
        name: a title for the trace (shown by renderers).

    Example:
        >>> import gradviz
        >>> with gradviz.trace() as tr:
        ...     x = gradviz.tensor([1.0, 2.0], requires_grad=True)
        ...     (x ** 2).sum().backward()
        >>> [s.kind for s in tr.steps()][:3]
        ['compute_dependencies', 'enqueue', 'execute']
    """
    return Trace(values=values, keep_runs=keep_runs, name=name)
