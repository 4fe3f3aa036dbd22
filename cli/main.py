"""The ``gradviz`` typer app (entry point ``gradviz_cli.main:app``).

Each sub-command lives in its own module under ``gradviz_cli.commands`` and is registered below.
Nothing here imports the gradviz core at import time, so ``gradviz --version`` and ``--help``
stay fast and work even when the engine itself cannot be imported.
"""

from __future__ import annotations

from typing import Annotated

import typer

from .commands import compare as compare_cmd
from .commands import demo as demo_cmd
from .commands import examples as examples_cmd
from .commands import render as render_cmd
from .commands import steps as steps_cmd
from .commands import trace as trace_cmd

app = typer.Typer(
    name="gradviz",
    no_args_is_help=True,
    # Help from docstrings as Markdown: paragraphs refilled to the terminal's width, and square
    # brackets (`gradviz[torch]`) are text, where rich markup would read them as a style tag.
    rich_markup_mode="markdown",
    add_completion=True,
    # Commands report their own errors on stderr; keep typer's tracebacks short when one escapes.
    pretty_exceptions_show_locals=False,
)


def get_version() -> str:
    """Return the installed gradviz version.

    Reads the distribution metadata (cheap) and only falls back to importing ``gradviz`` when
    the package is not installed, e.g. when run from a source checkout on ``PYTHONPATH``.

    Example:
        >>> get_version()  # doctest: +SKIP
        '0.1.0'
    """
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("gradviz")
    except PackageNotFoundError:
        from gradviz import __version__

        return str(__version__)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"gradviz {get_version()}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            help="Print the gradviz version and exit.",
            callback=_print_version,
            is_eager=True,
        ),
    ] = False,
) -> None:
    """gradviz: an educational autograd engine whose internals mirror PyTorch's."""


# --- sub-commands: one module each under cli/commands/ -------------------------------------
app.command("trace", context_settings=trace_cmd.CONTEXT)(trace_cmd.trace)
app.command("compare", context_settings=compare_cmd.CONTEXT)(compare_cmd.compare)
app.command("demo")(demo_cmd.demo)
app.command("render")(render_cmd.render)
app.command("steps")(steps_cmd.steps)
app.command("examples")(examples_cmd.examples)


if __name__ == "__main__":
    app(prog_name="gradviz")
