"""``gradviz.trace()``: record what the dispatch point and the engines report, as plain data.

The recorder is one observer (see :mod:`gradviz.autograd.events`). It turns live tensors and
nodes into string ids the moment it first sees them, keeping only weak references to map the
same object to the same id, so tracing never keeps a graph alive and never changes a result.

NOTE [perf: lazy trace] Tracing must cost little next to what it watches (issue #9: a traced
chain of tiny ops at most twice the untraced one). So each event keeps only what cannot be had
later (ids, shapes, a snapshot of each value: see NOTE [perf: value snapshots] in model.py)
as plain fields, and the model objects (TensorInfo, NodeInfo, OpRecord, Step) and the value
summaries are built from them when a reader first asks for ``tensors``, ``ops``, ``nodes`` or
``runs``. The fields are only strings, numbers, tuples of such and arrays (a source line is an
index into ``_sources``, a constant a 1-tuple): the cyclic garbage collector has nothing to
follow in them. With several dataclasses, dicts and lists per op, its full collections over a
growing trace were the largest single cost of tracing; with a tuple per record, the number of
its collections still was (NOTE [perf: flat records]: forward records are flat rows while
recording).
"""

from __future__ import annotations

import linecache
import math
import sys
import threading
import weakref
from collections.abc import Callable, Iterator
from itertools import islice
from types import CodeType, FrameType
from typing import Any

import numpy as np

from gradviz.autograd import events
from gradviz.autograd.engine import current_node
from gradviz.autograd.grad_mode import is_grad_enabled, is_inference_mode_enabled
from gradviz.autograd.graph import AccumulateGrad, GraphRoot, Node, SavedVariable
from gradviz.tensor import Tensor
from gradviz.trace import naming
from gradviz.trace.budget import RunBudget
from gradviz.trace.model import (
    SMALL,
    STEP_TYPES,
    BackwardRun,
    ModuleSummary,
    NodeInfo,
    OpRecord,
    SavedInfo,
    SourceLoc,
    TensorInfo,
    Trace,
    clip_text,
    dtype_name,
    expand_snapshot,
    freed_names,
    map_leaves,
    packed_summary,
    scope_key,
    snapshot,
    summarize,
    tensor_shapes,
    versioned,
)
from gradviz.trace.naming import Naming, user_frame

__all__ = ["Recorder", "Trace", "trace", "tracer"]

VALUE_MODES = ("small", "none", "all")
# From a Recorder method called by _EngineObserver, the walk to the user's frame starts at
# sys._getframe(_EMITTER) (frames: user_frame, that method, the observer's, then its caller:
# emit_op, an engine, Function.apply).
_EMITTER = 3


# id(code) -> (code, {line: SourceLoc}). NOTE [perf]: keyed by identity, as hashing a code object
# hashes its whole contents; the entry holds the code, so its id cannot be reused meanwhile.
_SOURCES: dict[int, tuple[CodeType, dict[int, SourceLoc]]] = {}


def _source(frame: FrameType | None) -> SourceLoc | None:
    """The frame's line as a SourceLoc; one shared object per code line (NOTE [perf]: a loop
    calls the same lines over and over, and reading source text is slow)."""
    if frame is None:
        return None
    code, line = frame.f_code, frame.f_lineno
    entry = _SOURCES.get(id(code))
    if entry is None or entry[0] is not code:
        entry = (code, {})
        if len(_SOURCES) < 10_000:  # bounded: the entries keep code objects alive
            _SOURCES[id(code)] = entry
    loc = entry[1].get(line)
    if loc is None:
        file = code.co_filename
        loc = entry[1][line] = SourceLoc(file=_cell_label(file) or file, line=line,
                                         code=clip_text(linecache.getline(file, line).strip()),
                                         function=code.co_name)
    return loc


def _cell_label(filename: str) -> str | None:
    """``In [3]`` for the file IPython compiled cell 3 into (``/tmp/ipykernel_12/3456.py``),
    as its own tracebacks say; None for any other file, or outside IPython."""
    ipython = sys.modules.get("IPython")  # never imported here: only if the user runs it
    get = getattr(ipython, "get_ipython", None)
    shell = get() if get is not None else None
    compiler = getattr(shell, "compile", None)
    fmt = getattr(compiler, "format_code_name", None)
    if fmt is None:
        return None
    try:
        named = fmt(filename)  # ("Cell", "In[3]") for a cell's file, else None
    except Exception:  # an IPython without this mapping: keep the file name
        return None
    if not named or not str(named[1]).startswith("In["):
        return None
    return "In [" + str(named[1])[3:]


def _jsonable(v: Any) -> Any:
    """Keyword arguments and constants as JSON-safe values (tuples and lists as lists)."""
    return map_leaves(v, _jsonable_item)


def _jsonable_item(v: Any) -> Any:
    if isinstance(v, (np.integer, np.floating, np.bool_)):
        v = v.item()
    if isinstance(v, (bool, int, str)) or v is None:
        # An int subclass (a dim remembering how it was written: NOTE [saved as given] in
        # gradviz/tensor.py) becomes the plain int it stands for: the trace is plain data.
        if type(v) is not int and isinstance(v, int) and not isinstance(v, bool):
            return int(v)
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else str(v)
    if isinstance(v, np.dtype):
        return str(v)
    if isinstance(v, Tensor):
        return summarize(v, "small")
    return repr(v)


# NOTE [perf: shared records] What a loop passes again and again (the constant of
# ``y * 1.0001``, the saved ``alpha`` of every add, a shape) is one shared tuple, not a new one per
# op, for the reason of NOTE [perf: flat records]. Only exact types are shared, keyed with the
# type (1 and 1.0 and True stay apart); a zero float is not (0.0 and -0.0 are equal keys, and
# differ in JSON). A shared constant still becomes a dict of its own per record when the model
# is built (_expander, _const_value). The caches are bounded.
#
# NOTE [perf: shared sizes] A tuple of ints is shared too: addmm's node saves its operands'
# sizes and strides (``mat1_sym_sizes``), three or four tuples per Linear layer, each of which
# _jsonable walked element by element at every step. Ints only, checked before the look-up:
# ``(1, 2) == (True, 2)`` with equal hashes, so a tuple holding a bool or a float must never
# find an int tuple's entry. The JSON list it stands for is copied for each record that the
# model builds (_const_value), so no two records share a list. Measured (timeit): a size's
# saved entry 0.83 -> 0.63 us, so about 0.8 us per AddmmBackward0 and 2.4 us per MLP step; and
# one shared tuple instead of a tuple and a list kept per size, per node.
_CONSTS: dict[tuple[type, Any], tuple[Any]] = {}
_SHAPES: dict[tuple[int, ...], tuple[int, ...]] = {}


def _shareable(v: Any) -> bool:
    t = type(v)
    if t is tuple:
        return len(v) <= 8 and all(type(x) is int for x in v)
    return t is int or t is bool or v is None or (t is float and v != 0.0)


def _const_value(c: tuple[Any]) -> Any:
    """What a raw constant ``(value,)`` holds, as a record of the model holds it: a list (a
    shared tuple's, NOTE [perf: shared sizes]) copied, so that every record has its own."""
    v = c[0]
    return list(v) if type(v) is list else v


def _const(v: Any) -> tuple[Any]:
    """A constant input as a raw record holds it: ``(_jsonable(v),)``."""
    if not _shareable(v):
        return (_jsonable(v),)
    key = (type(v), v)
    c = _CONSTS.get(key)
    if c is None:
        c = (_jsonable(v),)
        if len(_CONSTS) < 4096:
            _CONSTS[key] = c
    return c


def _shape(shape: tuple[int, ...]) -> tuple[int, ...]:
    """The shared tuple equal to ``shape``."""
    known = _SHAPES.get(shape)
    if known is None:
        known = shape
        if len(_SHAPES) < 4096:
            _SHAPES[shape] = shape
    return known


class _Ref(weakref.ref):
    """A weak reference that knows the ``id`` key it was filed under."""

    __slots__ = ("key",)


class _Ids:
    """Stable string ids for live objects (backward nodes), without keeping them alive.

    NOTE [perf]: ``ids`` maps ``id(obj)`` to the object's trace id, and a weak reference per
    object drops the entry when the object dies, so an entry is never stale and a lookup is a
    single ``ids.get(id(obj))`` (hot paths use that directly; no weakref call per lookup). The
    references share one callback (no closure per object: fewer objects for the collector).
    """

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.count = 0
        self.ids: dict[int, str] = {}
        refs: dict[int, _Ref] = {}
        ids = self.ids

        def drop(ref: _Ref) -> None:
            if refs.get(ref.key) is ref:  # not replaced by a newer version's reference
                del refs[ref.key], ids[ref.key]

        self._refs = refs
        self._drop = drop

    def get(self, obj: Any) -> str | None:
        return self.ids.get(id(obj))

    def new(self, obj: Any) -> str:
        ident = f"{self.prefix}{self.count}"
        self.count += 1
        key = id(obj)
        self.ids[key] = ident
        ref = _Ref(obj, self._drop)
        ref.key = key
        # Replacing an older reference (an in-place op's new version) discards it unfired.
        self._refs[key] = ref
        return ident

    def forget(self, obj: Any) -> None:
        """Give ``obj`` a new id when next registered (its old id stays in the records)."""
        key = id(obj)
        if key in self.ids:
            del self.ids[key], self._refs[key]


class _TRef(weakref.ref):
    """A weak reference to a tensor that carries the tensor's trace id and the ``_version``
    the tensor had when that id was given (NOTE [versions])."""

    __slots__ = ("ident", "version")


class _TensorIds:
    """Stable string ids for live tensors, without keeping them alive.

    NOTE [perf]: most tensors an op chain makes die at once, and a weak-reference callback per
    death costs more than checking the reference on each lookup (tensors are looked up about
    once per op, nodes several times). So entries are checked when read, and the dead ones are
    swept out whenever the map has doubled since the last sweep. An entry is one object, a
    weak reference holding the id (``_TRef``), not a (reference, id) pair: every object a trace
    keeps per op makes the cyclic collector run more often (NOTE [perf: lazy trace]).
    ``_ids`` stays the same dict object (a sweep empties and refills it), so that hot paths
    may hold it across calls that register tensors.
    """

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.count = 0
        self._ids: dict[int, _TRef] = {}
        self._sweep_at = 1024

    def get(self, obj: Any) -> str | None:
        ref = self._ids.get(id(obj))
        return ref.ident if ref is not None and ref() is obj else None

    def live(self) -> Iterator[str]:
        """The ids of the tensors still alive."""
        return (ref.ident for ref in self._ids.values() if ref() is not None)

    def new(self, obj: Any, version: int = 0) -> str:
        ident = f"{self.prefix}{self.count}"
        self.count += 1
        ids = self._ids
        ref = ids[id(obj)] = _TRef(obj)  # replaces an older version's entry
        ref.ident = ident
        ref.version = version
        if len(ids) >= self._sweep_at:
            self.sweep()
        return ident

    def sweep(self) -> None:
        """Drop the entries of dead tensors (done by :meth:`new` when the map has doubled)."""
        ids = self._ids
        live = [(k, r) for k, r in ids.items() if r() is not None]
        ids.clear()
        ids.update(live)
        self._sweep_at = max(1024, 2 * len(ids))


def _version_of(t: Tensor) -> int:
    """``t._version`` (0 for an inference tensor, which has none), without the property."""
    vc = t._vc
    return 0 if vc is None or vc.inference else vc.version


class _VRef(weakref.ref):
    """A weak reference to a gradient, holding its snapshot (see Recorder._value)."""

    __slots__ = ("snap",)


class _Held:
    """What stands for a _VRef for a value that cannot be referred to weakly (a NumPy scalar,
    a Python number): it holds the value."""

    __slots__ = ("value", "snap")

    def __init__(self, value: Any) -> None:
        self.value = value

    def __call__(self) -> Any:
        return self.value


_NODE_TYPES: dict[type, tuple[str, str]] = {}


def _node_type(n: Node) -> tuple[str, str]:
    """A node's class name and kind (``op``, ``accumulate_grad``, ``graph_root``, ``custom``)."""
    named = _NODE_TYPES.get(type(n))
    if named is None:
        if isinstance(n, AccumulateGrad):
            kind = "accumulate_grad"
        elif isinstance(n, GraphRoot):
            kind = "graph_root"
        elif hasattr(n, "_forward_cls"):
            kind = "custom"
        else:
            kind = "op"
        named = (type(n).__name__, kind)
        if len(_NODE_TYPES) < 4096:  # bounded: the keys keep classes alive
            _NODE_TYPES[type(n)] = named
    return named


# -- raw records (NOTE [perf: lazy trace]) ---------------------------------------------------------
# A tensor: (shape, dtype, requires_grad, is_leaf, is_param, grad_fn, output_nr, op, source,
#            value snapshot); its name and .grad are kept apart (they change after recording).
# A node:   (name, kind, sequence_nr, next_functions flat as (id | None, input_nr, ...),
#            num_outputs, variable, saved as ((name, tensor id, is_output, value), ...)).
# An op:    (id, name, inputs, outputs, node, kwargs as ((name, value), ...), inplace, scope
#            tuple, source, segment, parent); an input is a tensor id or a constant.
# A step:   (kind, node id, engine_data, values...) with the values in the order of
#           _STEP_FIELDS[kind], or (kind, node id, engine_data, fields dict) for the rare kinds
#           recorded by keyword; engine_data is the event's own dict (emitters make a fresh one
#           per event) or None. An enqueue holds the node's priority only, never the queue
#           (linear in the queue's width: replay.py rebuilds the queue).
# A source is an index into Recorder._sources (or None), a constant a 1-tuple ``(value,)``, and a
# value a snapshot (model.snapshot) or such a constant.
#
# NOTE [perf: flat records] While recording, the tensor, node and op records are not tuples but
# rows of fields appended to three flat lists (NOTE [perf: lazy trace] says why objects kept per
# op cost so much: a tuple kept is counted by the collector, even one it stops tracking later;
# fields appended to a list are not objects of their own). Tracing a chain of tiny ops kept
# about seven such objects per op, which made the collector run over three times as often as
# without tracing, and once over everything (a full collection). Readers turn the rows into the
# tuples above first (Recorder._unpack), so the rows' layout is known here and in the writers only:
# a tensor: its _TENSOR_ROW fields in the order of the tuple;
# a node:   name, kind, sequence_nr, num_outputs, variable, n, the n (id, input_nr) pairs of
#           next_functions flat, m, the m saved entries, each _SAVED_ROW fields (pack_hook and
#           packed None when no hook packed it);
# an op:    id, name, node, kwargs, inplace, scope, source, segment, parent, no_grad, n, the n
#           inputs, m, the m outputs.
_TENSOR_ROW = 12
_SAVED_ROW = 6
_OP_FIELDS = 10  # an op row's fields before its inputs' count


def _node_from_row(flat: list[Any], k: int) -> tuple:
    """The node record whose flat row starts at ``flat[k]``."""
    j = k + 6 + 2 * flat[k + 5]
    nexts = tuple(flat[k + 6:j])
    saved = tuple(tuple(flat[i:i + _SAVED_ROW])
                  for i in range(j + 1, j + 1 + _SAVED_ROW * flat[j], _SAVED_ROW))
    return (flat[k], flat[k + 1], flat[k + 2], nexts, flat[k + 3], flat[k + 4], saved)


class _StepRows:
    """A finished run's raw steps as recorded: rows of fields one after another in one flat
    list, and where each row starts (NOTE [perf: flat steps]). Its length is the number of
    steps; iterating gives each step's record tuple (see the raw records above)."""

    __slots__ = ("fields", "starts")

    def __init__(self, fields: list[Any], starts: list[int]) -> None:
        self.fields, self.starts = fields, starts

    def __len__(self) -> int:
        return len(self.starts)

    def __iter__(self) -> Iterator[tuple]:
        f = self.fields
        for k in self.starts:
            kind = f[k]
            if kind == "execute":  # kind, node, engine_data, n, n received, m, m sent
                i = k + 4
                j = i + f[k + 3]
                yield (kind, f[k + 1], f[k + 2], tuple(f[i:j]), tuple(f[j + 1:j + 1 + f[j]]))
            else:
                yield tuple(f[k:k + _STEP_ROW.get(kind, 4)])  # a rare kind: its fields dict


# NOTE [perf: flat steps] The steps of the run being recorded are rows of fields appended to one
# flat list (``_steps``), each row's start noted in ``_starts``, not a tuple per step (and two
# more per execute step): the engine pauses the cyclic collector during a backward pass, and
# the first collection after it walked every tuple the pass had kept: about 5.5 ms per 10,000
# nodes of the tiny-op chain, now none (and no full collection set off by them now and then).
# Traced backward of the chain 9.1 -> 8.3-8.7 us per node (2.38-2.44x -> 2.31x the untraced
# one; CPU time, two runs of 18 rounds each in 6 alternating processes). A row is noted once
# it is whole, so a row an interrupt cut short is never read. The row of a step: its record
# tuple's fields, an execute step's gradients flat, each list after its length.
_STEP_ROW = {"enqueue": 4, "accumulate": 8, "leaf_grad": 6, "release_saved": 3, "done": 3}


_STEP_FIELDS: dict[str, tuple[str, ...]] = {
    "enqueue": ("priority",),
    "execute": ("grad_outputs", "grad_inputs"),
    "accumulate": ("input_nr", "source", "grad", "buffer", "remaining"),
    "leaf_grad": ("tensor", "before", "after"),
    "release_saved": (),
    "done": (),
}


def _one(v: Any, expand: Callable[[Any], Any]) -> Any:
    return None if v is None else expand(v)


def _many(vs: Any, expand: Callable[[Any], Any]) -> list[Any]:
    return [None if v is None else expand(v) for v in vs]


# How a step's raw field becomes the step's field (fields not listed are kept as they are).
_STEP_VALUES: dict[str, Callable[[Any, Callable[[Any], Any]], Any]] = {
    "grad": _one, "buffer": _one, "before": _one, "after": _one, "output": _one,
    "grad_outputs": _many, "grad_inputs": _many, "inputs": _many,
}


def _expander(mode: str) -> Callable[[Any], dict[str, Any]]:
    """The summary of a raw value (a snapshot or a constant), one dict per value for every
    record holding it, as when summaries were made at once. For one build only: ids are reused
    once the raw records are gone."""
    memo: dict[int, dict[str, Any]] = {}

    def expand(value: Any) -> dict[str, Any]:
        if type(value) is tuple and len(value) == 1:
            # A constant: its own dict per record (one constant tuple may be shared by many
            # records: NOTE [perf: shared records]).
            return {"const": _const_value(value)}
        out = memo.get(id(value))
        if out is None:
            out = memo[id(value)] = expand_snapshot(value, mode)
        return out

    return expand


class _Built:
    """A model field of the :class:`Recorder` (``tensors``, ``ops`` ...): reading or replacing it
    first builds the model objects from the raw records (NOTE [perf: lazy trace])."""

    def __init__(self, doc: str) -> None:
        self.__doc__ = doc

    def __set_name__(self, owner: type, name: str) -> None:
        self.attr = "_" + name

    def __get__(self, trace: Recorder | None, owner: type | None = None) -> Any:
        if trace is None:
            return self
        trace._flush()
        return getattr(trace, self.attr)

    def __set__(self, trace: Recorder, value: Any) -> None:
        trace._flush()
        setattr(trace, self.attr, value)


class Recorder(Naming, RunBudget, Trace):
    """The tracer: a :class:`~gradviz.trace.model.Trace` that fills itself with what the
    program inside its ``with`` block does.

    Use :func:`tracer` (or :func:`trace`) to make one. Its fields are the trace's plain data
    (``tensors``, ``ops``, ``nodes``, ``runs`` ...), built from the raw records its observer
    keeps when a reader first asks (NOTE [perf: lazy trace]). Names and identities are
    given by :class:`~gradviz.trace.naming.Naming`, what a long loop keeps is decided by
    :class:`~gradviz.trace.budget.RunBudget`.

    Example:
        >>> import gradviz
        >>> with gradviz.tracer() as tr:
        ...     print(tr.recording)
        ...     (gradviz.ones(2, requires_grad=True) * 3).sum().backward()
        True
        >>> type(tr).__name__, tr.recording, len(tr.runs)
        ('Recorder', False, 1)
    """

    def __init__(self, values: str = "small", keep_runs: int | str | None = None,
                 name: str | None = None, keep_run: int | None = None,
                 torch: bool | None = None) -> None:
        if values not in VALUE_MODES:
            raise ValueError(f"values must be one of {', '.join(VALUE_MODES)}; got {values!r}")
        if keep_runs is not None and keep_runs != "all" and (
                not isinstance(keep_runs, int) or isinstance(keep_runs, bool) or keep_runs < 1):
            raise ValueError("keep_runs must be a positive integer, 'all' or None; got "
                             f"{keep_runs!r}")
        self.values = values
        # Values up to this size are snapshotted as a copy (model.snapshot); see _snap.
        self._copy_upto = SMALL if values == "small" else math.inf if values == "all" else -1
        self.keep_runs = keep_runs
        # A run asked for by number (``gradviz trace --run N``): never folded or dropped by the
        # default policy, so that it can be drawn (NOTE [long runs]).
        self.keep_run = None if keep_run is None else f"run{keep_run}"
        # Real PyTorch too (gradviz/trace/torch_source.py): True records it (importing torch),
        # None records it if torch is imported when the block begins, False never.
        self.torch = torch
        self.torch_source: Any = None
        self.name = name
        self.notes: list[str] = []
        self.runs_total = 0
        # One summary per backward run, kept however many runs are (NOTE [long runs]).
        self.run_log: list[dict[str, Any]] = []
        self._folded = self._differing = 0  # earlier iterations folded / of another structure
        self._op_count_dropped = 0
        self._to_drop: list[int] = []  # segments of forgotten runs, collected in batches
        self._last_signature: tuple[int, tuple] = (-1, ())  # the last run's iteration
        # Each module scope's class, by scope_key ("LeNet/features/features.0" -> "Conv2d").
        self.module_classes: dict[str, str] = {}
        self.modules: dict[str, ModuleSummary] = {}  # by the same keys (see _module_enter)
        self._module_at: dict[tuple[str, ...], ModuleSummary] = {}  # the same, by scope
        # The model objects built so far (read through the properties below).
        self._tensors: dict[str, TensorInfo] = {}
        self._ops: list[OpRecord] = []
        self._nodes: dict[str, NodeInfo] = {}
        self._runs: list[BackwardRun] = []  # finished runs; steps of some still in _unbuilt
        # Raw records not built yet, in recording order (see NOTE [perf: lazy trace]).
        self._rec_tensors: dict[str, tuple | None] = {}
        self._rec_nodes: dict[str, tuple] = {}
        self._rec_ops: list[tuple] = []
        # The same records while recording, flat (NOTE [perf: flat records]): a tensor's or
        # node's id -> where its row starts in _flat_t / _flat_n (-1: a tensor being
        # registered), and the ops' rows one after another in _flat_o.
        self._pend_t: dict[str, int] = {}
        self._pend_n: dict[str, int] = {}
        self._flat_t: list[Any] = []
        self._flat_n: list[Any] = []
        self._flat_o: list[Any] = []
        self._unbuilt: list[tuple[BackwardRun, list[tuple]]] = []
        self._tnames: dict[str, str] = {}  # names of raw tensors that are not just their id
        self._tgrads: dict[str, Any] = {}  # .grad snapshots of raw tensors
        self._unnamed: set[str] = set()  # tensors still named by their id (see _tensor)
        self._sources: list[SourceLoc] = []
        self._source_ix: dict[int, int] = {}  # id(SourceLoc) -> index in _sources
        self._code_lines: dict[int, tuple[CodeType, dict[int, int]]] = {}  # see _source_index
        self._tids = _TensorIds("t")
        self._nids = _Ids("n")
        self._op_count = 0
        self._scope: list[str] = []
        self._scope_t: tuple[str, ...] = ()
        self._run: BackwardRun | None = None
        self._steps: list[Any] = []  # the current run's raw steps, flat (NOTE [perf: flat steps])
        self._starts: list[int] = []  # where each of them starts in _steps
        self._run_memo: dict[int, _VRef | _Held] = {}  # see _value
        # A run from a meta root (NOTE [meta device] in gradviz/_device.py): its gradients are
        # stand-ins computed on zeros, so the run shows their shapes and dtypes only.
        self._run_meta = False
        # Within one op event (else None): stats of large buffers, see model.snapshot, and the
        # last value snapshotted, see _snap.
        self._op_shared: dict[int, Any] | None = None
        self._op_snap: tuple[Any, Any] | None = None
        self._run_shared: dict[int, Any] = {}  # the same for the current backward run
        self._frame: FrameType | None = None
        self._pending: list[naming.Pending] = []  # bindings not yet made (NOTE [tensor names])
        self._fn_stack: list[str] = []  # op ids of the custom Functions whose forward() runs
        self._fn_done: str | None = None  # the op id of the Function whose forward() just ended
        self._active = False
        # NOTE [threads]: see _switch_to.
        self._lock = threading.RLock()
        self._thread: int | None = None  # whose state the per-thread attributes hold
        self._parked: dict[int, tuple] = {}  # thread id -> its per-thread state, when not current
        self._runs_begun = 0  # run ids come from here: unique even when runs overlap
        self._run_segments: dict[str, int] = {}  # run id -> runs finished when it began
        # Saved values packed by a hook, waiting for their node (see _saved_tensor_pack).
        self._packs: dict[int, tuple] = {}
        # A later version's id -> the id of its tensor's first version, and the first
        # version's id -> the later versions' ids (NOTE [versions]).
        self._identity: dict[str, str] = {}
        self._versions: dict[str, list[str]] = {}

    # -- the model, built on first read (see _Built) -----------------------------------------
    tensors = _Built("Every tensor seen, by id, in the order first seen.")
    ops = _Built("The forward ops, in execution order.")
    nodes = _Built("Every backward node seen, by id.")
    runs = _Built("The finished backward runs (the last ``keep_runs``).")

    # What a test measures of the records held unread (unpacked first).
    @property
    def _raw_tensors(self) -> dict[str, tuple | None]:
        self._unpack()
        return self._rec_tensors

    @property
    def _raw_nodes(self) -> dict[str, tuple]:
        self._unpack()
        return self._rec_nodes

    @property
    def _raw_ops(self) -> list[tuple]:
        self._unpack()
        return self._rec_ops

    def _unpack(self) -> None:
        """Turn the flat rows recorded since the last call into the record tuples (NOTE [perf:
        flat records]); every reader of _rec_tensors, _rec_nodes or _rec_ops calls it first."""
        if self._pend_t:
            flat, recs = self._flat_t, self._rec_tensors
            for tid, k in self._pend_t.items():
                recs[tid] = None if k < 0 else tuple(flat[k:k + _TENSOR_ROW])
            self._pend_t, self._flat_t = {}, []
        if self._pend_n:
            flat, nrecs = self._flat_n, self._rec_nodes
            for nid, k in self._pend_n.items():
                nrecs[nid] = _node_from_row(flat, k)
            self._pend_n, self._flat_n = {}, []
        if self._flat_o:
            flat, ops = self._flat_o, self._rec_ops
            k, end = 0, len(flat)
            while k < end:
                i = k + _OP_FIELDS + 1  # the first input
                j = i + flat[i - 1]  # the outputs' count
                n_out = flat[j]
                # (id, name, inputs, outputs, node, kwargs, inplace, scope, source, segment,
                #  parent, no_grad): the tuple's order, which puts inputs and outputs third
                #  and fourth
                ops.append((flat[k], flat[k + 1], tuple(flat[i:j]),
                            tuple(flat[j + 1:j + 1 + n_out]), *flat[k + 2:k + _OP_FIELDS]))
                k = j + 1 + n_out
            self._flat_o = []

    def _flush(self) -> None:
        if (self._rec_tensors or self._rec_nodes or self._rec_ops or self._unbuilt
                or self._pend_t or self._pend_n or self._flat_o):
            with self._lock:  # another thread may be recording
                if self._to_drop:
                    self._collect()
                expand = _expander(self.values)
                self._build_model(expand)
                self._build_steps(expand)

    def _build_model(self, expand: Callable[[Any], dict[str, Any]] | None = None) -> None:
        """Tensors, nodes and ops from their raw records (NOTE [perf: lazy trace])."""
        if expand is None:
            expand = _expander(self.values)
        self._unpack()
        sources = self._sources
        tensors, names, grads = self._tensors, self._tnames, self._tgrads
        for tid, rec in self._rec_tensors.items():
            if rec is None:  # its registration failed half-way (an error in the tracer)
                continue
            shape, dtype, requires_grad, is_leaf, is_param, grad_fn, output_nr, op, source, \
                value, identity, version = rec
            grad = grads.get(tid)
            name = names.get(tid, tid)
            if identity is not None:  # a later version: named as the tensor is (NOTE [versions])
                first = tensors.get(identity)
                name = first.name if first is not None else name
                if not is_leaf:  # written inside the graph: the version matters
                    name = versioned(name, version)
            tensors[tid] = TensorInfo(
                id=tid, name=name, shape=list(shape), dtype=dtype_name(dtype),
                requires_grad=requires_grad, is_leaf=is_leaf, is_param=is_param, grad_fn=grad_fn,
                output_nr=output_nr, op=op, source=None if source is None else sources[source],
                value=expand(value), grad=None if grad is None else expand(grad),
                identity=identity, version=version)
        self._rec_tensors, self._tnames, self._tgrads = {}, {}, {}
        nodes = self._nodes
        for nid, (name, kind, seq, nexts, num_outputs, variable, saved) in \
                self._rec_nodes.items():
            nodes[nid] = NodeInfo(
                id=nid, name=name, kind=kind, sequence_nr=seq,
                next_functions=[[nexts[i], nexts[i + 1]] for i in range(0, len(nexts), 2)],
                variable=variable,
                saved=[SavedInfo(s[0], s[1], s[2], expand(s[3]), *s[4:]) for s in saved],
                num_outputs=num_outputs)
        self._rec_nodes = {}
        for op_id, name, inputs, outputs, nid, kwargs, inplace, scope, source, segment, \
                parent, no_grad in self._rec_ops:
            self._ops.append(OpRecord(
                id=op_id, name=name,
                inputs=[i if type(i) is str else {"const": _const_value(i)} for i in inputs],
                outputs=list(outputs), node=nid, kwargs=dict(kwargs),
                inplace=inplace, scope=list(scope),
                source=None if source is None else sources[source], segment=segment,
                parent=parent, no_grad=no_grad))
            if nid is not None and nid in nodes:
                nodes[nid].forward_op = op_id
        if len(self._ops) + self._op_count_dropped != self._op_count:
            self._drop_dangling()  # an op event a signal stopped half-way
        self._rec_ops = []

    def _build_steps(self, expand: Callable[[Any], dict[str, Any]]) -> None:
        """The typed steps of finished runs from their raw records (NOTE [typed steps])."""
        nodes = self._nodes
        for run, raw in self._unbuilt:
            steps = run.steps
            for rec in raw:
                kind, nid, extra = rec[0], rec[1], rec[2]
                fields = _STEP_FIELDS.get(kind)
                items = rec[3].items() if fields is None else zip(fields, rec[3:])
                values = {}
                for key, v in items:
                    convert = _STEP_VALUES.get(key)
                    values[key] = v if convert is None else convert(v, expand)
                if kind == "release_saved":  # what it freed: the node's saved tensors
                    info = nodes.get(nid) if nid is not None else None
                    values["saved"] = [] if info is None else freed_names(info.saved)
                steps.append(STEP_TYPES[kind](index=len(steps), node=nid,
                                              engine_data=extra or {}, **values))
        self._unbuilt = []

    # -- context manager -----------------------------------------------------------------------
    def __enter__(self) -> Recorder:
        if self._active:
            raise RuntimeError("this trace is already recording")
        self._frame = user_frame(2)
        if self.torch or (self.torch is None and sys.modules.get("torch") is not None):
            from gradviz.trace.torch_source import TorchSource

            self.torch_source = TorchSource(self)  # an ImportError says how to install torch
            self.torch_source.start()
        self._active = True
        # (The trace does not hold its observer, which holds the trace: no reference cycle.)
        events.add_observer(_EngineObserver(self))
        return self

    def __exit__(self, *exc: object) -> None:
        for obs in events.listeners():
            if type(obs) is _EngineObserver and obs.trace is self:
                events.remove_observer(obs)
                break
        if self.torch_source is not None:
            self.torch_source.stop()
        self._active = False
        with self._lock:
            # A run still open (an exception escaped mid-backward, or another thread is still
            # in backward) is closed as it stands, whichever thread it belongs to.
            for thread in [self._thread, *self._parked]:
                if thread is not None and thread != self._thread:
                    self._switch_to(thread)
                elif thread is not None and not (self._run is not None or self._steps
                                                 or self._scope or self._pending
                                                 or self._fn_stack):
                    # What _switch_to to this very thread would do (NOTE [perf]: without its
                    # parking): an idle state starts afresh.
                    self._run_memo, self._run_shared, self._scope_t = {}, {}, ()
                    self._fn_done = None
                self._op_shared = self._op_snap = None  # in case an op event failed half-way
                if self._run is not None:
                    self._finish_run()
            self._parked.clear()
            # The statements still open get their names now.
            self._settle(sys._getframe(1), final=True)
            self._drop_dangling()
        if self._frame is not None:
            self._name_from_frame(self._frame)
        self._frame = None

    def _drop_dangling(self) -> None:
        """An op event a signal stopped half-way (the CLI writes what was recorded after
        SIGTERM or Ctrl-C, which raise wherever the program is) may have registered its outputs
        but not itself: they, and a node it made, must not name an op the trace never holds
        (the loader checks every reference). Run once, when recording ends."""
        if not (self._tensors or self._nodes):
            return  # nothing built yet: _build_model's own check covers the raw records
        known = {op.id for op in self._ops}
        for t in self._tensors.values():
            if t.op is not None and t.op not in known:
                t.op = None
        for n in self._nodes.values():
            if n.forward_op is not None and n.forward_op not in known:
                n.forward_op = None

    @property
    def recording(self) -> bool:
        return self._active

    # -- ids -------------------------------------------------------------------------------------
    def tensor_id(self, t: Tensor) -> str:
        """The id of ``t`` in this trace, registering it (and the graph below it) if new.

        Example:
            >>> import gradviz
            >>> tr = Recorder(values="none")
            >>> tr.tensor_id(gradviz.ones(2))
            't0'
        """
        return self._tensor(t)

    def known_tensor_id(self, t: Tensor) -> str | None:
        """The id ``t`` already has in this trace, or None (nothing is registered)."""
        return self._tids.get(t)

    def node_id(self, node: Node) -> str:
        """The id of backward node ``node``, registering it and the nodes below it if new."""
        return self._node(node)

    def _tensor(self, t: Tensor, frame: FrameType | None = None) -> str:
        """The id of ``t``, registering it (and its graph) on first sight. With the user's
        ``frame``, a tensor still named by its id takes the name of a variable holding it."""
        tid = self._tids.get(t)
        if tid is not None:
            # NOTE [tensor names]: a tensor its creator did not name keeps its id here; the
            # variable of a function it is passed to (``t`` of ``scale(t)``) is not its name.
            return tid
        tid = self._tids.new(t, _version_of(t))
        self._pend_t[tid] = -1  # holds its place: registering the graph records more
        name = (clip_text(t.name) if t.name else None) or (
            self._first_sight_name(t, frame) if frame is not None else None) or tid
        value = snapshot(t._data, self.values, self._op_shared)
        grad_fn = None if t.grad_fn is None else self._node(t.grad_fn)
        self._add_tensor(tid, t, name, grad_fn, None, None, value)
        return tid

    def _add_tensor(self, tid: str, t: Tensor, name: str, grad_fn: str | None, op: str | None,
                    source: int | None, value: Any, identity: str | None = None,
                    version: int = 0) -> None:
        data = t._data
        if t._view_meta is None:  # NOTE [perf]: the properties' work matters for views only
            requires_grad, is_leaf = t._requires_grad, t._grad_fn is None
        else:
            requires_grad, is_leaf = t.requires_grad, t.grad_fn is None
        flat = self._flat_t
        k = len(flat)
        flat.extend((_shape(data.shape), data.dtype, requires_grad, is_leaf,
                     type(t).__name__ == "Parameter", grad_fn, t._output_nr, op, source, value,
                     identity, version))
        self._pend_t[tid] = k  # filed once the row is whole (an interrupt may come between)
        if name != tid:
            self._tnames[tid] = name
        else:
            self._unnamed.add(tid)

    def _rewritten(self, t: Tensor, ref: _TRef, version: int) -> str:
        """The id of a new version of ``t``, written since it was recorded by something no
        op event reported: an optimizer's update, a write through ``.data`` or NumPy
        (NOTE [versions])."""
        old = ref.ident
        tid = self._tids.new(t, version)
        identity = self._add_version(tid, old)
        self._new_leaf_version(t)
        grad_fn = None if t.grad_fn is None else self._node(t.grad_fn)
        self._add_tensor(tid, t, self._tensor_name(old) or old, grad_fn, None, None,
                         snapshot(t._data, self.values, self._op_shared), identity, version)
        return tid

    def _new_leaf_version(self, t: Tensor) -> None:
        """A leaf's ``AccumulateGrad`` outlives an update while a graph still holds it (the
        last step's ``loss``): registered anew, its record links the version now current, so
        the next run's graph draws the value that run used (NOTE [versions])."""
        extra = t._extra
        acc = extra.grad_acc() if extra is not None and extra.grad_acc is not None else None
        if acc is not None:
            self._nids.forget(acc)

    def _set_grad(self, tid: str, grad: Any) -> None:
        if tid in self._pend_t or tid in self._rec_tensors:
            self._tgrads[tid] = grad
        elif tid in self._tensors:
            self._tensors[tid].grad = None if grad is None else expand_snapshot(grad,
                                                                                self.values)

    def _source_index(self, frame: FrameType | None) -> int | None:
        """The frame's line as an index into ``_sources``. NOTE [perf]: looked up by the code
        object and the instruction offset: the line number is computed by scanning the code's
        line table, and a loop runs the same instructions over and over."""
        if frame is None:
            return None
        code = frame.f_code
        entry = self._code_lines.get(id(code))
        if entry is None or entry[0] is not code:
            entry = self._code_lines[id(code)] = (code, {})  # holds the code: its id stays
        ix = entry[1].get(frame.f_lasti)
        if ix is None:
            loc = _source(frame)
            ix = self._source_ix.get(id(loc))
            if ix is None:
                ix = self._source_ix[id(loc)] = len(self._sources)
                self._sources.append(loc)  # holds loc: its id stays its own
            entry[1][frame.f_lasti] = ix
        return ix

    def _node(self, node: Node) -> str:
        """The id of ``node``, registering it and any unregistered nodes below it (iteratively)."""
        ids = self._nids.ids
        nid = ids.get(id(node))
        if nid is not None:
            return nid
        # NOTE [perf: edges read once]: next_functions is a property that builds its pairs on
        # each read; the edges read here are the ones the row records.
        nexts = node.next_functions
        for nxt, _ in nexts:
            if nxt is not None and id(nxt) not in ids:
                return self._new_graph(node)
        # NOTE [perf]: the usual case, a new op's node over registered inputs, in line.
        nid = self._nids.new(node)
        row = self._node_record(node, nexts)
        flat = self._flat_n
        k = len(flat)
        flat += row
        self._pend_n[nid] = k  # filed once the row is whole
        return nid

    def _new_graph(self, node: Node) -> str:
        """Register ``node`` and the unregistered nodes below it, in discovery order.

        NOTE [perf: ids as discovered] A node gets its id when the walk first meets it (the
        order the ids always had), so the ids map is also the walk's set of nodes seen: no set
        and no list of ids besides. The rows are made once every new node has its id, as a row
        names the ids of the nodes below. The usual caller is an op over a parameter seen for
        the first time (``weight.t()``, addmm's bias): the op's node and the parameter's
        AccumulateGrad, every step of a training loop traced afresh. With the edges read once
        (NOTE [perf: edges read once] in _node), measured per node registered (timeit, a fresh
        trace over the tiny-op chain's 300 nodes): this walk 2.58 -> 2.49 us, _node's usual
        path 2.87 -> 2.59 us."""
        ids = self._nids.ids
        new = self._nids.new
        pending = [node]
        order: list[tuple[Node, tuple]] = []  # (node, its next_functions)
        while pending:
            n = pending.pop()
            if id(n) in ids:
                continue
            new(n)
            nexts = n.next_functions
            order.append((n, nexts))
            for nxt, _ in nexts:
                if nxt is not None and id(nxt) not in ids:
                    pending.append(nxt)
        for n, nexts in order:
            row = self._node_record(n, nexts)
            flat = self._flat_n
            k = len(flat)
            flat += row
            self._pend_n[ids[id(n)]] = k
        return ids[id(node)]

    def _node_record(self, n: Node, nexts: tuple) -> list[Any]:
        """``n``'s flat row (NOTE [perf: flat records]), ``nexts`` being its next_functions;
        the caller files it once it is complete, as making it may register other nodes and
        tensors first."""
        name, kind = _NODE_TYPES.get(type(n)) or _node_type(n)
        ids = self._nids.ids
        row = [name, kind, n._seq, len(n._out_meta), None, len(nexts)]  # num_outputs, in line
        for nxt, nr in nexts:
            row.append(None if nxt is None else ids.get(id(nxt)))
            row.append(nr)
        if kind == "accumulate_grad":
            row[4] = self._tensor(n.variable)
        items = n._inspect_saved()
        row.append(len(items))
        for sname, v in items:
            # NOTE [perf]: the two usual entries in line, as _saved would make them: an op's
            # output saved as its array (tanh's result), a number already shared (_const).
            tv = type(v)
            if tv is SavedVariable and v._tensor is None and v.data is not None:
                row += (sname, None, True, self._snap(v.data), None, None)
                continue
            if tv is float or tv is int:
                c = _CONSTS.get((tv, v))
                if c is not None:
                    row += (sname, None, False, c, None, None)
                    continue
            entry = self._saved(sname, v)
            row += entry
            if len(entry) < _SAVED_ROW:
                row += (None, None)  # no pack hook
        return row

    def _saved(self, name: str, v: Any) -> tuple:
        if type(v) is SavedVariable:
            if v.data is None:  # packed by a saved-tensor hook: reading it would run unpack
                return self._packed_saved(name, v)
            if v._tensor is not None:
                return (name, self._tensor(v._tensor), False, snapshot(v.data, "none"))
            return (name, None, True, self._snap(v.data))
        if v is None or isinstance(v, (bool, int, float, str, tuple, list)):
            return (name, None, False, _const(v))
        return (name, None, False, (repr(v),))

    def _snap(self, arr: Any) -> Any:
        """A forward value's snapshot. NOTE [perf]: an op's output is often saved by its node
        too (tanh, exp, relu save their result): one snapshot serves both, within the event."""
        last = self._op_snap
        if last is not None and last[0] is arr:
            return last[1]
        # NOTE [perf]: snapshot()'s usual case, a small numeric array copied, in line.
        if type(arr) is np.ndarray and arr.size <= self._copy_upto and arr.dtype.kind in "biuf":
            s = arr.copy()
        else:
            s = snapshot(arr, self.values, self._op_shared)
        if self._op_shared is not None:
            self._op_snap = (arr, s)
        return s

    def _value(self, v: Any) -> Any:
        """A gradient's snapshot. NOTE [perf]: within a backward run the same array is reported
        several times (sent, added to a buffer, received, written to ``.grad``), so snapshots
        are cached by identity for the run. The cache refers to the arrays weakly: the engine
        lets a gradient nobody else holds become ``.grad`` without a copy, and a tracer holding
        it would cost that copy and the copy's summary."""
        if v is None:
            return None
        hit = self._run_memo.get(id(v))
        if hit is not None and hit() is v:
            return hit.snap
        if self._run_meta:
            arr = getattr(v, "_data", v)
            return (arr.shape, arr.dtype)  # (snapshot()'s form for a shape and a dtype only)
        if type(v) is np.ndarray and v.size <= self._copy_upto and v.dtype.kind in "biuf":
            s = v.copy()  # snapshot()'s usual case, in line (see _snap)
        else:
            s = snapshot(v, self.values, self._run_shared)
        try:
            ref: _VRef | _Held = _VRef(v)
        except TypeError:
            ref = _Held(v)
        ref.snap = s  # one object per entry (NOTE [perf: flat records])
        self._run_memo[id(v)] = ref
        return s

    # -- events ----------------------------------------------------------------------------------
    # NOTE [threads]: the engine runs a backward pass on the thread that called backward(), and
    # any thread may run ops, so events from several threads interleave. The observer's methods
    # (_EngineObserver) run one at a time (a lock), and what belongs to one thread's work in
    # progress (its open run and steps, the ready queue, module scopes, per-event caches:
    # _PER_THREAD) is kept per thread: the attributes hold the state of the thread that sent
    # the last event, and another thread's event first parks it and brings its own back. One
    # thread pays one ident call and one comparison per event. Runs are listed in the order
    # they finished.
    def _switch_to(self, thread: int) -> None:
        """Park the current thread's state and bring back ``thread``'s (fresh if it has none)."""
        if self._thread is None and not self._parked:
            # The first event: the attributes hold the fresh state __init__ gave them, which is
            # this thread's (NOTE [perf]: a cost paid at each gradviz.trace()).
            self._thread = thread
            return
        if self._thread is not None:
            state = tuple(getattr(self, a) for a in _PER_THREAD)
            # an open run, steps, a scope, names pending, a custom Function's forward()
            if state[0] is not None or state[1] or state[4] or state[8] or state[9]:
                self._parked[self._thread] = state
        mine = self._parked.pop(thread, None)
        if mine is None:
            mine = (None, [], {}, {}, [], (), None, None, [], [], None, [], False)
        for attr, value in zip(_PER_THREAD, mine):
            setattr(self, attr, value)
        self._thread = thread

    # NOTE [perf: module calls] Module.__call__ reports every call, several per step of a
    # model. A scope seen before is found by its tuple (no key string joined per call), and
    # the shapes of plain tensor arguments and results are read in line; what is known of a
    # scope once (its class, its parameter count) is taken on first sight only.
    def _module_enter(self, module: Any, name: str | None, args: tuple) -> None:
        """A module scope opens (also called by _EngineObserver.module_enter)."""
        self._scope.append(str(name or type(module).__name__))
        scope = self._scope_t = tuple(self._scope)
        summary = self._module_at.get(scope)
        if summary is None:
            summary = self._module_at[scope] = module_seen(self, scope_key(scope), module)
        summary.calls += 1
        shapes = []
        for a in args:
            if isinstance(a, Tensor):
                shapes.append(a._data.shape)
            elif isinstance(a, (tuple, list, dict)):  # the rare case: tensors in containers
                shapes = tensor_shapes(args, _is_tensor, depth=3)
                break
        summary.inputs = shapes  # its outputs: at the exit, None when forward raised

    def _module_exit(self, output: Any) -> None:
        if self._scope:
            summary = self._module_at.get(self._scope_t)
            if summary is not None:
                summary.outputs = ([output._data.shape] if isinstance(output, Tensor)
                                   else tensor_shapes(output, _is_tensor))
            self._scope.pop()
            self._scope_t = tuple(self._scope)

    # -- custom Functions: their forward() ops are the Function op's children ----------------------
    def _function_enter(self) -> None:
        # The Function's op id is taken now, so the ops its forward() runs can name it as their
        # parent; the Function's own op event (after forward) uses it. Not during a backward
        # pass: no op of it is recorded (see _op).
        if self._run is not None:
            return
        op_id = f"op{self._op_count}"
        self._op_count += 1
        self._fn_stack.append(op_id)

    def _function_exit(self) -> None:
        if self._run is None and self._fn_stack:
            self._fn_done = self._fn_stack.pop()

    def _op(self, op_name: str, node: Node | None, inputs_: tuple, outputs_: tuple,
            given: dict[str, Any] | None, inplace: bool, function: bool) -> None:
        """Record one forward op (the ``op`` event's fields).

        NOTE [perf: op path] Keyword arguments that are plain numbers (_jsonable's usual case)
        and the instruction's cached binding target (names.known_target) are read in line;
        the user-frame walk, settling the statement before (_settle) and registering the node
        (_node) are their functions' calls."""
        if self._run is not None:
            # Backward-time work (a custom backward()'s ``grad_output * 5``, the formulas of a
            # create_graph backward, hooks) is no part of the forward graph: not recorded as an
            # op. Tensors it makes are registered when the program uses them (x.grad in a
            # later op).
            return
        frame = user_frame(_EMITTER)
        if self._pending:
            self._settle(frame)
        source = None
        if frame is not None:  # _source_index's cache read in line
            code = frame.f_code
            lines = self._code_lines.get(id(code))
            if lines is not None and lines[0] is code:
                source = lines[1].get(frame.f_lasti)
            if source is None:
                source = self._source_index(frame)
        self._op_shared = {}
        # NOTE [perf]: loops, not comprehensions (each is a function call before Python 3.12);
        # a known tensor's id read in line (see _TensorIds).
        ids = self._tids._ids
        inputs = []
        for a in inputs_:
            if isinstance(a, Tensor):
                ref = ids.get(id(a))
                if ref is None or ref() is not a:
                    inputs.append(self._tensor(a, frame))
                else:  # the version it was seen at, unless written since (NOTE [versions])
                    vc = a._vc
                    inputs.append(ref.ident if vc is None or vc.version == ref.version
                                  or (inplace and a is outputs_[0])  # written by this op
                                  else self._rewritten(a, ref, vc.version))
            else:
                ta = type(a)  # _const, in line for a number seen before
                c = _CONSTS.get((ta, a)) if ta is float or ta is int else None
                inputs.append(c if c is not None else _const(a))
        # A tensor passed by keyword (nll_loss's target, where's condition) is linked by id;
        # registered before the node, which may save it, so it is first seen with the frame.
        kwargs: Any = ()
        if given:
            kwargs = []
            for k, v in given.items():
                tv = type(v)  # NOTE [perf]: _jsonable's usual cases (alpha=1) in line
                kwargs.append((k, v if tv is int or tv is bool or tv is str or v is None
                               else {"tensor": self._tensor(v, frame)} if isinstance(v, Tensor)
                               else _jsonable(v)))
            kwargs = tuple(kwargs)
        # A node already known at its own op's event was registered while it was being built:
        # a saved-tensor pack hook ran an op on the output it makes (``lambda t: t * 1``),
        # before the op layer stored its saved values. Its record is made again now, whole,
        # and its outputs keep the ids that op gave them.
        early = node is not None and self._nids.ids.get(id(node)) is not None
        nid = self._node(node) if node is not None else None
        if early:
            row = self._node_record(node, node.next_functions)
            self._pend_n[nid] = len(self._flat_n)
            self._flat_n += row
        fn_done, self._fn_done = self._fn_done, None
        if fn_done is not None and function:
            op_id = fn_done  # taken when its forward() began (_function_enter)
        else:
            op_id = f"op{self._op_count}"
            self._op_count += 1
        parent = self._fn_stack[-1] if self._fn_stack else None
        inplace = bool(inplace)
        outputs = []
        for t in outputs_:
            # An in-place result is a new version of a tensor: it gets a new id, so the forward
            # graph stays acyclic, and is named as the tensor is (NOTE [versions]).
            old_id = self._tids.get(t) if inplace else None
            seen = self._tids.get(t) if early and not inplace else None
            vc = t._vc  # _version_of(t), in line: a view of a written tensor has its version
            version = 0 if vc is None else vc.version
            tid = seen if seen is not None else self._tids.new(t, version)
            extra = t._extra  # t.name, in line
            name = clip_text(extra.name) if extra is not None and extra.name else tid
            identity = None if old_id is None else self._add_version(tid, old_id)
            if identity is not None:
                name = self._tensor_name(old_id) or name
                self._new_leaf_version(t)
            if t._view_meta is not None or identity is not None:  # the rarer outputs
                grad_fn = t.grad_fn
                gid = nid if grad_fn is node and node is not None else (
                    self._node(grad_fn) if grad_fn is not None else None)
                self._add_tensor(tid, t, name, gid, op_id, source, self._snap(t._data),
                                 identity, version)
                outputs.append(tid)
                continue
            # NOTE [perf]: _add_tensor in line for the usual output, not a view.
            grad_fn = t._grad_fn
            gid = nid if grad_fn is node and node is not None else (
                self._node(grad_fn) if grad_fn is not None else None)
            data_ = t._data
            value = self._snap(data_)
            flat = self._flat_t
            k = len(flat)
            shape = data_.shape
            flat.extend((_SHAPES.get(shape) or _shape(shape), data_.dtype, t._requires_grad,
                         grad_fn is None, type(t).__name__ == "Parameter", gid, t._output_nr,
                         op_id, source, value, None, 0))
            self._pend_t[tid] = k
            if name != tid:
                self._tnames[tid] = name
            else:
                self._unnamed.add(tid)
            outputs.append(tid)
        self._op_shared = self._op_snap = None
        # An update (an optimizer's, a no_grad write) or construction, not a graph op.
        no_grad = nid is None and (not is_grad_enabled() or is_inference_mode_enabled())
        self._flat_o.extend((op_id, op_name, nid, kwargs, inplace, self._scope_t,
                             source, self.runs_total, parent, no_grad, len(inputs), *inputs,
                             len(outputs), *outputs))
        # NOTE [perf]: most instructions bind nothing (the ``*`` of ``(y * 2 + 1).tanh()``):
        # known from the instruction's cached analysis without a call to _note_outputs.
        if frame is not None and not inplace and outputs:
            code = frame.f_code  # naming.known_target, in line
            entry = naming._CODE.get(id(code))
            known = (entry[3].get(frame.f_lasti, naming._UNKNOWN)
                     if entry is not None and entry[0] is code else naming._UNKNOWN)
            if known is not None:
                self._note_outputs(frame, outputs, known)

    def _backward_begin(self, engine: str, roots: tuple, retain_graph: bool, create_graph: bool,
                        inputs: tuple, accumulate_grad: bool, graph_root: Node,
                        gradient_graph: Any, below: Any = None) -> None:
        """A run begins (``below``: the nodes reachable from the graph root, in the order
        _reachable finds them, when they are known already: see _EngineObserver)."""
        frame = user_frame(_EMITTER)
        # A root or an input may be a GradientEdge (autograd.grad(z, get_gradient_edge(y))):
        # it has no tensor, its edge is its node's (as the torch source records it).
        tensors = [t for t in roots if isinstance(t, Tensor)]
        root_ids = [self._tensor(t, frame) for t in tensors]
        if len(root_ids) == 1 and root_ids[0] in self._unnamed and frame is not None:
            # outputs.loss.backward(): the root is named by that expression (NOTE [root names])
            name = naming.backward_receiver(frame, tensors[0])
            if name:
                self._rename(root_ids[0], name)
        root_edges = []
        for t in roots:
            if isinstance(t, Tensor):
                tid = self._tensor(t, frame)
                root_edges.append([self._tensor_grad_fn(tid) or self._leaf_node(t),
                                   t._output_nr])
            else:
                root_edges.append([self._node(t.node), t.output_nr])
        root_id = self._node(graph_root)
        reachable = self._reachable(graph_root, below)
        run_id = f"run{self._runs_begun}"
        self._runs_begun += 1
        self._run_segments[run_id] = self.runs_total
        self._run = BackwardRun(
            id=run_id, engine=engine,
            kind="backward" if accumulate_grad else "grad", roots=root_ids,
            root_edges=root_edges, nodes=reachable, graph_root=root_id,
            retain_graph=bool(retain_graph), create_graph=bool(create_graph),
            inputs=[self._tensor(t, frame) for t in inputs if isinstance(t, Tensor)],
            source=_source(frame))
        if gradient_graph is not None:  # MXNet's explicit gradient graph
            from gradviz.trace.engines import gradient_graph_model

            self._run.gradient_graph = gradient_graph_model(gradient_graph, self._node,
                                                            self._tensor)
        self._steps, self._starts = [], []
        self._run_memo.clear()
        self._run_shared.clear()
        self._run_meta = any(t.is_meta for t in tensors)

    def _tensor_grad_fn(self, tid: str) -> str | None:
        """The grad_fn recorded for a tensor (its grad_fn when first seen)."""
        k = self._pend_t.get(tid)
        if k is not None and k >= 0:
            return self._flat_t[k + 5]
        rec = self._rec_tensors.get(tid)
        if rec is not None:
            return rec[5]
        info = self._tensors.get(tid)
        return None if info is None else info.grad_fn

    def _leaf_node(self, t: Tensor) -> str | None:
        extra = t._extra
        acc = extra.grad_acc() if extra is not None and extra.grad_acc is not None else None
        return None if acc is None else self._node(acc)

    def _reachable(self, root: Node, below: Any = None) -> list[str]:
        """The ids of ``root`` and the nodes below it, in the order a depth-first walk with a
        stack first meets them (``below``: those nodes, if known already), registering any
        new ones in that order."""
        if below is not None:
            order = [root, *below]
        else:
            seen = {id(root)}
            order = [root]
            stack = [root]
            while stack:
                for nxt, _ in stack.pop().next_functions:
                    if nxt is not None and id(nxt) not in seen:
                        seen.add(id(nxt))
                        order.append(nxt)
                        stack.append(nxt)
        ids = self._nids.ids
        return [ids.get(id(n)) or self._node(n) for n in order]

    def _step(self, kind: str, node: Node | None, engine_data: dict[str, Any] | None,
              **data: Any) -> None:
        """Record a step of a rare kind (the frequent ones append their tuple directly)."""
        if self._run is None:
            return
        nid = None if node is None else self._node(node)
        self._add_step((kind, nid, engine_data, data))

    def _add_step(self, row: tuple) -> None:
        """Append one step's row (NOTE [perf: flat steps]; the frequent steps do it in line)."""
        steps = self._steps
        k = len(steps)
        steps += row
        self._starts.append(k)  # noted once whole

    # NOTE [perf]: the frequent steps (enqueue, execute, accumulate, release_saved) are recorded
    # by _EngineObserver's methods in line. They look node ids up directly
    # (``ids.get(id(node)) or self._node(node)``: ids are never empty) and append one tuple per
    # step (see _STEP_FIELDS for the order of its values).
    def _dependencies(self, counts: dict, tensor_counts: dict | None,
                      engine_data: dict[str, Any] | None) -> None:
        if self._run is None:
            return
        ids = self._nids.ids
        deps = {ids.get(id(n)) or self._node(n): c for n, c in counts.items()}
        self._run.dependencies = deps
        extra = {}
        if tensor_counts is not None:  # SINGA counts each (node, output) tensor too
            extra["tensor_counts"] = [[self._node(n), nr, c]
                                      for (n, nr), c in tensor_counts.items()]
        self._step("compute_dependencies", None, engine_data, counts=dict(deps), **extra)

    def _leaf_grad(self, node: Node, tensor: Tensor, before: Any, after: Any,
                   engine_data: dict[str, Any] | None) -> None:
        tid = self._tensor(tensor)
        after = self._value(after)
        self._set_grad(tid, after)
        if self._run is not None:
            self._add_step(("leaf_grad", self._node(node), engine_data, tid,
                            self._value(before), after))

    def _hook(self, kind: str, node: Node, fn: Any, engine_data: dict[str, Any] | None) -> None:
        self._step("hook", node, engine_data, hook=kind,
                   fn=getattr(fn, "__qualname__", None) if fn is not None else None)

    # -- saved-tensor hooks (NOTE [saved tensor hooks] in gradviz/autograd/graph.py) ------------
    # A pack in the forward pass happens while the op's node saves, before the op event that
    # registers the node: it waits in _packs (by SavedVariable) until _saved meets it there. A
    # pack by register_hooks names its (registered) node: its saved entry is updated at once.
    # A pack or unpack during a backward pass is a step of the run. These events fire only
    # while hooks are in use: nothing here is paid otherwise.
    def _saved_tensor_pack(self, saved: SavedVariable, tensor: Tensor, packed: Any,
                           fn: Any, owner: Node | None) -> None:
        fn = _fn_name(fn)
        packed = packed_summary(packed, self.values)
        if self._run is not None and owner is None:
            # A backward formula saving (create_graph): a step, not kept for its node, which
            # is no forward op's (holding the value for it would keep it alive).
            self._step("pack_hook", current_node(), None, fn=fn,
                       tensor=summarize(tensor._data, self.values), packed=packed)
            return
        packs = self._packs
        packs[id(saved)] = (saved, tensor, fn, packed)
        if len(packs) > _PACKS_WAITING:  # packs no node claimed (an op that failed after)
            del packs[next(iter(packs))]
        nid = None if owner is None else self._nids.get(owner)
        if nid is not None:
            self._repack(nid, owner, saved)

    def _packed_saved(self, name: str, v: SavedVariable) -> tuple:
        """The raw saved entry of a value a pack hook stored: the tensor that was packed (its
        id if it is a traced input; an unregistered tensor with a history is the op's output,
        registered after its node), the hook's name and what it returned."""
        hit = self._packs.pop(id(v), None)
        if hit is None or hit[0] is not v:  # packed while no trace listened
            return (name, None, False, ("packed by a saved-tensor hook",))
        _, tensor, fn, packed = hit
        tid = self._tids.get(tensor)
        if tid is not None:
            return (name, tid, False, snapshot(tensor._data, "none"), fn, packed)
        return (name, None, tensor._grad_fn is not None, self._snap(tensor._data), fn, packed)

    def _repack(self, nid: str, owner: Node, saved: SavedVariable) -> None:
        """``register_hooks`` packed a value of the registered node ``nid``: its entry says so."""
        name = next((n for n, v in owner._inspect_saved() if v is saved), None)
        if name is None:
            return
        _, _, fn, packed = self._packs.pop(id(saved))
        self._unpack()
        raw = self._rec_nodes.get(nid)
        if raw is not None:  # the entry made when the node was registered, told of the hook
            self._rec_nodes[nid] = (*raw[:6], tuple((*e[:4], fn, packed) if e[0] == name else e
                                                    for e in raw[6]))
            return
        info = self._nodes.get(nid)
        if info is None:
            return
        for sv in info.saved:
            if sv.name == name:
                sv.pack_hook, sv.packed = fn, packed

    def _saved_tensor_unpack(self, saved: SavedVariable, owner: Node | None, packed: Any,
                             tensor: Tensor, fn: Any) -> None:
        if self._run is None or owner is None:  # read by hand (grad_fn._saved_self): no step
            return
        name = next((n for n, v in owner._inspect_saved() if v is saved), None)
        self._step("unpack_hook", owner, None, saved=name, fn=_fn_name(fn),
                   packed=packed_summary(packed, self.values),
                   tensor=summarize(tensor._data, self.values))

    def _gradient_node(self, gnode: str, op: str, node: Node, input_nr: int, inputs: list,
                       output: Any, engine_data: dict[str, Any] | None) -> None:
        self._step("gradient_node", node, engine_data, gnode=gnode, op=op, input_nr=input_nr,
                   inputs=[self._value(g) for g in inputs], output=self._value(output))

    def _error(self, exc: BaseException, node: Node | None,
               engine_data: dict[str, Any] | None) -> None:
        err = {"type": type(exc).__name__, "message": clip_text(str(exc))}
        if self._run is not None:
            self._run.error = err
        self._step("error", node, engine_data, **err)
        self._finish_run()

    def _backward_end(self, engine_data: dict[str, Any] | None) -> None:
        if self._run is not None:
            self._add_step(("done", None, engine_data))
        self._finish_run()

    def _finish_run(self) -> None:
        run = self._run
        if run is None:
            return
        self._run = None
        self._run_memo.clear()
        self._run_shared.clear()
        self._runs.append(run)
        self._unbuilt.append((run, _StepRows(self._steps, self._starts)))
        self._steps, self._starts = [], []
        self.runs_total += 1
        self._after_run(run, len(self._unbuilt[-1][1]))


class _EngineObserver(events.Observer):
    """What this trace is told, by the dispatch point, the three engines and custom Functions
    (NOTE [perf: direct observer] in events.py): every event is recorded here or by the
    Recorder method it names, without an event dict; the frequent steps append their tuples in
    line. Each call takes the lock and switches to the calling thread's state (NOTE
    [threads])."""

    __slots__ = ("trace", "_begun")

    def __init__(self, trace: Recorder) -> None:
        self.trace = trace
        self._begun: dict[int, tuple] = {}  # thread -> its pending backward_begin's fields

    def _locked(self) -> Recorder:
        """The trace, switched to the calling thread's state; call with its lock held."""
        tr = self.trace
        me = _get_ident()
        if me != tr._thread:
            tr._switch_to(me)
        return tr

    # NOTE [perf: reachable from the counts] A run's ``nodes`` are the nodes reachable from its
    # graph root, in the order a depth-first walk with a stack first meets them. The PyTorch
    # engine has just walked the graph that way (compute_dependencies: its counts are filed in
    # that very order, the root aside) and reports the counts right after backward_begin, with
    # nothing in between. So its backward_begin is recorded when the counts come, its nodes
    # taken from them instead of a second walk of the whole graph in Python, and the counts are
    # filed by those nodes' ids without a look-up per node. The records are the same, made in
    # the same order (tests/test_trace_direct_observer.py compares with the walk). SINGA and
    # MXNet count in other orders (MXNet only the nodes it delivers to): their runs begin at
    # once, with the walk. Measured on the tiny-op chain's backward: 9.15 -> 8.57 us per node
    # (CPU time, medians of 21 interleaved rounds in one process).
    def backward_begin(self, engine: str, roots: tuple, grad_roots: list, retain_graph: bool,
                       create_graph: bool, inputs: tuple, accumulate_grad: bool,
                       graph_root: Any, gradient_graph: Any = None) -> None:
        begun = (engine, roots, retain_graph, create_graph, inputs, accumulate_grad, graph_root,
                 gradient_graph)
        if engine == "pytorch":
            self._begun[_get_ident()] = begun
            return
        with self.trace._lock:
            self._locked()._backward_begin(*begun)

    def dependencies(self, counts: dict, graph_root: Any, tensor_counts: dict | None = None,
                     engine_data: dict | None = None) -> None:
        begun = self._begun.pop(_get_ident(), None)
        with self.trace._lock:
            tr = self._locked()
            below = None
            if begun is not None:
                below = counts if begun[6] is graph_root else None
                tr._backward_begin(*begun, below)
            run = tr._run
            if below is not None and run is not None and tensor_counts is None:
                # The run's nodes after its root are the counts' nodes, in their order: the
                # counts by id without a look-up per node (what _dependencies records).
                deps = dict(zip(islice(run.nodes, 1, None), counts.values()))
                run.dependencies = deps
                tr._step("compute_dependencies", None, engine_data, counts=dict(deps))
            else:
                tr._dependencies(counts, tensor_counts, engine_data)

    def op(self, name: str, node: Node | None, inputs: tuple, outputs: tuple, kwargs: dict,
           inplace: bool, function: bool = False) -> None:
        tr = self.trace
        with tr._lock:
            me = _get_ident()
            if me != tr._thread:
                tr._switch_to(me)
            tr._op(name, node, inputs, outputs, kwargs, inplace, function)

    def function_enter(self, function: type) -> None:
        with self.trace._lock:
            self._locked()._function_enter()

    def function_exit(self, function: type) -> None:
        with self.trace._lock:
            self._locked()._function_exit()

    # NOTE [perf: direct module scopes] Module.__call__ reports each module call's start and end
    # to these methods (events.emit_module_enter / emit_module_exit) instead of an event dict
    # looked up by name: two reports per module call, 12 per step of the MLP (6 modules).
    # Measured on 40 nn.Identity calls in a Sequential, traced: 0.162 -> 0.143 ms (CPU time,
    # medians of 21 interleaved rounds, two process pairs), about 0.5 us per module call, 3 us
    # per MLP step.
    def module_enter(self, module: Any, name: str, args: tuple = ()) -> None:
        tr = self.trace
        with tr._lock:
            me = _get_ident()
            if me != tr._thread:
                tr._switch_to(me)
            tr._module_enter(module, name, args)

    def module_exit(self, module: Any, name: str, output: Any) -> None:
        tr = self.trace
        with tr._lock:
            me = _get_ident()
            if me != tr._thread:
                tr._switch_to(me)
            tr._module_exit(output)

    def saved_tensor_pack(self, saved: Any, tensor: Any, packed: Any, fn: Any,
                          node: Any) -> None:
        with self.trace._lock:
            self._locked()._saved_tensor_pack(saved, tensor, packed, fn, node)

    def saved_tensor_unpack(self, saved: Any, node: Any, packed: Any, tensor: Any,
                            fn: Any) -> None:
        with self.trace._lock:
            self._locked()._saved_tensor_unpack(saved, node, packed, tensor, fn)

    def enqueue(self, node: Node, priority: int, engine_data: dict | None = None) -> None:
        tr = self.trace
        with tr._lock:
            me = _get_ident()
            if me != tr._thread:
                tr._switch_to(me)
            if tr._run is not None:
                # The node and its priority only: the queue is rebuilt by replay.py, so a wide
                # queue costs one tuple per push, not a copy of the queue per push.
                steps = tr._steps  # a row, noted once whole (NOTE [perf: flat steps])
                k = len(steps)
                steps += ("enqueue", tr._nids.ids.get(id(node)) or tr._node(node), engine_data,
                          priority)
                tr._starts.append(k)

    def execute(self, node: Node, grad_outputs: list, grad_inputs: tuple,
                engine_data: dict | None = None) -> None:
        tr = self.trace
        with tr._lock:
            me = _get_ident()
            if me != tr._thread:
                tr._switch_to(me)
            if tr._run is not None:
                # NOTE [perf]: a gradient received was snapshotted when it was sent: the memo
                # of _value read in line.
                memo, value = tr._run_memo, tr._value
                outs = []
                for g in grad_outputs:
                    hit = memo.get(id(g))
                    outs.append(hit.snap if hit is not None and hit() is g else value(g))
                # What it sends is new: _value's usual case (a small array copied) in line.
                ins = []
                upto = -1 if tr._run_meta else tr._copy_upto  # (a meta run: _value says)
                for g in grad_inputs:
                    if type(g) is np.ndarray and g.size <= upto and g.dtype.kind in "biuf":
                        hit = memo.get(id(g))
                        if hit is not None and hit() is g:
                            ins.append(hit.snap)
                            continue
                        snap = g.copy()
                        ref = _VRef(g)
                        ref.snap = snap
                        memo[id(g)] = ref
                        ins.append(snap)
                    else:
                        ins.append(value(g))
                steps = tr._steps
                k = len(steps)
                steps += ("execute", tr._nids.ids.get(id(node)) or tr._node(node), engine_data,
                          len(outs))
                steps += outs
                steps.append(len(ins))
                steps += ins
                tr._starts.append(k)

    def accumulate(self, node: Node, input_nr: int, grad: Any, buffer: Any, source: Any,
                   remaining: int, engine_data: dict | None = None) -> None:
        tr = self.trace
        with tr._lock:
            me = _get_ident()
            if me != tr._thread:
                tr._switch_to(me)
            if tr._run is not None:
                ids = tr._nids.ids
                target = ids.get(id(node)) or tr._node(node)
                src = None if source is None else ids.get(id(source)) or tr._node(source)
                hit = tr._run_memo.get(id(grad))  # _value, in line: the grad was just sent
                g = hit.snap if hit is not None and hit() is grad else tr._value(grad)
                # A slot that was empty holds the very gradient sent: one snapshot for both.
                steps = tr._steps
                k = len(steps)
                steps += ("accumulate", target, engine_data, input_nr, src, g,
                          g if buffer is grad else tr._value(buffer), remaining)
                tr._starts.append(k)

    def leaf_grad(self, node: Node, tensor: Any, before: Any, after: Any,
                  engine_data: dict | None = None) -> None:
        tr = self.trace
        with tr._lock:
            if not tr._active:  # the trace ended while another thread's pass still runs
                return
            me = _get_ident()
            if me != tr._thread:
                tr._switch_to(me)
            tr._leaf_grad(node, tensor, before, after, engine_data)

    def hook(self, kind: str, node: Any, fn: Any = None, input_nr: int | None = None,
             tensor: Any = None, engine_data: dict | None = None) -> None:
        with self.trace._lock:
            self._locked()._hook(kind, node, fn, engine_data)

    def release_saved(self, node: Node, engine_data: dict | None = None) -> None:
        tr = self.trace
        with tr._lock:
            me = _get_ident()
            if me != tr._thread:
                tr._switch_to(me)
            if tr._run is not None:
                steps = tr._steps
                k = len(steps)
                steps += ("release_saved", tr._nids.ids.get(id(node)) or tr._node(node),
                          engine_data)
                tr._starts.append(k)

    def gradient_node(self, gnode: str, op: str, node: Any, input_nr: int, inputs: list,
                      output: Any, engine_data: dict | None = None) -> None:
        with self.trace._lock:
            self._locked()._gradient_node(gnode, op, node, input_nr, inputs, output,
                                          engine_data)

    def error(self, error: BaseException, node: Any, engine_data: dict | None = None) -> None:
        with self.trace._lock:
            self._locked()._error(error, node, engine_data)

    def backward_end(self, engine: str, engine_data: dict | None = None) -> None:
        with self.trace._lock:
            self._locked()._backward_end(engine_data)

    def keep(self, value: Any) -> Any:
        # A copy of the values only: clone() could record an op under create_graph.
        return value if value is None else type(value)._make(value._data.copy())


_get_ident = threading.get_ident

# What each thread has of its own (NOTE [threads]), in the order Recorder._switch_to keeps it.
_PER_THREAD = ("_run", "_steps", "_run_memo", "_run_shared", "_scope", "_scope_t",
               "_op_shared", "_op_snap", "_pending", "_fn_stack", "_fn_done", "_starts",
               "_run_meta")


def _is_tensor(x: Any) -> bool:
    return isinstance(x, Tensor)


def module_seen(trace: Trace, key: str, module: Any) -> ModuleSummary:
    """The summary of the module scope ``key`` (made on its first call: its parameter count),
    and its class, kept in ``module_classes`` (both engines' recorders call this)."""
    # The class is what a drawing names a box by (features.0: Conv2d). The first class seen at
    # a path is kept: a path that changes class (a module replaced) is rare and would otherwise
    # make the label depend on which call came last.
    trace.module_classes.setdefault(key, type(module).__name__)
    summary = trace.modules.get(key)
    if summary is None:
        seen: set[int] = set()
        count = 0
        for p in module.parameters():
            if id(p) not in seen:  # a tied weight counts once, as in parameters()
                seen.add(id(p))
                count += int(p.numel())
        summary = trace.modules[key] = ModuleSummary(parameters=count)
    return summary


def _fn_name(fn: Any) -> str | None:
    """A hook function's qualified name, as hook steps name it."""
    return None if fn is None else getattr(fn, "__qualname__", None) or repr(fn)


_PACKS_WAITING = 256  # packs kept for nodes not registered yet (see _saved_tensor_pack)
def tracer(values: str = "small", keep_runs: int | str | None = None, name: str | None = None,
          keep_run: int | None = None, torch: bool | None = None) -> Recorder:
    """Record everything inside a ``with`` block: forward ops, backward graphs, engine steps.

    ``gradviz.tracer(...)`` is the tracer's unambiguous name; ``gradviz.trace(...)`` is the same
    call, except that a tensor first argument makes it PyTorch's matrix ``trace`` (:func:`trace`).

    Args:
        values: ``"small"`` keeps full values of tensors up to 64 elements and summaries
            (shape, dtype, min/max/mean, first elements) beyond; ``"none"`` keeps shapes and
            dtypes only; ``"all"`` keeps every value.
        keep_runs: ``None`` (the default) keeps a training loop readable and bounded: every
            backward run listed in ``run_log``, runs in full with their iteration's forward
            ops, an iteration of the same structure as the next folded into it (a loop keeps
            its last iteration, noted "iteration 20 of 20, identical structure folded"), at
            most ``DETAILED_RUNS`` (8) runs in full; see NOTE [long runs] in budget.py and
            docs/guarantees.md. ``N``: keep only the last N backward runs and the forward ops
            since the first kept one. ``"all"``: keep everything (memory grows with the loop).
        name: a title for the trace (shown by renderers).
        keep_run: the number of a backward run (0 for the first) that the default policy must
            keep in full even if it folds or drops its neighbours: what ``gradviz trace --run N``
            asks for.
        torch: record real PyTorch inside the block as well (gradviz/trace/torch_source.py):
            ``None`` (the default) when torch is imported before the block, ``True`` always
            (an ImportError says ``pip install gradviz[torch]`` without it), ``False`` never.

    Example:
        >>> import gradviz
        >>> with gradviz.tracer() as tr:
        ...     x = gradviz.tensor([1.0, 2.0], requires_grad=True)
        ...     (x ** 2).sum().backward()
        >>> [s.kind for s in tr.steps()][:3]
        ['compute_dependencies', 'enqueue', 'execute']
    """
    return Recorder(values=values, keep_runs=keep_runs, name=name, keep_run=keep_run,
                    torch=torch)


def trace(values: str | Tensor = "small", keep_runs: int | str | None = None,
          name: str | None = None, keep_run: int | None = None, torch: bool | None = None,
          **kwargs: Any) -> Any:
    """Two uses under one name, told apart by the first argument:

    * ``gradviz.trace(x)`` with a tensor ``x`` is ``torch.trace``, the sum of a matrix's main
      diagonal (``TraceBackward0``; 2-D only), so that ``import gradviz as torch`` runs torch
      code; ``gradviz.trace(input=x)`` too;
    * anything else, ``gradviz.trace()``, ``gradviz.trace("all")``,
      ``gradviz.trace(values=..., keep_runs=...)``, is the tracer: :func:`tracer`, whose
      arguments these are (see it for what they mean).

    Args:
        values: a tensor (the matrix op), or the tracer's ``values``.
        keep_runs, name, keep_run, torch: the tracer's arguments.
        **kwargs: ``input=``, the matrix op's tensor by name.

    Example:
        >>> import gradviz
        >>> gradviz.trace(gradviz.eye(3))
        tensor(3.)
        >>> with gradviz.trace() as tr:
        ...     (gradviz.ones(2, requires_grad=True) * 2).sum().backward()
        >>> next(tr.steps()).kind
        'compute_dependencies'
    """
    if isinstance(values, Tensor) or "input" in kwargs:
        matrix = values
        if "input" in kwargs:
            matrix = kwargs.pop("input")
            if isinstance(values, Tensor) or values != "small":  # the tensor given twice
                kwargs["values"] = values
        if kwargs or not isinstance(matrix, Tensor) or (keep_runs, name, keep_run, torch) != (
                None, None, None, None):
            raise TypeError("trace(): with a tensor, trace is the matrix trace, trace(input), "
                            "which takes no other argument; the tracer is gradviz.tracer(...)")
        from gradviz.ops import functional as F  # the op layer, below this one

        return F.trace(matrix)
    if kwargs:
        raise TypeError(f"trace() got an unexpected keyword argument {next(iter(kwargs))!r}")
    return tracer(values=values, keep_runs=keep_runs, name=name, keep_run=keep_run,
                  torch=torch)
