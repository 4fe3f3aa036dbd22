"""The trace's plain-data model: what renderers consume.

Everything here is dataclasses of strings, numbers, lists and dicts — no live tensors or nodes —
so a model can be saved as JSON, reloaded, and drawn by any renderer. Identifiers are strings:
tensors ``t0, t1, ...``, forward ops ``op0, ...``, backward nodes ``n0, ...``.
"""

from __future__ import annotations

import math
import os
import re
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

import numpy as np

__all__ = ["SourceLoc", "TensorInfo", "OpRecord", "SavedInfo", "NodeInfo", "Step",
           "ComputeDependenciesStep", "EnqueueStep", "ExecuteStep", "AccumulateStep",
           "LeafGradStep", "HookStep", "PackHookStep", "UnpackHookStep", "ReleaseSavedStep",
           "ErrorStep", "GradientNodeStep",
           "DoneStep", "STEP_TYPES", "STEP_KINDS", "make_step", "step_to_dict", "step_from_dict",
           "freed_names",
           "BackwardRun", "run_id_number", "run_numbers", "runs_made", "run_number", "run_name",
           "BackwardGraph", "Trace", "ModuleSummary", "tensor_shapes", "summarize",
           "buffer_stats", "snapshot",
           "expand_snapshot", "scope_key", "packed_summary", "map_leaves", "MAX_TEXT",
           "clip_text", "versioned", "element_size", "nbytes"]

# NOTE [text limit] The longest string a trace holds: the loader refuses longer ones (schema.py),
# so what the recorders take from the program (a tensor's name, an exception's message, a
# source line, a note quoting either) is cut to it with clip_text when recorded, and every
# trace written loads back.
MAX_TEXT = 100_000


def clip_text(text: str, limit: int = MAX_TEXT) -> str:
    """``text``, cut to at most ``limit`` characters (the last one an ellipsis) if longer.

    Example:
        >>> clip_text("abcdef", 4)
        'abc…'
    """
    return text if len(text) <= limit else text[:limit - 1] + "\u2026"


def versioned(name: str, version: int) -> str:
    """How a version of a tensor written inside the graph is named (NOTE [versions]).

    Example:
        >>> versioned("b", 1)
        'b (v1)'
    """
    return f"{name} (v{version})"


@dataclass
class SourceLoc:
    """Where in the user's code something happened."""

    file: str
    line: int
    code: str = ""
    function: str = ""

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass
class TensorInfo:
    """A tensor seen during tracing."""

    id: str
    name: str
    shape: list[int]
    dtype: str
    requires_grad: bool
    is_leaf: bool
    is_param: bool = False
    grad_fn: str | None = None  # backward node id
    output_nr: int = 0
    op: str | None = None  # forward op that produced it
    source: SourceLoc | None = None
    value: dict[str, Any] | None = None
    grad: dict[str, Any] | None = None  # last .grad seen (after a backward run)
    # NOTE [versions] A tensor written in place gets a new record, a version, each time a later
    # op reads it: by an op (``x.add_(1)``, ``w -= lr * w.grad``) or by something no op event
    # reports (an optimizer's update, ``.data``). So every value drawn is the one the op that
    # read it saw, and the forward graph stays acyclic. ``identity`` is the id of the tensor's
    # first version (None for the first itself): all its versions are one tensor, named alike.
    # ``version`` is ``_version`` as the tensor had it then; the name shows it, ``b (v1)``,
    # only where it matters: a tensor written inside the graph (it has a grad_fn), not a
    # leaf's update or initialisation.
    identity: str | None = None
    version: int = 0


@dataclass
class OpRecord:
    """One forward op call, in execution order."""

    id: str
    name: str
    inputs: list[str | dict[str, Any]]  # tensor ids, or {"const": repr} for numbers
    outputs: list[str]
    node: str | None = None  # backward node it created
    kwargs: dict[str, Any] = field(default_factory=dict)
    inplace: bool = False
    scope: list[str] = field(default_factory=list)  # module path, outermost first
    source: SourceLoc | None = None
    segment: int = 0  # how many backward runs had finished when the op ran
    # The custom Function op this op ran inside (its forward()), if any: drawings fold it there.
    parent: str | None = None
    # Run with grad mode off (or in inference mode), recording no node: model construction, an
    # optimizer's update, a write under no_grad. Not part of any forward graph (phases.py).
    no_grad: bool = False

    def tensor_args(self) -> list[tuple[str | None, str]]:
        """The tensors the op read, in order: ``(None, id)`` for each positional one, then
        ``(keyword, id)`` for each passed by keyword (``batch_norm``'s ``weight``).

        Example:
            >>> OpRecord("op0", "f", ["t0", {"const": 2}], ["t2"],
            ...          kwargs={"weight": {"tensor": "t1"}, "eps": 1e-5}).tensor_args()
            [(None, 't0'), ('weight', 't1')]
        """
        out: list[tuple[str | None, str]] = [(None, i) for i in self.inputs
                                             if isinstance(i, str)]
        out += [(k, v["tensor"]) for k, v in self.kwargs.items()
                if isinstance(v, dict) and isinstance(v.get("tensor"), str)]
        return out


@dataclass(slots=True)  # NOTE [perf: module calls]: updated at every module call
class ModuleSummary:
    """What one module scope (a ``scope_key``) did: the shapes of the tensors its last call
    took (positional arguments) and returned, how many parameter elements it holds (its
    submodules' included), and how many times it was called while recording.

    Example:
        >>> import gradviz
        >>> with gradviz.tracer() as tr:
        ...     _ = gradviz.nn.Linear(3, 2)(gradviz.ones(4, 3))
        >>> tr.modules["Linear"]
        ModuleSummary(inputs=[(4, 3)], outputs=[(4, 2)], parameters=8, calls=1)
    """

    inputs: list[tuple[int, ...]] = field(default_factory=list)
    outputs: list[tuple[int, ...]] = field(default_factory=list)
    parameters: int = 0
    calls: int = 0


def tensor_shapes(value: Any, is_tensor: Callable[[Any], bool], depth: int = 2,
                  limit: int = 16) -> list[tuple[int, ...]]:
    """The shapes of the tensors in a module's result or arguments, in order: ``value``
    itself, or what tuples, lists and dicts hold, ``depth`` containers deep (``(output, (h,
    c))`` is two deep), at most ``limit`` of them.

    Example:
        >>> import gradviz
        >>> tensor_shapes((gradviz.ones(2, 3), 4, [gradviz.ones(5)]),
        ...               lambda x: isinstance(x, gradviz.Tensor))
        [(2, 3), (5,)]
    """
    todo = [value]
    shapes: list[tuple[int, ...]] = []
    for _ in range(depth + 1):  # level by level: bounded, no recursion
        inner = []
        for v in todo:
            if is_tensor(v):
                shapes.append(tuple(int(d) for d in v.shape))
            elif isinstance(v, (tuple, list)):
                inner.extend(v)
            elif isinstance(v, dict):
                inner.extend(v.values())
            if len(shapes) >= limit:
                return shapes
        todo = inner
    return shapes


def scope_key(scope: list[str] | tuple[str, ...]) -> str:
    """The key of a module scope in ``Trace.module_classes``: its names joined by ``/``.

    The whole path, not only its last name, because two models traced together may both have
    an ``fc1`` of different classes; ``/`` because the names themselves hold dots.

    Example:
        >>> scope_key(["LeNet", "features", "features.0"])
        'LeNet/features/features.0'
    """
    return "/".join(scope)


@dataclass
class SavedInfo:
    """A value a backward node saved (``_saved_<name>``)."""

    name: str
    tensor: str | None = None  # a traced tensor id when the saved value is a known tensor
    is_output: bool = False
    value: dict[str, Any] | None = None  # summary of a tensor value, or {"const": ...}
    # NOTE [saved tensor hooks]: when a saved-tensor pack hook stored the value, the hook's
    # qualified name and a summary of what it returned (packed_summary); both None otherwise.
    pack_hook: str | None = None
    packed: dict[str, Any] | None = None


def freed_names(saved: list[SavedInfo]) -> list[str]:
    """The names of the saved values a node frees when it releases them: its saved tensors
    (inputs and outputs), not the constants it keeps (a ``dim``, a shape).

    Example:
        >>> freed_names([SavedInfo("self", tensor="t0"), SavedInfo("dim", value={"const": 1})])
        ['self']
    """
    return [s.name for s in saved if s.tensor is not None or s.is_output
            or (s.value is not None and "const" not in s.value)]


@dataclass
class NodeInfo:
    """A backward node (``grad_fn``): PyTorch's class name and its ``next_functions``."""

    id: str
    name: str  # class name as PyTorch shows it: MulBackward0, AccumulateGrad, ...
    kind: str  # "op", "accumulate_grad", "graph_root", "custom", "engine"
    sequence_nr: int
    next_functions: list[list[Any]]  # [[node id | None, input_nr], ...]
    variable: str | None = None  # AccumulateGrad: the leaf tensor id
    forward_op: str | None = None
    saved: list[SavedInfo] = field(default_factory=list)
    num_outputs: int = 1


# -- engine steps: one small record per kind ------------------------------------------------------
# NOTE [typed steps] Each kind of engine step is its own dataclass with exactly its fields, so a
# reader sees what a step holds (``step.remaining``, not ``step.data["remaining"]``) and the
# schema (schema.py) checks one model per kind. Every step has ``index`` (its position in the
# run), ``node`` (the backward node it is about, or None), ``engine_data`` (plain values another
# engine adds: SINGA's ``tensor_remaining``, MXNet's ``gnode``, docs/engines.md) and the class
# attribute ``kind``, which is also its ``"kind"`` in trace.json. What a step does NOT hold is
# the engine's state (the ready queue, the counts so far): that is replayed once, in
# gradviz/trace/replay.py.
@dataclass(kw_only=True, slots=True)
class Step:
    """One engine step; the base of the step kinds (see :data:`STEP_TYPES`)."""

    kind: ClassVar[str] = ""
    index: int
    node: str | None = None
    engine_data: dict[str, Any] = field(default_factory=dict)

    @property
    def data(self) -> dict[str, Any]:
        """The step's own fields and its ``engine_data`` as one dict: the shape steps had in
        schema ``gradviz.trace/1``, kept for code that reads ``step.data["..."]``."""
        out = {f: getattr(self, f) for f in _OWN_FIELDS[type(self)]}
        out.update(self.engine_data)
        return out


@dataclass(kw_only=True, slots=True)
class ComputeDependenciesStep(Step):
    """The engine counted, for each node, the edges that will bring it a gradient."""

    kind: ClassVar[str] = "compute_dependencies"
    counts: dict[str, int] = field(default_factory=dict)
    tensor_counts: list[list[Any]] | None = None  # SINGA: [node, output index, count]


@dataclass(kw_only=True, slots=True)
class EnqueueStep(Step):
    """``node`` joined the ready queue. The queue runs the lowest ``priority`` first, equal
    priorities in the order they came (PyTorch: ``-sequence_nr``, so the node created last
    runs first; SINGA: a stack, the newest first)."""

    kind: ClassVar[str] = "enqueue"
    priority: int = 0


@dataclass(kw_only=True, slots=True)
class ExecuteStep(Step):
    """``node`` ran: it received ``grad_outputs`` and sent ``grad_inputs`` (one per edge of
    ``next_functions``). It left the ready queue (with any node the engine popped and skipped
    before it: replay.py)."""

    kind: ClassVar[str] = "execute"
    grad_outputs: list[Any] = field(default_factory=list)
    grad_inputs: list[Any] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class AccumulateStep(Step):
    """``source`` sent ``grad`` into slot ``input_nr`` of ``node``'s input buffer, which then
    held ``buffer``; ``node`` waits for ``remaining`` more edges."""

    kind: ClassVar[str] = "accumulate"
    input_nr: int = 0
    source: str | None = None
    grad: dict[str, Any] | None = None
    buffer: dict[str, Any] | None = None
    remaining: int = 0


@dataclass(kw_only=True, slots=True)
class LeafGradStep(Step):
    """``AccumulateGrad`` changed ``tensor``'s ``.grad`` from ``before`` to ``after``."""

    kind: ClassVar[str] = "leaf_grad"
    tensor: str = ""
    before: dict[str, Any] | None = None
    after: dict[str, Any] | None = None


@dataclass(kw_only=True, slots=True)
class HookStep(Step):
    """A hook ran at ``node``: ``hook`` is its kind (tensor, retain_grad, prehook, posthook),
    ``fn`` the hook function's qualified name."""

    kind: ClassVar[str] = "hook"
    hook: str = ""
    fn: str | None = None


@dataclass(kw_only=True, slots=True)
class PackHookStep(Step):
    """A saved-tensor pack hook ``fn`` ran during the pass (a ``create_graph`` backward's
    formulas save tensors too): it was given ``tensor`` and returned ``packed``
    (:func:`packed_summary`). ``node`` is the node whose backward was running."""

    kind: ClassVar[str] = "pack_hook"
    fn: str | None = None
    tensor: dict[str, Any] | None = None
    packed: dict[str, Any] | None = None


@dataclass(kw_only=True, slots=True)
class UnpackHookStep(Step):
    """``node`` read its saved value ``saved`` (``_saved_<saved>``) through the unpack hook
    ``fn``: the hook was given ``packed`` and returned ``tensor``. It happens while the node
    runs, so it comes before the node's ``execute`` step."""

    kind: ClassVar[str] = "unpack_hook"
    saved: str | None = None
    fn: str | None = None
    packed: dict[str, Any] | None = None
    tensor: dict[str, Any] | None = None


@dataclass(kw_only=True, slots=True)
class ReleaseSavedStep(Step):
    """``node`` freed its saved tensors (``retain_graph=False``): ``saved`` names them
    (``_saved_self``, ...), as the node lists them."""

    kind: ClassVar[str] = "release_saved"
    saved: list[str] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class ErrorStep(Step):
    """The pass failed (in ``node``, if known) with ``type``: ``message``."""

    kind: ClassVar[str] = "error"
    type: str = ""
    message: str = ""


@dataclass(kw_only=True, slots=True)
class GradientNodeStep(Step):
    """MXNet ran node ``gnode`` of its gradient graph that is no backward formula (``op``:
    ``_head_grad_ones``, ``_aggregate_sum``, ``_copy`` ...), about output ``input_nr`` of
    ``node``."""

    kind: ClassVar[str] = "gradient_node"
    gnode: str = ""
    op: str = ""
    input_nr: int = 0
    inputs: list[Any] = field(default_factory=list)
    output: dict[str, Any] | None = None


@dataclass(kw_only=True, slots=True)
class DoneStep(Step):
    """The ready queue is empty: the pass finished."""

    kind: ClassVar[str] = "done"


# kind -> its class, in the order a pass meets them. NOTE: the one list of step kinds.
STEP_TYPES: dict[str, type[Step]] = {cls.kind: cls for cls in (
    ComputeDependenciesStep, EnqueueStep, ExecuteStep, AccumulateStep, LeafGradStep, HookStep,
    PackHookStep, UnpackHookStep, ReleaseSavedStep, ErrorStep, GradientNodeStep, DoneStep)}
STEP_KINDS: tuple[str, ...] = tuple(STEP_TYPES)
_BASE_FIELDS = ("index", "node", "engine_data")
_OWN_FIELDS: dict[type, tuple[str, ...]] = {
    cls: tuple(f.name for f in fields(cls) if f.name not in _BASE_FIELDS)
    for cls in STEP_TYPES.values()}


def make_step(kind: str, index: int, node: str | None = None,
              engine_data: dict[str, Any] | None = None, **values: Any) -> Step:
    """The step of ``kind`` with these fields.

    Example:
        >>> make_step("accumulate", 3, "n1", input_nr=0, source="n2", remaining=1).remaining
        1
    """
    cls = STEP_TYPES.get(kind)
    if cls is None:
        raise ValueError(f"unknown step kind {kind!r}; the kinds are {', '.join(STEP_KINDS)}")
    return cls(index=index, node=node, engine_data=engine_data or {}, **values)


def step_to_dict(step: Step) -> dict[str, Any]:
    """A step as trace.json holds it: ``index``, ``kind``, ``node``, its own fields, and
    ``engine_data`` when an engine added some.

    Example:
        >>> step_to_dict(make_step("enqueue", 1, "n0", priority=-2))
        {'index': 1, 'kind': 'enqueue', 'node': 'n0', 'priority': -2}
    """
    out: dict[str, Any] = {"index": step.index, "kind": step.kind, "node": step.node}
    for f in _OWN_FIELDS[type(step)]:
        out[f] = getattr(step, f)
    if step.engine_data:
        out["engine_data"] = step.engine_data
    return out


def step_from_dict(d: dict[str, Any]) -> Step:
    """The inverse of :func:`step_to_dict` (``d`` already validated by the schema)."""
    values = {k: v for k, v in d.items() if k not in ("index", "kind", "node", "engine_data")}
    return make_step(d["kind"], d["index"], d.get("node"), d.get("engine_data"), **values)


@dataclass
class BackwardGraph:
    """The backward graph reachable from some roots."""

    nodes: dict[str, NodeInfo] = field(default_factory=dict)
    roots: list[list[Any]] = field(default_factory=list)  # root edges [[node id, input_nr]]
    tensors: dict[str, TensorInfo] = field(default_factory=dict)  # the leaves' descriptions

    def edges(self) -> list[tuple[str, str, int]]:
        """``(from node, to node, input_nr)`` for every non-empty edge."""
        return [(n.id, nxt, nr) for n in self.nodes.values()
                for nxt, nr in n.next_functions if nxt is not None]



@dataclass
class BackwardRun:
    """One call of ``backward()`` / ``autograd.grad()`` (or another engine's pass)."""

    id: str
    engine: str
    kind: str  # "backward" or "grad"
    roots: list[str]  # root tensor ids
    root_edges: list[list[Any]] = field(default_factory=list)  # [[node id, input_nr]]
    nodes: list[str] = field(default_factory=list)  # node ids reachable from the roots
    graph_root: str | None = None  # the node the engine started at
    dependencies: dict[str, int] = field(default_factory=dict)
    steps: list[Step] = field(default_factory=list)
    retain_graph: bool = False
    create_graph: bool = False
    inputs: list[str] = field(default_factory=list)
    error: dict[str, Any] | None = None
    source: SourceLoc | None = None
    # MXNet's engine: the explicit gradient graph it ran (see gradviz/engines/mxnet.py).
    gradient_graph: BackwardGraph | None = None


# NOTE [run numbers] Every view names a backward run by its number: 1 for the first backward()
# / autograd.grad() call the script made, counting the runs that keep_runs dropped or that were
# folded as identical iterations, so "run 20" is the 20th call in a title, the player (header,
# picker, address), the terminal and compare alike. The ids in trace.json (run0, run1, ...)
# are data: they count the runs begun from 0, and the number is the id's count plus one.
_RUN_ID = re.compile(r"run(\d+)")


def run_id_number(run_id: str) -> int | None:
    """The number a run with id ``run_id`` is shown with (NOTE [run numbers]), or None for an
    id not of the form ``run<k>``.

    Example:
        >>> run_id_number("run19"), run_id_number("mine")
        (20, None)
    """
    m = _RUN_ID.fullmatch(run_id)
    return int(m.group(1)) + 1 if m else None


def run_numbers(trace: Any) -> list[int]:
    """The number (1 for the first run the script made) of each run ``trace`` kept, in order.

    A run whose id is not ``run<k>`` (a hand-made trace) is numbered by its place among the
    last runs made.

    Example:
        >>> import gradviz
        >>> with gradviz.trace(keep_runs=2) as tr:
        ...     x = gradviz.ones(2, requires_grad=True)
        ...     for _ in range(5):
        ...         (x * 2).sum().backward()
        >>> run_numbers(tr)
        [4, 5]
    """
    kept = len(trace.runs)
    total = runs_made(trace)
    numbers = []
    for i, r in enumerate(trace.runs):
        k = run_id_number(r.id)
        numbers.append(k if k is not None else total - kept + i + 1)
    return numbers


def runs_made(trace: Any) -> int:
    """How many backward runs the script made (kept or not): the ``of N`` of a run's name.

    Example:
        >>> import gradviz
        >>> with gradviz.trace(keep_runs=1) as tr:
        ...     x = gradviz.ones(2, requires_grad=True)
        ...     for _ in range(4):
        ...         (x * 2).sum().backward()
        >>> runs_made(tr), len(tr.runs)
        (4, 1)
    """
    return max(trace.runs_total, len(trace.runs))


def run_number(trace: Any, run: int | str = -1) -> int:
    """The number of one run of ``trace`` (by index or id), as :func:`run_numbers` gives it.

    Example:
        >>> import gradviz
        >>> with gradviz.trace(keep_runs="all") as tr:
        ...     x = gradviz.ones(2, requires_grad=True)
        ...     for _ in range(3):
        ...         (x * 2).sum().backward()
        >>> run_number(tr, 0), run_number(tr, -1)
        (1, 3)
    """
    r = trace.run(run)
    index = next(i for i, x in enumerate(trace.runs) if x is r)
    return run_numbers(trace)[index]


def run_name(trace: Any, run: int | str = -1) -> str:
    """``"run 2 of 3"``: a run of ``trace`` (by index or id) as every view names it.

    Example:
        >>> import gradviz
        >>> with gradviz.trace(keep_runs="all") as tr:
        ...     x = gradviz.ones(2, requires_grad=True)
        ...     for _ in range(3):
        ...         (x * 2).sum().backward()
        >>> run_name(tr, 1)
        'run 2 of 3'
    """
    return f"run {run_number(trace, run)} of {runs_made(trace)}"


@dataclass(eq=False)
class Trace:
    """A recording of forward ops, backward graphs and engine steps, as plain data.

    This is what :mod:`gradviz.trace.io` writes and reads and what every renderer draws. The
    recorder (:class:`~gradviz.trace.recorder.Recorder`, what ``with gradviz.tracer() as tr``
    gives) is a ``Trace`` that fills these fields from what a program does; a loaded
    ``trace.json`` is a ``Trace`` built by the loader.

    Attributes:
        tensors: every tensor seen, by id, in the order first seen.
        ops: the forward ops, in execution order.
        nodes: every backward node seen, by id.
        runs: the backward runs kept in full (NOTE [long runs] in budget.py).
        module_classes: each module scope's class name, keyed by :func:`scope_key`.
        modules: what each module scope took, returned and holds (:class:`ModuleSummary`),
            by the same keys.
        notes: what the recording could not show as it happened (folded iterations, an op
            that was not recorded ...).
        runs_total: how many backward runs the program made, kept or not.
        run_log: one short summary per backward run made, however many were kept.
        name: the trace's title, if given.
        values: how values were recorded: ``"small"``, ``"none"`` or ``"all"``.
        keep_runs: the recording's ``keep_runs`` option.

    Example:
        >>> import gradviz
        >>> with gradviz.tracer() as tr:
        ...     x = gradviz.tensor([1.0, 2.0], requires_grad=True)
        ...     y = (x * x).sum()
        ...     y.backward()
        >>> [op.name for op in tr.ops], [n.name for n in tr.nodes.values()]
        (['mul', 'sum'], ['MulBackward0', 'AccumulateGrad', 'SumBackward0'])
        >>> isinstance(tr, Trace)
        True
    """

    tensors: dict[str, TensorInfo] = field(default_factory=dict)
    ops: list[OpRecord] = field(default_factory=list)
    nodes: dict[str, NodeInfo] = field(default_factory=dict)
    runs: list[BackwardRun] = field(default_factory=list)
    module_classes: dict[str, str] = field(default_factory=dict)
    modules: dict[str, ModuleSummary] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    runs_total: int = 0
    run_log: list[dict[str, Any]] = field(default_factory=list)
    name: str | None = None
    values: str = "small"
    keep_runs: int | str | None = None

    # -- queries -----------------------------------------------------------------------------
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
            >>> with gradviz.tracer() as tr:
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

    # (Notebook displays and to_html are installed by the render layer: render/_display.py.)

    # -- serialisation: gradviz.trace.io, imported when asked (io builds Traces: it imports
    # this module) -----------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The trace as JSON-ready data (:func:`gradviz.trace.io.trace_to_dict`)."""
        from gradviz.trace.io import trace_to_dict

        return trace_to_dict(self)

    def to_json(self, indent: int | None = 1) -> str:
        """The trace as JSON text (schema documented in ``docs/trace-schema.md``)."""
        from gradviz.trace.io import dumps

        return dumps(self, indent=indent)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write :meth:`to_json` to ``path`` (atomically: a reader never sees half a file)."""
        from gradviz.trace.io import save

        save(self, path)


# -- value summaries ------------------------------------------------------------------------------
SMALL = 64  # tensors up to this many elements keep their full values with values="small"
HEAD = 6
# Larger values shown as stats have them computed when traced, smaller ones when the trace is read
# (NOTE [perf: value snapshots]).
COPY_BYTES = 64 * 1024


def _num(v: Any) -> Any:
    """A JSON-safe number: non-finite floats become strings (JSON has no NaN/Infinity)."""
    if isinstance(v, float) and not math.isfinite(v):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
    return v


def _list(arr: np.ndarray) -> Any:
    out = arr.tolist()
    if arr.dtype.kind != "f":
        return out
    if arr.size <= SMALL:
        # NOTE [perf]: a NaN or an infinity anywhere makes the sum non-finite, and summing a few
        # Python floats is far cheaper than np.isfinite(arr).all() on a tiny array; a finite
        # overflow only sends us on to the exact test.
        flat = out if arr.ndim == 1 else (arr.ravel().tolist() if arr.ndim else [out])
        if math.isfinite(sum(flat)):
            return out
    if np.isfinite(arr).all():
        return out
    return _deep_num(out)


def map_leaves(value: Any, leaf: Callable[[Any], Any]) -> Any:
    """``value`` with every item that is not a list or tuple replaced by ``leaf(item)``, lists
    and tuples becoming lists (a stack of the lists still to fill, no recursion).

    Example:
        >>> map_leaves([1, (2, [3])], str)
        ['1', ['2', ['3']]]
    """
    if not isinstance(value, (list, tuple)):
        return leaf(value)
    top: list[Any] = []
    stack = [(value, top)]
    while stack:
        items, into = stack.pop()
        for item in items:
            if isinstance(item, (list, tuple)):
                inner: list[Any] = []
                into.append(inner)
                stack.append((item, inner))
            else:
                into.append(leaf(item))
    return top


def _deep_num(x: Any) -> Any:
    return map_leaves(x, _num)


_DTYPE_NAMES: dict[np.dtype, str] = {}


def dtype_name(dt: np.dtype) -> str:
    """``str(dtype)``, cached: NumPy computes the name anew on every call, slowly."""
    name = _DTYPE_NAMES.get(dt)
    if name is None:
        name = _DTYPE_NAMES[dt] = str(dt)
    return name


# Bytes per element of the dtypes a trace names that NumPy does not know (torch's own).
_TORCH_SIZES = {"bfloat16": 2, "complex32": 4, "qint8": 1, "quint8": 1, "qint32": 4,
                "quint4x2": 1, "quint2x4": 1, "bits8": 1, "bits16": 2}


def element_size(dtype: str) -> int:
    """Bytes per element of a dtype as a trace names it (``Tensor.element_size()``); 0 for a
    name neither NumPy nor this table knows (a sub-byte or unknown type: counted as nothing).

    Example:
        >>> element_size("float32"), element_size("bfloat16"), element_size("float8_e4m3fn")
        (4, 2, 1)
    """
    size = _TORCH_SIZES.get(dtype)
    if size is None:
        if dtype.startswith("float8"):
            return 1
        try:
            size = np.dtype(dtype).itemsize
        except TypeError:
            size = 0
    return size


def nbytes(summary_or_shape: Any, dtype: str | None = None) -> int:
    """Bytes of a tensor: from its shape and dtype name, or from a value summary (which holds
    both). A summary of a constant, or None, is 0 bytes.

    Example:
        >>> nbytes([64, 10], "float32"), nbytes({"shape": [3], "dtype": "float64"})
        (2560, 24)
    """
    if dtype is None:
        if not isinstance(summary_or_shape, dict) or "shape" not in summary_or_shape:
            return 0
        summary_or_shape, dtype = summary_or_shape["shape"], summary_or_shape.get("dtype", "")
    return math.prod(summary_or_shape) * element_size(str(dtype))


# NOTE [perf: block sums] The mean of a large float array is what its summary costs most: from
# 8192 elements on (NumPy's casting buffer), a float64-accumulated sum of a float32 array is cast
# chunk by chunk (a (256, 784) weight: 65-120 us, against 15 for its min). A contiguous float32
# or float64 array that large is summed instead as blocks of _BLOCK elements, all of them by one
# BLAS matrix-vector product with a vector of ones (vectorised, no cast: 17-23 us), and the block
# sums are added in float64. Each block's sum is rounded in the array's own dtype, as PyTorch's
# own ``x.mean()`` of a float32 tensor is; the result differs from the float64 sum by ~1e-8 of
# the sum of |x| (tests/test_trace_perf_semantics.py), far below the 4-5 digits a picture shows.
# The blocks follow memory order, so every full view of a buffer (a weight and its ``.t()``)
# still gets the very same numbers (NOTE [perf: value snapshots]).
_BLOCK = 256
_BLOCKS_FROM = 8192
_ONES = {np.dtype(dt): np.ones(_BLOCK, dt) for dt in (np.float32, np.float64)}


def _sum(arr: np.ndarray) -> float:
    """The sum of ``arr``'s elements as a float (NOTE [perf: block sums])."""
    ones = _ONES.get(arr.dtype)
    if (ones is None or arr.size < _BLOCKS_FROM
            or not (arr.flags.c_contiguous or arr.flags.f_contiguous)):
        # As the array is laid out, with no copy (reshape(-1) would copy a transposed gradient).
        # A signalling NaN (the garbage of an uninitialised torch.empty) or an overflow must
        # not warn in the user's program: _stats handles what is not finite.
        with np.errstate(over="ignore", invalid="ignore"):
            return float(np.add.reduce(arr, axis=None, dtype=np.float64))
    flat = arr.ravel(order="K")  # a view, in memory order: the array is contiguous
    whole = flat.size - flat.size % _BLOCK
    with np.errstate(over="ignore", invalid="ignore"):  # inf or nan: _stats takes over
        blocks = np.dot(flat[:whole].reshape(-1, _BLOCK), ones)
    total = float(np.add.reduce(blocks, dtype=np.float64))
    if whole < flat.size:
        total += float(np.add.reduce(flat[whole:], dtype=np.float64))
    return total


def buffer_stats(arr: np.ndarray) -> tuple[float, float, float]:
    """min, max and mean of a numeric array, as :func:`summarize` computes them (a large float
    array's mean to ~1e-8 of its mean magnitude, NOTE [perf: block sums]).

    Example:
        >>> buffer_stats(np.array([1.0, 2.0, 6.0]))
        (1.0, 6.0, 3.0)
    """
    # NOTE [perf]: the ufuncs' reduce called directly: ndarray.min() adds ~2 us of Python layer.
    return (float(np.minimum.reduce(arr, axis=None)), float(np.maximum.reduce(arr, axis=None)),
            _sum(arr) / arr.size)


def summarize(value: Any, mode: str = "small",
              stats: tuple[float, float, float] | None = None) -> dict[str, Any]:
    """A JSON-safe summary of an array/tensor: shape and dtype, plus values by ``mode``.

    ``"none"``: shape and dtype only. ``"small"``: full values up to :data:`SMALL` elements,
    else min/max/mean and the first few elements. ``"all"``: full values always. ``stats``:
    :func:`buffer_stats` of the array, if known already.

    Example:
        >>> summarize(np.arange(3.0))
        {'shape': [3], 'dtype': 'float64', 'values': [0.0, 1.0, 2.0]}
    """
    arr = getattr(value, "_data", value)
    meta = getattr(arr, "is_meta", False)  # a meta tensor's array: no values to show
    arr = np.asarray(arr)
    out: dict[str, Any] = {"shape": list(arr.shape), "dtype": dtype_name(arr.dtype)}
    if mode == "none" or arr.dtype.kind not in "biuf" or meta:
        return out
    if mode == "all" or arr.size <= SMALL:
        out["values"] = _list(arr)
        return out
    out.update(_stats_summary(*_stats(arr, stats)))
    return out


def _stats(arr: np.ndarray, stats: tuple[float, float, float] | None
           ) -> tuple[float, float, float, np.ndarray]:
    """min, max, mean (of the finite values, if some are not) and the first elements."""
    lo, hi, mean = buffer_stats(arr) if stats is None else stats
    if not (math.isfinite(lo) and math.isfinite(hi) and math.isfinite(mean)):
        with np.errstate(invalid="ignore"):  # a signalling NaN warns when cast
            as_float = arr.astype(np.float64).reshape(-1)  # a copy only in this rare case
        finite = as_float[np.isfinite(as_float)]
        lo, hi, mean = ((float(finite.min()), float(finite.max()), float(finite.mean()))
                        if finite.size else (math.nan,) * 3)
    return lo, hi, mean, np.asarray(arr.flat[:HEAD])  # the first elements, a small copy


def _stats_summary(lo: float, hi: float, mean: float, head: np.ndarray) -> dict[str, Any]:
    return {"stats": {"min": _num(lo), "max": _num(hi), "mean": _num(mean)},
            "head": _list(head)}


# NOTE [perf: value snapshots] The tracer must capture a value when an event reports it (the
# array may be changed in place later), but building the Python lists of a small value's summary
# is most of what tracing a tiny op costs. So it takes a snapshot, and the summary is built from
# it when a reader first asks (see NOTE [perf: lazy trace] in recorder.py).
# ``expand_snapshot(snapshot(v, mode), mode)`` is always ``summarize(v, mode)``. A medium value
# (more than SMALL elements, at most COPY_BYTES, C- or F-contiguous) is copied as it is laid out,
# and its min/max/mean are computed from the copy when the trace is read: copying 64 KiB costs
# ~1.5 us, its three reductions ~9 us, and 12-25 us inside a training step, whose matrix
# products have just evicted them from the caches (measured on the MLP step: 18 of its 23
# summaries, ~300 of ~490 us per traced step). The copy has the array's layout, so NumPy reduces
# it in the same order: the very same numbers (tests/test_trace_perf_semantics.py). A larger
# value's stats are computed at once: copying it costs more (fresh pages for the copy), and
# would make a trace nobody reads as big as the values it saw. But a transpose (a Linear
# layer's weight.t(), its gradient) shares its array's buffer: with ``shared``, a dict the
# caller keeps for one op or one backward run, every full view of a buffer that is C- or
# F-contiguous gets the stats computed for the first one. NumPy reduces such views over all axes
# in memory order, so they are the very same numbers (tests/test_trace_perf_semantics.py).
def snapshot(value: Any, mode: str = "small",
             shared: dict[int, tuple[weakref.ref, tuple[float, float, float]]] | None = None
             ) -> Any:
    """What :func:`summarize` needs of ``value``, taken now and cheaply: ``(shape, dtype)`` when
    only those are shown, a copy of a value shown in full or of a medium one (its stats computed
    when read), and for a large value shown as stats ``(shape, dtype, min, max, mean, head)``
    (``shared``: see the NOTE above)."""
    if type(value) is np.ndarray:
        arr = value
    else:
        arr = getattr(value, "_data", value)
        if getattr(arr, "is_meta", False):  # a meta tensor's array: no values to show
            return (arr.shape, arr.dtype)
        arr = np.asarray(arr)
    if mode == "none" or arr.dtype.kind not in "biuf":
        return (arr.shape, arr.dtype)
    if mode == "all" or arr.size <= SMALL:
        return arr.copy()
    if arr.nbytes <= COPY_BYTES and (arr.flags.c_contiguous or arr.flags.f_contiguous):
        return arr.copy(order="K")  # summarized when read (expand_snapshot)
    owner = arr if arr.base is None else arr.base
    stats = None
    if (shared is not None and type(owner) is np.ndarray and owner.size == arr.size
            and owner.dtype == arr.dtype
            and (arr.flags.c_contiguous or arr.flags.f_contiguous)):
        hit = shared.get(id(owner))
        if hit is None or hit[0]() is not owner:  # weakly: holding it may cost a copy later
            hit = shared[id(owner)] = (weakref.ref(owner), buffer_stats(arr))
        stats = hit[1]
    return (arr.shape, arr.dtype, *_stats(arr, stats))


def expand_snapshot(snap: Any, mode: str = "small") -> dict[str, Any]:
    """The summary a :func:`snapshot` taken with ``mode`` stands for."""
    if type(snap) is not tuple:
        return summarize(snap, mode)
    out = {"shape": list(snap[0]), "dtype": dtype_name(snap[1])}
    if len(snap) > 2:
        out.update(_stats_summary(*snap[2:]))
    return out


def packed_summary(packed: Any, mode: str = "small") -> dict[str, Any]:
    """What a saved-tensor pack hook returned, as a trace holds it: a tensor's (or array's)
    value summary, else ``{"type": ..., "repr": ...}`` (a file name, a handle), the repr cut
    to 200 characters.

    Example:
        >>> packed_summary("/tmp/saved/3.npy")
        {'type': 'str', 'repr': "'/tmp/saved/3.npy'"}
        >>> packed_summary(np.zeros(2))["shape"]
        [2]
    """
    arr = getattr(packed, "_data", packed)
    if isinstance(arr, np.ndarray):
        return summarize(arr, mode)
    text = repr(packed)
    if len(text) > 200:
        text = text[:199] + "\u2026"
    return {"type": type(packed).__name__, "repr": text}
