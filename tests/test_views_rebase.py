"""Views, in-place ops and versions as PyTorch 2.13 has them (issue #14): the view rebase
(``AsStridedBackward0``), ``CopySlices``, views made under no_grad, ``detach_``, expanded
writes, and saved index lists freed after backward. Torch comparisons of the same programs are
in tests/parity/test_functions_views_parity.py."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import gradviz
from gradviz.autograd.graph import FREED_MESSAGE


def _next(t: gradviz.Tensor) -> list:
    return [(None if n is None else n.name(), i) for n, i in t.grad_fn.next_functions]


def test_views_get_as_strided_backward_after_their_base_is_modified():
    a = gradviz.ones(2, 3, requires_grad=True)
    b = a * 1
    v, w = b[0], b.view(3, 2)
    assert (v.grad_fn.name(), w.grad_fn.name()) == ("SelectBackward0", "ViewBackward0")
    b.mul_(2)
    for view in (v, w):
        assert view.grad_fn.name() == "AsStridedBackward0"
        assert _next(view) == [("MulBackward0", 0)]
        assert view.grad_fn.next_functions[0][0] is b.grad_fn
    assert (v.grad_fn._saved_size, v.grad_fn._saved_stride, v.grad_fn._saved_storage_offset) \
        == ((3,), (1,), 0)
    assert "grad_fn=<AsStridedBackward0>" in repr(w)
    (v.sum() + w.sum()).backward()
    np.testing.assert_allclose(a.grad.numpy(), [[4, 4, 4], [2, 2, 2]])


def test_in_place_on_one_view_rebases_the_base_and_every_view():
    a = gradviz.ones(2, 3, requires_grad=True)
    b = a * 1
    v, col = b[0], b[:, 1]
    v.mul_(2)
    assert b.grad_fn.name() == "torch::autograd::CopySlices"
    assert type(b.grad_fn).__name__ == "CopySlices" and "grad_fn=<CopySlices>" in repr(b)
    assert _next(b) == [("MulBackward0", 0), (None, 0)]
    for view in (v, col):
        assert _next(view) == [("torch::autograd::CopySlices", 0)]
    assert col.tolist() == [2.0, 1.0]
    (v.sum() + col.sum() * 3 + b.sum()).backward()
    np.testing.assert_allclose(a.grad.numpy(), [[4, 10, 4], [1, 4, 1]])


def test_view_of_a_view_and_its_strides():
    b = gradviz.ones(2, 3, requires_grad=True) * 1
    t = b.t()
    u = b[1, 1:]
    e = b.expand(2, 2, 3)
    b.add_(1)
    assert (t.grad_fn._saved_size, t.grad_fn._saved_stride) == ((3, 2), (1, 3))
    assert (u.grad_fn._saved_size, u.grad_fn._saved_stride, u.grad_fn._saved_storage_offset) \
        == ((2,), (1,), 4)
    assert e.grad_fn._saved_stride == (0, 3, 1)


def test_rebased_gradients_match_finite_differences():
    def fn(x):
        b = x * x
        v = b[1:]
        b.mul_(x)
        return (v * v).sum()

    x = gradviz.tensor([1.0, 2.0, 3.0], dtype=gradviz.float64, requires_grad=True)
    assert gradviz.autograd.gradcheck(fn, (x,))
    assert gradviz.autograd.gradgradcheck(fn, (x,))


def test_retain_grad_moves_to_the_new_grad_fn_but_hooks_stay():
    x = gradviz.ones(3, requires_grad=True)
    b = x * 1
    b.retain_grad()
    seen = []
    b.register_hook(lambda g: seen.append(g.tolist()))
    b.mul_(2)
    b.sum().backward()
    assert b.grad.tolist() == [1.0, 1.0, 1.0]  # the gradient of the tensor as it is now
    assert seen == [[2.0, 2.0, 2.0]]  # the hook still sees the old value's gradient
    a = gradviz.ones(3, requires_grad=True)
    h = a * 1
    v = h[:2]
    v.retain_grad()
    h.mul_(2)
    v.sum().backward()
    assert v.grad.tolist() == [1.0, 1.0]


@pytest.mark.parametrize("other_view_first", [False, True])
def test_a_retained_view_keeps_retaining_through_its_own_in_place_op(other_view_first):
    # As torch 2.13: the view's grad is that of its value after the write (v * 5 -> 5s), also
    # when another view of the base was written first (the view's grad_fn regenerated then).
    b = gradviz.ones(4, requires_grad=True) * 1
    v = b[:2]
    v.retain_grad()
    if other_view_first:
        b[2:].mul_(3)
    v.mul_(2)
    (v * 5).sum().backward()
    assert v.retains_grad and v.grad.tolist() == [5.0, 5.0]


def test_views_made_under_no_grad_require_grad_and_refuse_a_rebase():
    a = gradviz.ones(2, 3, requires_grad=True)
    b = a * 1
    with gradviz.no_grad():
        v = b[0]
    assert v.requires_grad and v.grad_fn is None and v.is_leaf
    assert repr(v) == "tensor([1., 1., 1.], requires_grad=True)"
    with pytest.raises(RuntimeError, match="A view was created in no_grad mode and is being "
                       "modified inplace with grad mode enabled"):
        v.mul_(2)
    with gradviz.no_grad():
        w = b[1]
        w.mul_(2)
    assert repr(w) == "tensor([2., 2., 2.], grad_fn=<Invalid>)"
    # As torch 2.13: asking for requires_grad never rebases (so never raises); is_leaf does.
    assert w.requires_grad
    with pytest.raises(RuntimeError, match="A view was created in no_grad mode and its base or "
                       "another view of its base has been modified inplace"):
        w.is_leaf  # noqa: B018


def test_in_place_on_a_view_of_a_leaf_that_later_requires_grad_is_refused():
    # The view was taken before its base required grad; torch 2.13 still refuses the write.
    for other in (2.0, gradviz.ones(2, requires_grad=True)):
        a = gradviz.ones(3)
        v = a[:2]
        w = v[:1]
        a.requires_grad_()
        for target in (v, w):
            with pytest.raises(RuntimeError, match="^a view of a leaf Variable that requires "
                               "grad is being used in an in-place operation.$"):
                target.mul_(other[:1] if target is w and not isinstance(other, float) else other)
        assert a.tolist() == [1.0, 1.0, 1.0]



def test_a_view_of_a_leaf_that_later_requires_grad_requires_grad_too():
    # torch 2.13: a view requires grad when its base does, whenever the view was taken.
    a = gradviz.ones(3)
    v = a[1:]
    w = v[:1]
    assert not v.requires_grad and not w.requires_grad
    a.requires_grad_()
    assert v.requires_grad and w.requires_grad
    assert v.is_leaf and v.grad_fn is None


@pytest.mark.parametrize("mode", [gradviz.no_grad, gradviz.inference_mode])
def test_writing_a_view_of_a_view_with_grad_off_again_leaves_requires_grad_readable(mode):
    # The view of a view made with grad off is written with grad off too: allowed, and asking
    # requires_grad afterwards is True (torch 2.13), while its grad_fn is refused.
    b = gradviz.ones(4, requires_grad=True) * 1
    with mode():
        v = b[:3]
    w = v[:2]
    with mode():
        w.mul_(2)
    assert w.requires_grad
    with pytest.raises(RuntimeError, match="^Output 0 of Slice is a view of a view which was "
                                           "created in (no_grad|inference) mode and its base or "
                                           "another view of its base has been modified inplace"):
        w.grad_fn  # noqa: B018
    assert b.tolist() == [2.0, 2.0, 1.0, 1.0]


_NO_GRAD_HINT = ("Given that this use case is ambiguous and error-prone, it is forbidden. You can "
                 "clarify your code by moving both the view and the inplace either both inside "
                 "the {} block (if you don't want the inplace to be tracked) or both outside (if "
                 "you want the inplace to be tracked).")


@pytest.mark.parametrize(("mode", "name", "write"), [
    (gradviz.no_grad, "no_grad", "with grad mode enabled."),
    (gradviz.inference_mode, "inference_mode", "in normal mode."),
])
def test_a_view_of_a_view_made_with_grad_off_names_both_in_its_error(mode, name, write):
    # Texts as torch 2.13 gives them; the view of the view has a grad_fn (SliceBackward0).
    said = "no_grad mode" if name == "no_grad" else "inference mode"
    b = gradviz.ones(4, requires_grad=True) * 1
    with mode():
        v = b[:3]
    with pytest.raises(RuntimeError) as exc:
        v.mul_(2)
    assert str(exc.value) == (f"A view was created in {said} and is being modified inplace "
                              f"{write} " + _NO_GRAD_HINT.format(name))
    vv = v[:2]
    with pytest.raises(RuntimeError) as exc:
        vv.mul_(2)
    assert str(exc.value) == (f"Output 0 of Slice is a view of a view which was created in "
                              f"{said} and is being modified inplace {write} "
                              + _NO_GRAD_HINT.format(name))
    b.mul_(2)
    with pytest.raises(RuntimeError) as exc:
        vv.grad_fn  # noqa: B018
    assert str(exc.value).startswith(
        f"Output 0 of Slice is a view of a view which was created in {said} and its base or "
        f"another view of its base has been modified inplace {write} Given")


def test_outputs_of_split_refuse_a_rebase():
    b = gradviz.ones(4, requires_grad=True) * 1
    s = b.split(2)
    b.mul_(2)
    with pytest.raises(RuntimeError, match="Output 1 of Split is a view and its base or another "
                       "view of its base has been modified inplace. This view is the output of a "
                       "function that returns multiple views"):
        s[1].grad_fn  # noqa: B018


def test_detach__on_a_view_raises():
    with pytest.raises(RuntimeError, match=r"^Can't detach views in-place. Use detach\(\) "):
        gradviz.ones(3)[:2].detach_()


def test_detach__of_a_saved_input_is_found_at_backward():
    a = gradviz.ones(3, requires_grad=True)
    b = a * 1
    c = b * b
    b.detach_()
    assert not b.requires_grad and b._version == 0
    with pytest.raises(RuntimeError, match="Trying to use a saved tensor that has been detached "
                       r"in-place, i.e. with .detach_\(\)"):
        c.sum().backward()


def test_a_tensor_cannot_be_its_own_grad():
    x = gradviz.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="^can't assign Variable as its own grad$"):
        x.grad = x


def test_numpy_works_under_no_grad_only():
    x = gradviz.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"Can't call numpy\(\) on Tensor that requires grad"):
        x.numpy()
    with gradviz.no_grad():
        assert x.numpy().tolist() == [1.0, 1.0, 1.0]


def test_writing_into_an_expanded_tensor():
    x = gradviz.ones(1, 3)
    e = x.expand(2, 3)
    e[0, 0] = 5  # one element: the memory both rows share
    assert e.tolist() == [[5, 1, 1], [5, 1, 1]] and x.tolist() == [[5, 1, 1]]
    e.fill_(2)
    assert x.tolist() == [[2, 2, 2]]
    with pytest.raises(RuntimeError, match="^unsupported operation: more than one element of the "
                       r"written-to tensor refers to a single memory location.*\(mul_ on an "
                       r"expanded tensor of shape \[2, 3\]\)"):
        e.mul_(2)
    a = gradviz.ones(1, 3, requires_grad=True)
    y = a * 1
    ey = y.expand(2, 3)
    ey[0, 1] = 5
    assert ey.grad_fn.name() == "AsStridedBackward0" and type(y.grad_fn).__name__ == "CopySlices"
    y.sum().backward()
    assert a.grad.tolist() == [[1.0, 0.0, 1.0]]


@pytest.mark.parametrize("index", [lambda x: x[[1, 1]], lambda x: x[x > 0]],
                         ids=["list", "mask"])
def test_saved_indices_are_freed_after_backward(index):
    x = gradviz.ones(3, requires_grad=True)
    y = index(x)
    assert isinstance(y.grad_fn._saved_indices[0], gradviz.Tensor)
    y.sum().backward()
    with pytest.raises(RuntimeError, match="^" + FREED_MESSAGE[:40]):
        y.sum().backward()
    with pytest.raises(RuntimeError, match="^" + FREED_MESSAGE[:40]):
        y.grad_fn._saved_indices  # noqa: B018


def test_saved_indices_are_version_checked():
    x = gradviz.ones(3, requires_grad=True)
    i = gradviz.tensor([0, 2])
    y = x[i]
    i.add_(0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_no_view_warnings_on_plain_programs():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = gradviz.ones(2, 2, requires_grad=True)
        (a[0] * a[1]).sum().backward()
    assert a.grad.tolist() == [[1, 1], [1, 1]]


def _sampled_rows() -> list[str]:
    from gradviz.ops import OPS

    return sorted(name for name, op in OPS.items() if op.samples)


@pytest.mark.parametrize("name", _sampled_rows())
def test_every_rows_saved_tensors_are_freed_after_backward(name):
    import zlib
    from functools import partial

    from gradviz.ops import OPS
    from gradviz.ops.dispatch import dispatch

    op = OPS[name]
    for sample in op.samples:
        args, kwargs = sample.build(np.random.default_rng(zlib.crc32(name.encode())))
        fn = getattr(gradviz, op.function) if op.function else partial(dispatch, op)
        out = fn(*args, **kwargs)
        outs = out if isinstance(out, tuple) else (out,)
        node = outs[0].grad_fn
        sum(o.sum() for o in outs if o.requires_grad).backward()
        for attr in (a for a in dir(node) if a.startswith("_saved_")):
            try:
                value = getattr(node, attr)
            except RuntimeError as e:
                assert str(e) == FREED_MESSAGE
                continue
            values = value if isinstance(value, tuple) else (value,)
            assert not any(isinstance(v, gradviz.Tensor) for v in values), (name, attr)
