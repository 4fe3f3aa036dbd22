"""The meta device (NOTE [meta device] in gradviz/_device.py): tensors with a shape, a dtype and
a graph but no values, as in PyTorch 2.13. The expected reprs, values, errors and graphs below
are PyTorch's, hard-coded (``torch.`` read as ``gradviz.``); tests/parity/test_meta_parity.py
derives them again from a live torch.

Each program is a Python expression over ``m`` (the library: gradviz here, torch in the
parity file), ``meta`` (``m.empty(2, 3, device="meta")``) and, for the graphs, ``meta_w``
(``m.randn(6, device="meta", requires_grad=True)``).
"""

from __future__ import annotations

import io
import warnings
from typing import Any

import numpy as np
import pytest

import gradviz
from gradviz import nn


def namespace(lib: Any) -> dict[str, Any]:
    """The names a program sees, made with ``lib``."""
    return {"m": lib, "meta": lib.empty(2, 3, device="meta"),
            "meta_w": lib.randn(6, device="meta", requires_grad=True)}


def shown(x: Any) -> str:
    """``repr(x)`` with torch's module name read as gradviz's."""
    return repr(x).replace("torch.", "gradviz.").replace("torch", "gradviz")


def names(t: Any) -> list[str]:
    """The names of ``t``'s graph, breadth first from its grad_fn (each node once)."""
    out, seen, queue = [], set(), [t.grad_fn]
    while queue:
        node = queue.pop(0)
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        out.append(node.name().replace("torch::autograd::", ""))
        queue.extend(fn for fn, _ in node.next_functions)
    return out


def run_graph(src: str, lib: Any) -> tuple[list[str], str, str | None]:
    """A GRAPHS program's node names, repr, and meta_w.grad's repr after backward."""
    ns = namespace(lib)
    y = eval(src, ns)  # noqa: S307 - the programs are this file's
    grad = None
    if y.dim() == 0:
        y.backward()
        grad = shown(ns["meta_w"].grad)
    return names(y), shown(y), grad


def raised(src: str, lib: Any) -> tuple[str, str]:
    """The type name and message of what ``src`` raises."""
    with pytest.raises(Exception) as info:
        eval(src, namespace(lib))  # noqa: S307 - the programs are this file's
    return type(info.value).__name__, str(info.value).replace("torch", "gradviz")


# (program, its result's repr): a meta tensor prints `...`, its device and size, never values
REPRS: list[tuple] = [
    ("m.empty(2, 3, device='meta')", "tensor(..., device='meta', size=(2, 3))"),
    ("m.zeros(2, device=m.device('meta'))", "tensor(..., device='meta', size=(2,))"),
    ("m.ones((), device='meta')", "tensor(..., device='meta', size=())"),
    ("m.ones(0, device='meta')", "tensor(..., device='meta', size=(0,))"),
    ("m.ones(0, 3, device='meta')", "tensor(..., device='meta', size=(0, 3))"),
    (
        "m.ones(2, device='meta', requires_grad=True)",
        "tensor(..., device='meta', size=(2,), requires_grad=True)",
    ),
    (
        "m.ones(2, device='meta', dtype=m.int64)",
        "tensor(..., device='meta', size=(2,), dtype=gradviz.int64)",
    ),
    (
        "m.ones(2, device='meta', dtype=m.float64)",
        "tensor(..., device='meta', size=(2,), dtype=gradviz.float64)",
    ),
    ("m.full((2,), 3.0, device='meta')", "tensor(..., device='meta', size=(2,))"),
    (
        "m.full((2,), 3, device='meta')",
        "tensor(..., device='meta', size=(2,), dtype=gradviz.int64)",
    ),
    ("m.randn(2, 2, device='meta')", "tensor(..., device='meta', size=(2, 2))"),
    ("m.rand(3, device='meta')", "tensor(..., device='meta', size=(3,))"),
    ("m.arange(5, device='meta')", "tensor(..., device='meta', size=(5,), dtype=gradviz.int64)"),
    ("m.tensor([1.0, 2.0], device='meta')", "tensor(..., device='meta', size=(2,))"),
    ("m.tensor(True, device='meta')", "tensor(..., device='meta', size=(), dtype=gradviz.bool)"),
    ('m.zeros_like(meta)', "tensor(..., device='meta', size=(2, 3))"),
    ('m.randn_like(meta)', "tensor(..., device='meta', size=(2, 3))"),
    ("m.ones_like(m.ones(2), device='meta')", "tensor(..., device='meta', size=(2,))"),
    (
        'm.empty_like(meta, dtype=m.float64)',
        "tensor(..., device='meta', size=(2, 3), dtype=gradviz.float64)",
    ),
    ('meta.new_ones(3)', "tensor(..., device='meta', size=(3,))"),
    ("meta.new_zeros(2, device='meta')", "tensor(..., device='meta', size=(2,))"),
    ("m.ones(2, 3).to('meta')", "tensor(..., device='meta', size=(2, 3))"),
    (
        "m.ones(2).to(device=m.device('meta'), dtype=m.float64)",
        "tensor(..., device='meta', size=(2,), dtype=gradviz.float64)",
    ),
    ('m.ones(2).to(meta)', "tensor(..., device='meta', size=(2,))"),
    ('meta.to(m.float64)', "tensor(..., device='meta', size=(2, 3), dtype=gradviz.float64)"),
    ('meta * 2', "tensor(..., device='meta', size=(2, 3))"),
    ('meta + meta', "tensor(..., device='meta', size=(2, 3))"),
    ('meta + m.tensor(1.0)', "tensor(..., device='meta', size=(2, 3))"),
    ('meta > 0', "tensor(..., device='meta', size=(2, 3), dtype=gradviz.bool)"),
    ('meta.sum()', "tensor(..., device='meta', size=())"),
    ('meta.sum(0)', "tensor(..., device='meta', size=(3,))"),
    ("meta @ m.ones(3, 4, device='meta')", "tensor(..., device='meta', size=(2, 4))"),
    ('meta.t()', "tensor(..., device='meta', size=(3, 2))"),
    ('meta[0]', "tensor(..., device='meta', size=(3,))"),
    ('meta[m.tensor([0, 1])]', "tensor(..., device='meta', size=(2, 3))"),
    ('meta.index_select(0, m.tensor([0]))', "tensor(..., device='meta', size=(1, 3))"),
    ('meta.unsqueeze(0).expand(4, 2, 3)', "tensor(..., device='meta', size=(4, 2, 3))"),
    ('m.cat([meta, meta])', "tensor(..., device='meta', size=(4, 3))"),
    ('m.stack([meta, meta], 1)', "tensor(..., device='meta', size=(2, 2, 3))"),
    ('meta.max(dim=1).indices', "tensor(..., device='meta', size=(2,), dtype=gradviz.int64)"),
    ('m.softmax(meta, -1)', "tensor(..., device='meta', size=(2, 3))"),
    ('m.nn.functional.relu(meta)', "tensor(..., device='meta', size=(2, 3))"),
    ('meta.clone().add_(1)', "tensor(..., device='meta', size=(2, 3))"),
    ('meta.detach()', "tensor(..., device='meta', size=(2, 3))"),
    ('meta.view(6)', "tensor(..., device='meta', size=(6,))"),
    ('meta.reshape(3, 2)', "tensor(..., device='meta', size=(3, 2))"),
    ('meta.argmax()', "tensor(..., device='meta', size=(), dtype=gradviz.int64)"),
    ('m.where(meta > 0, meta, meta)', "tensor(..., device='meta', size=(2, 3))"),
    (
        "m.nn.Linear(3, 4, device='meta').weight",
        "Parameter containing:\ntensor(..., device='meta', size=(4, 3), requires_grad=True)",
    ),
    (
        "m.nn.Linear(3, 4).to('meta').bias",
        "Parameter containing:\ntensor(..., device='meta', size=(4,), requires_grad=True)",
    ),
    (
        "m.nn.Linear(3, 4, device='meta')(meta)",
        "tensor(..., device='meta', size=(2, 4), grad_fn=<AddmmBackward0>)",
    ),
    ("m.nn.BatchNorm1d(3, device='meta').running_mean", "tensor(..., device='meta', size=(3,))"),
    (
        "m.nn.Conv2d(1, 2, 3, device='meta').weight",
        "Parameter containing:\ntensor(..., device='meta', size=(2, 1, 3, 3), requires_grad=True)",
    ),
    (
        "m.nn.Embedding(5, 2, device='meta').weight",
        "Parameter containing:\ntensor(..., device='meta', size=(5, 2), requires_grad=True)",
    ),
    (
        "m.nn.LayerNorm(3, device='meta').bias",
        "Parameter containing:\ntensor(..., device='meta', size=(3,), requires_grad=True)",
    ),
    ("m.nn.functional.dropout(meta, 0.5)", "tensor(..., device='meta', size=(2, 3))"),
    (
        "m.multinomial(m.ones(4, device='meta'), 2)",
        "tensor(..., device='meta', size=(2,), dtype=gradviz.int64)",
    ),
    (
        "meta.masked_fill(meta > 0, 1.0)", "tensor(..., device='meta', size=(2, 3))"),
    ("meta.gather(1, m.zeros(2, 1, dtype=m.long))", "tensor(..., device='meta', size=(2, 1))"),
    (
        "m.einsum('ij,jk->ik', meta, m.ones(3, 4, device='meta'))",
        "tensor(..., device='meta', size=(2, 4))",
    ),
    (
        "m.nn.functional.conv2d(m.ones(1, 1, 5, 5, device='meta'), "
        "m.ones(2, 1, 3, 3, device='meta'))",
        "tensor(..., device='meta', size=(1, 2, 3, 3))",
    ),
    ("m.linalg.inv(m.ones(3, 3, device='meta'))", "tensor(..., device='meta', size=(3, 3))"),
    ("meta.split(2, 1)[1]", "tensor(..., device='meta', size=(2, 1))"),
    ("m.normal(0.0, 1.0, (2,), device='meta')", "tensor(..., device='meta', size=(2,))"),
    ("m.randint_like(meta, 3)", "tensor(..., device='meta', size=(2, 3))"),
    ("m.logspace(0, 1, 3, device='meta')", "tensor(..., device='meta', size=(3,))"),
    (
        "m.tril_indices(3, 3, device='meta')",
        "tensor(..., device='meta', size=(2, 6), dtype=gradviz.int64)",
    ),
    ("meta.new(2, 3)", "tensor(..., device='meta', size=(2, 3))"),
    ("meta.new([1.0, 2.0])", "tensor(..., device='meta', size=(2,))"),
    ("meta.new_full((2,), 3.0)", "tensor(..., device='meta', size=(2,))"),
]


# (program, repr of what it gives)
VALUES: list[tuple] = [
    ('meta.device', "device(type='meta')"),
    ('meta.is_meta', 'True'),
    ('m.ones(1).is_meta', 'False'),
    ('meta.dtype', 'gradviz.float32'),
    ('meta.shape', 'gradviz.Size([2, 3])'),
    ('meta.stride()', '(3, 1)'),
    ('meta.numel()', '6'),
    ('meta.dim()', '2'),
    ('meta.data_ptr()', '0'),
    ('meta.is_contiguous()', 'True'),
    ("meta.to('meta') is meta", 'True'),
    ('meta.requires_grad', 'False'),
    ('len(meta)', '2'),
    ('meta.is_leaf', 'True'),
    (
        "m.nn.Linear(3, 4, device='meta').to_empty(device='cpu').weight.device",
        "device(type='cpu')",
    ),
    (
        "m.nn.Linear(3, 4, device='meta').to_empty(device='cpu').weight.shape",
        'gradviz.Size([4, 3])',
    ),
    (
        "type(m.nn.Linear(3, 4, device='meta').to_empty(device='cpu').weight).__name__",
        "'Parameter'",
    ),
    ("m.nn.Linear(3, 4).to_empty(device='meta').weight.device", "device(type='meta')"),
    ('str(meta.device)', "'meta'"),
    ("m.autograd.grad((meta_w * 3).sum(), [meta_w])", "(tensor(..., device='meta', size=(6,)),)"),
    ('meta.new_tensor([1, 2]).device', "device(type='meta')"),
]


# (program, exception type, message): what needs values, and devices that do not mix
ERRORS: list[tuple] = [
    ('meta.item()', 'RuntimeError', 'a Tensor with 6 elements cannot be converted to Scalar'),
    (
        "m.ones((), device='meta').item()",
        'RuntimeError',
        'Tensor.item() cannot be called on meta tensors',
    ),
    (
        "float(m.ones((), device='meta'))",
        'RuntimeError',
        'Tensor.item() cannot be called on meta tensors',
    ),
    (
        "int(m.ones((), device='meta'))",
        'RuntimeError',
        'Tensor.item() cannot be called on meta tensors',
    ),
    (
        "bool(m.ones((), device='meta'))",
        'RuntimeError',
        'Tensor.item() cannot be called on meta tensors',
    ),
    ('meta.tolist()', 'NotImplementedError', 'Cannot copy out of meta tensor; no data!'),
    (
        'meta.numpy()',
        'TypeError',
        ("can't convert meta device type tensor to numpy. Use Tensor.cpu() to copy the tensor "
         'to host memory first.'),
    ),
    ('meta.cpu()', 'NotImplementedError', 'Cannot copy out of meta tensor; no data!'),
    ("meta.to('cpu')", 'NotImplementedError', 'Cannot copy out of meta tensor; no data!'),
    ('meta.to(m.ones(1))', 'NotImplementedError', 'Cannot copy out of meta tensor; no data!'),
    (
        "meta.to('cpu', m.float64)",
        'NotImplementedError',
        'Cannot copy out of meta tensor; no data!',
    ),
    (
        'meta + m.ones(2, 3)',
        'RuntimeError',
        'Tensor on device cpu is not on the expected device meta!',
    ),
    (
        'm.ones(2, 3) + meta',
        'RuntimeError',
        'Tensor on device meta is not on the expected device cpu!',
    ),
    (
        "m.tensor(1.0, device='meta') + m.ones(2)",
        'RuntimeError',
        'Tensor on device cpu is not on the expected device meta!',
    ),
    (
        'm.cat([meta, m.ones(2, 3)])',
        'RuntimeError',
        'Tensor on device cpu is not on the expected device meta!',
    ),
    (
        'm.where(meta > 0, meta, m.ones(2, 3))',
        'RuntimeError',
        'Tensor on device cpu is not on the expected device meta!',
    ),
    (
        'm.ones(2, 3).copy_(meta)',
        'NotImplementedError',
        'Cannot copy out of meta tensor; no data!',
    ),
    (
        'meta.nonzero()',
        'NotImplementedError',
        ('The register_meta function for gradviz.nonzero() raises unimplemented by default, as '
         'a correct data-independent implementation does not exist. This implementation returns '
         'a fake value, assuming all elements of the tensor are non-zero. To enable this '
         'registration, please set '
         "'gradviz.fx.experimental._config.meta_nonzero_assume_all_nonzero' to True."),
    ),
    (
        'meta[meta > 0]',
        'NotImplementedError',
        ('The register_meta function for gradviz.nonzero() raises unimplemented by default, as '
         'a correct data-independent implementation does not exist. This implementation returns '
         'a fake value, assuming all elements of the tensor are non-zero. To enable this '
         'registration, please set '
         "'gradviz.fx.experimental._config.meta_nonzero_assume_all_nonzero' to True."),
    ),
    (
        'meta.unique()',
        'NotImplementedError',
        ('aten::_unique2: attempted to run this operator with Meta tensors, but there was no '
         'fake impl or Meta kernel registered. You may have run into this message while using '
         'an operator with PT2 compilation APIs (gradviz.compile/gradviz.export); in order to '
         "use this operator with those APIs you'll need to add a fake impl. Please see the "
         'following for next steps:  '
         'https://pygradviz.org/tutorials/advanced/custom_ops_landing_page.html'),
    ),
    (
        'm.equal(meta, meta)',
        'NotImplementedError',
        ('aten::equal: attempted to run this operator with Meta tensors, but there was no fake '
         'impl or Meta kernel registered. You may have run into this message while using an '
         'operator with PT2 compilation APIs (gradviz.compile/gradviz.export); in order to use '
         "this operator with those APIs you'll need to add a fake impl. Please see the "
         'following for next steps:  '
         'https://pygradviz.org/tutorials/advanced/custom_ops_landing_page.html'),
    ),
    ('m.allclose(meta, meta)', 'RuntimeError', 'Tensor.item() cannot be called on meta tensors'),
    (
        "format(m.ones((), device='meta'), '.2f')",
        'TypeError',
        'unsupported format string passed to Tensor.__format__',
    ),
    (
        "m.nn.Linear(3, 4).to('meta').to('cpu')",
        'NotImplementedError',
        ('Cannot copy out of meta tensor; no data! Please use gradviz.nn.Module.to_empty() '
         'instead of gradviz.nn.Module.to() when moving module from meta to a different device.'),
    ),
    (
        "m.nn.Linear(3, 4).to('meta').cpu()",
        'NotImplementedError',
        'Cannot copy out of meta tensor; no data!',
    ),
    (
        "m.nn.Linear(3, 4, device='meta')(m.ones(2, 3))",
        'RuntimeError',
        'Tensor on device meta is not on the expected device cpu!',
    ),
    (
        'm.nn.Linear(3, 4).to_empty()',
        'TypeError',
        "Module.to_empty() missing 1 required keyword-only argument: 'device'",
    ),
    (
        'meta.sum().backward()',
        'RuntimeError',
        'element 0 of tensors does not require grad and does not have a grad_fn',
    ),
    (
        "m.ones(2, requires_grad=True).to('meta').sum().backward()",
        "NotImplementedError",
        "Cannot copy out of meta tensor; no data!",
    ),
    (
        "meta.masked_fill(m.ones(2, 3, dtype=m.bool), 1.0)",
        "RuntimeError",
        "Tensor on device meta is not on the expected device cpu!",
    ),
    (
        "m.nn.functional.nll_loss(meta, m.zeros(2, dtype=m.long))",
        "RuntimeError",
        "Tensor on device meta is not on the expected device cpu!",
    ),
    ("m.Generator(device='meta')", "RuntimeError", "META device type not an accelerator."),
    (
        "m.Tensor(2, 3, device='meta')",
        "RuntimeError",
        "legacy constructor expects device type: cpu but device type: meta was passed",
    ),
    (
        "m.ones(2).new(2, device='meta')",
        "RuntimeError",
        "legacy constructor expects device type: cpu but device type: meta was passed",
    ),
]


# (program over `meta_w`, its graph's node names breadth first, its repr, and meta_w.grad's
# repr after backward, or None when it is not a scalar)
GRAPHS: list[tuple] = [
    (
        '(meta_w * 2).sin().sum()',
        ['SumBackward0', 'SinBackward0', 'MulBackward0', 'AccumulateGrad'],
        "tensor(..., device='meta', size=(), grad_fn=<SumBackward0>)",
        "tensor(..., device='meta', size=(6,))",
    ),
    (
        'm.nn.functional.linear(meta, meta_w.view(2, 3)[:, :3].t().t(), None).relu().mean()',
        ['MeanBackward0', 'ReluBackward0', 'MmBackward0', 'TBackward0', 'TBackward0',
         'TBackward0', 'AliasBackward0', 'ViewBackward0', 'AccumulateGrad'],
        "tensor(..., device='meta', size=(), grad_fn=<MeanBackward0>)",
        "tensor(..., device='meta', size=(6,))",
    ),
    (
        ("m.nn.functional.cross_entropy(m.ones(4, 3, device='meta') @ meta_w.view(3, 2), "
         "m.zeros(4, dtype=m.int64, device='meta'))"),
        ['NllLossBackward0', 'LogSoftmaxBackward0', 'MmBackward0', 'ViewBackward0',
         'AccumulateGrad'],
        "tensor(..., device='meta', size=(), grad_fn=<NllLossBackward0>)",
        "tensor(..., device='meta', size=(6,))",
    ),
    (
        "m.nn.Linear(3, 2, device='meta')(meta).tanh().sum()",
        ['SumBackward0', 'TanhBackward0', 'AddmmBackward0', 'AccumulateGrad', 'TBackward0',
         'AccumulateGrad'],
        "tensor(..., device='meta', size=(), grad_fn=<SumBackward0>)",
        'None',
    ),
    (
        '(meta_w.view(2, 3) + m.tensor(1.0)).exp().max()',
        ['MaxBackward1', 'ExpBackward0', 'AddBackward0', 'ViewBackward0', 'AccumulateGrad'],
        "tensor(..., device='meta', size=(), grad_fn=<MaxBackward1>)",
        "tensor(..., device='meta', size=(6,))",
    ),
    (
        "m.ones(6).to('meta') * meta_w",
        ['MulBackward0', 'AccumulateGrad'],
        "tensor(..., device='meta', size=(6,), grad_fn=<MulBackward0>)",
        None,
    ),
    (
        'm.cat([meta_w, meta_w * 3]).pow(2).sum()',
        ['SumBackward0', 'PowBackward0', 'CatBackward0', 'AccumulateGrad', 'MulBackward0'],
        "tensor(..., device='meta', size=(), grad_fn=<SumBackward0>)",
        "tensor(..., device='meta', size=(6,))",
    ),
    (
        'meta_w.view(2, 3).softmax(-1)[0].sum()',
        ['SumBackward0', 'SelectBackward0', 'SoftmaxBackward0', 'ViewBackward0', 'AccumulateGrad'],
        "tensor(..., device='meta', size=(), grad_fn=<SumBackward0>)",
        "tensor(..., device='meta', size=(6,))",
    ),
]

@pytest.mark.parametrize(("src", "text"), REPRS, ids=[r[0] for r in REPRS])
def test_reprs(src: str, text: str) -> None:
    assert shown(eval(src, namespace(gradviz))) == text  # noqa: S307


@pytest.mark.parametrize(("src", "text"), VALUES, ids=[r[0] for r in VALUES])
def test_values(src: str, text: str) -> None:
    assert shown(eval(src, namespace(gradviz))) == text  # noqa: S307


@pytest.mark.parametrize(("src", "error", "message"), ERRORS, ids=[r[0] for r in ERRORS])
def test_errors(src: str, error: str, message: str) -> None:
    assert raised(src, gradviz) == (error, message)


@pytest.mark.parametrize(("src", "graph", "text", "grad"), GRAPHS, ids=[r[0] for r in GRAPHS])
def test_graphs_and_backward(src: str, graph: list, text: str, grad: str | None) -> None:
    assert run_graph(src, gradviz) == (graph, text, grad)


# -- what the tables do not show ---------------------------------------------------------------
def test_a_meta_tensor_holds_one_element_of_memory() -> None:
    big = gradviz.empty(10**6, 10**6, device="meta")
    assert big._data.strides == (0, 0) and not big._data.flags.writeable
    assert big.numel() == 10**12 and big.stride() == (10**6, 1)
    layer = nn.Linear(4096, 4096, device="meta")
    assert layer.weight._data.strides == (0, 0) and layer.weight.requires_grad


def test_meta_factories_draw_no_random_numbers() -> None:
    gradviz.manual_seed(0)
    expected = gradviz.rand(3)
    gradviz.manual_seed(0)
    gradviz.randn(5, device="meta")
    nn.Linear(3, 4, device="meta")
    assert gradviz.rand(3).tolist() == expected.tolist()


def test_in_place_ops_keep_the_tensor_meta() -> None:
    x = gradviz.ones(2, 3, device="meta", requires_grad=True) * 1
    x.add_(1).unsqueeze_(0)
    assert x.is_meta and x.shape == (1, 2, 3) and x.grad_fn.name() == "UnsqueezeBackward1"
    assert x._version == 2


def test_nothing_prints_values() -> None:
    x = gradviz.full((3,), 7.0, device="meta")
    assert "7" not in str(x) and "7" not in repr(x) and "..." in f"{x}"


def _checkpoint() -> io.BytesIO:
    buf = io.BytesIO()
    net = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    gradviz.save({"model": net.state_dict(), "step": 7,
                  "extra": [gradviz.arange(3), (gradviz.ones(2, requires_grad=True),)],
                  "p": nn.Parameter(gradviz.ones(2))}, buf)
    buf.seek(0)
    return buf


@pytest.mark.parametrize("where", ["meta", gradviz.device("meta"), {"cpu": "meta"}])
def test_load_to_meta_keeps_shapes_dtypes_and_containers(where: Any) -> None:
    out = gradviz.load(_checkpoint(), map_location=where)
    model = out["model"]
    assert list(model) == ["0.weight", "0.bias", "1.weight", "1.bias", "1.running_mean",
                           "1.running_var", "1.num_batches_tracked"]
    assert all(t.is_meta for t in model.values()) and out["step"] == 7
    assert model["0.weight"].shape == (4, 3)
    assert model["1.num_batches_tracked"].dtype == gradviz.int64
    idx, (ones,) = out["extra"]
    assert shown(idx) == "tensor(..., device='meta', size=(3,), dtype=gradviz.int64)"
    assert shown(ones) == "tensor(..., device='meta', size=(2,), requires_grad=True)"
    assert type(out["p"]) is nn.Parameter and out["p"].is_meta and out["p"].requires_grad


def test_deferred_initialisation() -> None:
    """PyTorch's pattern: build on meta, give memory with to_empty, then load or initialise."""
    net = nn.Sequential(nn.Linear(3, 4, device="meta"), nn.BatchNorm1d(4, device="meta"))
    shapes = gradviz.load(_checkpoint(), map_location="meta")["model"]
    assert {k: tuple(v.shape) for k, v in net.state_dict().items()} == \
        {k: tuple(v.shape) for k, v in shapes.items()}
    assert net.to_empty(device="cpu") is net and not net[0].weight.is_meta
    net.load_state_dict(gradviz.load(_checkpoint())["model"])
    assert net[0].weight.device == gradviz.device("cpu")
    assert net(gradviz.ones(2, 3)).shape == (2, 4)


def test_load_state_dict_across_meta() -> None:
    cpu = nn.Linear(2, 2)
    before = cpu.weight.detach().clone()
    with pytest.raises(RuntimeError) as info:
        cpu.load_state_dict(nn.Linear(2, 2, device="meta").state_dict())
    assert str(info.value).splitlines()[1] == (
        '\tWhile copying the parameter named "weight", whose dimensions in the model are '
        "gradviz.Size([2, 2]) and whose dimensions in the checkpoint are gradviz.Size([2, 2]), "
        "an exception occurred : ('Cannot copy out of meta tensor; no data!',).")
    assert np.array_equal(cpu.weight.detach().numpy(), before.numpy())
    meta = nn.Linear(2, 2, device="meta")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        meta.load_state_dict(nn.Linear(2, 2).state_dict())
    assert meta.weight.is_meta and str(seen[0].message).startswith(
        "for weight: copying from a non-meta parameter in the checkpoint to a meta parameter "
        "in the current model, which is a no-op.")
    meta.load_state_dict(nn.Linear(2, 2).state_dict(), assign=True)
    assert not meta.weight.is_meta and type(meta.weight) is nn.Parameter


def test_the_cpu_path_is_untouched_by_meta() -> None:
    gradviz.empty(1, device="meta")  # once a meta tensor exists, CPU ops still take fast paths
    x = gradviz.ones(3, requires_grad=True)
    y = (x * 2).tanh()
    assert not y.is_meta and y.grad_fn.name() == "TanhBackward0"
    y.sum().backward()
    assert x.grad.device == gradviz.device("cpu")


def test_a_trace_shows_no_values_of_meta_tensors() -> None:
    from gradviz.trace import tracer

    with tracer() as tr:
        w = gradviz.randn(3, device="meta", requires_grad=True)
        (w * 2).sin().sum().backward()
    found, stack = [], [tr.to_dict()]
    while stack:  # every summary in the trace, without recursion
        x = stack.pop()
        if isinstance(x, dict):
            if "shape" in x and "dtype" in x:
                found.append(x)
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)
    assert found and all("values" not in s and "head" not in s for s in found)


def hooks_program(lib: Any) -> list[str]:
    """A backward over meta tensors with a tensor hook and retain_grad: what each sees."""
    w = lib.ones(2, device="meta", requires_grad=True)
    y = w * 2
    y.retain_grad()
    seen: list[str] = []
    y.register_hook(lambda g: seen.append(shown(g)))
    y.sum().backward()
    return [*seen, shown(y.grad), shown(w.grad)]


def test_hooks_and_retain_grad_see_meta_gradients() -> None:
    assert hooks_program(gradviz) == ["tensor(..., device='meta', size=(2,))"] * 3


def test_meta_gradients_also_once_a_pack_hook_was_used() -> None:
    # A pack hook makes op nodes run another way from then on (the process over: OpNode.run
    # takes its unpack-once branch), which must send meta gradients too.
    x = gradviz.ones(2, requires_grad=True)
    with gradviz.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        (x * x).sum().backward()
    assert hooks_program(gradviz) == ["tensor(..., device='meta', size=(2,))"] * 3


def test_save_refuses_a_meta_tensor() -> None:
    with pytest.raises(RuntimeError, match=r"^gradviz.save: obj\['w'\] is a meta tensor"):
        gradviz.save({"w": gradviz.ones(2, device="meta")}, io.BytesIO())


def in_place_through_a_view(lib: Any) -> tuple:
    """An in-place op on a view of a meta tensor: the base's graph, as PyTorch records it."""
    base = lib.ones(2, 3, device="meta", requires_grad=True) * 1
    view = base[0]
    view.add_(1)
    return shown(base), base.grad_fn.name(), view.grad_fn.name(), base._version


def test_in_place_through_a_view() -> None:
    assert in_place_through_a_view(gradviz) == (
        "tensor(..., device='meta', size=(2, 3), grad_fn=<CopySlices>)",
        "torch::autograd::CopySlices", "AsStridedBackward0", 1)


def optimizer_program(lib: Any) -> list:
    """Two steps of each optimizer on a meta layer: what its state holds, and where."""
    seen = []
    for cls, kw in [(lib.optim.SGD, {"momentum": 0.9}), (lib.optim.Adam, {}),
                    (lib.optim.RMSprop, {})]:
        net = lib.nn.Linear(3, 2, device="meta")
        opt = cls(net.parameters(), lr=0.1, **kw)
        for _ in range(2):
            net(lib.ones(4, 3, device="meta")).sum().backward()
            opt.step()
        state = opt.state[net.weight]
        seen.append((cls.__name__, shown(net.weight.grad),
                     {k: (v.device.type, tuple(v.shape)) for k, v in state.items()}))
    return seen


def test_optimizers_step_meta_parameters() -> None:
    assert optimizer_program(gradviz) == [
        ("SGD", "tensor(..., device='meta', size=(2, 3))", {"momentum_buffer": ("meta", (2, 3))}),
        ("Adam", "tensor(..., device='meta', size=(2, 3))",
         {"step": ("cpu", ()), "exp_avg": ("meta", (2, 3)), "exp_avg_sq": ("meta", (2, 3))}),
        ("RMSprop", "tensor(..., device='meta', size=(2, 3))",
         {"step": ("cpu", ()), "square_avg": ("meta", (2, 3))}),
    ]
