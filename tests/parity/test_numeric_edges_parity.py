"""The numeric edge cases of tests/test_numeric_edges.py against a live torch: its hard-coded
values and errors derived again from torch, and the ``map_location`` behaviours gradviz's
``load`` follows checked in ``torch.load``."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from _parity import sibling

import gradviz

EDGES = sibling("test_numeric_edges")


@pytest.mark.parametrize(("src", "dtype", "shape", "values"), EDGES.VALUES,
                         ids=[c[0] for c in EDGES.VALUES])
def test_hard_coded_values_are_torchs(src: str, dtype: str, shape: list, values: Any) -> None:
    out = EDGES.run(src, torch)
    assert str(out.dtype)[len("torch."):] == dtype
    assert list(out.shape) == shape
    assert EDGES.same_values(out.detach().tolist(), values, dtype), out.tolist()


@pytest.mark.parametrize(("src", "error", "message"), EDGES.ERRORS,
                         ids=[c[0] for c in EDGES.ERRORS])
def test_hard_coded_errors_are_torchs(src: str, error: str, message: str) -> None:
    with pytest.raises(Exception) as info:
        EDGES.run(src, torch)
    assert type(info.value).__name__ == error and str(info.value) == message


def test_float32_transposed_dilation_zero_is_onednns_internal_failure() -> None:
    """The one dilation-0 text gradviz does not copy (NOTE [conv dilation 0]): oneDNN's."""
    src = "F.conv_transpose2d(m.ones(2, 3, 8, 8), m.ones(3, 4, 3, 3), dilation=0)"
    with pytest.raises(RuntimeError, match="^could not create a primitive descriptor"):
        EDGES.run(src, torch)
    with pytest.raises(RuntimeError, match=r"^dilation should be greater than zero, but got "):
        EDGES.run(src, gradviz)


def test_map_location_callable_is_called_once_per_storage_at_its_location() -> None:
    calls: list = []

    def where(storage: Any, location: str) -> None:
        calls.append(location)

    out = torch.load(EDGES._saved(torch), map_location=where)
    assert calls == EDGES.SAVED_LOCATIONS
    assert out["w"].tolist() == [1.0, 1.0] and out["w"] is out["tied"]
    out = torch.load(EDGES._saved(torch), map_location=lambda storage, loc: storage)
    assert out["b"].tolist() == [0.0, 0.0, 0.0]


def test_map_location_dict_applies_its_cpu_entry_only() -> None:
    out = torch.load(EDGES._saved(torch), map_location={"cuda:0": "cuda:1"})
    assert out["w"].device.type == "cpu"


@pytest.mark.parametrize("where", ["meta", torch.device("meta"), {"cpu": "meta"}])
def test_map_location_meta_gives_tensors_without_values(where: Any) -> None:
    """What gradviz.load gives too (tests/test_numeric_edges.py)."""
    out = torch.load(EDGES._saved(torch), map_location=where)
    assert out["w"].is_meta and out["w"].device == torch.device("meta")
    assert out["w"].shape == (2,) and out["b"].shape == (3,) and out["w"] is out["tied"]
    with pytest.raises(NotImplementedError, match="^Cannot copy out of meta tensor; no data!$"):
        out["b"].tolist()
