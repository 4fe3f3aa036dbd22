"""``gradviz examples``: the example scripts bundled with gradviz."""

from __future__ import annotations

from pathlib import Path

# Listed in teaching order; each is gradviz/examples/<name>.py.
EXAMPLES = ("seed_backward", "custom_function", "mlp_moons", "higher_order", "inplace_error",
            "rnn_sequence", "cnn_digits", "polynomial")


def _folder() -> Path:
    from importlib.resources import files

    return Path(str(files("gradviz") / "examples"))


def example_names() -> tuple[str, ...]:
    """The names `gradviz trace --example NAME` accepts."""
    return EXAMPLES


def example_path(name: str) -> Path | None:
    """The bundled script called ``name``, or None."""
    if name not in EXAMPLES:
        return None
    path = _folder() / f"{name}.py"
    return path if path.exists() else None


def _summary(path: Path) -> str:
    import ast

    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    return doc.strip().splitlines()[0] if doc.strip() else ""


def examples() -> None:
    """List the bundled example scripts; trace one with `gradviz trace --example NAME`."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title="Bundled examples (gradviz trace --example NAME)", title_justify="left")
    table.add_column("name", style="bold")
    table.add_column("what it shows")
    for name in EXAMPLES:
        path = example_path(name)
        table.add_row(name, _summary(path) if path else "(missing)")
    Console().print(table)
