"""The tracer: record forward ops, backward graphs and engine steps as plain data.

``with gradviz.tracer() as tr:`` (or ``gradviz.trace()``, whose tensor form ``gradviz.trace(x)``
is the matrix op, as in torch) records everything inside: ``tr`` is a :class:`Recorder`, a
:class:`Trace` (the plain data every renderer and ``trace.json`` hold) filled as the program
runs. ``gradviz.graph_of(t)`` builds the backward-graph model of a live tensor without tracing;
``gradviz.load_trace(path)`` reopens a saved trace (a :class:`Trace`);
``gradviz.compare_engines(fn, *inputs)`` records one program under the three engines.
Renderers (``gradviz.render``) draw these models.
"""

from gradviz.trace import engines  # gives gradviz.engines.mxnet its gradient_graph
from gradviz.trace.compare import ENGINES, EngineComparison, EngineReport, compare_engines
from gradviz.trace.graph import graph_of
from gradviz.trace.io import SCHEMA, TraceFormatError, load_trace
from gradviz.trace.model import (
    STEP_KINDS,
    STEP_TYPES,
    AccumulateStep,
    BackwardGraph,
    BackwardRun,
    ComputeDependenciesStep,
    DoneStep,
    EnqueueStep,
    ErrorStep,
    ExecuteStep,
    GradientNodeStep,
    HookStep,
    LeafGradStep,
    ModuleSummary,
    NodeInfo,
    OpRecord,
    PackHookStep,
    ReleaseSavedStep,
    SavedInfo,
    SourceLoc,
    Step,
    TensorInfo,
    Trace,
    UnpackHookStep,
    run_name,
    run_number,
    run_numbers,
    summarize,
)
from gradviz.trace.recorder import Recorder, trace, tracer
from gradviz.trace.replay import Memory, StepState, Timeline, memory, replay, timeline

__all__ = ["trace", "tracer", "Trace", "Recorder", "graph_of", "load_trace", "TraceFormatError",
           "SCHEMA", "BackwardGraph", "BackwardRun", "NodeInfo", "OpRecord", "SavedInfo",
           "SourceLoc", "Step", "TensorInfo", "summarize", "compare_engines", "EngineComparison",
           "EngineReport", "ENGINES", "STEP_KINDS", "STEP_TYPES", "ComputeDependenciesStep",
           "EnqueueStep", "ExecuteStep", "AccumulateStep", "LeafGradStep", "HookStep",
           "PackHookStep", "UnpackHookStep", "ReleaseSavedStep", "ErrorStep", "GradientNodeStep",
           "DoneStep", "StepState", "run_name", "run_number", "run_numbers", "Timeline", "replay",
           "timeline", "Memory", "memory", "ModuleSummary"]
