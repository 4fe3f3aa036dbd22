"""Devices, CPU only, spelled as PyTorch spells them; ``is_tensor``, ``_is_view``, ``Variable``.

Code written for torch (``device = "cuda" if torch.cuda.is_available() else "cpu"``) runs after
``import gradviz as torch``; asking for another device says gradviz runs on the CPU."""

from __future__ import annotations

import numpy as np
import pytest

import gradviz as torch

FACTORIES = [
    lambda d: torch.tensor([1.0], device=d), lambda d: torch.zeros(2, device=d),
    lambda d: torch.ones(2, device=d), lambda d: torch.full((2,), 3.0, device=d),
    lambda d: torch.empty(2, device=d), lambda d: torch.rand(2, device=d),
    lambda d: torch.randn(2, device=d), lambda d: torch.randint(0, 3, (2,), device=d),
    lambda d: torch.arange(3, device=d), lambda d: torch.linspace(0, 1, 3, device=d),
    lambda d: torch.eye(2, device=d), lambda d: torch.zeros_like(torch.ones(2), device=d),
    lambda d: torch.ones_like(torch.ones(2), device=d),
    lambda d: torch.rand_like(torch.ones(2), device=d),
    lambda d: torch.ones(2).new_ones(3, device=d),
    lambda d: torch.ones(2).new_tensor([1], device=d),
]


def test_the_device_idiom_picks_the_cpu() -> None:
    device = "cuda" if torch.cuda.is_available() else "cpu"
    assert device == "cpu" and torch.cuda.device_count() == 0
    assert not torch.accelerator.is_available() and torch.accelerator.current_accelerator() is None
    x = torch.ones(2, 3, device=device, requires_grad=True)
    assert x.device == torch.device("cpu") == "cpu" and repr(x.device) == "device(type='cpu')"
    assert x.to(device) is x and x.to(torch.device("cpu")) is x and x.cpu() is x
    torch.set_default_device("cpu")
    assert torch.get_default_device() == torch.device("cpu")


@pytest.mark.parametrize("make", FACTORIES)
def test_every_factory_takes_a_device(make) -> None:
    assert make("cpu").device == "cpu" and make(torch.device("cpu")).device == "cpu"
    with pytest.raises(RuntimeError, match="gradviz computes on the CPU only"):
        make("cuda")


def test_devices_parse_as_in_pytorch() -> None:
    assert torch.device("cuda:1").index == 1 and str(torch.device("cuda", 0)) == "cuda:0"
    assert torch.device(torch.device("cpu")) == "cpu" and torch.device("cpu") != "cuda"
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda"):
        torch.device("gpu")
    with pytest.raises(RuntimeError, match="gradviz computes on the CPU only"):
        torch.ones(2).to(torch.device("cuda"))
    with pytest.raises(RuntimeError, match="gradviz computes on the CPU only"):
        torch.ones(2).cuda()
    with pytest.raises(RuntimeError, match="gradviz computes on the CPU only"):
        torch.set_default_device("mps")


def test_to_another_tensor_takes_its_dtype() -> None:
    x = torch.ones(2, dtype=torch.float64, requires_grad=True)
    y = x.to(torch.ones(1))
    assert y.dtype == torch.float32 and y.grad_fn.name() == "ToCopyBackward0"


def test_is_tensor_is_view_and_variable() -> None:
    x = torch.ones(2, 3)
    assert torch.is_tensor(x) and not torch.is_tensor(np.ones(2))
    assert not x._is_view() and x[0]._is_view() and x.t()._is_view()
    v = torch.autograd.Variable(x, requires_grad=True)
    assert v.requires_grad and v.is_leaf and np.shares_memory(v.detach().numpy(), x.numpy())
    assert isinstance(x, torch.autograd.Variable)
    with pytest.raises(TypeError, match="Variable data has to be a tensor"):
        torch.autograd.Variable([1.0])
