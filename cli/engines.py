"""Which engine runs a script: real PyTorch or gradviz, and how each is set up for one run.

``gradviz trace`` and ``gradviz compare`` run a user's unmodified script. A script that imports
``torch`` runs on real PyTorch by default (``--engine auto``); ``--engine gradviz`` runs the very
same script on gradviz, with ``import torch`` answered by gradviz for that run only
(:func:`torch_as_gradviz`).

NOTE [engine detection]: the script's imports are read with ``ast`` before it runs (nothing is
executed): ``import torch``, ``import torch.nn as nn``, ``from torch import ...``, anywhere in the
file (inside functions and ``try`` blocks too). A script that reaches torch only through another
module of the user's (``import mymodel``) is not detected: ``--engine torch`` says it outright.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.abc
import importlib.machinery
import sys
import types
from collections.abc import Iterator
from enum import Enum
from pathlib import Path
from typing import Any


class Engine(str, Enum):
    """``--engine``: who runs the script's tensor code."""

    auto = "auto"
    torch = "torch"
    gradviz = "gradviz"


TORCH_EXTRA = "pip install gradviz[torch]"


def imports_torch(source: str | bytes) -> bool:
    """Whether the script's code imports ``torch`` (or a ``torch.*`` module) anywhere.

    A script that does not parse imports nothing here (the runner reports its SyntaxError).

    Example:
        >>> imports_torch("import torch.nn.functional as F")
        True
        >>> imports_torch("import gradviz as torch\\nfrom torchvision import x")
        False
    """
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            if any(_is_torch(a.name) for a in node.names):
                return True
        elif (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module
              and _is_torch(node.module)):
            return True
    return False


def _is_torch(module: str) -> bool:
    return module == "torch" or module.startswith("torch.")


def script_imports_torch(path: Path) -> bool:
    """:func:`imports_torch` of the file at ``path`` (False if it cannot be read)."""
    try:
        return imports_torch(path.read_bytes())
    except OSError:
        return False


def torch_version() -> str | None:
    """The installed torch's version, read from its metadata (torch is not imported), or None."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("torch")
    except PackageNotFoundError:
        return None


def import_real_torch() -> Any:
    """``import torch``, or raise ImportError saying how to install it."""
    try:
        import torch
    except ImportError as e:
        raise ImportError(f"real PyTorch is not installed (import torch failed: {e}); "
                          f"install it with `{TORCH_EXTRA}`, or run the script on gradviz "
                          "with --engine gradviz") from e
    return torch


def choose(engine: Engine, path: Path) -> tuple[str, str]:
    """The engine that runs ``path`` (``"torch"`` or ``"gradviz"``) and why, for the summary.

    Example:
        >>> import tempfile
        >>> p = Path(tempfile.mkdtemp()) / "s.py"
        >>> _ = p.write_text("import gradviz")
        >>> choose(Engine.auto, p)
        ('gradviz', 'the script does not import torch')
    """
    if engine is Engine.torch:
        return "torch", "--engine torch"
    if engine is Engine.gradviz:
        why = ("--engine gradviz: `import torch` runs gradviz" if script_imports_torch(path)
               else "--engine gradviz")
        return "gradviz", why
    if script_imports_torch(path):
        return "torch", "the script imports torch; --engine gradviz runs it on gradviz"
    return "gradviz", "the script does not import torch"


def engine_line(engine: str, why: str) -> str:
    """The summary's ``engine:`` value: the engine, its version, and why it was chosen.

    Example:
        >>> engine_line("gradviz", "--engine gradviz").startswith("gradviz ")
        True
    """
    if engine == "torch":
        torch = sys.modules.get("torch")  # imported by now: the version that really ran
        version = str(getattr(torch, "__version__", "") or torch_version() or "(not installed)")
    else:
        from gradviz_cli.main import get_version

        version = get_version()
    return f"{engine} {version} ({why})"


# -- running a torch script on gradviz --------------------------------------------------------
# NOTE [torch on gradviz]: the names a torch script imports, and the gradviz module that answers
# each. `torch` itself is a stand-in module (see _TorchOnGradviz) so that attributes gradviz's
# top level lacks but a mapped submodule provides (`torch.utils`) resolve, and a name gradviz
# lacks fails with a message naming it. Any other `torch.*` module fails at import with an
# ImportError naming it, as do the libraries built on real torch (torchvision ...), which would
# otherwise import the stand-in and fail somewhere deep inside.
TORCH_MODULES: dict[str, str] = {
    "torch.nn": "gradviz.nn",
    "torch.nn.functional": "gradviz.nn.functional",
    "torch.nn.init": "gradviz.nn.init",
    "torch.nn.parameter": "gradviz.nn.parameter",
    "torch.optim": "gradviz.optim",
    "torch.autograd": "gradviz.autograd",
    "torch.autograd.graph": "gradviz.autograd.graph",
    "torch.autograd.function": "gradviz.autograd.function",
    "torch.autograd.grad_mode": "gradviz.autograd.grad_mode",
    "torch.autograd.anomaly_mode": "gradviz.autograd.anomaly_mode",
    "torch.autograd.variable": "gradviz.autograd.variable",
    "torch.serialization": "gradviz.serialization",
    "torch.utils.data": "gradviz.data",
}
# Packages (not modules of gradviz): made up of the mapped modules under them.
TORCH_PACKAGES = ("torch.utils",)
TORCH_LIBRARIES = ("torchvision", "torchaudio", "torchtext")


class _TorchOnGradviz(types.ModuleType):
    """``torch`` for a run on gradviz: gradviz's top level, plus the mapped submodules."""

    def __init__(self, gradviz: types.ModuleType, extra: dict[str, Any]) -> None:
        super().__init__("torch", "gradviz standing in for torch (gradviz --engine gradviz)")
        self.__dict__.update(extra)
        self._gradviz = gradviz

    def __getattr__(self, name: str) -> Any:
        try:
            return getattr(self._gradviz, name)
        except AttributeError:
            if name.startswith("__"):
                raise
            raise AttributeError(f"torch.{name}: gradviz has no equivalent of it, so this "
                                 "script cannot run with --engine gradviz (run it on real "
                                 "PyTorch with --engine torch)") from None


class _NoEquivalentFinder(importlib.abc.MetaPathFinder):
    """Fails the import of a torch module gradviz has no equivalent of, naming it."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None
                  ) -> importlib.machinery.ModuleSpec | None:
        top = fullname.split(".", 1)[0]
        if top == "torch":
            raise ModuleNotFoundError(
                f"No module named {fullname!r}: gradviz has no equivalent of {fullname}, so "
                "this script cannot run with --engine gradviz (run it on real PyTorch with "
                "--engine torch)", name=fullname)
        if top in TORCH_LIBRARIES:
            raise ModuleNotFoundError(
                f"{top} needs real PyTorch and gradviz has no equivalent of it, so this script "
                "cannot run with --engine gradviz (run it on real PyTorch with --engine torch)",
                name=fullname)
        return None


@contextlib.contextmanager
def torch_as_gradviz() -> Iterator[types.ModuleType]:
    """While inside, ``import torch`` (and its mapped submodules) gives gradviz.

    Everything is put back on exit: ``sys.modules`` entries named ``torch*`` as they were (a
    real torch imported before stays imported, and is hidden only while inside), and the
    import finder removed.

    Example:
        >>> with torch_as_gradviz():
        ...     import torch.nn.functional as F
        ...     import torch
        >>> F.__name__, torch.tensor([1.0]).grad_fn, "torch" in sys.modules
        ('gradviz.nn.functional', None, False)
    """
    import importlib

    import gradviz

    def ours(name: str) -> bool:
        top = name.split(".", 1)[0]
        return top == "torch" or top in TORCH_LIBRARIES

    saved = {name: mod for name, mod in sys.modules.items() if ours(name)}
    for name in saved:
        del sys.modules[name]
    modules = {name: importlib.import_module(target) for name, target in TORCH_MODULES.items()}
    packages = {name: types.ModuleType(name, f"gradviz standing in for {name}")
                for name in TORCH_PACKAGES}
    for pkg_name, pkg in packages.items():
        pkg.__path__ = []  # a package: its submodules are the mapped modules below it
        for name, mod in modules.items():
            if name.rsplit(".", 1)[0] == pkg_name:
                setattr(pkg, name.rsplit(".", 1)[1], mod)
    top_extra = {name.split(".")[1]: mod for name, mod in {**modules, **packages}.items()
                 if name.count(".") == 1}
    torch = _TorchOnGradviz(gradviz, top_extra)
    torch.__path__ = []  # type: ignore[attr-defined]  # a package, so `import torch.x` asks
    finder = _NoEquivalentFinder()
    sys.modules.update({"torch": torch, **modules, **packages})
    sys.meta_path.insert(0, finder)
    try:
        yield torch
    finally:
        with contextlib.suppress(ValueError):
            sys.meta_path.remove(finder)
        for name in [n for n in sys.modules if ours(n)]:
            del sys.modules[name]
        sys.modules.update(saved)
