"""The built wheel carries every package and data file, and the installed command runs.

An editable install can hide a package missing from pyproject's list (the source tree is on the
path anyway), so these tests build a real wheel from a clean copy of the tree, inspect it, and
import from the unpacked wheel alone.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from importlib.metadata import version
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

pytestmark = pytest.mark.packaging

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
SETUPTOOLS = PYPROJECT["tool"]["setuptools"]
PACKAGES: list[str] = SETUPTOOLS["packages"]
PACKAGE_DIR: dict[str, str] = SETUPTOOLS.get("package-dir", {})
# The version has one source, gradviz/_version.py (pyproject reads it: dynamic = ["version"]).
assert PYPROJECT["project"]["dynamic"] == ["version"]
PROJECT_VERSION: str = re.search(r'__version__ = "([^"]+)"',
                                 (ROOT / "gradviz" / "_version.py").read_text()).group(1)

# What the brief promises at minimum, whatever the list in pyproject grows into.
REQUIRED_PACKAGES = [
    "gradviz",
    "gradviz.ops",
    "gradviz.autograd",
    "gradviz.examples",
    "gradviz_cli",
    "gradviz_cli.commands",
]
# Source folders that hold importable packages, and the import name each is installed under.
SOURCE_ROOTS = {"gradviz": "gradviz", "cli": "gradviz_cli"}
# Never copied into the build tree: environments, VCS data and earlier build output.
COPY_IGNORE = shutil.ignore_patterns(
    ".git",
    ".venv*",  # .venv, and .venv-3.13 etc. (another Python: .ci/run)
    "venv",
    "build",
    "dist",
    "*.egg-info",
    "__pycache__",
    "*.pyc",
    ".pytest_cache",
    ".ruff_cache",
    ".hypothesis",
    ".ipynb_checkpoints",
    "gradviz-out",
)


def source_dir(package: str) -> Path:
    """Map a dotted package name to its folder in the repo, honouring ``package-dir``."""
    parts = package.split(".")
    for n in range(len(parts), 0, -1):
        prefix = ".".join(parts[:n])
        if prefix in PACKAGE_DIR:
            return ROOT / PACKAGE_DIR[prefix] / Path(*parts[n:])
    return ROOT / Path(*parts)


def source_packages() -> set[str]:
    """Every folder with an ``__init__.py`` under the source roots, as an import name."""
    found = set()
    for folder, import_name in SOURCE_ROOTS.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder)
            if "__pycache__" in rel.parts:
                continue
            found.add(".".join((import_name, *rel.parts)))
    return found


def run(cmd: list[str], **kwargs) -> subprocess.CompletedProcess[str]:
    """Run a command, capturing text output; never raises on a non-zero exit."""
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kwargs)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Build a wheel offline from a clean copy of the tree (no stale build/ can leak in)."""
    base = tmp_path_factory.mktemp("wheel")
    src = base / "src"
    shutil.copytree(ROOT, src, ignore=COPY_IGNORE)
    out = base / "dist"
    proc = run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--disable-pip-version-check",
            "-w",
            str(out),
            str(src),
        ],
    )
    assert proc.returncode == 0, f"wheel build failed:\n{proc.stdout}\n{proc.stderr}"
    wheels = sorted(out.glob("gradviz-*.whl"))
    assert len(wheels) == 1, f"expected one gradviz wheel, got {wheels}"
    return wheels[0]


@pytest.fixture(scope="module")
def wheel_names(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as zf:
        return set(zf.namelist())


@pytest.fixture(scope="module")
def unpacked_wheel(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    dest = tmp_path_factory.mktemp("unpacked")
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(dest)
    return dest


def test_required_packages_are_listed() -> None:
    missing = [p for p in REQUIRED_PACKAGES if p not in PACKAGES]
    assert not missing, f"pyproject [tool.setuptools] packages lacks {missing}"


def test_every_source_package_is_listed() -> None:
    """A new subpackage folder that nobody added to pyproject's list would vanish from the wheel."""
    unlisted = sorted(source_packages() - set(PACKAGES))
    assert not unlisted, f"add these to [tool.setuptools] packages in pyproject.toml: {unlisted}"
    for package in PACKAGES:
        assert (source_dir(package) / "__init__.py").is_file(), f"{package} has no __init__.py"


def test_no_top_level_cli_package() -> None:
    assert "cli" not in PACKAGES and not any(p.startswith("cli.") for p in PACKAGES)
    assert PACKAGE_DIR.get("gradviz_cli") == "cli"


def test_wheel_contains_every_package(wheel_names: set[str]) -> None:
    for package in PACKAGES:
        init = package.replace(".", "/") + "/__init__.py"
        assert init in wheel_names, f"{init} missing from the wheel"


def test_wheel_has_no_top_level_cli(wheel_names: set[str]) -> None:
    top_level = {name.split("/", 1)[0] for name in wheel_names}
    assert "cli" not in top_level
    assert top_level == {"gradviz", "gradviz_cli", f"gradviz-{PROJECT_VERSION}.dist-info"}


def test_wheel_contains_every_source_file(wheel_names: set[str]) -> None:
    """Every module of every package, and every package-data match, is shipped."""
    expected = []
    for package in PACKAGES:
        folder = source_dir(package)
        prefix = package.replace(".", "/")
        expected += [f"{prefix}/{f.name}" for f in folder.glob("*.py")]
    for package, patterns in SETUPTOOLS.get("package-data", {}).items():
        folder = source_dir(package)
        prefix = package.replace(".", "/")
        for pattern in patterns:
            for f in folder.glob(pattern):
                if f.is_file() and not fnmatch.fnmatch(f.name, "*.pyc"):
                    expected.append(f"{prefix}/{f.relative_to(folder).as_posix()}")
    missing = sorted(set(expected) - wheel_names)
    assert not missing, f"files missing from the wheel: {missing}"


def test_wheel_ships_the_digits_data(wheel_names: set[str]) -> None:
    """The data file is package data: listed in pyproject and inside the wheel."""
    assert "datasets/*.npz" in SETUPTOOLS["package-data"]["gradviz"]
    assert "gradviz/datasets/digits.npz" in wheel_names


def test_unpacked_wheel_loads_the_digits(unpacked_wheel: Path) -> None:
    code = ("import gradviz.data as d; X, y = d.load_digits(); "
            "print(d.__file__, tuple(X.shape), int(y.sum()))")
    proc = run(
        [sys.executable, "-S", "-c", code], env=_isolated_env(unpacked_wheel), cwd=unpacked_wheel
    )
    assert proc.returncode == 0, proc.stderr
    path, shape = proc.stdout.split(" ", 1)
    assert Path(path).resolve().is_relative_to(unpacked_wheel.resolve())
    assert shape.strip().startswith("(1797, 1, 8, 8)")


def test_wheel_declares_console_script(wheel_names: set[str], wheel: Path) -> None:
    name = f"gradviz-{PROJECT_VERSION}.dist-info/entry_points.txt"
    assert name in wheel_names
    with zipfile.ZipFile(wheel) as zf:
        entry_points = zf.read(name).decode()
    assert "[console_scripts]" in entry_points
    assert "gradviz = gradviz_cli.main:app" in entry_points


def _isolated_env(unpacked: Path) -> dict[str, str]:
    """Environment where imports resolve to the unpacked wheel, dependencies to site-packages.

    Run with ``python -S`` so no ``.pth`` file (such as the editable install's finder) can put
    the source tree back on the path.
    """
    paths = [str(unpacked)]
    for key in ("purelib", "platlib"):
        p = sysconfig.get_path(key)
        if p not in paths:
            paths.append(p)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env.pop("PYTHONHOME", None)
    return env


def test_unpacked_wheel_imports_on_its_own(unpacked_wheel: Path) -> None:
    modules = ", ".join(PACKAGES)
    code = f"import {modules}; import gradviz_cli.main; print(gradviz.__file__)"
    proc = run(
        [sys.executable, "-S", "-c", code], env=_isolated_env(unpacked_wheel), cwd=unpacked_wheel
    )
    assert proc.returncode == 0, proc.stderr
    assert Path(proc.stdout.strip()).resolve().is_relative_to(unpacked_wheel.resolve())


def test_unpacked_wheel_runs_as_module(unpacked_wheel: Path) -> None:
    env = _isolated_env(unpacked_wheel)
    proc = run([sys.executable, "-S", "-m", "gradviz", "--version"], env=env, cwd=unpacked_wheel)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"gradviz {PROJECT_VERSION}"
    proc = run([sys.executable, "-S", "-m", "gradviz", "--help"], env=env, cwd=unpacked_wheel)
    assert proc.returncode == 0, proc.stderr
    assert "demo" in proc.stdout


def installed_script() -> Path:
    """The ``gradviz`` console script of the running environment (e.g. .venv/bin/gradviz)."""
    script = Path(sysconfig.get_path("scripts")) / ("gradviz.exe" if os.name == "nt" else "gradviz")
    assert script.exists(), f"{script} not found: install the project first (`make venv`)"
    return script


def test_installed_version_matches_pyproject() -> None:
    assert version("gradviz") == PROJECT_VERSION


def test_installed_command_version() -> None:
    proc = run([str(installed_script()), "--version"])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"gradviz {PROJECT_VERSION}"


def test_python_m_gradviz_version() -> None:
    proc = run([sys.executable, "-m", "gradviz", "--version"], cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"gradviz {PROJECT_VERSION}"


def test_installed_command_help_lists_demo() -> None:
    proc = run([str(installed_script()), "--help"])
    assert proc.returncode == 0, proc.stderr
    assert "demo" in proc.stdout
