"""``gradviz demo``: trace a bundled example and write its graphs and step player."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .._console import ExitCode, fail

# The example `gradviz demo` traces (a script in gradviz/examples/).
DEMO_EXAMPLE = "mlp_moons"


def demo(
    out: Annotated[Path, typer.Option(
        "--out", "-o", help="Output folder.")] = Path("gradviz-out") / "demo",
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print only the player's path.")
                     ] = False,
) -> None:
    """Trace the bundled example (an MLP training on two moons) and write its graphs.

    Writes forward.svg, backward.svg, steps.html (the step player) and trace.json, keeping the
    last training step, and ends by printing where steps.html is.
    """
    from .examples import example_path
    from .trace import run_and_write

    path = example_path(DEMO_EXAMPLE)
    if path is None:
        fail(f"the bundled example {DEMO_EXAMPLE!r} is missing from this installation",
             ExitCode.UNAVAILABLE)
    # The default keeps one training step (NOTE [long runs] in gradviz/trace/budget.py).
    code = run_and_write(path, [], out, ("svg",), "small", None, True, False, quiet,
                         title="gradviz demo: MLP on two moons")
    if code in (ExitCode.INTERRUPTED, ExitCode.TERMINATED):  # stopped by a signal: say so
        raise typer.Exit(code=code)
    if code:
        fail(f"the demo script failed (exit code {code})", ExitCode.FAILURE)
    typer.echo(f"Step player: {(out / 'steps.html').resolve()}")
