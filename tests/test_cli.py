"""The ``gradviz`` app's frame: version, help and usage errors (CliRunner and a subprocess).

The behaviour of each sub-command is tested with that command (e.g. tests/test_cli_trace.py).
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from typer.testing import CliRunner

from gradviz_cli import main as cli_main

runner = CliRunner()


def command_names() -> list[str]:
    """Names of the sub-commands registered on the app."""
    names = []
    for info in cli_main.app.registered_commands:
        name = info.name or (info.callback.__name__ if info.callback else None)
        assert name, f"a command without a name: {info}"
        names.append(name)
    return names


def test_version_option() -> None:
    result = runner.invoke(cli_main.app, ["--version"])
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == f"gradviz {cli_main.get_version()}"


def test_demo_is_registered() -> None:
    assert "demo" in command_names()


def test_help_lists_every_command() -> None:
    result = runner.invoke(cli_main.app, ["--help"])
    assert result.exit_code == 0, result.output
    for name in command_names():
        assert name in result.stdout, f"`gradviz --help` does not list {name!r}"


@pytest.mark.parametrize("name", command_names())
def test_every_command_has_help_from_its_docstring(name: str) -> None:
    info = next(
        i
        for i in cli_main.app.registered_commands
        if (i.name or getattr(i.callback, "__name__", None)) == name
    )
    doc = (info.callback.__doc__ or "").strip()
    assert doc, f"`gradviz {name}` has no docstring, so no help text"
    result = runner.invoke(cli_main.app, [name, "--help"])
    assert result.exit_code == 0, result.output
    assert doc.split()[0] in result.stdout


def _words(text: str) -> str:
    """``text``'s words in order: line breaks, box borders and Markdown's backticks dropped."""
    return " ".join(text.replace("│", " ").replace("`", "").split())


@pytest.mark.parametrize("width", [60, 100, 160])
@pytest.mark.parametrize("name", command_names())
def test_help_shows_every_word_of_the_docstring_wrapped_to_the_terminal(name: str,
                                                                         width: int) -> None:
    """Each paragraph of a command's docstring is in its help, word for word (no markup eats
    ``gradviz[torch]``), and refilled to the terminal's width, not cut at the source's breaks."""
    info = next(i for i in cli_main.app.registered_commands
                if (i.name or getattr(i.callback, "__name__", None)) == name)
    doc = (info.callback.__doc__ or "").strip()
    result = runner.invoke(cli_main.app, [name, "--help"], env={"COLUMNS": str(width)})
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert max(len(line) for line in lines) <= width
    paragraphs = [p for p in doc.split("\n\n") if p.strip()]
    for paragraph in paragraphs:
        assert _words(paragraph) in _words(result.stdout), (paragraph, result.stdout)
    # Refilled: in the description (the text before the first panel), a line that is not the
    # last of its paragraph leaves no room for the next word.
    description = lines[:next(i for i, line in enumerate(lines) if line.startswith("╭"))]
    for line, following in zip(description, description[1:]):
        if line.strip() and following.strip():
            assert len(line.rstrip()) + 1 + len(following.split()[0]) > width - 2, (line,
                                                                                   following)


def test_trace_help_names_the_torch_extra() -> None:
    result = runner.invoke(cli_main.app, ["trace", "--help"], env={"COLUMNS": "200"})
    assert "pip install gradviz[torch]" in result.stdout
    assert "gradviz-out/<script name>/" in result.stdout


def test_unknown_command_is_a_usage_error() -> None:
    result = runner.invoke(cli_main.app, ["no-such-command"])
    assert result.exit_code == 2


def test_version_does_not_import_the_core() -> None:
    """`gradviz --version` must stay cheap: no gradviz core, no numpy."""
    code = (
        "import sys\n"
        "from gradviz_cli.main import app\n"
        "try:\n"
        "    app(['--version'], prog_name='gradviz')\n"
        "except SystemExit as e:\n"
        "    assert e.code in (0, None), e.code\n"
        "print(sorted(m for m in ('gradviz', 'numpy') if m in sys.modules))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "[]"
