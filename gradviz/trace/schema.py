"""The shape of ``trace.json`` (schema ``gradviz.trace/2``) as pydantic models.

NOTE [schema library]: the loader checks a document in two passes: this module's models check
every field's presence, type, range and string contents (ids, dtype names, step kinds and each
kind's fields); :func:`gradviz.trace.io.trace_from_dict` then checks that every id the file
references is one it defines. We use pydantic v2 rather than ``jsonschema`` because

* the schema is Python next to the model it describes (``gradviz/trace/model.py``), typed and
  read like the docs' tables, instead of a second, hand-synchronised JSON document;
* its validator (pydantic-core, compiled) checks a 10 MB trace in about 0.2 s, and each error
  carries its location as a tuple (``("runs", 0, "steps", 3, "node")``), which becomes the one
  line naming the field path that :class:`~gradviz.trace.io.TraceFormatError` promises;
* a tagged union picks a step's model from its ``kind`` and reports only that model's
  errors, where ``jsonschema``'s ``oneOf`` reports why every branch failed.

Scalars are ``Strict*``: JSON's ``1`` is not a ``true`` and ``"1"`` is not an integer. Lists are
lax only so that a JSON list may fill a fixed-arity tuple (``[node id, input_nr]``).

Example:
    >>> from pydantic import ValidationError
    >>> try:
    ...     SummaryModel.model_validate({"shape": [2], "dtype": "float32", "values": [1.0]})
    ... except ValidationError as e:
    ...     print(e.errors()[0]["msg"])
    Value error, values hold 1 element(s) in 1 dimension(s), but shape [2] has 2
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    PlainValidator,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    Tag,
    model_validator,
)
from pydantic_core import PydanticCustomError

from gradviz.trace.model import MAX_TEXT, STEP_KINDS

__all__ = ["TraceModel", "SummaryModel", "STEP_KINDS", "MAX_INT", "UNION_TAGS",
           "StepModel"]

MAX_INT = 2**64 - 1  # AccumulateGrad's sequence_nr, the largest number a trace needs

TensorId = Annotated[StrictStr, Field(pattern=r"^t[0-9]{1,18}$")]
OpId = Annotated[StrictStr, Field(pattern=r"^op[0-9]{1,18}$")]
NodeId = Annotated[StrictStr, Field(pattern=r"^[ng][0-9]{1,18}$")]  # g: MXNet's gradient graph
RunId = Annotated[StrictStr, Field(pattern=r"^run[0-9]{1,18}$")]
Count = Annotated[StrictInt, Field(ge=0, le=MAX_INT)]
# NumPy's numeric dtypes, and torch's names for the rest of its dtypes (a trace of real PyTorch
# names a tensor's dtype as torch does: complex32, float8_e4m3fn, qint8, uint3 ...).
DtypeName = Annotated[StrictStr, Field(
    pattern=r"^(bool|u?int([1-7]|8|16|32|64)|float(16|32|64)|bfloat16|complex(32|64|128)"
            r"|float8_e(4m3fn(uz)?|5m2(fnuz)?|8m0fnu)|float4_e2m1fn_x2"
            r"|q(u?int8|int32|uint4x2|uint2x4)|bits(8|16|1x8|2x4|4x2))$")]


def _name(v: Any) -> str:
    # Checked in Python: pydantic-core cannot hold a lone surrogate, which a name may have
    # (an undecodable file name; Trace.save writes it as a JSON escape, docs/guarantees.md).
    if type(v) is not str:
        raise PydanticCustomError("string_type", "Input should be a valid string")
    if len(v) > MAX_TEXT:  # the recorders cut what they take from a program (NOTE [text limit])
        raise PydanticCustomError("string_too_long", "expected at most 100,000 characters")
    return v


Name = Annotated[str, PlainValidator(_name)]
NonFinite = Literal["nan", "inf", "-inf"]  # how the recorder spells what JSON cannot



class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _number_tag(v: Any) -> str | None:
    # A tagged union reports one branch's error, not one per branch (NOTE [schema library]).
    if isinstance(v, bool):
        return "<bool>"
    return {int: "<int>", float: "<float>", str: "<str>"}.get(type(v))


Number = Annotated[(Annotated[StrictInt, Tag("<int>")] | Annotated[StrictFloat, Tag("<float>")]
                    | Annotated[StrictBool, Tag("<bool>")] | Annotated[NonFinite, Tag("<str>")]),
                   Discriminator(_number_tag, custom_error_type="number",
                                 custom_error_message="expected a number, or 'nan', 'inf', "
                                                      "'-inf'")]

_NON_FINITE = ("nan", "inf", "-inf")


def _is_number(v: Any) -> bool:
    """A tensor element as a summary holds it: int64/uint64 range, a float, a bool."""
    t = type(v)
    return (t is float or t is bool or (t is int and -(2**63) <= v <= MAX_INT)
            or (t is str and v in _NON_FINITE))


def _shape_of(values: Any) -> tuple[int, int]:
    """``(elements, dimensions)`` of nested lists of numbers, a level at a time (no recursion:
    the depth is bounded when parsing, but a level is cheaper than a frame); ``(0, -1)`` if the
    lists are ragged or hold something that is not a number."""
    depth, level = 0, [values]
    while True:
        lists = sum(type(v) is list for v in level)
        if lists == 0:
            return (len(level), depth) if all(_is_number(v) for v in level) else (0, -1)
        if lists != len(level) or len({len(v) for v in level}) > 1:
            return 0, -1
        depth += 1
        level = [x for v in level for x in v]
        if not level:
            return 0, depth


class StatsModel(_Strict):
    min: Number
    max: Number
    mean: Number


class SummaryModel(_Strict):
    """A value summary: ``shape``, ``dtype``, then ``values`` or ``stats`` and ``head``."""

    shape: list[Count]
    dtype: DtypeName
    values: Any = None  # nested lists in the tensor's shape (checked below)
    stats: StatsModel | None = None
    head: list[Number] | None = None

    @model_validator(mode="after")
    def _values_fit_shape(self) -> SummaryModel:
        if self.values is None:
            return self
        count, ndim = _shape_of(self.values)
        want = math.prod(self.shape)
        # An empty tensor's lists stop at the first empty level ([] for shape [0, 3]).
        fits = ndim == len(self.shape) or (want == 0 and 0 <= ndim <= len(self.shape))
        if ndim == -1 or not fits or count != want:
            got = ("ragged lists or something not a tensor element" if ndim == -1
                   else f"{count} element(s) in {ndim} dimension(s)")
            raise ValueError(f"values hold {got}, but shape {list(self.shape)} has {want}")
        return self


class ConstModel(_Strict):
    const: Any  # any JSON value (numbers, strings, lists; NaN was refused when parsing)


class TensorRefModel(_Strict):
    tensor: TensorId


def _value_tag(v: Any) -> str:
    return "<const>" if isinstance(v, dict) and "const" in v else "<summary>"


SavedValue = Annotated[(Annotated[ConstModel, Tag("<const>")]
                        | Annotated[SummaryModel, Tag("<summary>")]), Discriminator(_value_tag)]


def _input_tag(v: Any) -> str:
    return "<const>" if isinstance(v, dict) else "<tensor>"


OpInput = Annotated[(Annotated[TensorId, Tag("<tensor>")]
                     | Annotated[ConstModel, Tag("<const>")]), Discriminator(_input_tag)]


class SourceModel(_Strict):
    file: Name
    line: Count
    code: Name = ""
    function: Name = ""


class TensorModel(_Strict):
    id: TensorId
    name: Name
    shape: list[Count]
    dtype: DtypeName
    requires_grad: StrictBool
    is_leaf: StrictBool
    is_param: StrictBool = False
    grad_fn: NodeId | None = None
    output_nr: Count = 0
    op: OpId | None = None
    source: SourceModel | None = None
    value: SummaryModel | None = None
    grad: SummaryModel | None = None
    identity: TensorId | None = None  # its first version's id (NOTE [versions]; optional)
    version: Count = 0


class OpModel(_Strict):
    id: OpId
    name: Name
    inputs: list[OpInput]
    outputs: list[TensorId]
    node: NodeId | None = None
    kwargs: dict[Name, Any] = {}
    inplace: StrictBool = False
    scope: list[Name] = []
    source: SourceModel | None = None
    segment: Count = 0
    parent: OpId | None = None  # the custom Function op it ran inside (optional)
    no_grad: StrictBool = False  # ran with grad mode off (optional)


class PackedObjectModel(_Strict):
    """What a pack hook returned that is no tensor (a file name, a handle): its type and repr."""

    type: Name
    repr: Name


def _packed_tag(v: Any) -> str:
    return "<object>" if isinstance(v, dict) and "repr" in v else "<summary>"


# What a saved-tensor pack hook returned (model.packed_summary).
PackedValue = Annotated[(Annotated[PackedObjectModel, Tag("<object>")]
                         | Annotated[SummaryModel, Tag("<summary>")]), Discriminator(_packed_tag)]


class SavedModel(_Strict):
    name: Name
    tensor: TensorId | None = None
    is_output: StrictBool = False
    value: SavedValue | None = None
    # Optional (files written before saved-tensor hooks were traced load unchanged).
    pack_hook: Name | None = None
    packed: PackedValue | None = None


class NodeModel(_Strict):
    id: NodeId
    name: Name
    kind: Literal["op", "accumulate_grad", "graph_root", "custom", "engine"]
    sequence_nr: Count
    next_functions: list[tuple[NodeId | None, Count]]
    variable: TensorId | None = None
    forward_op: OpId | None = None
    saved: list[SavedModel] = []
    num_outputs: Count = 1


# -- steps: one model per kind, chosen by the step's "kind" (model.py's typed steps) -----------
class _EngineData(_Strict):
    """The plain fields other engines add to a step (``engine_data``, docs/engines.md)."""

    tensor_remaining: Count | None = None  # SINGA
    yielded: StrictBool | None = None
    stopped_early: StrictBool | None = None
    gnode: NodeId | None = None  # MXNet
    freed: list[Name] | None = None
    grad_req: Name | None = None
    buffer_id: Name | None = None
    # Real PyTorch (torch_source.py), on compute_dependencies: the priorities are the order the
    # nodes were seen to run, not -sequence_nr (docs/trace-schema.md, "Runs of real PyTorch").
    order: Literal["observed"] | None = None


class _Step(_Strict):
    index: Count
    engine_data: _EngineData = _EngineData()


class _NoNode(_Step):
    node: None = None


class _WithNode(_Step):
    node: NodeId


class _MaybeNode(_Step):
    node: NodeId | None = None


class _DependenciesStep(_NoNode):
    kind: Literal["compute_dependencies"]
    counts: dict[NodeId, Count]
    tensor_counts: list[tuple[NodeId, Count, Count]] | None = None  # SINGA


class _EnqueueStep(_WithNode):
    kind: Literal["enqueue"]
    priority: Annotated[StrictInt, Field(ge=-MAX_INT, le=MAX_INT)]


class _ExecuteStep(_WithNode):
    kind: Literal["execute"]
    grad_outputs: list[SummaryModel | None]
    grad_inputs: list[SummaryModel | None]


class _AccumulateStep(_WithNode):
    kind: Literal["accumulate"]
    input_nr: Count
    source: NodeId | None
    grad: SummaryModel | None
    buffer: SummaryModel | None
    remaining: Count


class _LeafGradStep(_WithNode):
    kind: Literal["leaf_grad"]
    tensor: TensorId
    before: SummaryModel | None
    after: SummaryModel | None


class _HookStep(_MaybeNode):
    kind: Literal["hook"]
    hook: Literal["tensor", "retain_grad", "prehook", "posthook", "post_accumulate_grad"]
    fn: Name | None = None


class _PackHookStep(_MaybeNode):
    kind: Literal["pack_hook"]
    fn: Name | None = None
    tensor: SummaryModel | None = None
    packed: PackedValue | None = None


class _UnpackHookStep(_WithNode):
    kind: Literal["unpack_hook"]
    saved: Name | None = None
    fn: Name | None = None
    packed: PackedValue | None = None
    tensor: SummaryModel | None = None


class _ReleaseStep(_WithNode):
    kind: Literal["release_saved"]
    saved: list[Name] = []


class _ErrorStep(_MaybeNode):
    kind: Literal["error"]
    type: Name
    message: Name


class _GradientNodeStep(_MaybeNode):
    kind: Literal["gradient_node"]
    gnode: NodeId
    op: Name
    input_nr: Count = 0
    inputs: list[SummaryModel | None]
    output: SummaryModel | None


class _DoneStep(_NoNode):
    kind: Literal["done"]


StepModel = Annotated[(_DependenciesStep | _EnqueueStep | _ExecuteStep | _AccumulateStep
                       | _LeafGradStep | _HookStep | _PackHookStep | _UnpackHookStep
                       | _ReleaseStep | _ErrorStep
                       | _GradientNodeStep | _DoneStep), Field(discriminator="kind")]


class GradientGraphModel(_Strict):
    nodes: dict[NodeId, NodeModel] = {}
    roots: list[tuple[NodeId, Count]] = []
    tensors: dict[TensorId, TensorModel] = {}


class RunErrorModel(_Strict):
    type: Name
    message: Name


class RunModel(_Strict):
    id: RunId
    engine: Literal["pytorch", "singa", "mxnet", "torch"]
    kind: Literal["backward", "grad"]
    roots: list[TensorId]
    root_edges: list[tuple[NodeId | None, Count]] = []
    nodes: list[NodeId] = []
    graph_root: NodeId | None = None
    dependencies: dict[NodeId, Count] = {}
    steps: list[StepModel] = []
    retain_graph: StrictBool = False
    create_graph: StrictBool = False
    inputs: list[TensorId] = []
    error: RunErrorModel | None = None
    source: SourceModel | None = None
    gradient_graph: GradientGraphModel | None = None


class RunLogModel(_Strict):
    id: Name
    kind: Literal["backward", "grad"] = "backward"
    engine: Name = "pytorch"
    roots: Count = 0
    nodes: Count = 0
    steps: Count = 0
    source: Name | None = None
    error: Name | None = None


def _keep_runs_tag(v: Any) -> str:
    return "<str>" if isinstance(v, str) else "<int>"


# A positive count, or "all" (keep everything); tagged so an error names the field, not a branch.
KeepRuns = Annotated[(Annotated[StrictInt, Field(ge=1, le=MAX_INT), Tag("<int>")]
                      | Annotated[Literal["all"], Tag("<str>")]), Discriminator(_keep_runs_tag)]


class ModuleModel(_Strict):
    inputs: list[list[Count]] = []
    outputs: list[list[Count]] = []
    parameters: Count = 0
    calls: Count = 0


class OptionsModel(_Strict):
    values: Literal["small", "none", "all"] = "small"
    keep_runs: KeepRuns | None = None


class TraceModel(_Strict):
    """A whole ``trace.json`` document (its ``schema`` is checked before this model runs)."""

    schema_: Literal["gradviz.trace/2"] = Field(alias="schema")
    gradviz_version: Name
    name: Name | None = None
    options: OptionsModel = OptionsModel()
    runs_total: Count = 0
    notes: list[Name] = []
    # Optional (files written before it existed load unchanged): scope key -> module class.
    module_classes: dict[Name, Name] = {}
    # Optional: scope key -> what the module took, returned and holds (model.ModuleSummary).
    modules: dict[Name, ModuleModel] = {}
    # Optional: one summary per backward run, also those not kept in full (NOTE [long runs]).
    run_log: list[RunLogModel] = []
    tensors: list[TensorModel]
    ops: list[OpModel]
    nodes: list[NodeModel]
    runs: list[RunModel]


# Pieces of a pydantic error location that name a union branch, not a field of the file: the
# "<...>" tags above, and a step's kind right after its index in "steps".
UNION_TAGS = frozenset(STEP_KINDS)
