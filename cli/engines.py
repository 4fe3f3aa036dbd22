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
import importlib.metadata
import re
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


# NOTE [the stand-in looks installed]: libraries built on torch ask whether torch is there before
# importing it, as transformers' `is_torch_available()` does: `importlib.util.find_spec("torch")`
# (which raises "torch.__spec__ is None" for a bare module object), then
# `importlib.metadata.version("torch")`, then `packaging.version.parse(...) >= "2.6.0"`; others
# read `torch.__version__` or `torch.__file__`. While gradviz stands in, every one of these
# describes the stand-in: a module spec, a `__version__` of the PyTorch gradviz copies with a
# local label saying what it is (`2.13.0+gradviz.0.1.0`, which PEP 440 orders after `2.13.0`),
# and a distribution `torch` of that version in importlib.metadata (ahead of an installed real
# torch's, which is not what runs). Modules gradviz has no equivalent of (`torch.distributed`,
# torchvision ...) are found too, by a loader that stops the import with the message naming
# them: a library that probes first and imports after stops there, with that message, instead
# of a probe raising or a library running half on real torch.
TORCH_COPIED = "2.13.0"  # the PyTorch whose names and graphs gradviz copies (tests/parity pins it)


def stand_in_version() -> str:
    """``torch.__version__`` while gradviz stands in for torch: the PyTorch version gradviz
    copies, with gradviz's version as the local label.

    Example:
        >>> stand_in_version().startswith("2.13.0+gradviz.")
        True
    """
    from gradviz import __version__

    return f"{TORCH_COPIED}+gradviz.{re.sub(r'[^A-Za-z0-9]+', '.', __version__).strip('.')}"


class TorchVersion(str):
    """``torch.__version__``'s type, as in PyTorch: a ``str`` that also orders against version
    strings and tuples by its release numbers (``torch.__version__ >= (2, 1)``,
    ``>= "2.1.0"``). Equality stays string equality.

    Example:
        >>> v = TorchVersion("2.13.0+gradviz.0.1.0")
        >>> v >= "2.6", v < (3,), v > "2.13.0rc1", v == "2.13.0+gradviz.0.1.0"
        (True, True, False, True)
    """

    __slots__ = ()

    @staticmethod
    def _release(v: Any) -> tuple[int, ...]:
        if isinstance(v, tuple):
            return tuple(int(x) for x in v)
        m = re.match(r"\s*v?(\d+(?:\.\d+)*)", str(v))
        if m is None:
            raise ValueError(f"not a version: {v!r}")
        return tuple(int(x) for x in m.group(1).split("."))

    def _cmp(self, other: Any) -> int:
        a, b = self._release(self), self._release(other)
        n = max(len(a), len(b))
        a, b = a + (0,) * (n - len(a)), b + (0,) * (n - len(b))
        return (a > b) - (a < b)

    def __lt__(self, other: Any) -> bool:
        return self._cmp(other) < 0

    def __le__(self, other: Any) -> bool:
        return self._cmp(other) <= 0

    def __gt__(self, other: Any) -> bool:
        return self._cmp(other) > 0

    def __ge__(self, other: Any) -> bool:
        return self._cmp(other) >= 0


class _StandInLoader(importlib.abc.Loader):
    """The loader of the stand-in's spec: the module is already in ``sys.modules``, so
    loading (or reloading) it again changes nothing."""

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return sys.modules.get(spec.name)

    def exec_module(self, module: types.ModuleType) -> None:
        return None


class _NoEquivalentLoader(importlib.abc.Loader):
    """Found, but loading it fails with the message naming what gradviz lacks."""

    def __init__(self, message: str) -> None:
        self.message = message

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        raise ModuleNotFoundError(self.message, name=spec.name)

    def exec_module(self, module: types.ModuleType) -> None:
        raise ModuleNotFoundError(self.message, name=module.__name__)


def _stand_in_spec(name: str) -> importlib.machinery.ModuleSpec:
    spec = importlib.machinery.ModuleSpec(name, _StandInLoader(), is_package=True,
                                          origin="gradviz standing in for " + name)
    spec.submodule_search_locations = []
    return spec


class _StandInDistribution(importlib.metadata.Distribution):
    """``importlib.metadata``'s ``torch`` while gradviz stands in: name, version and the
    top-level package; no files (nothing of real torch's is used)."""

    def read_text(self, filename: str) -> str | None:
        if filename in ("METADATA", "PKG-INFO"):
            return (f"Metadata-Version: 2.1\nName: torch\nVersion: {stand_in_version()}\n"
                    "Summary: gradviz standing in for torch (gradviz --engine gradviz)\n")
        if filename == "top_level.txt":
            return "torch\n"
        return None

    def locate_file(self, path: Any) -> Path:
        import gradviz

        return Path(gradviz.__file__).parent / str(path)


class _TorchOnGradviz(types.ModuleType):
    """``torch`` for a run on gradviz: gradviz's top level, plus the mapped submodules, with
    what import machinery and library loaders look for (NOTE [the stand-in looks installed])."""

    def __init__(self, gradviz: types.ModuleType, extra: dict[str, Any]) -> None:
        super().__init__("torch", "gradviz standing in for torch (gradviz --engine gradviz)")
        self.__dict__.update(extra)
        self.__spec__ = _stand_in_spec("torch")
        self.__loader__ = self.__spec__.loader
        self.__path__: list[str] = []  # a package, so `import torch.x` asks the finders
        self.__file__ = gradviz.__file__
        self.__version__ = TorchVersion(stand_in_version())
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
    """Finds the torch modules gradviz has no equivalent of (and the libraries built on real
    torch) with a loader that fails naming them; answers ``importlib.metadata`` for ``torch``."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None
                  ) -> importlib.machinery.ModuleSpec | None:
        top = fullname.split(".", 1)[0]
        served = sys.modules.get(fullname) if top == "torch" else None
        if served is not None:  # the stand-in or a mapped module, asked again (reload)
            return served.__spec__
        if top == "torch":
            message = (f"No module named {fullname!r}: gradviz has no equivalent of {fullname}, "
                       "so this script cannot run with --engine gradviz (run it on real PyTorch "
                       "with --engine torch)")
        elif top in TORCH_LIBRARIES:
            message = (f"{top} needs real PyTorch and gradviz has no equivalent of it, so this "
                       "script cannot run with --engine gradviz (run it on real PyTorch with "
                       "--engine torch)")
        else:
            return None
        return importlib.machinery.ModuleSpec(fullname, _NoEquivalentLoader(message))

    def find_distributions(self, context: Any = None) -> Iterator[importlib.metadata.Distribution]:
        name = getattr(context, "name", None)
        if name is None or re.sub(r"[-_.]+", "_", name).lower() == "torch":
            yield _StandInDistribution()


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
        pkg.__spec__ = _stand_in_spec(pkg_name)
        pkg.__loader__ = pkg.__spec__.loader
        for name, mod in modules.items():
            if name.rsplit(".", 1)[0] == pkg_name:
                setattr(pkg, name.rsplit(".", 1)[1], mod)
    top_extra = {name.split(".")[1]: mod for name, mod in {**modules, **packages}.items()
                 if name.count(".") == 1}
    torch = _TorchOnGradviz(gradviz, top_extra)
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
