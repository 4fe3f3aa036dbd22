"""Recording real PyTorch into a gradviz ``Trace``: the seam between the CLI and the torch source.

NOTE [torch source seam]: the torch source of the tracer (issue #17: forward ops through
``TorchFunctionMode``, the ``grad_fn`` graph, the real engine's steps through temporary node
hooks) is built in the trace layer by another branch. The CLI reaches it through ONE function,
:func:`torch_recording`; connect it there. Until then :func:`torch_recording` uses the small
interim recorder below (:class:`_InterimTorchRecorder`), which records, for each
``backward()`` / ``autograd.grad()`` call, what ``gradviz compare`` needs and nothing more: the
backward graph (PyTorch's node names, ``next_functions``, ``_saved_*`` values, AccumulateGrad and
its leaf), the nodes in the order the real engine ran them with the gradients entering and
leaving each (node post-hooks, attached for the call and removed after), each leaf's ``.grad``
before and after, and the error of a failed call. It records no forward ops.

Only the public torch API is used, and nothing of the user's program changes: the hooks return
None (they observe), and ``torch.autograd.backward`` / ``torch.autograd.grad`` are wrapped for
the run and put back after.
"""

from __future__ import annotations

import contextlib
import os
import sys
import weakref
from collections.abc import Iterator
from typing import Any

from gradviz.trace import Trace
from gradviz.trace.model import (
    BackwardRun,
    ComputeDependenciesStep,
    DoneStep,
    ErrorStep,
    ExecuteStep,
    LeafGradStep,
    NodeInfo,
    SavedInfo,
    Step,
    TensorInfo,
    summarize,
)


@contextlib.contextmanager
def torch_recording(values: str = "small", keep_runs: int | None = None,
                    name: str | None = None, keep_run: int | None = None) -> Iterator[Trace]:
    """Record the real PyTorch code run inside into a :class:`~gradviz.trace.Trace`.

    ADAPTER (NOTE [torch source seam]): the one place the CLI reaches the torch source. When
    the trace layer has its torch source (``gradviz/trace/torch_source.py``, branch
    ``torchtrace``), this is ``gradviz.trace(torch=True)``; until it is merged, the interim
    recorder below. Once merged, the interim recorder can be deleted.

    Example:
        >>> import torch  # doctest: +SKIP
        >>> with torch_recording() as tr:  # doctest: +SKIP
        ...     x = torch.ones(2, requires_grad=True)
        ...     (x * 3).sum().backward()
        >>> [n.name for n in tr.nodes.values()]  # doctest: +SKIP
        ['SumBackward0', 'MulBackward0', 'AccumulateGrad']
    """
    import importlib.util

    if importlib.util.find_spec("gradviz.trace.torch_source") is not None:
        # The trace layer's torch source: gradviz.trace(torch=True) records torch alone.
        import gradviz

        with gradviz.trace(values=values, keep_runs=keep_runs, name=name,  # type: ignore[call-arg]
                           keep_run=keep_run, torch=True) as tr:
            yield tr
        return
    # The interim recorder keeps the last ``keep_runs`` runs, or all (no folding policy).
    recorder = _InterimTorchRecorder(values, keep_runs, name)
    with recorder:
        yield recorder.trace


_HERE = os.path.dirname(os.path.abspath(__file__))


class _InterimTorchRecorder:
    """Wraps ``torch.autograd.backward`` and ``torch.autograd.grad`` while inside."""

    def __init__(self, values: str, keep_runs: int | None, name: str | None) -> None:
        import torch

        self.torch = torch
        self.trace = Trace(values=values, keep_runs=keep_runs, name=name)
        self.trace.notes.append(f"recorded from real PyTorch {torch.__version__} (torch)")
        self.values = values
        self.keep_runs = keep_runs
        self._tensors: dict[int, tuple[weakref.ref, str]] = {}  # id(tensor) -> (ref, tid)
        self._node_ids: dict[int, tuple[Any, str]] = {}  # id(node) -> (node, nid), per run
        self._n_nodes = 0
        self._runs: list[BackwardRun] = []
        self._total = 0
        self._saved: dict[str, Any] = {}
        self._before: dict[str, Any] = {}  # each leaf's .grad before the current call

    # -- the wrapped entry points --------------------------------------------------------------
    def __enter__(self) -> _InterimTorchRecorder:
        autograd = self.torch.autograd
        self._saved = {"backward": autograd.backward, "grad": autograd.grad}
        original_backward, original_grad = autograd.backward, autograd.grad

        def backward(tensors: Any, grad_tensors: Any = None, retain_graph: Any = None,
                     create_graph: bool = False, grad_variables: Any = None,
                     inputs: Any = None) -> Any:
            return self._record("backward", tensors, inputs, retain_graph, create_graph,
                                lambda: original_backward(tensors, grad_tensors, retain_graph,
                                                          create_graph, grad_variables,
                                                          inputs=inputs))

        def grad(outputs: Any, inputs: Any, *args: Any, **kwargs: Any) -> Any:
            return self._record("grad", outputs, inputs, kwargs.get("retain_graph"),
                                bool(kwargs.get("create_graph", False)),
                                lambda: original_grad(outputs, inputs, *args, **kwargs))

        backward.__doc__, grad.__doc__ = original_backward.__doc__, original_grad.__doc__
        autograd.backward, autograd.grad = backward, grad
        return self

    def __exit__(self, *exc: object) -> None:
        autograd = self.torch.autograd
        autograd.backward, autograd.grad = self._saved["backward"], self._saved["grad"]
        self.trace.runs = self._runs
        self.trace.runs_total = self._total

    # -- one call -------------------------------------------------------------------------------
    def _record(self, kind: str, roots: Any, inputs: Any, retain_graph: Any,
                create_graph: bool, call: Any) -> Any:
        torch = self.torch
        roots_list = [roots] if isinstance(roots, torch.Tensor) else list(roots)
        frame = _user_frame()
        # engine "pytorch": the schema's name for PyTorch's engine algorithm; the trace's notes
        # say that real torch ran it.
        run = BackwardRun(id=f"run{self._total}", engine="pytorch", kind=kind,
                          roots=[self._tensor(t, frame) for t in roots_list],
                          retain_graph=bool(retain_graph if retain_graph is not None
                                            else create_graph),
                          create_graph=create_graph)
        if inputs is not None:
            ins = [inputs] if isinstance(inputs, torch.Tensor) else list(inputs)
            run.inputs = [self._tensor(t, frame) for t in ins]
        steps: list[Step] = []
        handles = []
        self._node_ids = {}
        try:
            order = self._graph(roots_list, run, frame)
            counts: dict[str, int] = {}
            for nid in order:
                for nxt, _ in self.trace.nodes[nid].next_functions:
                    if nxt is not None:
                        counts[nxt] = counts.get(nxt, 0) + 1
            run.dependencies = counts
            steps.append(ComputeDependenciesStep(index=0, counts=dict(counts)))
            running: list[str | None] = [None]  # the node between its pre- and post-hook
            for node, nid in self._node_ids.values():
                handles.append(node.register_prehook(self._pre_hook(nid, running)))
                handles.append(node.register_hook(self._post_hook(nid, steps, running)))
            self._before = {nid: self._grad_of(node) for node, nid in self._node_ids.values()
                            if self.trace.nodes[nid].kind == "accumulate_grad"}
            try:
                return call()
            except BaseException as e:
                # The node that failed: its pre-hook ran, its post-hook never did.
                steps.append(ErrorStep(index=len(steps), node=running[0],
                                       type=type(e).__name__, message=str(e)))
                run.error = {"type": type(e).__name__, "message": str(e)}
                raise
        finally:
            for h in handles:
                h.remove()
            if run.error is None:
                steps.append(DoneStep(index=len(steps)))
            run.steps = steps
            self._node_ids = {}
            self._total += 1
            self._runs.append(run)
            if self.keep_runs is not None:
                del self._runs[:-self.keep_runs]

    @staticmethod
    def _pre_hook(nid: str, running: list[str | None]) -> Any:
        def hook(grad_outputs: Any) -> None:
            running[0] = nid
            return None
        return hook

    def _post_hook(self, nid: str, steps: list[Step], running: list[str | None]) -> Any:
        def hook(grad_inputs: Any, grad_outputs: Any) -> None:
            running[0] = None
            steps.append(ExecuteStep(index=len(steps), node=nid,
                                     grad_outputs=[self._value(g) for g in grad_outputs],
                                     grad_inputs=[self._value(g) for g in grad_inputs]))
            info = self.trace.nodes[nid]
            if info.kind == "accumulate_grad" and info.variable is not None:
                node = next((n for n, i in self._node_ids.values() if i == nid), None)
                after = self._grad_of(node) if node is not None else None
                steps.append(LeafGradStep(index=len(steps), node=nid, tensor=info.variable,
                                          before=self._before.get(nid), after=after))
                self.trace.tensors[info.variable].grad = after
            return None
        return hook

    # -- the graph --------------------------------------------------------------------------------
    def _graph(self, roots: list[Any], run: BackwardRun, frame: Any) -> list[str]:
        """Register every node reachable from the roots (an explicit stack); their ids."""
        stack = []
        from torch.autograd.graph import get_gradient_edge

        for t in roots:
            if not getattr(t, "requires_grad", False):
                continue  # the real engine raises for it; its error is recorded
            edge = get_gradient_edge(t)
            nid = self._node(edge.node, frame)
            run.root_edges.append([nid, edge.output_nr])
            if t.grad_fn is not None:  # the root tensor is drawn above its node
                info = self.trace.tensors[self._tensor(t, frame)]
                info.grad_fn, info.output_nr = nid, edge.output_nr
            stack.append(edge.node)
        order: list[str] = []
        seen: set[int] = set()
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            order.append(self._node(node, frame))
            stack.extend(nxt for nxt, _ in node.next_functions if nxt is not None)
        run.nodes = order
        return order

    def _node(self, node: Any, frame: Any) -> str:
        hit = self._node_ids.get(id(node))
        if hit is not None:
            return hit[1]
        nid = f"n{self._n_nodes}"
        self._n_nodes += 1
        self._node_ids[id(node)] = (node, nid)
        name = type(node).__name__
        variable = None
        if name == "AccumulateGrad":
            variable = self._tensor(node.variable, frame)
        info = NodeInfo(id=nid, name=name,
                        kind="accumulate_grad" if name == "AccumulateGrad" else "op",
                        sequence_nr=_sequence_nr(node), next_functions=[],
                        variable=variable, saved=self._saved_values(node, frame),
                        num_outputs=1)
        self.trace.nodes[nid] = info
        info.next_functions = [[None if nxt is None else self._node(nxt, frame), nr]
                               for nxt, nr in node.next_functions]
        return nid

    def _saved_values(self, node: Any, frame: Any) -> list[SavedInfo]:
        out = []
        for attr in dir(node):
            if not attr.startswith("_saved_"):
                continue
            try:
                v = getattr(node, attr)
            except RuntimeError:  # already freed by an earlier backward
                continue
            if v is None:
                continue
            name = attr[len("_saved_"):]
            if isinstance(v, self.torch.Tensor):
                out.append(SavedInfo(name=name, value=self._value(v)))
            elif isinstance(v, (int, float, bool, str)):
                out.append(SavedInfo(name=name, value={"const": v}))
            elif isinstance(v, tuple) and all(isinstance(x, (int, float)) for x in v):
                out.append(SavedInfo(name=name, value={"const": list(v)}))
        return out

    # -- tensors and values -----------------------------------------------------------------------
    def _tensor(self, t: Any, frame: Any) -> str:
        hit = self._tensors.get(id(t))
        if hit is not None and hit[0]() is t:
            return hit[1]
        tid = f"t{len(self.trace.tensors)}"
        self._tensors[id(t)] = (weakref.ref(t), tid)
        self.trace.tensors[tid] = TensorInfo(
            id=tid, name=_name_in(frame, t) or tid, shape=list(t.shape),
            dtype=str(t.dtype).replace("torch.", ""), requires_grad=t.requires_grad,
            is_leaf=t.is_leaf, is_param=isinstance(t, self.torch.nn.Parameter),
            output_nr=t.output_nr, value=self._value(t))
        return tid

    def _value(self, v: Any) -> Any:
        if v is None:
            return None
        return summarize(v.detach().cpu().resolve_conj().resolve_neg().numpy(), self.values)

    def _grad_of(self, node: Any) -> Any:
        g = getattr(node.variable, "grad", None)
        return self._value(g)


def _sequence_nr(node: Any) -> int:
    try:
        return int(node._sequence_nr())
    except (AttributeError, RuntimeError):
        return 0


def _user_frame() -> Any:
    """The innermost frame outside torch and this module: the user's code."""
    import torch

    torch_dir = os.path.dirname(os.path.abspath(torch.__file__))
    frame = sys._getframe(1)
    while frame is not None:
        f = os.path.abspath(frame.f_code.co_filename)
        if not f.startswith(torch_dir) and not f.startswith(_HERE):
            return frame
        frame = frame.f_back
    return None


def _name_in(frame: Any, t: Any) -> str | None:
    """The name the user's code gives ``t`` (a local, then a global), if any."""
    if frame is None:
        return None
    for scope in (frame.f_locals, frame.f_globals):
        for k, v in scope.items():
            if v is t and not k.startswith("_"):
                return k
    return None
