"""A row of the derivative table drives its op's API, exports, docs and tests.

* every row with samples records its own node, with the saved names the row declares;
* every row with ``function=`` is exported from ``gradviz`` and (with ``method``/``inplace``)
  installed on ``Tensor``, and its generated docstring example holds;
* docs/ops.md's "Add an op" block, run as it stands in a fresh interpreter, adds ``rad2deg`` through
  the public path, and the new op is then everywhere a table op is: function, methods, exports,
  the docs table, gradcheck and gradgradcheck of its samples, node and saved names.
"""

from __future__ import annotations

import doctest
import re
import subprocess
import sys
import textwrap
import zlib
from functools import partial
from pathlib import Path

import numpy as np
import pytest

import gradviz
from gradviz.ops import OPS, functional
from gradviz.ops.dispatch import dispatch

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "ops.md"
SAMPLED = sorted(name for name, op in OPS.items() if op.samples)
PUBLISHED = sorted(name for name, op in OPS.items() if op.function)


def _saved(node: object) -> list[str]:
    return sorted(a[len("_saved_"):] for a in dir(node) if a.startswith("_saved_"))


@pytest.mark.parametrize("name", SAMPLED)
def test_sample_records_the_rows_node_and_saved_names(name: str) -> None:
    op = OPS[name]
    for sample in op.samples:
        args, kwargs = sample.build(np.random.default_rng(zlib.crc32(name.encode())))
        # A row without generated API (convolution, pooling, remainder_scalar) runs through the
        # dispatch point itself.
        fn = getattr(gradviz, op.function) if op.function else partial(dispatch, op)
        out = fn(*args, **kwargs)
        if op.multi:  # (values, indices ...): the first output carries the node
            out = out[0]
        assert out.grad_fn.name() == op.node
        assert _saved(out.grad_fn) == sorted(n for n in op.saved_names if n not in op.hidden)


@pytest.mark.parametrize("name", PUBLISHED)
def test_generated_api_is_exported_and_installed(name: str) -> None:
    op = OPS[name]
    fn = getattr(functional, op.function)
    assert getattr(gradviz, op.function) is fn
    assert op.function in gradviz.__all__ and op.function in functional.__all__
    method = getattr(gradviz.Tensor, op.function, None)
    inplace = getattr(gradviz.Tensor, op.function + "_", None)
    if op in getattr(fn, "ops", ()):  # torch's overloads (NOTE [overloaded rows]): one each
        assert fn.functions[op.name].op is op
        assert (op.name in getattr(method, "overloads", ())) == op.method
        assert (op.name in getattr(inplace, "overloads", ())) == op.inplace
        assert (op.node or "Not differentiable") in fn.__doc__
        return
    # (a method taking more than self words its argument errors as torch's: it wraps `fn`)
    assert (method is fn or getattr(method, "__wrapped__", None) is fn) == op.method
    # (an in-place method may also be hand-written: `asinh_` records another node than `asinh`)
    assert (getattr(inplace, "op", None) is op) == op.inplace
    assert (op.node or "Not differentiable") in fn.__doc__  # (a row without a node: no grad)


@pytest.mark.parametrize("name", PUBLISHED)
def test_generated_docstring_example_holds(name: str) -> None:
    fn = getattr(gradviz, OPS[name].function)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    tests = doctest.DocTestFinder().find(fn, name, globs={})
    assert tests and tests[0].examples, f"{name}: no example in the generated docstring"
    for test in tests:
        runner.run(test)
    assert runner.failures == 0


def test_inplace_method_bumps_the_version_and_records_the_row() -> None:
    x = gradviz.tensor([0.5, 1.5], requires_grad=True)
    y = x * 1
    v = y._version
    y.exp_()
    assert y._version == v + 1 and y.grad_fn.name() == "ExpBackward0"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp([0.5, 1.5]))


def _doc_block() -> str:
    text = DOC.read_text()
    section = text.split("## Add an op", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 1, "docs/ops.md's 'Add an op' section must hold one python block"
    return blocks[0]


# What the test checks after the doc's block ran, in the same interpreter.
_CHECKS = textwrap.dedent("""
    import sys
    sys.path.insert(0, {scripts!r})
    import numpy as np
    from gen_ops_doc import table
    from gradviz.autograd import gradcheck, gradgradcheck
    from gradviz.ops import OPS, functional

    op = OPS["rad2deg"]
    assert gradviz.rad2deg is functional.rad2deg and "rad2deg" in functional.__all__
    assert gradviz.Tensor.rad2deg is functional.rad2deg and hasattr(gradviz.Tensor, "rad2deg_")
    assert y.grad_fn.name() == "Rad2DegBackward0"
    assert sorted(a for a in dir(y.grad_fn) if a.startswith("_saved_")) == []
    np.testing.assert_allclose(x.grad.numpy(), [180 / np.pi] * 2)
    z = x.detach().clone().requires_grad_(True) * 1
    z.rad2deg_()
    assert z.grad_fn.name() == "Rad2DegBackward0" and z._version == 1
    rows = [line for line in table().splitlines() if line.startswith("| `rad2deg` |")]
    assert rows == ["| `rad2deg` | `rad2deg(Tensor self) -> Tensor` | `gradviz.rad2deg` | "
                    "`.rad2deg()`, `.rad2deg_()` | `Rad2DegBackward0` | — | Radians to degrees. |"
                    ], rows
    out = gradviz.empty(0)
    assert gradviz.rad2deg(x.detach(), out=out) is out and out.grad_fn is None
    rng = np.random.default_rng(0)
    for sample in op.samples:
        args, kwargs = sample.build(rng)
        assert gradcheck(lambda *a: gradviz.rad2deg(*a, **kwargs), args)
        assert gradgradcheck(lambda *a: gradviz.rad2deg(*a, **kwargs), args)
    print("ADD-AN-OP OK")
""")


def test_add_an_op_as_docs_ops_md_says() -> None:
    program = _doc_block() + _CHECKS.format(scripts=str(ROOT / "scripts"))
    proc = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "Rad2DegBackward0 tensor([28.6479, 57.2958])"
    assert lines[1] == "tensor([57.2958, 57.2958])"
    assert lines[-1] == "ADD-AN-OP OK"


def test_a_row_cannot_be_declared_twice() -> None:
    with pytest.raises(ValueError, match="declared twice"):
        gradviz.ops.defop("exp", "ExpBackward0", np.exp, ("self",))


def test_method_without_function_is_refused() -> None:
    with pytest.raises(ValueError, match="need function="):
        gradviz.ops.defop("nameless_demo", "NamelessBackward0", np.exp, ("self",), method=True)
    assert "nameless_demo" not in OPS
