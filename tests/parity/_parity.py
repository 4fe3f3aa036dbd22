"""What parity test files share: :func:`sibling`, the torch-free test module whose hard-coded
expectations a parity file derives again from torch.

Parity files sit next to this one, which pytest puts on ``sys.path`` (its default ``prepend``
import mode), so they ``from _parity import sibling``.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

__all__ = ["sibling"]

_TESTS = Path(__file__).resolve().parents[1]


def sibling(name: str) -> ModuleType:
    """``tests/<name>.py`` loaded under a private name (pytest collects the original too)."""
    spec = importlib.util.spec_from_file_location(f"_parity_copy_of_{name}", _TESTS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
