"""gradviz.save / gradviz.load: tensors, nested containers, module and optimizer state_dicts,
paths and file objects, map_location, and the refusals (weights_only semantics)."""

from __future__ import annotations

import io
import json
import math
import pickle
import zipfile
from collections import OrderedDict
from pathlib import Path

import numpy as np
import pytest

import gradviz
from gradviz import nn, optim


def _roundtrip(obj, **kw):
    buf = io.BytesIO()
    gradviz.save(obj, buf)
    buf.seek(0)
    return gradviz.load(buf, **kw)


def test_tensor_values_dtype_and_requires_grad(tmp_path: Path) -> None:
    x = gradviz.tensor([[1.5, -2.0], [3.0, 4.25]], dtype=gradviz.float64, requires_grad=True)
    path = tmp_path / "x.pt"
    gradviz.save(x, path)
    y = gradviz.load(path)
    assert y.dtype == gradviz.float64 and y.requires_grad and y.is_leaf
    assert y.tolist() == x.tolist()
    z = gradviz.load(str(path), weights_only=True)
    assert z.tolist() == x.tolist()
    ints = _roundtrip(gradviz.arange(5))
    assert ints.dtype == gradviz.int64 and ints.tolist() == [0, 1, 2, 3, 4]
    assert _roundtrip(gradviz.tensor(True)).item() is True


def test_nested_containers_and_plain_values() -> None:
    obj = {"a": [gradviz.ones(2), (1, 2.5, "s", None, True)], 3: {"nan": math.nan,
                                                                 "inf": -math.inf},
           "od": OrderedDict([("z", 1), ("y", 2)]), "empty": ((), [], {})}
    back = _roundtrip(obj)
    assert back["a"][0].tolist() == [1.0, 1.0]
    assert back["a"][1] == (1, 2.5, "s", None, True) and type(back["a"][1]) is tuple
    assert math.isnan(back[3]["nan"]) and back[3]["inf"] == -math.inf
    assert type(back["od"]) is OrderedDict and list(back["od"]) == ["z", "y"]
    assert back["empty"] == ((), [], {})


def test_a_tensor_saved_twice_loads_as_one() -> None:
    w = gradviz.ones(3)
    a, b = _roundtrip([w, w])
    assert a is b


def test_non_leaf_is_saved_as_values() -> None:
    x = gradviz.ones(2, requires_grad=True)
    y = _roundtrip(x * 2)
    assert y.is_leaf and y.requires_grad and y.tolist() == [2.0, 2.0]


def test_module_state_dict_round_trips_into_load_state_dict(tmp_path: Path) -> None:
    gradviz.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2), nn.BatchNorm1d(2))
    path = tmp_path / "model.pt"
    gradviz.save(model.state_dict(), path)
    other = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2), nn.BatchNorm1d(2))
    sd = gradviz.load(path)
    assert type(sd) is OrderedDict and list(sd) == list(model.state_dict())
    other.load_state_dict(sd)
    x = gradviz.randn(5, 3)
    model.eval()
    other.eval()
    np.testing.assert_array_equal(model(x).detach().numpy(), other(x).detach().numpy())


def test_optimizer_state_dict_round_trips() -> None:
    w = nn.Parameter(gradviz.ones(2))
    opt = optim.Adam([w], lr=0.1, betas=(0.8, 0.9))
    (w * w).sum().backward()
    opt.step()
    sd = _roundtrip(opt.state_dict())
    assert list(sd["state"]) == [0] and sd["param_groups"][0]["betas"] == (0.8, 0.9)
    w2 = nn.Parameter(gradviz.ones(2))
    opt2 = optim.Adam([w2], lr=0.5)
    opt2.load_state_dict(sd)
    assert opt2.param_groups[0]["lr"] == 0.1
    np.testing.assert_array_equal(opt2.state[w2]["exp_avg"].numpy(),
                                  opt.state[w]["exp_avg"].numpy())


def test_parameters_stay_parameters() -> None:
    lin = nn.Linear(2, 2)
    back = _roundtrip(lin.state_dict(keep_vars=True))
    assert isinstance(back["weight"], nn.Parameter) and back["weight"].requires_grad


def test_refuses_objects_that_are_not_data() -> None:
    with pytest.raises(TypeError, match=r"obj is a Linear, which gradviz's files cannot hold.*"
                       r"Save its state_dict\(\) instead"):
        gradviz.save(nn.Linear(2, 2), io.BytesIO())
    with pytest.raises(TypeError, match=r"obj\['f'\] is a function"):
        gradviz.save({"f": lambda: 0}, io.BytesIO())


def test_the_file_is_a_zip_of_npy_with_a_json_manifest(tmp_path: Path) -> None:
    path = tmp_path / "f.pt"
    gradviz.save({"w": gradviz.ones(2)}, path)
    with zipfile.ZipFile(path) as zf:
        manifest = json.loads(zf.read("gradviz/manifest.json"))
        assert manifest["format"] == "gradviz.save" and manifest["version"] == 1
        assert manifest["object"] == {"dict": [["w", {"tensor": 0, "requires_grad": False,
                                                      "parameter": False}]],
                                      "ordered": False}
        arr = np.load(io.BytesIO(zf.read("gradviz/data/0.npy")), allow_pickle=False)
    assert arr.tolist() == [1.0, 1.0]


def test_a_forged_manifest_is_refused_as_weights_only_is(tmp_path: Path) -> None:
    path = tmp_path / "bad.pt"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("gradviz/manifest.json", json.dumps(
            {"format": "gradviz.save", "version": 1, "object": {"global": "os.system"}}))
    for weights_only in (True, False):
        with pytest.raises(pickle.UnpicklingError, match="^Weights only load failed"):
            gradviz.load(path, weights_only=weights_only)


def test_pytorch_and_other_files_get_a_clear_error(tmp_path: Path) -> None:
    torch_like = tmp_path / "torch.pt"
    with zipfile.ZipFile(torch_like, "w") as zf:
        zf.writestr("archive/data.pkl", b"\x80\x02}q\x00.")
    with pytest.raises(pickle.UnpicklingError, match="is a PyTorch checkpoint.*gradviz reads "
                       "only files written by gradviz.save"):
        gradviz.load(torch_like)
    legacy = tmp_path / "old.pt"
    legacy.write_bytes(pickle.dumps({"a": 1}))
    with pytest.raises(pickle.UnpicklingError, match="not a zip archive"):
        gradviz.load(legacy)


def test_map_location() -> None:
    for loc in ("cpu", gradviz.device("cpu"), {"cuda:0": "cpu"}, None):
        assert _roundtrip(gradviz.ones(1), map_location=loc).tolist() == [1.0]
    with pytest.raises(RuntimeError, match="gradviz computes on the CPU only"):
        _roundtrip(gradviz.ones(1), map_location="cuda")
    with pytest.raises(TypeError, match="map_location must be"):
        _roundtrip(gradviz.ones(1), map_location=3)


