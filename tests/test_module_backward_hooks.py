"""Module.register_full_backward_hook / _pre_hook / register_backward_hook (NOTE [module
backward hooks]): the two BackwardHookFunctionBackward nodes, what the hooks receive and may
replace, and torch 2.13's warnings and error texts. tests/parity/test_module_backward_hooks_
parity.py runs PROGRAM on torch and gradviz and compares everything it records."""

from __future__ import annotations

import warnings

import pytest

import gradviz


def _rounded(grads):
    return [None if g is None else [round(v, 4) for v in g.reshape(-1).tolist()] for g in grads]


def program(m) -> list:
    """What a learner would check, with library ``m`` (gradviz or torch)."""
    out: list = []
    lin = m.nn.Linear(3, 2)
    with m.no_grad():
        lin.weight.copy_(m.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))
        lin.bias.fill_(0.5)
    handle = lin.register_full_backward_hook(
        lambda mod, gi, go: out.append(("hook", type(mod).__name__, _rounded(gi), _rounded(go))))
    x = m.tensor([[1.0, 0.0, -1.0], [2.0, 1.0, 0.0]], requires_grad=True)
    y = lin(x)
    out.append(type(y.grad_fn).__name__)
    out.append([type(n).__name__ for n, _ in y.grad_fn.next_functions[0][0].next_functions])
    y.sum().backward()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lin(m.ones(2, 3)).sum().backward()  # no input requires grad: fires at the outputs
    out.append([str(w.message) for w in caught])
    handle.remove()

    pre = m.nn.Linear(3, 2)
    pre.register_full_backward_pre_hook(lambda mod, go: (go[0] * 0,))
    x.grad = None
    pre(x).sum().backward()
    out.append(x.grad.abs().sum().item())

    class Two(m.nn.Module):
        def forward(self, a, b, scale=1.0):
            return a * b * scale, a + b

    two = Two()
    two.register_full_backward_hook(
        lambda mod, gi, go: out.append(("two", _rounded(gi), _rounded(go))))
    a, b = m.tensor([1.0, 2.0], requires_grad=True), m.tensor([3.0, 4.0])
    p, s = two(a, b)
    out.append(p.grad_fn is s.grad_fn)
    p.sum().backward()  # s unused: its grad_output is None

    for make in (lambda mod, gi, go: (gi[0], gi[0]), ):
        bad = m.nn.Linear(3, 2)
        bad.register_full_backward_hook(make)
        try:
            bad(x).sum().backward()
        except RuntimeError as e:
            out.append(str(e))
    bad_pre = m.nn.Linear(3, 2)
    bad_pre.register_full_backward_pre_hook(lambda mod, go: (go[0], go[0]))
    try:
        bad_pre(x).sum().backward()
    except RuntimeError as e:
        out.append(str(e))
    mixed = m.nn.Linear(3, 2)
    mixed.register_full_backward_hook(lambda *args: None)
    try:
        mixed.register_backward_hook(lambda *args: None)
    except RuntimeError as e:
        out.append(str(e))

    legacy = m.nn.Linear(3, 2)
    legacy.register_backward_hook(lambda mod, gi, go: out.append(("legacy", len(gi))))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        legacy(x).sum().backward()
    out.append([(w.category.__name__, str(w.message)) for w in caught])

    relu = m.nn.ReLU(inplace=True)
    relu.register_full_backward_hook(lambda *args: None)
    try:
        relu(m.ones(2, requires_grad=True) * 1)
    except RuntimeError as e:
        out.append(str(e)[:60])

    seq = m.nn.Sequential(m.nn.Linear(3, 3), m.nn.ReLU(), m.nn.Linear(3, 1))
    order: list = []
    for i, mod in enumerate(seq):
        mod.register_full_backward_hook(lambda mod, gi, go, i=i: order.append(i))
    seq(x).sum().backward()
    out.append(order)
    return out


def test_program_records_what_torch_does() -> None:
    got = program(gradviz)
    assert got[0] == "BackwardHookFunctionBackward"
    # addmm's inputs: the bias, the inputs' BackwardHookFunction node, weight.t()
    assert got[1] == ["AccumulateGrad", "BackwardHookFunctionBackward", "TBackward0"]
    assert got[2] == ("hook", "Linear", [[5.0, 7.0, 9.0, 5.0, 7.0, 9.0]], [[1.0] * 4])
    assert got[3] == ("hook", "Linear", [None], [[1.0] * 4])
    assert got[4] == ["Full backward hook is firing when gradients are computed with respect to "
                      "module outputs since no inputs require gradients. See https://docs."
                      "pytorch.org/docs/main/generated/torch.nn.Module.html#torch.nn.Module."
                      "register_full_backward_hook for more details."]
    assert got[5] == 0.0  # the pre-hook zeroed grad_output
    assert got[6] is True  # one outputs' node for both outputs
    assert got[7] == ("two", [[3.0, 4.0], [0.0, 0.0]], [[1.0, 1.0], None])
    assert got[8] == "Backward hook returned an invalid number of grad_input, got 2, but expected 1"
    assert got[9] == ("Backward pre hook returned an invalid number of grad_output, got 2, but "
                      "expected 1")
    assert got[10] == ("Cannot use both regular backward hooks and full backward hooks on a "
                       "single Module. Please use only one of them.")
    assert got[11] == ("legacy", 3)  # addmm's three gradients
    assert got[12] == [("FutureWarning", "Using a non-full backward hook when the forward contains "
                        "multiple autograd Nodes is deprecated and will be removed in future "
                        "versions. This hook will be missing some grad_input. Please use "
                        "register_full_backward_hook to get the documented behavior.")]
    assert got[13] == "Output 0 of BackwardHookFunction is a view and is being modi"
    assert got[14] == [2, 1, 0]  # the last layer's hook first


def test_no_hooks_no_extra_nodes_and_handles_remove_them() -> None:
    lin = gradviz.nn.Linear(3, 2)
    x = gradviz.ones(2, 3, requires_grad=True)
    assert type(lin(x).grad_fn).__name__ == "AddmmBackward0"
    handle = lin.register_full_backward_pre_hook(lambda mod, go: None)
    assert type(lin(x).grad_fn).__name__ == "BackwardHookFunctionBackward"
    handle.remove()
    assert type(lin(x).grad_fn).__name__ == "AddmmBackward0"
    with gradviz.no_grad():
        lin.register_full_backward_hook(lambda *args: None)
        assert lin(x).grad_fn is None


def test_a_hook_for_modules_without_input_grads_may_not_return_gradients() -> None:
    lin = gradviz.nn.Linear(3, 2)
    lin.register_full_backward_hook(lambda mod, gi, go: (gradviz.ones(2, 3),))
    with pytest.warns(UserWarning, match="Full backward hook is firing"), \
            pytest.raises(RuntimeError, match="^Backward hook for Modules where no input requires "
                                              "gradient should always return None or None for "
                                              "all gradients.$"):
        lin(gradviz.ones(2, 3)).sum().backward()
