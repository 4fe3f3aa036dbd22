"""Every docstring example in the library runs and prints what it says."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import gradviz

# Scripts that run on import, not modules with examples.
SKIP = ("gradviz.examples.", "gradviz.__main__")
# Modules whose examples run real PyTorch: tests/parity/test_doctests_parity.py runs them.
NEEDS_TORCH = ("gradviz.trace.torch_source",)
MODULES = sorted(
    m.name for m in pkgutil.walk_packages(gradviz.__path__, "gradviz.")
    if not m.name.startswith(SKIP) and m.name not in SKIP + NEEDS_TORCH)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    run_docstring_examples(name)


def run_docstring_examples(name: str) -> None:
    """Run every ``>>>`` example of module ``name``; fail with the count of those that failed."""
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    for test in finder.find(module, name):  # each example sees its module's globals
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"


def test_the_public_api_has_examples() -> None:
    """Public functions in the top-level namespace carry a docstring with an example."""
    missing = [n for n in gradviz.__all__
               if callable(getattr(gradviz, n)) and not isinstance(getattr(gradviz, n), type)
               and getattr(gradviz, n).__module__.startswith("gradviz")
               and ">>>" not in (getattr(gradviz, n).__doc__ or "")]
    assert not missing, f"public functions without an example: {missing}"
