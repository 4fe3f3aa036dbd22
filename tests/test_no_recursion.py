"""No function of gradviz calls itself (the product's rule: no recursion anywhere, so that
depth never depends on Python's recursion limit). A direct self-call is what this can see: a
plain function calling its own name, a method calling ``self.<its name>`` or
``cls.<its name>``."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted([*(ROOT / "gradviz").rglob("*.py"), *(ROOT / "cli").rglob("*.py")])


def self_calls(source: str) -> list[tuple[str, int]]:
    """(function name, line) of every call a function makes to itself."""
    found = []
    tree = ast.parse(source)
    methods = {id(f) for c in ast.walk(tree) if isinstance(c, ast.ClassDef)
               for f in c.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for call in ast.walk(fn):
            if not isinstance(call, ast.Call):
                continue
            f = call.func
            if id(fn) in methods:
                itself = (isinstance(f, ast.Attribute) and f.attr == fn.name
                          and isinstance(f.value, ast.Name) and f.value.id in ("self", "cls"))
            else:
                itself = isinstance(f, ast.Name) and f.id == fn.name
            if itself:
                found.append((fn.name, call.lineno))
    return found


def test_the_check_sees_recursion() -> None:
    assert self_calls("def f(n):\n    return f(n - 1)\n") == [("f", 2)]
    assert self_calls("class A:\n    def g(self):\n        return self.g()\n") == [("g", 3)]
    # a method calling the module's function of the same name is not recursion
    assert self_calls("def render(x):\n    return x\nclass D:\n    def render(self):\n"
                      "        return render(self)\n") == []


@pytest.mark.parametrize("path", SOURCES, ids=[str(p.relative_to(ROOT)) for p in SOURCES])
def test_no_function_calls_itself(path: Path) -> None:
    assert self_calls(path.read_text(encoding="utf-8")) == []
