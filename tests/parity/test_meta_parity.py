"""The meta device of tests/test_meta.py against a live torch: each table's hard-coded reprs,
values, errors and graphs derived again from torch, and the same programs compared between
gradviz and torch where the table does not pin a text (loading a checkpoint, a module's
state)."""

from __future__ import annotations

import io
from typing import Any

import pytest
import torch
from _parity import sibling

import gradviz

META = sibling("test_meta")


@pytest.mark.parametrize(("src", "text"), META.REPRS, ids=[r[0] for r in META.REPRS])
def test_reprs_are_torchs(src: str, text: str) -> None:
    assert META.shown(eval(src, META.namespace(torch))) == text  # noqa: S307


@pytest.mark.parametrize(("src", "text"), META.VALUES, ids=[r[0] for r in META.VALUES])
def test_values_are_torchs(src: str, text: str) -> None:
    assert META.shown(eval(src, META.namespace(torch))) == text  # noqa: S307


@pytest.mark.parametrize(("src", "error", "message"), META.ERRORS,
                         ids=[r[0] for r in META.ERRORS])
def test_errors_are_torchs(src: str, error: str, message: str) -> None:
    assert META.raised(src, torch) == (error, message)


@pytest.mark.parametrize(("src", "graph", "text", "grad"), META.GRAPHS,
                         ids=[r[0] for r in META.GRAPHS])
def test_graphs_and_backward_are_torchs(src: str, graph: list, text: str,
                                        grad: str | None) -> None:
    assert META.run_graph(src, torch) == (graph, text, grad)


def _checkpoint(lib: Any) -> io.BytesIO:
    buf = io.BytesIO()
    net = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4))
    lib.save({"model": net.state_dict(), "step": 7, "scalar": lib.ones(()),
              "extra": [lib.arange(3), (lib.ones(2, requires_grad=True),)],
              "p": lib.nn.Parameter(lib.ones(2))}, buf)
    buf.seek(0)
    return buf


def _described(x: Any) -> Any:
    """Containers kept, each tensor as (type, repr): the same for both libraries."""
    if isinstance(x, dict):
        return {k: _described(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(_described(v) for v in x)
    if isinstance(x, (torch.Tensor, gradviz.Tensor)):
        return type(x).__name__, META.shown(x), x.requires_grad, x.is_leaf
    return x


@pytest.mark.parametrize("where", ["meta", "device", "dict"])
def test_load_to_meta_as_torch(where: str) -> None:
    def location(lib: Any) -> Any:
        return {"meta": "meta", "device": lib.device("meta"), "dict": {"cpu": "meta"}}[where]

    ours = gradviz.load(_checkpoint(gradviz), map_location=location(gradviz))
    theirs = torch.load(_checkpoint(torch), map_location=location(torch))
    assert _described(ours) == _described(theirs)


def test_deferred_initialisation_as_torch() -> None:
    def program(lib: Any) -> list:
        net = lib.nn.Sequential(lib.nn.Linear(3, 4, device="meta"),
                                lib.nn.BatchNorm1d(4, device="meta"))
        seen = [_described(dict(net.state_dict()))]
        net.to_empty(device="cpu")
        seen.append([(k, v.device.type, tuple(v.shape), str(v.dtype).split(".")[1])
                     for k, v in net.state_dict().items()])
        net.load_state_dict(lib.load(_checkpoint(lib))["model"])
        seen.append(tuple(net(lib.ones(2, 3)).shape))
        return seen

    assert program(gradviz) == program(torch)


def test_hooks_and_retain_grad_as_torch() -> None:
    assert META.hooks_program(torch) == META.hooks_program(gradviz)


def test_in_place_through_a_view_as_torch() -> None:
    assert META.in_place_through_a_view(torch) == META.in_place_through_a_view(gradviz)


def test_optimizers_as_torch() -> None:
    assert META.optimizer_program(torch) == META.optimizer_program(gradviz)
