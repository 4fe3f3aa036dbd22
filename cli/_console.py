"""Shared CLI plumbing: the stderr console and the exit codes every command uses."""

from __future__ import annotations

from enum import IntEnum
from functools import lru_cache
from typing import TYPE_CHECKING, NoReturn

import typer

if TYPE_CHECKING:
    from rich.console import Console


class ExitCode(IntEnum):
    """Process exit codes of the ``gradviz`` command."""

    OK = 0
    FAILURE = 1  # the command ran and failed (e.g. the example raised)
    USAGE = 2  # bad arguments; typer/click use this code themselves
    UNAVAILABLE = 3  # something the command needs could not be imported or found
    INTERRUPTED = 130  # Ctrl-C, as shells report SIGINT


@lru_cache(maxsize=1)
def err_console() -> Console:
    """Return the rich console that writes to stderr (rich is imported on first use)."""
    from rich.console import Console

    return Console(stderr=True)


def fail(message: str, code: ExitCode = ExitCode.FAILURE) -> NoReturn:
    """Print ``error: <message>`` on stderr and exit with ``code``.

    Args:
        message: What went wrong, one line, plain text (rich markup is not interpreted).
        code: The exit code to leave with.

    Example:
        >>> fail("no such file: x.py", ExitCode.USAGE)  # doctest: +SKIP
    """
    from rich.text import Text

    err_console().print(Text.assemble(("error: ", "bold red"), message))
    raise typer.Exit(code=int(code))
