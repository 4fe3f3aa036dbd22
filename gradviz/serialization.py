"""``gradviz.save`` and ``gradviz.load``: tensors and ``state_dict``s in a data-only file.

NOTE [file format]
PyTorch's ``torch.save`` pickles the object, so loading a file can run code; that is why
``torch.load`` now defaults to ``weights_only=True``, an unpickler that refuses everything but
tensors and plain containers. gradviz writes a format that cannot hold anything else in the
first place: a zip archive (stdlib ``zipfile``) with

* ``gradviz/manifest.json``: the object's structure as JSON: ``{"format": "gradviz.save",
  "version": 1, "object": <entry>}``, where an entry is ``null``/a bool/int/float/string as
  itself, or ``{"tensor": i, "requires_grad": bool, "parameter": bool}``, ``{"list": [...]}``,
  ``{"tuple": [...]}``, ``{"dict": [[key, value], ...], "ordered": bool}`` (keys are entries too:
  an optimizer's state is keyed by ints), ``{"float": "nan"|"inf"|"-inf"}``;
* ``gradviz/data/<i>.npy``: tensor ``i``'s values in NumPy's ``.npy`` format, read back with
  ``allow_pickle=False`` (so not even an object array can smuggle a pickle in).

Everything in it is readable with ``unzip`` and ``numpy.load``. ``weights_only`` is accepted as
PyTorch spells it; with either value, a gradviz file only ever holds data. A tensor that appears
twice in the object (a tied weight) is stored once and loads as one tensor again.

Example:
    >>> import io, gradviz
    >>> from gradviz import nn
    >>> model = nn.Linear(2, 1)
    >>> buf = io.BytesIO(); gradviz.save(model.state_dict(), buf); _ = buf.seek(0)
    >>> nn.Linear(2, 1).load_state_dict(gradviz.load(buf))
    <All keys matched successfully>
"""

from __future__ import annotations

import io
import json
import math
import os
import pickle
import zipfile
from collections import OrderedDict
from collections.abc import Callable
from typing import IO, Any

import numpy as np

from gradviz import _device
from gradviz.nn.parameter import Parameter
from gradviz.tensor import Tensor

__all__ = ["save", "load"]

_MANIFEST = "gradviz/manifest.json"
_FORMAT = "gradviz.save"
_VERSION = 1
_WHAT_IT_HOLDS = ("tensors, numbers, strings, booleans, None, and dicts, lists and tuples of "
                  "them (such as a model's or an optimizer's state_dict())")

FileLike = str | os.PathLike | IO[bytes]


def save(obj: Any, f: FileLike, pickle_module: Any = None, pickle_protocol: int = 2,
         _use_new_zipfile_serialization: bool = True) -> None:
    """Write ``obj`` (tensors, numbers, strings, None, and dicts/lists/tuples of them) to ``f``,
    a path or a binary file object, in gradviz's data-only format (NOTE [file format]).

    Args:
        obj: what to save, e.g. ``model.state_dict()``.
        f: a file name or an object with ``write`` (and ``seek``), such as ``io.BytesIO``.
        pickle_module, pickle_protocol: accepted for PyTorch's signature; gradviz does not pickle.

    Example:
        >>> import io, gradviz
        >>> buf = io.BytesIO()
        >>> gradviz.save({"w": gradviz.ones(2), "step": 3}, buf); _ = buf.seek(0)
        >>> gradviz.load(buf)
        {'w': tensor([1., 1.]), 'step': 3}
    """
    arrays: list[np.ndarray] = []
    entry = _encode(obj, arrays, {}, "obj")
    manifest = {"format": _FORMAT, "version": _VERSION, "object": entry}
    with zipfile.ZipFile(f, "w", compression=zipfile.ZIP_STORED) as zf:
        zf.writestr(_MANIFEST, json.dumps(manifest, allow_nan=False))
        for i, arr in enumerate(arrays):
            buf = io.BytesIO()
            np.save(buf, arr, allow_pickle=False)
            zf.writestr(f"gradviz/data/{i}.npy", buf.getvalue())


def _encode(obj: Any, arrays: list, memo: dict, path: str) -> Any:
    """``obj`` as a manifest entry, its tensors appended to ``arrays`` (iteratively)."""
    # Containers are filled after they are created: a stack of (value, slot to fill, path).
    root: list = [None]
    stack = [(obj, root, 0, path)]
    while stack:
        value, slot, key, where = stack.pop()
        slot[key] = _encode_one(value, arrays, memo, where, stack)
    return root[0]


def _encode_one(value: Any, arrays: list, memo: dict, where: str, stack: list) -> Any:
    kind = type(value)
    if value is None or kind is bool or kind is str:
        return value
    if isinstance(value, (int, np.integer)):  # bool was handled above
        return int(value)
    if kind is float or isinstance(value, (float, np.floating)):
        v = float(value)
        return v if math.isfinite(v) else {"float": repr(v)}
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, Tensor):
        index = memo.get(id(value))
        if index is None:  # a non-leaf is saved as its values: it loads as a leaf, as in torch
            index = memo[id(value)] = len(arrays)
            arrays.append(np.ascontiguousarray(value._data))
        return {"tensor": index, "requires_grad": bool(value.requires_grad),
                "parameter": isinstance(value, Parameter)}
    if kind in (list, tuple):
        items: list = [None] * len(value)
        for i in range(len(value) - 1, -1, -1):
            stack.append((value[i], items, i, f"{where}[{i}]"))
        return {kind.__name__: items}
    if isinstance(value, dict):
        pairs: list = []
        for k, v in value.items():
            pair: list = [None, None]
            pairs.append(pair)
            stack.append((k, pair, 0, f"{where} key {k!r}"))
            stack.append((v, pair, 1, f"{where}[{k!r}]"))
        return {"dict": pairs, "ordered": isinstance(value, OrderedDict)}
    hint = (" Save its state_dict() instead." if hasattr(value, "state_dict") else "")
    raise TypeError(f"gradviz.save: {where} is a {type(value).__name__}, which gradviz's "
                    f"files cannot hold: they hold only {_WHAT_IT_HOLDS}.{hint}")


def load(f: FileLike, map_location: Any = None, pickle_module: Any = None, *,
         weights_only: bool | None = None, mmap: bool | None = None,
         **pickle_load_args: Any) -> Any:
    """Read what :func:`save` wrote to ``f`` (a path or a binary file object).

    Args:
        f: a file name or an object with ``read`` and ``seek``.
        map_location: where the tensors go, as in PyTorch on a machine without an accelerator
            (every tensor in a gradviz file was saved at ``"cpu"``): None, ``"cpu"`` or a
            ``gradviz.device("cpu")``; a dict of location names, of which only its ``"cpu"``
            entry applies (others name no tensor of the file and are ignored, as in PyTorch);
            or a callable. PyTorch calls a callable once per storage with
            ``(storage, location)`` and uses the storage it returns (None: the default place).
            gradviz has no storages: it calls it once per stored tensor (a tensor saved twice,
            such as a tied weight, is stored once) with ``(tensor, "cpu")``, the tensor as
            read from the file, and uses the tensor it returns, which must have the same shape
            and dtype, or the one it was given when it returns None. So
            ``lambda storage, loc: storage`` works as in PyTorch, and ``storage.cuda()``
            fails as on PyTorch without CUDA. ``"meta"`` (PyTorch's tensors without values,
            shape and dtype only) is refused: a gradviz tensor always holds its values.
        weights_only: accepted as in PyTorch; a gradviz file holds only tensors and plain
            values (NOTE [file format]), so both values load the same data.

    Example:
        >>> import io, gradviz
        >>> buf = io.BytesIO(); gradviz.save([gradviz.zeros(1), (1, "a")], buf); _ = buf.seek(0)
        >>> gradviz.load(buf, map_location="cpu")
        [tensor([0.]), (1, 'a')]
    """
    restore = _restore_location(map_location)
    try:
        zf = zipfile.ZipFile(f)
    except zipfile.BadZipFile:
        raise pickle.UnpicklingError(_not_gradviz(f, legacy=True)) from None
    with zf:
        names = set(zf.namelist())
        if _MANIFEST not in names:
            torch_file = any(n.endswith("/data.pkl") or n == "data.pkl" for n in names)
            raise pickle.UnpicklingError(_not_gradviz(f, legacy=False, torch_zip=torch_file))
        manifest = json.loads(zf.read(_MANIFEST))
        if manifest.get("format") != _FORMAT or manifest.get("version") != _VERSION:
            raise RuntimeError(f"gradviz.load: unsupported file version "
                               f"{manifest.get('version')!r} (this gradviz reads version "
                               f"{_VERSION})")
        cache: dict[int, Tensor] = {}

        def tensor(entry: dict, where: str) -> Tensor:
            i = entry["tensor"]
            t = cache.get(i)
            if t is None:
                name = f"gradviz/data/{i}.npy"
                if not isinstance(i, int) or name not in names:
                    raise _weights_only_error(where, f"tensor {i!r}, which the file lacks")
                with zf.open(name) as fh:
                    arr = np.load(io.BytesIO(fh.read()), allow_pickle=False)
                t = restore(Tensor._make(arr))
                if entry.get("parameter"):
                    t = Parameter(t, requires_grad=bool(entry.get("requires_grad", True)))
                elif entry.get("requires_grad"):
                    t.requires_grad_(True)
                cache[i] = t
            return t

        return _decode(manifest.get("object"), tensor)


def _decode(entry: Any, tensor: Any) -> Any:
    """A manifest entry back as Python objects (iteratively, as :func:`_encode`)."""
    root: list = [None]
    stack: list = [(entry, root, 0, "obj")]
    finish: list = []  # tuples and dicts are built once their items are
    while stack:
        e, slot, key, where = stack.pop()
        if e is None or type(e) in (bool, int, float, str):
            slot[key] = e
            continue
        if type(e) is not dict or len(e) == 0:
            raise _weights_only_error(where, type(e).__name__)
        kind = next(iter(e))
        if kind == "tensor":
            slot[key] = tensor(e, where)
        elif kind == "float" and e["float"] in ("nan", "inf", "-inf"):
            slot[key] = float(e["float"])
        elif kind in ("list", "tuple") and type(e[kind]) is list:
            items = [None] * len(e[kind])
            slot[key] = items
            if kind == "tuple":
                finish.append((slot, key, tuple))
            for i, item in enumerate(e[kind]):
                stack.append((item, items, i, f"{where}[{i}]"))
        elif kind == "dict" and type(e["dict"]) is list:
            pairs = []
            for pair in e["dict"]:
                if type(pair) is not list or len(pair) != 2:
                    raise _weights_only_error(where, "a malformed dict")
                p = [None, None]
                pairs.append(p)
                stack.append((pair[0], p, 0, f"{where} key"))
                stack.append((pair[1], p, 1, f"{where}[...]"))
            slot[key] = pairs
            finish.append((slot, key, OrderedDict if e.get("ordered") else dict))
        else:
            raise _weights_only_error(where, repr(kind))
    # Inner containers were queued after outer ones: build them innermost first.
    for slot, key, make in reversed(finish):
        value = slot[key]
        if make is tuple:
            slot[key] = tuple(value)
        else:
            try:
                slot[key] = make((k, v) for k, v in value)
            except TypeError:
                raise _weights_only_error("obj", "a dict with an unhashable key") from None
    return root[0]


def _weights_only_error(where: str, what: str) -> pickle.UnpicklingError:
    return pickle.UnpicklingError(
        f"Weights only load failed. gradviz.load reads only {_WHAT_IT_HOLDS}; {where} in this "
        f"file is {what}. gradviz files cannot hold code, so nothing else can be loaded from "
        "them (weights_only=False changes nothing).")


def _not_gradviz(f: Any, legacy: bool, torch_zip: bool = False) -> str:
    name = f if isinstance(f, (str, os.PathLike)) else type(f).__name__
    if torch_zip or legacy:
        kind = ("a PyTorch checkpoint (torch.save's pickle inside a zip)" if torch_zip else
                "not a zip archive (a pickle written by an older torch.save, or another file)")
        return (f"gradviz.load: {name} is {kind}. gradviz reads only files written by "
                "gradviz.save: a zip of .npy arrays with a JSON manifest, which cannot hold "
                "code. To move weights over from PyTorch, save them as NumPy arrays in torch "
                "({k: v.numpy() for k, v in model.state_dict().items()}) and build gradviz "
                "tensors with gradviz.from_numpy, or gradviz.save them.")
    return f"gradviz.load: {name} is a zip archive without {_MANIFEST}: not a gradviz.save file"


def _restore_location(map_location: Any) -> Callable[[Tensor], Tensor]:
    """What ``map_location`` does to each tensor read (NOTE [file format]: all were saved at
    ``"cpu"``), after checking it: PyTorch's ``_get_restore_location`` on a CPU-only build."""
    if callable(map_location) and not isinstance(map_location, (str, _device.device)):
        return lambda t: _called_location(map_location, t)
    target = map_location.get("cpu") if isinstance(map_location, dict) else map_location
    if target is not None and not isinstance(target, (str, _device.device)):
        raise TypeError("gradviz.load: map_location must be None, 'cpu', gradviz.device('cpu'), "
                        "a dict of location names or a callable, got "
                        f"{type(target).__name__}")
    if target is not None and _device.device(target).type == "meta":
        raise RuntimeError("gradviz.load: map_location='meta' asks for PyTorch's meta tensors "
                           "(a shape and a dtype without values), which gradviz does not have: "
                           "its tensors always hold their values. Load them to the CPU "
                           "(map_location=None or 'cpu').")
    _device.check_device(target, "load")
    return lambda t: t


def _called_location(map_location: Callable, t: Tensor) -> Tensor:
    out = map_location(t, "cpu")
    if out is None:
        return t
    if not isinstance(out, Tensor) or out.shape != t.shape or out.dtype != t.dtype:
        what = (f"a tensor of shape {list(out.shape)} and dtype {out.dtype}"
                if isinstance(out, Tensor) else type(out).__name__)
        raise TypeError(f"gradviz.load: map_location(tensor, 'cpu') must return None or a "
                        f"tensor of the given one's shape {list(t.shape)} and dtype {t.dtype} "
                        f"(gradviz's stand-in for PyTorch's storage), got {what}")
    return out.detach()
