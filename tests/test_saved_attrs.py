"""Saved attributes as PyTorch fills them (its autograd codegen's rule, gradviz.ops.opinfo
.saved_for): sizes and strides of the matrix products, what is saved for inputs that need no
gradient, and the order values are saved in."""

from __future__ import annotations

import gradviz
from gradviz.ops.opinfo import OPS, saved_for


def test_addmm_saves_sizes_for_inputs_that_need_no_gradient() -> None:
    bias = gradviz.ones(4, requires_grad=True)
    a, b = gradviz.ones(2, 3), gradviz.ones(3, 4)
    node = gradviz.addmm(bias, a, b).grad_fn
    assert node.name() == "AddmmBackward0"
    assert node._saved_mat1_sym_sizes == (2, 3) and node._saved_mat2_sym_sizes == (3, 4)
    # tensors and strides only one formula reads are saved when that formula runs
    assert node._saved_mat1 is None and node._saved_mat2 is None
    assert node._saved_mat1_sym_strides == () and node._saved_mat2_sym_strides == ()
    assert (node._saved_alpha, node._saved_beta) == (1, 1)


def test_mm_strides_in_elements_follow_the_layout() -> None:
    a = gradviz.ones(3, 2, requires_grad=True)
    b = gradviz.ones(3, 5)
    node = a.t().mm(b).grad_fn  # self is a transposed view
    assert node._saved_self_sym_strides == (1, 2)
    assert node._saved_self_sym_sizes == (2, 3)
    assert node._saved_mat2_sym_strides == ()  # mat2 needs no gradient
    assert node._saved_mat2.shape == (3, 5) and node._saved_self is None
    both = a.t().mm(b.requires_grad_()).grad_fn
    assert both._saved_mat2_sym_strides == (5, 1)


def test_save_rule_and_order() -> None:
    # alphabetical, as PyTorch's nodes declare (and save) their fields
    assert saved_for(OPS["addmm"], 0b111) == [
        "alpha", "beta", "mat1", "mat1_sym_sizes", "mat1_sym_strides", "mat2",
        "mat2_sym_sizes", "mat2_sym_strides"]
    # mul: `other` is read by self's formula only, so it is saved only when self needs a grad
    assert saved_for(OPS["mul"], 0b01) == ["other"]
    assert saved_for(OPS["mul"], 0b10) == ["self"]
    # div: `other` is read by both formulas: saved whichever input needs a gradient
    assert "other" in saved_for(OPS["div"], 0b01) and "other" in saved_for(OPS["div"], 0b10)
