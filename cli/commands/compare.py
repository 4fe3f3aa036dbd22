"""``gradviz compare``: run one script on real PyTorch and on gradviz, and say where they differ.

NOTE [compare]: each engine runs the unmodified script in a fresh process (``gradviz trace
--engine torch`` and ``--engine gradviz``, both seeded with ``--seed``), so neither run can
leak into the other (imported modules, the ``torch`` name, random state). Each run's outputs
(trace.json, the drawings, its step player) go to ``OUT/torch`` and ``OUT/gradviz``; the two
traces are then compared by :func:`gradviz.trace.diff.diff_traces` (what is compared, and why
values only where the inputs agree: its NOTE [what is compared]) and the report is printed and
written to ``OUT/compare.html``.

Exit codes: 0 the engines agree, 1 they differ, 2 bad arguments, 3 PyTorch is not installed,
4 a run recorded nothing to compare (its reason is printed), 5 the structure agrees but some
values could not be compared (the verdict says which runs and why), 70 an internal error (a bug in
gradviz: one line, no traceback), 75 the output folder is busy, 130/143 stopped by SIGINT/SIGTERM.
The runs are child processes that end with compare (NOTE [children] in cli/children.py).
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import sys
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from .._console import ExitCode, fail, print_verbatim, stop_now, visible
from ..runner import Terminated
from ._common import Values
from .trace import (
    CONTEXT,
    SCRIPT_RAISED,
    _resolve_script,
    _warn,
    locked,
    warn_options_after_script,
)

__all__ = ["compare", "CONTEXT"]

ENGINES = ("torch", "gradviz")
NOTHING_RECORDED = 4
# Nothing compared differs, but some run's values could not be compared (random inputs, which
# each engine draws from its own generator): only the structure agrees, and the exit code says so.
NOT_COMPARED = 5
KEEP_ALL = 10**9  # --keep-runs for "every run" (the option takes a count)


def compare(
    ctx: typer.Context,
    script: Annotated[str | None, typer.Argument(
        help="The Python script to run on both engines, as `python SCRIPT ARGS...` would.",
        show_default=False)] = None,
    args: Annotated[list[str] | None, typer.Argument(
        help="Arguments for the script (everything after SCRIPT).", show_default=False)
    ] = None,
    out: Annotated[Path | None, typer.Option(
        "--out", "-o", help="Output folder (default: `gradviz-out/<script name>-compare/`).",
        show_default=False)] = None,
    seed: Annotated[int, typer.Option(
        "--seed", help="manual_seed(SEED) on each engine before the script runs.")] = 0,
    values: Annotated[Values, typer.Option(
        help="Tensor values each trace keeps: small (full up to 64 elements), all.")
    ] = Values.small,
    keep_runs: Annotated[int | None, typer.Option(
        "--keep-runs", min=1, help="Compare only the last N backward runs (default: all).")
    ] = None,
    quiet: Annotated[bool, typer.Option(
        "--quiet", "-q", help="Print only the verdict line (after what the script prints).")
    ] = False,
) -> None:
    """Run SCRIPT on real PyTorch and on gradviz; report where the two engines differ.

    Compares, for each backward() / autograd.grad() call, the backward graphs (node names,
    next_functions), the execution orders, the errors, and the gradients wherever both runs
    fed the backward pass the same values (inputs made from data agree; random ones differ
    between the engines' generators, and then only the structure is compared). Writes
    OUT/compare.html and each engine's trace, drawings and step player under OUT/torch and
    OUT/gradviz. What the script prints is shown as it prints it, once per engine. Exit code 0
    when the engines agree, 1 when they differ, 5 when the structure agrees but some values
    could not be compared (the others: docs/guarantees.md).
    """
    if values is Values.none:
        fail("--values none keeps no values, so no gradient could be compared; use small or "
             "all", ExitCode.USAGE)
    path = _resolve_script(script, None)
    warn_options_after_script(ctx, path.name, list(args or []))
    out_dir = Path(os.path.abspath(out if out is not None
                                   else Path("gradviz-out") / f"{path.stem}-compare"))
    from ..children import Supervisor

    with Supervisor() as sup:
        try:
            code = _compare(sup, path, list(args or []), out_dir, seed, values.value,
                            keep_runs, quiet)
        except typer.Exit:
            raise
        except (KeyboardInterrupt, Terminated) as e:  # outside the runs (NOTE [children])
            signum = e.signum if isinstance(e, Terminated) else signal.SIGINT
            stop_now(f"stopped by {signal.Signals(signum).name}", 128 + signum)
        except Exception as e:  # noqa: BLE001 - a bug of gradviz's: one line, its own code
            # Never 1 (which says the engines differ) and never a traceback.
            fail(f"internal error in gradviz compare ({type(e).__name__}: {e}); this is a bug "
                 "in gradviz, please report it", ExitCode.INTERNAL)
    raise typer.Exit(code=code)


def _compare(sup: Any, path: Path, args: list[str], out_dir: Path, seed: int, values: str,
             keep_runs: int | None, quiet: bool) -> int:
    """Both runs, then the comparison; the exit code (0 agree, 1 differ, 5 values not
    compared)."""
    from gradviz.trace import load_trace

    # Real PyTorch first: without it, its run fails at once (exit code 3, with how to install).
    with locked(out_dir):
        runs = []
        traces = []
        for engine in ENGINES:
            run = _run(sup, engine, path, args, out_dir / engine, seed, values, keep_runs)
            runs.append(run)
            if run["signal"] is not None or run["trace"] is None:
                break  # the other run is not started
            traces.append(load_trace(run["trace"]))  # read now: the next run may delete it
        if len(traces) == len(ENGINES):
            _write_again_if_removed(runs, traces)
    if runs[-1]["signal"] is not None:  # once the lock is let go
        _stopped(runs[-1])
    for run in runs:
        if run["trace"] is None:
            _explain_failed_run(run)
    from gradviz.trace.diff import diff_traces

    diff = diff_traces(traces[0], traces[1], labels=ENGINES,
                       errors=(script_error(traces[0]), script_error(traces[1])))
    page = out_dir / "compare.html"
    _write_page(diff, path.name, out_dir, page)
    try:
        if not quiet:
            _print_report(diff, runs, page)
        else:
            typer.echo(_verdict(diff))
    except (BrokenPipeError, SystemExit):
        # Nobody reads stdout any more (`| head`): the exit code still tells the verdict. (rich
        # meets a broken pipe with SystemExit(1), which would say "they differ".)
        with contextlib.suppress(OSError, ValueError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())  # so that the flush at exit does not fail
            os.close(devnull)
    return 1 if not diff.same else NOT_COMPARED if diff.not_compared else 0


def _run(sup: Any, engine: str, path: Path, args: list[str], out: Path, seed: int,
         values: str, keep_runs: int | None) -> dict[str, Any]:
    """``gradviz trace --engine ENGINE`` in a fresh process; what it left behind.

    Every backward run is kept unless ``keep_runs`` says otherwise: ``gradviz trace``'s default
    folds a training loop's iterations, and the two engines must keep the same runs. What the
    script prints goes to stdout as it prints it (NOTE [children] in cli/children.py).
    """
    from ..children import stdout_binary

    cmd = [sys.executable, "-m", "gradviz", "trace", "--engine", engine, "--seed", str(seed),
           "--values", values, "--keep-runs", str(keep_runs or KEEP_ALL), "--quiet",
           "--out", str(out), os.path.abspath(path), *args]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    trace = out / "trace.json"
    before = _mtime(trace)
    result = sup.run(cmd, stdout_binary(), env=env, cwd=os.getcwd())
    # A run that recorded nothing writes no trace.json: one left by an earlier compare is old.
    after = _mtime(trace)
    fresh = after is not None and after != before
    return {"engine": engine, "code": result.code, "stderr": result.stderr,
            "stderr_dropped": result.stderr_dropped, "signal": result.signal,
            "trace": trace if fresh else None, "out": out}


def _write_again_if_removed(runs: list[dict[str, Any]], traces: list[Any]) -> None:
    """Write a run's outputs again, from its trace, if a later run's script removed them.

    NOTE [output folder removed] in trace.py: a script that deletes its own output folder (the
    whole of OUT, say) deletes the earlier run's outputs too when it runs the second time.
    """
    from .. import runner

    for run, tr in zip(runs, traces):
        if _mtime(run["trace"]) is not None:
            continue
        with locked(run["out"]):
            runner.write_outputs(tr, run["out"])
        _warn(f"the script removed {run['out']} during a later run: the {run['engine']} run's "
              "outputs were written again from its trace")


def _mtime(path: Path) -> int | None:
    """``path``'s modification time if it is a file, else None (also if it cannot be read)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns if stat.S_ISREG(st.st_mode) else None


def _stopped(run: dict[str, Any]) -> NoReturn:
    """A signal stopped compare during ``run``: say what that run left, and exit 130 or 143."""
    signum = run["signal"]
    left = (f"what it recorded up to then is in {run['out']}" if run["trace"] is not None
            else "it wrote no trace")
    stop_now(f"stopped by {signal.Signals(signum).name} during the {run['engine']} run; "
             f"{left}; nothing was compared", 128 + signum)


def script_error(trace: Any) -> str:
    """The exception the traced script ended with (``"Type: message"``), or "".

    Read from the trace's notes, where ``gradviz trace`` keeps it.

    Example:
        >>> from gradviz.trace import Trace
        >>> tr = Trace()
        >>> tr.notes.append("the script raised ValueError: bad")
        >>> script_error(tr)
        'ValueError: bad'
    """
    for note in reversed(trace.notes):
        if note.startswith(SCRIPT_RAISED):
            return note[len(SCRIPT_RAISED):]
    return ""


def _explain_failed_run(run: dict[str, Any]) -> NoReturn:
    """A run left no trace: say which engine, show what it printed on stderr, and exit."""
    lines = [line for line in run["stderr"].splitlines() if not line.startswith("Fontconfig")]
    if run["stderr_dropped"]:
        lines.insert(0, f"[{run['stderr_dropped']} earlier bytes of its stderr not kept]")
    print_verbatim("\n".join(lines))
    code = run["code"]
    fail(f"the {run['engine']} run (exit code {code}) recorded nothing to compare; see its "
         "messages above", ExitCode(code) if code in (ExitCode.UNAVAILABLE, ExitCode.BUSY)
         else NOTHING_RECORDED)


def _verdict(diff: Any) -> str:
    return diff.verdict()


def _write_page(diff: Any, title: str, out_dir: Path, page: Path) -> None:
    from gradviz.render.diff_page import diff_page
    from gradviz.trace.io import atomic_write

    graphs = []
    links = []
    for engine in ENGINES:
        svg = out_dir / engine / "backward.svg"
        graphs.append(svg.read_text(encoding="utf-8") if svg.is_file() else None)
        player = out_dir / engine / "steps.html"
        links.append(f"{engine}/steps.html" if player.is_file() else None)
    with atomic_write(page) as fh:
        fh.write(diff_page(diff, title, (graphs[0], graphs[1]), (links[0], links[1])))


def _print_report(diff: Any, runs: list[dict[str, Any]], page: Path) -> None:
    """The two engines side by side (rich), then each difference, then where the page is."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    if sys.stdout is None or getattr(sys.stdout, "closed", False):
        return
    console = Console()
    a, b = diff.labels
    table = Table(title=Text(_verdict(diff), style="bold"), title_justify="left")
    table.add_column("")
    table.add_column(a, overflow="fold")
    table.add_column(b, overflow="fold")
    table.add_row("exit code", str(runs[0]["code"]), str(runs[1]["code"]))
    if any(diff.errors):
        table.add_row("script error", Text(visible(diff.errors[0] or "(none)")),
                      Text(visible(diff.errors[1] or "(none)")))
    for r in diff.runs:
        table.add_row(Text(f"{visible(r.name)} order", style="bold"),
                      Text(visible(" → ".join(r.order[0]))), Text(visible(" → ".join(r.order[1]))))
        for label, ga, gb, eq in r.grads:
            style = "red" if eq is False else ""
            table.add_row(Text(visible(f"  {label}.grad")), Text(visible(ga), style=style),
                          Text(visible(gb), style=style))
        if any(r.errors):
            table.add_row("  error", Text(visible(r.errors[0])), Text(visible(r.errors[1])))
        if not r.values_compared:
            table.add_row("  values", Text(visible(r.values_note or "not compared")), "")
    console.print(table)
    for d in diff.differences:
        console.print(Text(visible(d.describe(diff.labels)), style="red"), soft_wrap=True)
    for note in diff.notes:
        console.print(Text(f"note: {visible(note)}", style="yellow"))
    console.print(Text(f"report: {visible(str(page))}"))
