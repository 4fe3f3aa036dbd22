"""Each row's signature is torch 2.13's schema for that op (NOTE [signature rows] in
gradviz/ops/opinfo.py): the same argument names, types, defaults and keyword-only marker, and the
generated method, in-place method and ``out=`` variant exist where torch has them."""

from __future__ import annotations

import pytest
import torch

from gradviz.ops import OPS
from gradviz.ops.schema import parse

SIGNED = sorted(name for name, op in OPS.items() if op.signature is not None)
# Rows whose out= variant waits on a file outside the op table (named in the row).
OUT_PENDING = {"neg"}
# torch's in-place methods gradviz does not have yet (cumsum_ with dtype= converts first).
INPLACE_MISSING = {"cumsum", "cumprod"}


def _torch_schema(op):
    s = op.signature
    packet = getattr(torch.ops.aten, s.name)
    return parse(str(getattr(packet, s.overload or "default")._schema))


@pytest.mark.parametrize("name", SIGNED)
def test_the_signature_is_torch_s_schema(name: str) -> None:
    op = OPS[name]
    theirs = _torch_schema(op)
    assert [(a.name, a.type, a.default, a.kwarg_only) for a in op.signature.arguments] == [
        (a.name, a.type, a.default, a.kwarg_only) for a in theirs.arguments]
    assert op.signature.returns == theirs.returns


@pytest.mark.parametrize("name", SIGNED)
def test_the_generated_forms_are_torch_s(name: str) -> None:
    op = OPS[name]
    fn = op.function
    assert hasattr(torch, fn)
    if not op.signature.arguments[0].is_tensor:  # pow.Scalar (a number self): no method
        assert not op.method and not op.inplace
    elif op.method != hasattr(torch.Tensor, fn):
        raise AssertionError(f"{name}: method={op.method}, torch's Tensor.{fn} exists: "
                             f"{hasattr(torch.Tensor, fn)}")
    elif op.inplace:
        assert hasattr(torch.Tensor, fn + "_")
    elif hasattr(torch.Tensor, fn + "_"):  # then another row records it (asinh_ ...)
        assert fn + "_" in OPS or fn in INPLACE_MISSING
    overloads = torch._C._jit_get_schemas_for_operator(f"aten::{fn}")
    # the out= variant of the row's overload: `out`, or `Tensor_Scalar_out` of pow.Tensor_Scalar
    # (`OutScalar_Self` of xlogy.Scalar_Self)
    o = op.signature.overload
    out_names = ("out", f"{o}_out", f"Out{o}") if o else ("out",)
    has_out = any(s.overload_name in out_names for s in overloads)
    assert op.with_out == (has_out and name not in OUT_PENDING)
