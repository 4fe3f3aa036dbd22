"""Run a user's script as ``python SCRIPT ARGS`` would, under the tracer, and write the outputs.

Shared by ``gradviz trace`` and ``gradviz demo``. The script runs in this process as
``__main__`` with its own ``sys.argv``, its folder first on ``sys.path`` and ``__file__`` set;
whatever it raises is caught so that the trace recorded up to that point is still written.
"""

from __future__ import annotations

import os
import runpy
import sys
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FORMATS = ("svg", "png", "pdf", "dot")


@dataclass
class ScriptResult:
    """How the script ended."""

    exit_code: int = 0
    error: BaseException | None = None
    traceback_text: str = ""


@dataclass
class Outputs:
    """What was written, in the order it was written."""

    files: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _exit_code(code: Any) -> int:
    """``sys.exit(x)`` semantics: None is 0, an int is itself, anything else is 1 (printed)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _user_traceback(exc: BaseException) -> str:
    """The traceback without this runner's and runpy's own frames."""
    tb = exc.__traceback__
    here = os.path.abspath(__file__)
    while tb is not None and (os.path.abspath(tb.tb_frame.f_code.co_filename) == here
                              or tb.tb_frame.f_code.co_filename.endswith(("runpy.py",
                                                                            "<frozen runpy>"))):
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(exc), exc, tb))


def run_script(path: Path, args: list[str]) -> ScriptResult:
    """Execute ``path`` as ``__main__`` with ``args``; never raises what the script raises."""
    script = str(path)
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    saved_main = sys.modules.get("__main__")
    sys.argv = [script, *args]
    sys.path.insert(0, str(path.resolve().parent))
    try:
        runpy.run_path(script, run_name="__main__")
        return ScriptResult()
    except SystemExit as e:
        return ScriptResult(exit_code=_exit_code(e.code))
    except KeyboardInterrupt as e:
        return ScriptResult(exit_code=130, error=e, traceback_text="KeyboardInterrupt\n")
    except BaseException as e:  # noqa: BLE001 - the user's script may raise anything
        return ScriptResult(exit_code=1, error=e, traceback_text=_user_traceback(e))
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
        if saved_main is not None:
            sys.modules["__main__"] = saved_main


def check_out_dir(out: Path) -> None:
    """Create ``out`` and make sure files can be written there, or raise ``OSError``."""
    out.mkdir(parents=True, exist_ok=True)
    probe = out / ".gradviz-write-test"
    probe.write_text("")
    probe.unlink()


def write_outputs(tr: Any, out: Path, formats: tuple[str, ...] = ("svg",),
                  collapse: bool = True) -> Outputs:
    """Write ``trace.json``, the forward and backward drawings, and ``steps.html`` into ``out``.

    A trace without backward runs still gets its forward graph and the backward graph that was
    built (the nodes recorded during the forward pass), with a note saying so.
    """
    from gradviz import render
    from gradviz.trace.model import BackwardGraph

    result = Outputs()
    trace_path = out / "trace.json"
    tr.save(trace_path)
    result.files.append(trace_path)

    max_nodes = None if collapse else 10**9
    forward = render.draw_forward(tr, max_nodes=max_nodes)
    if tr.runs:
        backward = render.draw_backward(tr, max_nodes=max_nodes)
    else:
        result.notes.append("the script never called backward(): backward.svg shows the graph "
                            "it built, and the step player has no steps to play")
        leaves = {n.variable: tr.tensors[n.variable] for n in tr.nodes.values()
                  if n.variable in tr.tensors}
        backward = render.draw_backward(BackwardGraph(nodes=dict(tr.nodes), tensors=leaves),
                                        max_nodes=max_nodes)
    for stem, dot in (("forward", forward), ("backward", backward)):
        for fmt in formats:
            path = out / f"{stem}.{fmt}"
            render.render(dot, path, fmt)
            result.files.append(path)
    html_path = out / "steps.html"
    tr.to_html(html_path)
    result.files.append(html_path)
    return result
