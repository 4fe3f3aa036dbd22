"""PyTorch's tutorial programs (tests/programs/, written as ``import gradviz as torch``) run
unmodified on real PyTorch under ``gradviz.trace(torch=True)``: the import switched back to
``import torch`` is the only change.

For each program: every recorded backward run is PyTorch's engine (``engine == "torch"``), the
nodes the trace says ran, over all runs in order, are the nodes torch's own autograd logging saw
run (an observer independent of the tracer: tests/parity/test_torch_trace.py's ``_Observer``),
nothing was noted as unfaithful, and the program prints exactly what it prints untraced.
"""

from __future__ import annotations

import contextlib
import functools
import io
import logging
import random
import re
import sys
from pathlib import Path

import pytest
import torch

import gradviz
from gradviz.trace.model import ExecuteStep

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_torch_trace import _Observer  # noqa: E402

PROGRAMS_DIR = Path(__file__).resolve().parents[1] / "programs"
PROGRAMS = sorted(p.name for p in PROGRAMS_DIR.glob("*.py"))
SWAP = "import gradviz as torch\n"
_ADDRESS = re.compile(r" at 0x[0-9a-f]+")  # object addresses differ from run to run


class _NamedObserver(_Observer):
    """The same log records, with the class name of each node that ran."""

    def __init__(self) -> None:
        super().__init__()
        self.names: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        super().emit(record)
        m = re.match(r"Executing: <([\w.:]+) object at 0x", record.getMessage())
        if m:
            self.names.append(m.group(1).rsplit("::", 1)[-1].rsplit(".", 1)[-1])


@functools.cache  # each program runs once per mode for both tests below
def _run(name: str, traced: bool) -> tuple[str, gradviz.trace.Trace | None, list[str]]:
    """Run one program with the import switched to torch; its stdout, trace and observed nodes."""
    path = PROGRAMS_DIR / name
    source = path.read_text()
    assert SWAP in source, name
    code = compile(source.replace(SWAP, "import torch\n"), str(path), "exec")
    random.seed(0)  # dynamic_net draws its degree from Python's generator
    torch.manual_seed(0)
    log = logging.getLogger("torch.autograd.graph")
    observer = _NamedObserver()
    old = log.level
    log.addHandler(observer)
    log.setLevel(logging.DEBUG)
    log.propagate = False
    out = io.StringIO()
    tr = None
    # The programs run in this process and some set torch's global defaults (poly_optim's
    # float64, poly_autograd's device): put them back so no later test sees them.
    dtype, device, grad = torch.get_default_dtype(), torch.get_default_device(), \
        torch.is_grad_enabled()
    try:
        with contextlib.redirect_stdout(out):
            if traced:
                with gradviz.trace(values="none", keep_runs="all", torch=True) as tr:
                    exec(code, {"__name__": "__main__", "__file__": str(path)})
            else:
                exec(code, {"__name__": "__main__", "__file__": str(path)})
    finally:
        torch.set_default_dtype(dtype)
        torch.set_default_device(device)
        torch.set_grad_enabled(grad)
        log.removeHandler(observer)
        log.setLevel(old)
        log.propagate = True
    return _ADDRESS.sub("", out.getvalue()), tr, observer.names


@pytest.mark.parametrize("name", PROGRAMS)
def test_tutorial_program_traced_runs_torchs_engine(name: str) -> None:
    _, _, plain_seen = _run(name, traced=False)
    _, tr, seen = _run(name, traced=True)
    assert tr.ops, "no op recorded"
    if not plain_seen:  # poly_tensors computes its gradients by hand: no backward at all
        assert not tr.runs and not seen
        return
    assert tr.runs and {r.engine for r in tr.runs} == {"torch"}
    assert len(tr.runs) == len(tr.run_log)  # every run kept in full
    recorded = [tr.nodes[s.node].name for r in tr.runs for s in r.steps
                if isinstance(s, ExecuteStep) and tr.nodes[s.node].kind != "graph_root"]
    assert recorded == seen, (len(recorded), len(seen))
    assert seen == plain_seen  # and torch ran the same nodes without the trace
    assert tr.notes == []


# saved_tensor_hooks.py's unpack hook prints: the tracer must not call it more often than the
# program does (it reads a hooked saved value's handle, never the value).
@pytest.mark.parametrize("name", PROGRAMS)
def test_tutorial_program_prints_the_same_traced(name: str) -> None:
    plain_out, _, _ = _run(name, traced=False)
    traced_out, _, _ = _run(name, traced=True)
    assert plain_out.strip()
    assert traced_out == plain_out  # tracing changes nothing the program prints
