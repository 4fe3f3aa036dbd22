"""Real PyTorch as a source for the tracer: the same plain-data trace, recorded from torch.

``with gradviz.trace() as tr:`` records torch code inside its block too (when torch is imported
before the block, or with ``gradviz.trace(torch=True)``); ``gradviz.graph_of(t)`` and every
renderer accept torch tensors. torch is imported here only, and only when used.

API (stable; the CLI calls these):

- ``gradviz.trace(values="small", keep_runs=None, name=None, torch=None) -> Trace``: ``torch=True``
  records real PyTorch inside the block (importing torch at ``__enter__``; without torch an
  ImportError says ``pip install gradviz[torch]``), ``None`` does so when torch is already
  imported at ``__enter__``, ``False`` never. A script that does ``import torch`` itself must be
  run with ``torch=True`` (its import happens inside the block). gradviz code in the same block
  is recorded as before: one trace may hold both.
- ``Trace.torch_source``: the live :class:`TorchSource` while recording (None without torch).
  Runs of real PyTorch have ``run.engine == ENGINE == "torch"`` (gradviz's own engine is
  ``"pytorch"``); ``trace.notes`` lists what could not be recorded faithfully.
- ``record_torch(values="small", name=None) -> Trace``: the same as ``gradviz.trace(torch=True)``.
- ``require_torch() -> module`` (``import torch`` or that ImportError), ``INSTALL_HINT``,
  ``is_torch_tensor(obj) -> bool`` (never imports torch).
- ``torch_graph_of(*tensors, values="none") -> BackwardGraph``; ``gradviz.graph_of``,
  ``draw_backward``, ``print_graph``, ``show`` and ``gradviz.make_dot`` take torch tensors.
- ``TorchSource(trace)``: ``start()`` / ``stop()`` (``Trace.__enter__``/``__exit__`` call them),
  ``tensor_id(t)``, ``node_id(grad_fn)``, ``known_node(grad_fn)``: trace ids of live objects.

What is recorded, and how:

- Forward ops: a ``TorchFunctionMode`` (not a ``TorchDispatchMode``): it sees the calls the user
  wrote (``F.linear``, ``x @ w``, ``F.cross_entropy``), with the user's frame on the stack, one
  record per call, whereas dispatch sees the ATen decomposition below them (``aten::addmm``,
  ``aten::t``) without Python frames. Each op is linked to the ``grad_fn`` its output got.
  Module scopes come from the global module forward pre/post hooks.
- Backward graph: ``grad_fn``/``next_functions``, PyTorch's node names (``fn.name()``), the
  ``_saved_*`` attributes (read via ``dir(fn)``), ``AccumulateGrad.variable``.
- Each ``backward()`` / ``autograd.grad()`` call: ``torch.autograd._engine_run_backward`` (the one
  place ``Tensor.backward``, ``autograd.backward`` and ``autograd.grad`` all go through) is
  wrapped while tracing. For the call, a pre-hook and a post-hook are attached to every node of
  the graph (and a post-accumulate-grad hook to every leaf) and removed after: they give the
  true execution order and the gradients arriving at and leaving each node. Ours are registered
  last, return None, and only copy values: the user's hooks run before them, see the same
  gradients, and the results are unchanged. The ready queue and dependency counts are derived
  from the graph and ``_sequence_nr()`` (the CPU ready queue pops the highest sequence number
  first; ``AccumulateGrad``'s is UINT64_MAX) and checked against the observed order: when they
  disagree, the steps follow the observed order and ``trace.notes`` says so.
- Threads: ops and backward calls of every thread started inside the block, each call its own
  run (NOTE [threads] below; docs/guarantees.md).
"""

from __future__ import annotations

import os
import re
import sys
import threading
import weakref
from collections.abc import Callable, Sequence
from heapq import heappop, heappush
from types import FrameType, ModuleType
from typing import Any

import numpy as np

from gradviz.trace import naming
from gradviz.trace import recorder as _rec
from gradviz.trace.model import (
    BackwardGraph,
    BackwardRun,
    NodeInfo,
    OpRecord,
    SavedInfo,
    SourceLoc,
    Step,
    TensorInfo,
    clip_text,
    freed_names,
    make_step,
    run_id_number,
    scope_key,
    summarize,
    tensor_shapes,
    versioned,
)

__all__ = ["require_torch", "is_torch_tensor", "TorchSource", "record_torch", "torch_graph_of",
           "INSTALL_HINT"]

INSTALL_HINT = "pip install gradviz[torch]"
ENGINE = "torch"  # BackwardRun.engine of a run of real PyTorch's engine


def require_torch() -> ModuleType:
    """``import torch``, or an ImportError saying how to install it.

    Example:
        >>> require_torch().__name__
        'torch'
    """
    try:
        import torch
    except ImportError as exc:
        raise ImportError(f"tracing PyTorch needs torch, which is not installed: "
                          f"{INSTALL_HINT}") from exc
    return torch


def is_torch_tensor(obj: Any) -> bool:
    """Whether ``obj`` is a ``torch.Tensor`` (never imports torch).

    Example:
        >>> is_torch_tensor([1.0])
        False
    """
    cls = getattr(sys.modules.get("torch"), "Tensor", None)  # None, or a stand-in module
    return isinstance(cls, type) and isinstance(obj, cls)


def _torch_dir() -> str:
    torch = require_torch()
    return os.path.dirname(os.path.abspath(torch.__file__)) + os.sep


def _user_frame(start: FrameType | None, torch_dir: str) -> FrameType | None:
    """The innermost frame neither in gradviz nor in torch: the user's line."""
    f = start
    while f is not None:
        if _is_user_file(f.f_code.co_filename, torch_dir):
            return f
        f = f.f_back
    return None


def _is_user_file(file: str, torch_dir: str) -> bool:
    """Whether code in ``file`` is the user's, decided once per file: every recorded op walks
    the stack up through torch's frames (an optimizer step, several frames per op)."""
    known = _USER_FILES.get((file, torch_dir))
    if known is None:
        known = not (naming.is_internal(file) or file.startswith("<frozen")
                     or os.path.abspath(file).startswith(torch_dir))
        if len(_USER_FILES) < 4096:
            _USER_FILES[(file, torch_dir)] = known
    return known


_USER_FILES: dict[tuple[str, str], bool] = {}


def _numpy(t: Any, copy: bool = True) -> np.ndarray:
    """A torch tensor's values as NumPy (for summaries only): a copy, kept while the program
    goes on, or (``copy=False``) a view to summarise at once, sparing a large tensor's copy."""
    torch = sys.modules["torch"]
    d = t.detach()
    if d.layout != torch.strided:  # sparse: its values as a dense array
        d = d.to_dense()
    if d.is_complex() or d.dtype in (torch.bfloat16,) or not d.dtype.is_floating_point and \
            d.dtype not in (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8,
                            torch.bool):
        d = d.to(torch.float32) if not d.is_complex() else d.abs()
    arr = d.cpu().numpy()
    return arr.copy() if copy else arr


class TorchSource:
    """Records real PyTorch into a :class:`~gradviz.trace.Trace` (see the module docstring).

    Example:
        >>> import torch, gradviz
        >>> with gradviz.trace() as tr:
        ...     x = torch.ones(2, requires_grad=True)
        ...     (x * x).sum().backward()
        >>> [n.name for n in tr.nodes.values()], tr.runs[0].engine
        (['MulBackward0', 'AccumulateGrad', 'SumBackward0'], 'torch')
    """

    def __init__(self, trace: _rec.Recorder) -> None:
        self.torch = require_torch()
        self.trace = trace
        self._torch_dir = _torch_dir()
        # Autograd nodes cannot be referred to weakly, and their Python objects are made anew
        # once the old one dies: nodes are held (id -> (node, trace id)) while this source lives.
        self._nodes: dict[int, tuple[Any, str]] = {}
        # A parameter's identity -> the module path it is named by (see _enter_scope).
        self._module_paths: dict[str, str] = {}
        # id(leaf) -> id(its AccumulateGrad), to register it anew for a new version of the leaf
        # (NOTE [versions] in model.py; the recorder's _new_leaf_version).
        self._accumulators: dict[int, int] = {}
        self._param_names: dict[int, tuple[Any, str]] = {}  # id -> (parameter, its name)
        self._saved_attr_names: dict[type, list[str]] = {}  # node class -> its _saved_ names
        # NOTE [threads]: what is a thread's own is kept per thread (.paused: inside a backward
        # call or our own code; .scope: its module scopes; .names: id(module) -> qualified name
        # under its outer module); what is shared (the trace, _nodes, _param_names, the calls
        # in flight) is changed only under the trace's lock, the one gradviz's engine records
        # under. Forward ops: a TorchFunctionMode is a thread's own (torch keeps the mode stack
        # per thread), so each thread started inside the block gets one (_thread_started).
        # Backward calls: each runs on the thread that called it, and the hooks of every call
        # through a node shared by several graphs (a parameter's AccumulateGrad) fire for each
        # call that runs it, so a hook records only for the graph task of its own call
        # (_owner).
        self._local = threading.local()
        self._calls: list[_BackwardCall] = []  # begun, not finished (any thread)
        self._tasks: dict[int, _BackwardCall] = {}  # autograd graph task id -> its call
        self._bind_lock = threading.Lock()
        self._handles: list[Any] = []
        self._mode: Any = None
        self._mode_class: Any = None
        self._orig_run: Callable[..., Any] | None = None
        self._thread_hook: Callable[..., Any] | None = None
        self._prev_profile: Callable[..., Any] | None = None
        self.active = False
        self._order_note: str | None = None  # NOTE [order notes]
        self._order_runs = 0

    # -- start / stop -----------------------------------------------------------------------------
    def start(self) -> None:
        """Begin recording: the function mode, the module hooks, the backward wrapper."""
        torch = self.torch
        from torch.overrides import TorchFunctionMode

        src = self

        class _Mode(TorchFunctionMode):
            def __torch_function__(self, func: Any, types: Any, args: Sequence[Any] = (),
                                   kwargs: dict[str, Any] | None = None) -> Any:
                kwargs = kwargs or {}
                out = func(*args, **kwargs)
                if src.active and not src._paused() and func not in src._skip:
                    src._pause(True)
                    try:
                        with src.trace._lock:
                            if src.active:  # (another thread may have ended the block)
                                src._on_op(func, args, kwargs, out)
                    except Exception as exc:  # noqa: BLE001 - never break the user's program
                        src._note(f"an op was not recorded ({func!r}): {exc!r}")
                    finally:
                        src._pause(False)
                return out

        self._skip = {torch.Tensor.backward, torch.autograd.grad, torch.autograd.backward,
                      torch.Tensor.register_hook, torch.Tensor.retain_grad,
                      torch.Tensor.register_post_accumulate_grad_hook}
        mods = torch.nn.modules.module
        self._handles = [mods.register_module_forward_pre_hook(self._module_enter),
                         mods.register_module_forward_hook(self._module_exit, always_call=True)]
        self._orig_run = torch.autograd._engine_run_backward
        self._wrapper = self._run_backward  # one bound method: stop() compares by identity
        torch.autograd._engine_run_backward = self._wrapper
        self._mode_class = _Mode
        self._mode = _Mode()
        self._mode.__enter__()
        self.active = True
        self._prev_profile = threading.getprofile()
        self._thread_hook = self._thread_started  # one bound method: stop() compares by identity
        threading.setprofile(self._thread_hook)

    def _thread_started(self, frame: FrameType, event: str, arg: Any) -> None:
        """A thread started inside the block, before its ``run()``: gets its own mode.

        ``threading.setprofile`` makes this the first profile call of every thread started
        after :meth:`start`; it hands the thread back the profiler that was set before (none,
        usually) and pushes a mode on the thread's empty mode stack, where it stays until the
        thread ends (after :meth:`stop` it passes every call through unrecorded).
        """
        prev = self._prev_profile
        sys.setprofile(prev)
        if self.active:
            try:
                self._mode_class().__enter__()
            except Exception as exc:  # noqa: BLE001 - never break the user's program
                self._note(f"the ops of a thread are not recorded: {exc!r}")
        if prev is not None:
            prev(frame, event, arg)

    def stop(self) -> None:
        """Stop recording and remove everything :meth:`start` installed."""
        if not self.active:
            return
        if threading.getprofile() is self._thread_hook:
            threading.setprofile(self._prev_profile)
        with self.trace._lock:
            self.active = False
            # A call still running in another thread is closed as it stands: what its hooks
            # saw so far, with neither a "done" nor an "error" step.
            for call in list(self._calls):
                self._finish(call, None, cut=True)
        self._mode.__exit__(None, None, None)
        self._mode = None
        for h in self._handles:
            h.remove()
        self._handles = []
        if self.torch.autograd._engine_run_backward is self._wrapper:
            self.torch.autograd._engine_run_backward = self._orig_run
        self._local.scope = []

    def _note(self, text: str) -> None:
        """Say in ``trace.notes`` what could not be recorded (each text once)."""
        text = clip_text(text)  # an exception's repr may be any length (NOTE [text limit])
        if text not in self.trace.notes:
            self.trace.notes.append(text)

    def _note_order(self, run_id: str, derived: list[str], observed: list[str]) -> None:
        """Say in ``trace.notes`` that a run's derived order was not the one PyTorch ran.

        NOTE [order notes]: one note for the whole trace, naming the first run that differed
        and where, and counting the later ones (a training loop of ``nn.LSTM`` differs in every
        run): the note stays one short line however long the loop or large the graph, and
        each such run is marked by its steps (``engine_data: {"order": "observed"}``).
        """
        notes = self.trace.notes
        old = self._order_text()
        if self._order_note is None:
            at = next((i for i, (d, o) in enumerate(zip(derived, observed)) if d != o),
                      min(len(derived), len(observed)))
            number = run_id_number(run_id)  # NOTE [run numbers]
            run = run_id if number is None else f"backward run {number}"
            self._order_note = (
                f"{run}: the order derived from sequence numbers differs from the order "
                f"PyTorch ran (node {at + 1} of the run: derived "
                f"{derived[at] if at < len(derived) else 'none'}, ran "
                f"{observed[at] if at < len(observed) else 'none'}); the steps show the "
                f"observed order")
        else:
            self._order_runs += 1
        if old in notes:  # the trace's note, updated in place
            notes[notes.index(old)] = self._order_text()
        else:
            self._note(self._order_text())

    def _order_text(self) -> str:
        first, n = self._order_note or "", self._order_runs
        return first if n == 0 else f"{first} (also in {n} later run{'s' if n > 1 else ''})"

    def _paused(self) -> bool:
        return getattr(self._local, "paused", False)

    def _pause(self, on: bool) -> None:
        self._local.paused = on

    def _scope(self) -> list[str]:
        """This thread's open module scopes, outermost first."""
        scope = getattr(self._local, "scope", None)
        if scope is None:
            scope = self._local.scope = []
        return scope

    # -- ids -------------------------------------------------------------------------------------
    def tensor_id(self, t: Any, frame: FrameType | None = None) -> str:
        """The trace id of torch tensor ``t``, registering it (and its graph) if new."""
        tr = self.trace
        tid = tr._tids.get(t)
        if tid is not None:
            if frame is not None and tid in tr._unnamed:
                tr._rename(tid, tr._var_name(t, frame) or tid)
            return tid
        tid = tr._tids.new(t, _version(t))
        name = (tr._var_name(t, frame) if frame is not None else None) or tid
        param = self._param_names.pop(id(t), None)
        if param is not None and param[0] is t:  # a module path beats a variable's name
            name = self._module_paths[tid] = param[1]
        grad_fn = None if t.grad_fn is None else self.node_id(t.grad_fn)
        self._add_tensor(tid, t, name, grad_fn, None, None)
        return tid

    def _input_id(self, t: Any, frame: FrameType | None, written: bool) -> str:
        """The id of an op's input ``t``: a new version if something no op event reported
        wrote it since it was recorded (an update through ``.data``, a NumPy view), unless
        this in-place op wrote it (``written``)."""
        tr = self.trace
        ref = tr._tids._ids.get(id(t))
        if written or ref is None or ref() is not t:
            return self.tensor_id(t, frame)
        version = _version(t)
        if version == ref.version:
            return self.tensor_id(t, frame)
        old = ref.ident
        tid = tr._tids.new(t, version)
        identity = tr._add_version(tid, old)
        self._new_leaf_version(t)
        first = tr._tensors.get(identity)
        grad_fn = None if t.grad_fn is None else self.node_id(t.grad_fn)
        self._add_tensor(tid, t, first.name if first is not None else old, grad_fn, None, None,
                         identity, version)
        return tid

    def _new_leaf_version(self, t: Any) -> None:
        """A leaf's AccumulateGrad, alive across an update, is registered anew so that its
        record links the version now current (the recorder's _new_leaf_version)."""
        acc = self._accumulators.pop(id(t), None)
        if acc is not None:
            self._nodes.pop(acc, None)

    def _add_tensor(self, tid: str, t: Any, name: str, grad_fn: str | None, op: str | None,
                    source: SourceLoc | None, identity: str | None = None,
                    version: int = 0) -> None:
        tr = self.trace
        tr._flush()
        tr._tensors[tid] = TensorInfo(
            id=tid, name=name, shape=list(t.shape), dtype=str(t.dtype).replace("torch.", ""),
            requires_grad=bool(t.requires_grad), is_leaf=t.grad_fn is None,
            is_param=isinstance(t, self.torch.nn.Parameter), grad_fn=grad_fn,
            output_nr=int(t.output_nr) if t.grad_fn is not None else 0, op=op, source=source,
            value=self._summary(t),
            grad=None if not (t.is_leaf or t.retains_grad) or t.grad is None
            else self._summary(t.grad), identity=identity, version=version)
        if name == tid:
            tr._unnamed.add(tid)

    def _summary(self, t: Any, mode: str | None = None) -> dict[str, Any]:
        try:
            out = summarize(_numpy(t, copy=False), mode or self.trace.values)
        except Exception:  # noqa: BLE001 - sparse, meta, quantized ...: shape and dtype only
            out = {"shape": list(t.shape)}
        out["dtype"] = str(t.dtype).replace("torch.", "")
        return out

    def known_node(self, fn: Any) -> str | None:
        hit = self._nodes.get(id(fn))
        return hit[1] if hit is not None and hit[0] is fn else None

    def node_id(self, fn: Any) -> str:
        """The trace id of autograd node ``fn``, registering it and the nodes below it."""
        nid = self.known_node(fn)
        if nid is not None:
            return nid
        order, pending, seen = [], [fn], set()
        while pending:  # discovery order, iteratively
            n = pending.pop()
            if id(n) in seen or self.known_node(n) is not None:
                continue
            seen.add(id(n))
            order.append(n)
            pending.extend(nxt for nxt, _ in reversed(n.next_functions) if nxt is not None)
        tr = self.trace
        for n in order:
            self._nodes[id(n)] = (n, f"n{tr._nids.count}")
            tr._nids.count += 1
        tr._flush()
        for n in order:
            info = self._node_info(n)
            tr._nodes[info.id] = info
        return self._nodes[id(fn)][1]

    def _node_info(self, fn: Any) -> NodeInfo:
        name = type(fn).__name__  # fn.name() says "torch::autograd::AccumulateGrad"
        if _is_acc(fn):
            kind = "accumulate_grad"
        elif isinstance(fn, self.torch.autograd.function.BackwardCFunction):
            kind = "custom"
        else:
            kind = "op"
        variable = None
        if kind == "accumulate_grad":
            variable = self.tensor_id(fn.variable)
            self._accumulators[id(fn.variable)] = id(fn)
        nexts = [[None if nxt is None else self.node_id(nxt), int(nr)]
                 for nxt, nr in fn.next_functions]
        try:
            num_outputs = len(fn._input_metadata)
        except (AttributeError, RuntimeError):
            num_outputs = 1
        return NodeInfo(id=self._nodes[id(fn)][1], name=name, kind=kind,
                        sequence_nr=int(fn._sequence_nr()), next_functions=nexts,
                        variable=variable, saved=self._saved(fn), num_outputs=num_outputs)

    def _saved_attrs(self, fn: Any) -> list[str]:
        """``fn``'s ``_saved_<name>`` attributes. A built-in node's are its class's (one
        ``dir`` per node class, not per node); a custom Function's node may have its own."""
        cls = type(fn)
        attrs = self._saved_attr_names.get(cls)
        if attrs is None:
            attrs = [a for a in dir(fn) if a.startswith("_saved_")]
            if not isinstance(fn, self.torch.autograd.function.BackwardCFunction):
                self._saved_attr_names[cls] = attrs
        return attrs

    def _saved(self, fn: Any) -> list[SavedInfo]:
        out = []
        for attr in self._saved_attrs(fn):
            name = attr[len("_saved_"):]
            hook = self._unpack_hook(fn, attr)
            if hook is not None:
                # Reading `_saved_<name>` would run the user's unpack hook (an extra call the
                # program never made): say what holds the value instead.
                out.append(SavedInfo(name=name, value={
                    "const": f"packed by a saved-tensor hook (unpack: {_rec._fn_name(hook)})"}))
                continue
            try:
                v = getattr(fn, attr)
            except RuntimeError:  # already freed (retain_graph=False)
                continue
            if isinstance(v, self.torch.Tensor):
                tid = self.trace._tids.get(v)
                if tid is None and v.grad_fn is not fn and (
                        v.dim() or v.requires_grad or v.grad_fn is not None):
                    # An input comes back as itself: one id for it, whoever saves it (NOTE
                    # [memory] in replay.py counts it once), as gradviz's recorder does. A 0-d
                    # constant (the 2 of ``x * 2``, which torch wraps in a tensor) stays a value,
                    # as gradviz records it.
                    tid = self.tensor_id(v)
                if tid is not None:
                    out.append(SavedInfo(name=name, tensor=tid,
                                         value=self._summary(v, "none")))
                else:  # a saved output comes back as a new tensor object
                    out.append(SavedInfo(name=name, is_output=v.grad_fn is fn,
                                         value=self._summary(v)))
            elif isinstance(v, (list, tuple)) and any(isinstance(x, self.torch.Tensor)
                                                      for x in v):
                out.append(SavedInfo(name=name, value={"const": [
                    f"tensor{list(x.shape)}" if isinstance(x, self.torch.Tensor) else
                    _rec._jsonable(x) for x in v]}))
            else:
                out.append(SavedInfo(name=name, value={"const": _rec._jsonable(v)}))
        return out

    @staticmethod
    def _unpack_hook(fn: Any, attr: str) -> Any:
        """The unpack hook of a saved tensor, read from its ``_raw_saved_<name>`` handle without
        unpacking it; None when the value is stored plainly (or is not a single tensor)."""
        try:
            raw = getattr(fn, "_raw" + attr, None)
            return None if raw is None else raw.unpack_hook
        except RuntimeError:  # freed
            return None

    def _forget_pruned(self) -> None:
        """Let go of the nodes ``keep_runs`` dropped from the trace (memory stays bounded).

        The nodes of a call still running in another thread stay: its root tensors are alive,
        and the trace keeps the graph below a live tensor (its GraphRoot, which no tensor
        leads to, is added when the run is)."""
        kept = self.trace._nodes
        self._nodes = {k: v for k, v in self._nodes.items() if v[1] in kept}

    # -- forward ---------------------------------------------------------------------------------
    def _frame(self) -> FrameType | None:
        return _user_frame(sys._getframe(2), self._torch_dir)

    def _module_enter(self, module: Any, args: Any) -> None:
        if self._paused() or not self.active:
            return
        scope = self._scope()
        depth = len(scope)
        try:
            with self.trace._lock:
                self._enter_scope(module, scope, args)
        except Exception as exc:  # noqa: BLE001 - never break the user's program
            self._note(f"a module scope was not recorded: {exc!r}")
            del scope[depth:]
            scope.append(type(module).__name__)  # the exit hook pops one

    def _enter_scope(self, module: Any, scope: list[str], args: Any) -> None:
        if not scope:  # an outer module: name its submodules by their qualified names
            self._local.names = {id(m): q for q, m in module.named_modules() if q}
            # and its parameters ("0.weight"): a module path beats any other name (``tensor``
            # of the init helper it was first seen in), and the path from the outermost
            # module beats a shorter one (``weight`` of a Linear called on its own first).
            tr = self.trace
            for q, p in module.named_parameters():
                tid = tr._tids.get(p)
                if tid is None:
                    known = self._param_names.get(id(p))
                    if known is None or known[0] is not p or _depth(known[1]) < _depth(q):
                        self._param_names[id(p)] = (p, q)
                    continue
                identity = tr._identity.get(tid, tid)
                given = self._module_paths.get(identity)
                if given is None or _depth(given) < _depth(q):
                    self._module_paths[identity] = q
                    tr._rename(tid, q)  # every version of it (NOTE [versions])
            name = type(module).__name__
        else:
            name = getattr(self._local, "names", {}).get(id(module), type(module).__name__)
        scope.append(name)
        summary = _rec.module_seen(self.trace, scope_key(scope), module)
        summary.calls += 1
        summary.inputs = tensor_shapes(args, is_torch_tensor, depth=3)  # args: a tuple

    def _module_exit(self, module: Any, args: Any, output: Any) -> None:
        scope = self._scope()
        if not self._paused() and scope:
            try:
                with self.trace._lock:
                    summary = self.trace.modules.get(scope_key(scope))
                    if summary is not None:
                        summary.outputs = tensor_shapes(output, is_torch_tensor)
            except Exception as exc:  # noqa: BLE001 - never break the user's program
                self._note(f"a module's outputs were not recorded: {exc!r}")
            scope.pop()

    def _on_op(self, func: Any, args: Sequence[Any], kwargs: dict[str, Any], out: Any) -> None:
        torch = self.torch
        outs = [t for t in _flat(out) if isinstance(t, torch.Tensor)]
        name = getattr(func, "__name__", None) or str(func)
        if not outs or name in ("__get__", "__set__"):
            return
        frame = self._frame()
        source = _rec._source(frame)
        # F.relu(x, inplace=True) writes x as relu_ does: a new version of it, with its node.
        inplace = ((name.endswith("_") and not name.startswith("_")) or name.startswith("__i")
                   or kwargs.get("inplace") is True)
        inputs: list[Any] = []
        for a in args:
            for x in (a if isinstance(a, (list, tuple)) and any(
                    isinstance(y, torch.Tensor) for y in a) else [a]):
                inputs.append(self._input_id(x, frame, inplace and x is outs[0])
                              if isinstance(x, torch.Tensor) else {"const": _rec._jsonable(x)})
        kw = {k: ({"tensor": self._input_id(v, frame, False)} if isinstance(v, torch.Tensor)
                  else _rec._jsonable(v)) for k, v in kwargs.items()}
        op_name = name.strip("_") if name.startswith("__") else name
        if op_name.startswith("r") and name.startswith("__r") and op_name[1:] in (
                "add", "mul", "truediv", "sub", "matmul", "pow"):
            op_name = op_name[1:]
        if inplace and name.startswith("__i"):
            op_name = op_name[1:] + "_"
        tr = self.trace
        op_id = f"op{tr._op_count}"
        tr._op_count += 1
        known = set(self._nodes)
        node = None
        outputs = []
        no_grad = not torch.is_grad_enabled() or torch.is_inference_mode_enabled()
        for t in outs:
            old = tr._tids.get(t)
            if old is not None and not inplace:  # returned an input as it is (.to, .contiguous)
                outputs.append(old)
                continue
            version = _version(t)
            tid = tr._tids.new(t, version)
            oname, identity = tid, None
            if old is not None:  # a new version (NOTE [versions] in model.py)
                identity = tr._add_version(tid, old)
                self._new_leaf_version(t)
                first = tr._tensors.get(identity)
                oname = first.name if first is not None else (tr._tensor_name(old) or old)
                if t.grad_fn is not None:  # written inside the graph: the version matters
                    oname = versioned(oname, version)
            gid = None
            if t.grad_fn is not None:
                new = id(t.grad_fn) not in known or self.known_node(t.grad_fn) is None
                gid = self.node_id(t.grad_fn)
                if new and node is None:
                    node = gid
            self._add_tensor(tid, t, oname, gid, op_id, source, identity, version)
            outputs.append(tid)
        tr._flush()
        tr._ops.append(OpRecord(id=op_id, name=op_name, inputs=inputs, outputs=outputs,
                                node=node, kwargs=kw, inplace=inplace, scope=list(self._scope()),
                                source=source, segment=tr.runs_total,
                                no_grad=node is None and no_grad))
        if node is not None:
            tr._nodes[node].forward_op = op_id

    # -- backward --------------------------------------------------------------------------------
    def _run_backward(self, t_outputs: Sequence[Any], *args: Any, **kwargs: Any) -> Any:
        orig = self._orig_run
        assert orig is not None
        if self._paused() or not self.active:  # a backward inside a hook: not recorded
            return orig(t_outputs, *args, **kwargs)
        self._pause(True)
        try:
            with self.trace._lock:
                if not self.active:  # the block ended in another thread
                    raise _Untraced
                call = _BackwardCall(self, t_outputs, args, kwargs)
                self._calls.append(call)
        except Exception as exc:  # our bookkeeping failed: run untraced, and say so
            if not isinstance(exc, _Untraced):
                self._note(f"a backward call was not traced: {exc!r}")
            self._pause(False)
            return orig(t_outputs, *args, **kwargs)
        try:
            with call:
                result = orig(t_outputs, *args, **kwargs)
        except BaseException as exc:
            self._finish(call, exc)
            raise
        finally:
            self._pause(False)
        self._finish(call, None)
        return result

    def _finish(self, call: _BackwardCall, error: BaseException | None,
                cut: bool = False) -> None:
        """Build the run's steps (once: :meth:`stop` may have closed it already); a failure
        here is noted, never raised into the program."""
        paused = self._paused()
        self._pause(True)
        try:
            with self.trace._lock:
                if call in self._calls:
                    self._calls.remove(call)
                    with self._bind_lock:
                        self._tasks.pop(call.task, None)
                    call.finish(error, cut)
        except Exception as exc:  # noqa: BLE001 - the user's program must go on as untraced
            self._note(f"a backward call could not be recorded: {exc!r}")
        finally:
            self._pause(paused)

    def _owner(self, node_key: int) -> _BackwardCall | None:
        """The call whose graph task is running the node ``id() == node_key`` (in its hook).

        A graph task not seen before is a call's own once its first node runs: the node of
        one of the call's roots, on the call's thread (on a device thread, if no other call
        waits for that root). A backward run inside a hook is a task of its own: no call's."""
        task = self.torch._C._current_graph_task_id()
        owner = self._tasks.get(task)
        if owner is not None:
            return owner
        with self._bind_lock:
            owner = self._tasks.get(task)
            if owner is None:
                waiting = [c for c in tuple(self._calls)
                           if c.task is None and node_key in c.first]
                here = [c for c in waiting if c.thread == threading.get_ident()]
                if here or len(waiting) == 1:
                    owner = (here or waiting)[0]
                    owner.task = task
                    self._tasks[task] = owner
        return owner


class _Untraced(Exception):
    """A backward call that is not to be recorded (the trace ended)."""


def _depth(path: str) -> int:
    """How many modules deep a qualified name is (``0.weight``: 1)."""
    return path.count(".")


def _version(t: Any) -> int:
    """``t._version``, or 0 for an inference tensor (which tracks none)."""
    try:
        return int(t._version)
    except RuntimeError:
        return 0


def _is_acc(fn: Any) -> bool:
    return type(fn).__name__ == "AccumulateGrad"


def _flat(x: Any) -> list[Any]:
    out, stack = [], [x]
    while stack:
        v = stack.pop()
        if isinstance(v, (list, tuple)):
            stack.extend(reversed(v))
        else:
            out.append(v)
    return out


_AUTO_NAME = re.compile(r"t\d+( \(v\d+\))?$")  # a tensor named by its id (a new version)


class _BackwardCall:
    """One ``_engine_run_backward`` call: its hooks, what they saw, and the steps built from it."""

    def __init__(self, src: TorchSource, t_outputs: Sequence[Any], args: tuple[Any, ...],
                 kwargs: dict[str, Any]) -> None:
        torch = src.torch
        self.src = src
        tr = src.trace
        get_edge = torch.autograd.graph.get_gradient_edge
        names = ("grad_tensors", "retain_graph", "create_graph", "inputs", "allow_unused")
        a = dict(zip(names, args))
        a.update(kwargs)
        self.retain_graph = bool(a.get("retain_graph"))
        self.create_graph = bool(a.get("create_graph"))
        self.accumulate = bool(a.get("accumulate_grad", True))
        frame = src._frame()
        self.frame = frame
        roots, root_edges = [], []
        for t in t_outputs:
            node, nr = (t.node, t.output_nr) if not isinstance(t, torch.Tensor) else \
                tuple(get_edge(t))[:2]
            if isinstance(t, torch.Tensor):
                roots.append(src.tensor_id(t, frame))
            root_edges.append((node, int(nr)))
        if len(roots) == 1 == len(t_outputs) and frame is not None and roots[0] in tr._unnamed:
            # outputs.loss.backward(): the root is named by that expression (NOTE [root names]
            # in naming.py)
            name = naming.backward_receiver(frame, t_outputs[0])
            if name:
                tr._rename(roots[0], name)
        self.inputs = list(a.get("inputs") or ())
        input_edges = [tuple(get_edge(i))[:2] if isinstance(i, torch.Tensor)
                       else (i.node, i.output_nr) for i in self.inputs]
        self.root_edges = root_edges
        self.first = {id(n) for n, _ in root_edges if n is not None}  # what runs first
        self.thread = threading.get_ident()
        self.task: int | None = None  # its autograd graph task, known when its first node runs
        self.grad_roots = list(a.get("grad_tensors") or ())
        # The graph: every node reachable from the roots, registered.
        reach: list[Any] = []
        seen: set[int] = set()
        stack = [n for n, _ in root_edges]
        while stack:
            n = stack.pop()
            if n is None or id(n) in seen:
                continue
            seen.add(id(n))
            reach.append(n)
            stack.extend(nxt for nxt, _ in n.next_functions if nxt is not None)
        self.reach = reach
        self.ids = {id(n): src.node_id(n) for n in reach}
        self.by_id = {self.ids[id(n)]: n for n in reach}
        # Dependencies: edges into each node from reachable nodes (the engine's count).
        deps: dict[str, int] = {}
        for n in reach:
            for nxt, _ in n.next_functions:
                if nxt is not None:
                    k = self.ids[id(nxt)]
                    deps[k] = deps.get(k, 0) + 1
        self.deps = deps
        # What the engine will execute (exec_info): all, or what leads to an input.
        self.should_run = set(self.ids.values())
        self.needed = set(self.ids.values())
        if input_edges:
            targets = {self.ids[id(n)] for n, _ in input_edges if id(n) in self.ids}
            lead: set[str] = set(targets) if self.accumulate else set()
            captured = set() if self.accumulate else set(targets)
            changed = True
            while changed:  # to a fixed point; no recursion
                changed = False
                for n in reach:
                    k = self.ids[id(n)]
                    if k in lead:
                        continue
                    if any(nxt is not None and self.ids[id(nxt)] in lead | captured
                           for nxt, _ in n.next_functions):
                        lead.add(k)
                        changed = True
            self.needed = lead
            self.should_run = lead | captured
        # Multiple roots: PyTorch starts at an internal GraphRoot (no hooks reach it), added
        # to the trace when the run is (nothing of the trace refers to it before).
        self.graph_root: str | None = None
        self.multi_root = len(root_edges) != 1
        self.start = None if self.multi_root else self.ids.get(id(root_edges[0][0]))
        if self.multi_root:
            for n, _ in root_edges:  # the engine counts GraphRoot's edges too
                k = self.ids[id(n)]
                deps[k] = deps.get(k, 0) + 1
        self.roots = roots
        self.events: list[tuple[str, str, Any]] = []
        self.handles: list[Any] = []
        # Run ids in the order calls begin (runs are listed in the order they finish).
        self.run_id = f"run{tr._runs_begun}"
        tr._runs_begun += 1

    def _add_graph_root(self) -> None:
        tr = self.src.trace
        gid = f"n{tr._nids.count}"
        tr._nids.count += 1
        tr._flush()
        seq = max((n._sequence_nr() for n in self.reach if not _is_acc(n)), default=-1) + 1
        tr._nodes[gid] = NodeInfo(id=gid, name="GraphRoot", kind="graph_root",
                                  sequence_nr=seq, num_outputs=0,
                                  next_functions=[[self.ids.get(id(n)), nr]
                                                  for n, nr in self.root_edges])
        self.graph_root = self.start = gid

    # NOTE [torch gradients: summarised as seen] A hook's gradients are summarised while the
    # hook runs, from a view of torch's memory: nothing is copied, and nothing is kept past the
    # hook (copies of every gradient of a large model's run, held to the run's end, doubled
    # its peak memory and were most of the tracer's cost in backward). What a step shows of an
    # input buffer is the sum so far of the gradients sent into that slot, so the slots that
    # more than one edge feeds keep their own running sum, in torch, as the engine does (its
    # own buffer may be added to in place, so it is not ours to read later).
    def _summ(self, t: Any) -> dict[str, Any] | None:
        if t is None:
            return None
        return summarize(_numpy(t, copy=False), self.src.trace.values)

    def _summ_sent(self, t: Any) -> dict[str, Any] | None:
        """A gradient a node sent, summarised, and remembered for its receiver's pre-hook."""
        out = self._summ(t)
        if out is not None and not t.is_inference():  # (an inference tensor has no version)
            self.sent_summaries[id(t)] = (weakref.ref(t), t._version, out)
        return out

    def _summ_received(self, t: Any) -> dict[str, Any] | None:
        """A gradient a node received: the sender's summary when it is the very tensor the
        sender sent, unchanged since (same object, same version: a tensor hook that returned
        another tensor or wrote into it makes it summarised again)."""
        if t is None:
            return None
        seen = self.sent_summaries.pop(id(t), None)
        if seen is not None and seen[0]() is t and seen[1] == t._version:
            return seen[2]
        return self._summ(t)

    def _sent(self, nid: str, grads: Sequence[Any], summaries: list[Any]
              ) -> list[tuple[Any, Any] | None]:
        """What ``nid`` sends along each edge, as the steps show it: the gradient's summary
        (``summaries``, of ``grads``) and the receiving slot's summary after adding it (None:
        not sent to a node that runs)."""
        out: list[tuple[Any, Any] | None] = []
        sums = self.sums
        for i, (j, nr) in enumerate(self.src.trace._nodes[nid].next_functions):
            if j is None or j not in self.should_run:
                out.append(None)
                continue
            g, gs = (grads[i], summaries[i]) if i < len(grads) else (None, None)
            out.append(self._add_to_slot((j, nr), g, sums, gs))
        return out

    def _add_to_slot(self, slot: tuple[str, int], g: Any, sums: dict,
                     gs: dict[str, Any] | None) -> tuple[Any, Any]:
        """The summaries of ``g`` (``gs``) and of ``slot`` once ``g`` is added to it."""
        if slot not in self.shared_slots:  # one edge feeds it: the slot holds just g
            return gs, gs
        if self.src.trace.values == "none":  # shape and dtype only: no sum to keep
            if gs is not None:
                sums[slot] = gs
            return gs, sums.get(slot)
        if g is not None:
            old = sums.get(slot)
            d = g.detach()
            sums[slot] = d.clone() if old is None else old.add_(d)
        return gs, self._summ(sums.get(slot))

    def __enter__(self) -> _BackwardCall:
        src = self.src
        torch = src.torch
        events = self.events
        owner = src._owner

        def add(nid: str, fn: Any) -> None:
            # Our hooks return None (the gradients go on unchanged) and never raise into the
            # engine: what they cannot copy is noted, and the step shows no value. They record
            # only when this call runs the node (NOTE [threads]).
            key = id(fn)

            def pre(grad_outputs: Sequence[Any]) -> None:
                if owner(key) is not self:
                    return
                try:
                    before = None
                    if nid in leaf_of:
                        g = leaf_of[nid].grad
                        before = self._summ(g)
                    events.append(("pre", nid, ([self._summ_received(g) for g in grad_outputs],
                                                before)))
                except Exception as exc:  # noqa: BLE001
                    src._note(f"a gradient at {nid} was not recorded: {exc!r}")
                    events.append(("pre", nid, ([], None)))

            def post(grad_inputs: Sequence[Any], grad_outputs: Sequence[Any]) -> None:
                if owner(key) is not self:
                    return
                try:
                    shown = [self._summ_sent(g) for g in grad_inputs]
                    events.append(("post", nid, (shown, self._sent(nid, grad_inputs, shown))))
                except Exception as exc:  # noqa: BLE001
                    src._note(f"a gradient from {nid} was not recorded: {exc!r}")
                    events.append(("post", nid, ([None] * len(grad_inputs), [])))

            self.handles.append(fn.register_prehook(pre))
            self.handles.append(fn.register_hook(post))

        # The input slots more than one edge feeds (NOTE [torch gradients: summarised as seen]);
        # with several roots, GraphRoot's sends come first, before any hook runs.
        fed: dict[tuple[str, int], int] = {}
        for n in self.reach:
            for nxt, nr in n.next_functions:
                if nxt is not None:
                    slot = (self.ids[id(nxt)], int(nr))
                    fed[slot] = fed.get(slot, 0) + 1
        root_slots = [(self.ids.get(id(n)), int(nr)) for n, nr in self.root_edges]
        if self.multi_root:
            for slot in root_slots:
                fed[slot] = fed.get(slot, 0) + 1
        self.shared_slots = {slot for slot, k in fed.items() if k > 1}
        self.sums: dict[tuple[str, int], Any] = {}
        self.sent_summaries: dict[int, tuple[Any, int, dict[str, Any]]] = {}
        self.root_sent = [None if j is None or j not in self.should_run
                          else self._add_to_slot((j, nr), g, self.sums, self._summ(g))
                          for (j, nr), g in zip(root_slots, self._root_grads())] \
            if self.multi_root else []
        leaf_of: dict[str, Any] = {}
        # One call at a time: a node's first hook is added to it (torch makes its hook
        # list then) before any traced call can be running it.
        with src.trace._lock:
            for n in self.reach:
                nid = self.ids[id(n)]
                if _is_acc(n):
                    leaf_of[nid] = n.variable
                    var = n.variable

                    def acc(t: Any, nid: str = nid, key: int = id(n)) -> None:
                        if owner(key) is not self:
                            return
                        try:
                            events.append(("acc", nid, self._summ(t.grad)))
                        except Exception as exc:  # noqa: BLE001
                            src._note(f"a .grad at {nid} was not recorded: {exc!r}")

                    if isinstance(var, torch.Tensor) and var.requires_grad:
                        self.handles.append(var.register_post_accumulate_grad_hook(acc))
                add(nid, n)
        self.leaf_of = leaf_of
        return self

    def __exit__(self, *exc: object) -> None:
        for h in self.handles:
            h.remove()
        self.handles = []
        self.sums = {}  # the running sums are summarised already: let them go
        self.sent_summaries = {}

    def _root_grads(self) -> list[Any]:
        """The gradient each root starts with (torch's default: ones for a scalar root)."""
        grads = list(self.grad_roots)
        return grads + [None] * (len(self.root_edges) - len(grads))

    # -- steps -----------------------------------------------------------------------------------
    def _priority(self, nid: str) -> int:
        seq = self.src.trace._nodes[nid].sequence_nr
        return -seq

    def derived_order(self) -> list[str]:
        """The nodes the engine runs, in order, from the graph and sequence numbers alone."""
        deps = dict(self.deps)
        queue: list[tuple[int, int, str]] = []
        count = 0
        order: list[str] = []
        if self.multi_root:
            first = [(self.ids[id(n)]) for n, _ in self.root_edges if id(n) in self.ids]
            for k in first:
                deps[k] -= 1
                if deps[k] == 0 and k in self.should_run:
                    heappush(queue, (self._priority(k), count, k))
                    count += 1
        elif self.start is not None:
            heappush(queue, (self._priority(self.start), 0, self.start))
        while queue:
            _, _, k = heappop(queue)
            if k not in self.needed:
                continue  # captured only: popped, not run
            order.append(k)
            for nxt, _ in self.by_id[k].next_functions:
                if nxt is None:
                    continue
                j = self.ids[id(nxt)]
                deps[j] -= 1
                if deps[j] == 0 and j in self.should_run:
                    count += 1
                    heappush(queue, (self._priority(j), count, j))
        return order

    def finish(self, error: BaseException | None, cut: bool = False) -> None:
        """The run's record, from what the hooks saw; ``cut``: the trace ended while it ran,
        so it stops where it stood (no "done" step)."""
        src, tr = self.src, self.src.trace
        if self.multi_root:
            self._add_graph_root()
        events = list(self.events)  # (a cut run's hooks may still be adding)
        observed = [nid for kind, nid, _ in events if kind == "pre"]
        derived = self.derived_order()
        agree = observed == derived or ((error is not None or cut)
                                        and derived[:len(observed)] == observed)
        run_id = self.run_id
        if not agree:
            src._note_order(run_id, derived, observed)
        position = {nid: i for i, nid in enumerate(observed)}

        def prio(nid: str) -> int:
            return self._priority(nid) if agree else position.get(nid, len(position))

        steps: list[Step] = []

        def step(kind: str, node: str | None, **kw: Any) -> None:
            steps.append(make_step(kind, len(steps), node, **kw))

        step("compute_dependencies", None, counts=dict(self.deps),
             **({} if agree else {"engine_data": {"order": "observed"}}))
        remaining = dict(self.deps)

        def send(src_id: str, fn_edges: list[list[Any]], sent: list[Any]) -> None:
            """The steps of ``src_id``'s sends, summarised when they happened (``sent``)."""
            for i, (j, nr) in enumerate(fn_edges):
                if j is None:
                    continue
                remaining[j] = remaining.get(j, 1) - 1
                if j not in self.should_run:
                    continue
                grad, buffer = sent[i] if i < len(sent) and sent[i] is not None else (None, None)
                step("accumulate", j, input_nr=nr, source=src_id, grad=grad, buffer=buffer,
                     remaining=remaining[j])
                if remaining[j] == 0:
                    step("enqueue", j, priority=prio(j))

        if self.graph_root is not None:
            gr = tr._nodes[self.graph_root]
            step("enqueue", self.graph_root, priority=self._priority(self.graph_root))
            step("execute", self.graph_root, grad_outputs=[],
                 grad_inputs=[self._summ(g) for g in self.grad_roots])
            send(self.graph_root, gr.next_functions, self.root_sent)
        elif self.start is not None:
            step("enqueue", self.start, priority=prio(self.start))
        pending: dict[str, Any] = {}
        leaf_before: dict[str, Any] = {}
        leaf_after: dict[str, Any] = {}
        for kind, nid, data in events:
            if kind == "pre":
                grads, before = data
                pending[nid] = grads
                leaf_before[nid] = before
            elif kind == "post":
                grads_out, sent = data
                step("execute", nid, grad_outputs=pending.pop(nid, []), grad_inputs=grads_out)
                if nid in self.leaf_of:  # its .grad was written inside it (the "acc" event)
                    if nid in leaf_after:
                        tid = src.tensor_id(self.leaf_of[nid])
                        after = leaf_after.pop(nid)
                        step("leaf_grad", nid, tensor=tid, before=leaf_before.get(nid),
                             after=after)
                        info = tr._tensors.get(tid)
                        if info is not None:
                            info.grad = after
                else:
                    self._after_execute(nid, step)
                    send(nid, tr._nodes[nid].next_functions, sent)
            elif kind == "acc":
                leaf_after[nid] = data
        error_info = None
        if error is not None:  # the node that was running when it failed (pre-hook, no post)
            failed = None
            for nid, grads_in in pending.items():
                failed = nid
                step("execute", nid, grad_outputs=grads_in, grad_inputs=[])
            error_info = {"type": type(error).__name__, "message": clip_text(str(error))}
            step("error", failed, **error_info)
        elif not cut:
            step("done", None)
        run = BackwardRun(
            id=run_id, engine=ENGINE, kind="backward" if self.accumulate else "grad",
            roots=self.roots,
            root_edges=[[self.ids.get(id(n)), nr] for n, nr in self.root_edges],
            nodes=([self.graph_root] if self.graph_root else []) + list(self.by_id),
            graph_root=self.start, dependencies=dict(self.deps), steps=steps,
            retain_graph=self.retain_graph, create_graph=self.create_graph,
            inputs=[src.tensor_id(i, self.frame) for i in self.inputs
                    if isinstance(i, src.torch.Tensor)],
            error=error_info, source=_rec._source(self.frame))
        tr._flush()
        tr._run_segments[run_id] = tr.runs_total
        tr._runs.append(run)
        tr.runs_total += 1
        # The trace's policy for long loops (run_log, keep_runs, at most DETAILED_RUNS in full):
        # the model is built already here, so runs are bounded, not folded.
        tr._after_run(run, len(steps))
        src._forget_pruned()

    def _after_execute(self, nid: str, step: Callable[..., None]) -> None:
        if self.retain_graph:
            return
        info = self.src.trace._nodes[nid]
        if freed_names(info.saved):
            step("release_saved", nid, saved=freed_names(info.saved))


def record_torch(values: str = "small", name: str | None = None) -> _rec.Recorder:
    """A trace that records torch inside its ``with`` block: ``gradviz.trace(torch=True)``.

    Example:
        >>> import torch
        >>> with record_torch() as tr:
        ...     (torch.ones(2, requires_grad=True) * 3).sum().backward()
        >>> [s.kind for s in tr.steps()][:3]
        ['compute_dependencies', 'enqueue', 'execute']
    """
    return _rec.Recorder(values=values, name=name, torch=True)


def torch_graph_of(*tensors: Any, values: str = "none") -> BackwardGraph:
    """The backward graph of torch tensors, as ``graph_of`` gives it for gradviz tensors.

    Example:
        >>> import torch
        >>> x = torch.ones(2, requires_grad=True)
        >>> sorted(n.name for n in torch_graph_of((x * 2).sum()).nodes.values())
        ['AccumulateGrad', 'MulBackward0', 'SumBackward0']
    """
    tr = _rec.Recorder(values=values)
    src = TorchSource(tr)
    frame = _user_frame(sys._getframe(1), src._torch_dir)
    roots = []
    for t in tensors:
        if not is_torch_tensor(t):
            raise TypeError(f"graph_of() takes tensors, got {type(t).__name__}")
        tid = src.tensor_id(t, frame)
        if t.grad_fn is not None:
            roots.append([tr.tensors[tid].grad_fn, int(t.output_nr)])
    if frame is not None:
        tr._name_from_frame(frame)
    return BackwardGraph(nodes=dict(tr.nodes), roots=roots, tensors=dict(tr.tensors))
