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
        help="Which backward run to show first: 1 is the first, -1 the last (as `gradviz "
             "render --run` counts).")] = -1,
    plain: Annotated[bool, typer.Option(
        "--plain", help="Print every step as one table instead of the interactive view "
        "(the default when the output is not a terminal).")] = False,
) -> None:
    """Step through the engine's backward steps with single keys: →/← (or j/k, space) step,
    Home/End, [ ] or Tab switch runs, ? help, q quit. Piped or with --plain: one table.
    """
    from gradviz.render import step_through
    from gradviz.render.graphviz import run_position

    tr = load(trace_file)
    if not tr.runs:
        fail(f"{trace_file} has no backward runs: the script never called backward()",
             ExitCode.FAILURE)
    try:
        index = run_position(tr, run)  # numbered as every picture's title numbers runs
    except ValueError as e:
        fail(f"--run {run}: {e}", ExitCode.USAGE)
    step_through(tr, run=index, plain=True if plain else None)
