"""The layers of docs/architecture.md: imports point one way, and no module relies on another
having been imported first.

* import-linter's layers contract (``[tool.importlinter]`` in pyproject.toml) is kept;
* every module of the package imports on its own, in a fresh ``gradviz`` namespace whose
  ``__init__`` has not run: so ``gradviz/__init__.py``'s order of imports is free.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_EACH_MODULE_ALONE = r"""
import importlib, pkgutil, sys, types
from pathlib import Path

root = Path(sys.argv[1])
names = sorted(
    "gradviz." + ".".join(p.relative_to(root / "gradviz").with_suffix("").parts)
    for p in (root / "gradviz").rglob("*.py")
    if p.name != "__init__.py" and "examples" not in p.parts and p.name != "__main__.py")
failures = []
for name in names:
    for mod in [m for m in sys.modules if m == "gradviz" or m.startswith("gradviz.")]:
        del sys.modules[mod]
    stub = types.ModuleType("gradviz")  # the package without its __init__
    stub.__path__ = [str(root / "gradviz")]
    sys.modules["gradviz"] = stub
    try:
        importlib.import_module(name)
    except Exception as exc:  # noqa: BLE001 - each failure is reported
        failures.append(f"{name}: {type(exc).__name__}: {exc}")
print(len(names))
print("\n".join(failures))
"""


def test_the_layers_contract_is_kept() -> None:
    lint = Path(sys.executable).parent / "lint-imports"
    proc = subprocess.run([str(lint), "--no-cache"], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 kept, 0 broken" in proc.stdout


def test_every_module_imports_on_its_own() -> None:
    proc = subprocess.run([sys.executable, "-c", _EACH_MODULE_ALONE, str(ROOT)],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    count, *failures = proc.stdout.strip().splitlines()
    assert int(count) > 60
    assert not [f for f in failures if f], "\n".join(failures)


def test_lazy_autograd_names_are_the_functions() -> None:
    """``gradviz.autograd.gradcheck`` is the function, also once every module is imported (a
    submodule of the same name would replace it: hence finite_differences.py)."""
    import importlib

    import gradviz

    for module in ("engine", "wrappers", "function", "finite_differences", "anomaly_mode",
                   "gradcheck"):  # a submodule of the function's name, as torch has
        importlib.import_module(f"gradviz.autograd.{module}")
    for name in ("backward", "grad", "gradcheck", "gradgradcheck", "detect_anomaly"):
        value = getattr(gradviz.autograd, name)
        assert callable(value) and value.__name__ == name, name
