"""``gradviz steps``: walk through a saved trace's engine steps in the terminal."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .._console import ExitCode, fail
from .render import load


def steps(
    trace_file: Annotated[Path, typer.Argument(help="A trace.json written by `gradviz trace`.",
                                                show_default=False)],
    run: Annotated[int, typer.Option(
        help="Which backward run (0 is the first, -1 the last).")] = -1,
) -> None:
    """Step through one backward run: Enter/n next, p previous, q quit (a table when piped)."""
    from gradviz.render import step_through

    tr = load(trace_file)
    if not tr.runs:
        fail(f"{trace_file} has no backward runs: the script never called backward()",
             ExitCode.FAILURE)
    if not -len(tr.runs) <= run < len(tr.runs):
        fail(f"--run {run} is out of range: the trace has {len(tr.runs)} run(s)", ExitCode.USAGE)
    step_through(tr, run=run)
