"""``gradviz trace``: run a script under the tracer and write its graphs and step player."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .._console import ExitCode, err_console, fail
from ._common import Format, Values, formats_with_svg, print_summary

CONTEXT = {"allow_interspersed_args": False, "ignore_unknown_options": True}


def _resolve_script(script: str | None, example: str | None) -> Path:
    if example is not None:
        if script is not None:
            fail("give either SCRIPT or --example, not both", ExitCode.USAGE)
        from .examples import example_path

        path = example_path(example)
        if path is None:
            from .examples import example_names

            fail(f"no bundled example named {example!r}; choose one of: "
                 f"{', '.join(example_names())}", ExitCode.USAGE)
        return path
    if script is None:
        fail("missing SCRIPT (or --example NAME); see `gradviz trace --help`", ExitCode.USAGE)
    path = Path(script)
    if not path.exists():
        fail(f"no such script: {script}", ExitCode.USAGE)
    if path.is_dir():
        fail(f"{script} is a folder; give a Python script", ExitCode.USAGE)
    try:
        with open(path, "rb"):
            pass
    except OSError as e:
        fail(f"cannot read {script}: {e.strerror}", ExitCode.USAGE)
    return path


def trace(
    script: Annotated[str | None, typer.Argument(
        help="The Python script to run, as `python SCRIPT ARGS...` would.", show_default=False)
    ] = None,
    args: Annotated[list[str] | None, typer.Argument(
        help="Arguments for the script (everything after SCRIPT).", show_default=False)
    ] = None,
    out: Annotated[Path | None, typer.Option(
        "--out", "-o", help="Output folder (default: gradviz-out/<script name>/).",
        show_default=False)] = None,
    formats: Annotated[list[Format] | None, typer.Option(
        "--format", "-f", help="Also write the drawings in this format (repeatable).")] = None,
    values: Annotated[Values, typer.Option(
        help="Tensor values to keep: small (full up to 64 elements), none, all.")
    ] = Values.small,
    keep_runs: Annotated[int | None, typer.Option(
        "--keep-runs", min=1, help="Keep only the last N backward runs (training loops).")
    ] = None,
    collapse: Annotated[bool, typer.Option(
        help="Collapse large graphs (module scopes, repeated blocks) before layout.")] = True,
    steps: Annotated[bool, typer.Option("--steps", help="Print the engine's step table.")
                     ] = False,
    open_player: Annotated[bool, typer.Option("--open", help="Open the step player in a browser.")
                           ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print nothing but errors.")
                     ] = False,
    example: Annotated[str | None, typer.Option(
        "--example", help="Trace a bundled example instead of SCRIPT (see `gradviz examples`).")
    ] = None,
) -> None:
    """Run SCRIPT under the tracer; write forward.svg, backward.svg, steps.html and trace.json.

    gradviz's options come before SCRIPT; everything after SCRIPT is passed to the script, as
    with `python -m cProfile`. If the script fails, the trace up to the failure is still written,
    its traceback is shown, and the exit code is 1; `sys.exit(n)` in the script exits with n.
    """
    path = _resolve_script(script, example)
    out_dir = out if out is not None else Path("gradviz-out") / path.stem
    code = run_and_write(path, list(args or []), out_dir, formats_with_svg(formats),
                         values.value, keep_runs, collapse, steps, quiet)
    if open_player:
        import webbrowser

        webbrowser.open((out_dir / "steps.html").resolve().as_uri())
    if code:
        raise typer.Exit(code=code)


def run_and_write(path: Path, args: list[str], out_dir: Path, formats: tuple[str, ...],
                  values: str, keep_runs: int | None, collapse: bool, show_steps: bool,
                  quiet: bool, title: str | None = None) -> int:
    """Trace ``path``, write the outputs, print the summary; return the script's exit code."""
    from .. import runner

    try:
        runner.check_out_dir(out_dir)
    except OSError as e:
        fail(f"cannot write to the output folder {out_dir}: {e.strerror or e}", ExitCode.USAGE)

    import gradviz

    with gradviz.trace(values=values, keep_runs=keep_runs, name=title or path.name) as tr:
        result = runner.run_script(path, args)
    if result.traceback_text:
        err_console().print(result.traceback_text, end="", markup=False, highlight=False)
    try:
        written = runner.write_outputs(tr, out_dir, formats, collapse)
    except OSError as e:
        fail(f"cannot write to the output folder {out_dir}: {e.strerror or e}", ExitCode.USAGE)
    if result.error is not None:
        written.notes.append(f"the script raised {type(result.error).__name__}; the trace up to "
                             "that point was written")
    if show_steps and tr.runs:
        from gradviz.render import print_steps

        for i in range(len(tr.runs)):
            print_steps(tr, run=i)
    if not quiet:
        print_summary(tr, written.files, written.notes, f"gradviz trace {path.name}")
    return result.exit_code
