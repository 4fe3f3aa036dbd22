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
import re
import struct
import warnings
import zipfile
import zlib
from collections import OrderedDict
from collections.abc import Callable
from typing import IO, Any

import numpy as np

from gradviz import _device, _dtype
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
    stack = [(obj, root, 0, path, 0)]
    while stack:
        value, slot, key, where, depth = stack.pop()
        slot[key] = _encode_one(value, arrays, memo, where, stack, depth)
    return root[0]


def _encode_one(value: Any, arrays: list, memo: dict, where: str, stack: list,
                depth: int) -> Any:
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
        if value.is_meta:  # the format holds values; zeros written for it would load as data
            raise RuntimeError(f"gradviz.save: {where} is a meta tensor (a shape and a dtype, "
                               "no values), which gradviz's files cannot hold (PyTorch's can). "
                               "Give it values first (a module: to_empty(device='cpu'), then "
                               "initialise or load), or save its shape and dtype.")
        index = memo.get(id(value))
        if index is None:  # a non-leaf is saved as its values: it loads as a leaf, as in torch
            index = memo[id(value)] = len(arrays)
            # (np.ascontiguousarray makes a 0-dim array 1-dim: a 0-dim tensor must load 0-dim)
            arrays.append(np.ascontiguousarray(value._data).reshape(value._data.shape))
        return {"tensor": index, "requires_grad": bool(value.requires_grad),
                "parameter": isinstance(value, Parameter)}
    if isinstance(value, (list, tuple, dict)) and depth == MAX_NESTING:
        raise ValueError(f"gradviz.save: {where} is a {type(value).__name__} nested "
                         f"{depth + 1} containers deep; gradviz files nest at most "
                         f"{MAX_NESTING} (NOTE [what load accepts])")
    if kind in (list, tuple):
        items: list = [None] * len(value)
        for i in range(len(value) - 1, -1, -1):
            stack.append((value[i], items, i, f"{where}[{i}]", depth + 1))
        return {kind.__name__: items}
    if isinstance(value, dict):
        pairs: list = []
        for k, v in value.items():
            pair: list = [None, None]
            pairs.append(pair)
            stack.append((k, pair, 0, f"{where} key {k!r}", depth + 1))
            stack.append((v, pair, 1, f"{where}[{k!r}]", depth + 1))
        return {"dict": pairs, "ordered": isinstance(value, OrderedDict)}
    hint = (" Save its state_dict() instead." if hasattr(value, "state_dict") else "")
    raise TypeError(f"gradviz.save: {where} is a {type(value).__name__}, which gradviz's "
                    f"files cannot hold: they hold only {_WHAT_IT_HOLDS}.{hint}")


def load(f: FileLike, map_location: Any = None, pickle_module: Any = None, *,
         weights_only: bool | None = None, mmap: bool | None = None,
         **pickle_load_args: Any) -> Any:
    """Read what :func:`save` wrote to ``f`` (a path or a binary file object).

    The file is checked before anything is built from it (NOTE [what load accepts]); a file
    that is not exactly what :func:`save` writes raises ``pickle.UnpicklingError`` with one line
    naming the file, the member and what is wrong. Failing to read the file at all (a missing
    path, a closed stream) is the ``OSError`` Python raises.

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
            fails as on PyTorch without CUDA. ``"meta"`` (or ``gradviz.device("meta")``, or
            ``{"cpu": "meta"}``) gives meta tensors, as PyTorch does: each with its saved
            shape, dtype and ``requires_grad`` and no values (NOTE [meta device] in
            gradviz/_device.py), to read a checkpoint's shapes or to ``load_state_dict(...,
            assign=True)`` into a module made on meta. The file is checked as for any load.
        weights_only: accepted as in PyTorch; a gradviz file holds only tensors and plain
            values (NOTE [file format]), so both values load the same data.

    Example:
        >>> import io, gradviz
        >>> buf = io.BytesIO(); gradviz.save([gradviz.zeros(1), (1, "a")], buf); _ = buf.seek(0)
        >>> gradviz.load(buf, map_location="cpu")
        [tensor([0.]), (1, 'a')]
        >>> _ = buf.seek(0); gradviz.load(buf, map_location="meta")
        [tensor(..., device='meta', size=(1,)), (1, 'a')]
    """
    restore = _restore_location(map_location)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            return _Archive(fh, os.fspath(f), restore).load()
    return _Archive(f, getattr(f, "name", None) or type(f).__name__, restore).load()


# NOTE [what load accepts]
# A file may come from anyone, so load accepts exactly what save writes and checks each part
# before it allocates anything for it; every refusal is one pickle.UnpicklingError line (what
# gradviz.load already raised for a file that is not a zip, and what torch.load raises when its
# weights-only unpickler refuses a file). The rules, in the order they are checked:
# * the zip's central directory lists the manifest and gradviz/data/0.npy ... <n-1>.npy, each
#   once and nothing else; every member is stored (save never compresses: a compressed member
#   could declare any size), not encrypted, and lies inside the file before the central
#   directory without overlapping another, so the bytes read are at most the file's size;
# * the manifest is at most MAX_MANIFEST_BYTES of UTF-8 JSON, nested at most MAX_JSON_DEPTH
#   deep (counted by a scan without recursion before json parses it), with no NaN/Infinity,
#   numbers of at most 4,300 digits and floats of at most 40 characters, finite;
# * each entry is one of the shapes save writes, with exactly its keys; containers nest at most
#   MAX_NESTING deep; every data member is referenced;
# * each .npy member has a version 1 or 2 header (at most 10,000 bytes) for one of gradviz's
#   dtypes in native byte order, C order, and a shape whose size times the itemsize is the
#   member's size. Only then is the array allocated, and its bytes are read from the file
#   straight into it (no intermediate copy) and checked against the member's CRC-32.
# Memory is the arrays themselves (at most the file's size) plus Python objects for the
# manifest (a few tens of times its size at worst, as for any JSON or pickle).

MAX_MANIFEST_BYTES = 8 * 2**20
MAX_NESTING = 100  # lists, tuples and dicts inside one another; save refuses deeper
MAX_JSON_DEPTH = 2 + 3 * MAX_NESTING  # the manifest, each container as 2-3 JSON levels, a leaf
_MAX_NPY_HEADER = 10_000  # numpy's own limit for an untrusted header
_MAX_INT_DIGITS = 4_300  # Python's default int_max_str_digits
_MAX_FLOAT_CHARS = 40  # repr(float) takes at most 24
_DATA_NAME = re.compile(r"gradviz/data/(0|[1-9][0-9]{0,8})\.npy")
_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")  # zipfile's structFileHeader
_NPY_MAGIC = b"\x93NUMPY"
_SAVED_DTYPES = frozenset(d.np for d in (_dtype.float16, _dtype.float32, _dtype.float64,
                                          _dtype.uint8, _dtype.int8, _dtype.int16,
                                          _dtype.int32, _dtype.int64, _dtype.bool))
# A JSON string (running to the end if unterminated, so the scan never restarts) or a bracket.
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\(?:.|\Z)[^"\\]*)*(?:"|\Z)', re.S)
_LONG_NUMBER = re.compile(rb"[0-9]{%d,}" % (_MAX_INT_DIGITS + 1))
_OPENS = np.zeros(256, np.int8)
_OPENS[[ord("["), ord("{")]] = 1
_OPENS[[ord("]"), ord("}")]] = -1


class _Refused(Exception):
    """Raised inside the JSON parser's hooks; turned into the one documented error."""


class _Archive:
    """One gradviz file being loaded: its handle, size and checked members."""

    def __init__(self, fh: IO[bytes], name: str, restore: Callable[[Tensor], Tensor]) -> None:
        self.fh = fh
        self.name = name
        self.restore = restore  # what map_location does to each tensor read

    def error(self, problem: str) -> pickle.UnpicklingError:
        return pickle.UnpicklingError(f"gradviz.load: {self.name}: {problem}")

    def load(self) -> Any:
        fh = self.fh
        fh.seek(0, os.SEEK_END)
        self.size = fh.tell()
        fh.seek(0)
        try:
            zf = zipfile.ZipFile(fh)
        except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError, struct.error,
                UnicodeDecodeError, NotImplementedError, OverflowError, IndexError, KeyError):
            # Not a zip, or a zip whose directory zipfile cannot read: either way not ours.
            raise pickle.UnpicklingError(_not_gradviz(self.name, legacy=True)) from None
        with zf:
            infos = zf.infolist()
            names = [i.filename for i in infos]
            if _MANIFEST not in names:
                torch_file = any(n.endswith("/data.pkl") or n == "data.pkl" for n in names)
                raise pickle.UnpicklingError(_not_gradviz(self.name, legacy=False,
                                                          torch_zip=torch_file))
            self.members = self.check_members(infos, zf.start_dir)
        manifest = self.read_manifest()
        self.tensors: dict[int, Tensor] = {}
        obj = _decode(manifest["object"], self.tensor, self.error)
        unused = len(self.members) - 1 - len(self.tensors)
        if unused:
            first = min(set(range(len(self.members) - 1)) - set(self.tensors))
            raise self.error(f"member gradviz/data/{first}.npy is not referenced by the "
                             f"manifest ({unused} such); gradviz.save writes none")
        return obj

    def check_members(self, infos: list, start_dir: int) -> dict[str, tuple]:
        """Each member's (data offset, size, CRC) after the rules above, before reading data."""
        members: dict[str, tuple] = {}
        spans = []
        for info in infos:
            name = info.filename
            where = f"member {name[:80]!r}"
            if name in members:
                raise self.error(f"{where} appears twice")
            if name != _MANIFEST and not _DATA_NAME.fullmatch(name):
                raise self.error(f"{where} is not one gradviz.save writes (it writes "
                                 f"{_MANIFEST} and gradviz/data/<i>.npy)")
            if info.compress_type != zipfile.ZIP_STORED:
                raise self.error(f"{where} is compressed (method {info.compress_type}); "
                                 "gradviz.save stores members uncompressed")
            if info.flag_bits & 0x1:
                raise self.error(f"{where} is encrypted")
            size = info.file_size
            if info.compress_size != size:
                raise self.error(f"{where} declares {size:,} bytes but stores "
                                 f"{info.compress_size:,}")
            offset = info.header_offset
            if not 0 <= offset <= start_dir - _LOCAL_HEADER.size:
                raise self.error(f"{where} starts at byte {offset:,}, outside the file's "
                                 f"{start_dir:,} bytes of members")
            self.fh.seek(offset)
            header = self.fh.read(_LOCAL_HEADER.size)
            fields = _LOCAL_HEADER.unpack(header)
            data = offset + _LOCAL_HEADER.size + fields[10] + fields[11]
            if fields[0] != b"PK\x03\x04" or fields[4] != zipfile.ZIP_STORED:
                raise self.error(f"{where} has no valid local header at byte {offset:,}")
            if self.fh.read(fields[10]) != name.encode("ascii"):
                raise self.error(f"{where}: its local header names another member")
            if data + size > start_dir:
                raise self.error(f"{where} declares {size:,} bytes, but only "
                                 f"{max(start_dir - data, 0):,} of the file's {self.size:,} "
                                 "bytes follow it")
            members[name] = (data, size, info.CRC)
            spans.append((offset, data + size, name))
        spans.sort()
        for (_, end, a), (start, _, b) in zip(spans, spans[1:]):
            if start < end:
                raise self.error(f"members {a!r} and {b!r} overlap")
        count = len(members) - 1
        for i in range(count):
            if f"gradviz/data/{i}.npy" not in members:
                raise self.error(f"member gradviz/data/{i}.npy is missing ({count} data "
                                 f"members must be numbered 0 to {count - 1})")
        return members

    def read_into(self, mv: memoryview, offset: int, crc: int) -> int:
        """Read ``len(mv)`` bytes at ``offset`` straight into ``mv``; their running CRC-32."""
        self.fh.seek(offset)
        done = 0
        readinto = getattr(self.fh, "readinto", None)
        while done < len(mv):
            if readinto is not None:
                n = readinto(mv[done:])
            else:
                chunk = self.fh.read(min(len(mv) - done, 1 << 20))
                n = len(chunk)
                mv[done:done + n] = chunk
            if not n:
                raise self.error(f"the file ends {len(mv) - done:,} bytes early")
            done += n
        return zlib.crc32(mv, crc)

    def read_manifest(self) -> dict:
        offset, size, crc = self.members[_MANIFEST]
        if size > MAX_MANIFEST_BYTES:
            raise self.error(f"{_MANIFEST} is {size:,} bytes; gradviz.load reads at most "
                             f"{MAX_MANIFEST_BYTES:,}")
        raw = bytearray(size)
        if self.read_into(memoryview(raw), offset, 0) != crc:
            raise self.error(f"member {_MANIFEST} is damaged: its CRC-32 does not match")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise self.error(f"{_MANIFEST} is not UTF-8 (byte {e.start:,})") from None
        outside_strings = _JSON_STRING.sub(b'""', raw)
        del raw
        depth = _json_depth(outside_strings)
        if depth > MAX_JSON_DEPTH:
            raise self.error(f"{_MANIFEST} nests {depth:,} levels deep; a gradviz file nests "
                             f"at most {MAX_JSON_DEPTH}")
        long_number = _LONG_NUMBER.search(outside_strings)
        if long_number:  # int() of a huge number takes quadratic time
            raise self.error(f"{_MANIFEST}: a number of {len(long_number[0]):,} digits (at "
                             f"most {_MAX_INT_DIGITS:,})")
        del outside_strings
        try:
            manifest = json.loads(text, parse_constant=_refuse_constant,
                                  parse_float=_parse_float)
        except json.JSONDecodeError as e:
            raise self.error(f"{_MANIFEST} is not valid JSON: {e.msg} at line {e.lineno} "
                             f"column {e.colno}") from None
        except (_Refused, RecursionError) as e:
            raise self.error(f"{_MANIFEST}: {e or 'nested too deep'}") from None
        if type(manifest) is not dict or set(manifest) != {"format", "version", "object"} \
                or manifest["format"] != _FORMAT:
            raise self.error(f"{_MANIFEST} is not a gradviz.save manifest (an object with "
                             f"format {_FORMAT!r}, version and object)")
        version = manifest["version"]
        if type(version) is not int or version != _VERSION:
            raise self.error(f"unsupported file version {str(version)[:20]} (this gradviz reads "
                             f"version {_VERSION})")
        return manifest

    def tensor(self, entry: dict, where: str) -> Tensor:
        """Tensor ``entry["tensor"]``, read from its member the first time it is referenced."""
        i = entry["tensor"]
        if set(entry) != {"tensor", "requires_grad", "parameter"} or type(i) is not int \
                or type(entry["requires_grad"]) is not bool or \
                type(entry["parameter"]) is not bool:
            raise self.error(f"{where}: a malformed tensor entry (save writes "
                             '{"tensor": <int>, "requires_grad": <bool>, "parameter": <bool>})')
        t = self.tensors.get(i)
        if t is not None:
            return t
        name = f"gradviz/data/{i}.npy"
        if not 0 <= i < len(self.members) - 1:
            raise self.error(f"{where} is tensor {str(i)[:20]}, but the file has no {name}")
        arr = self.read_array(name)
        if entry["requires_grad"] and arr.dtype.kind != "f":
            raise self.error(f"{where}: a {arr.dtype} tensor cannot require grad (only "
                             "floating point tensors can)")
        t = self.restore(Tensor._make(arr))
        if entry["parameter"]:
            t = Parameter(t, requires_grad=entry["requires_grad"])
        elif entry["requires_grad"]:
            t.requires_grad_(True)
        self.tensors[i] = t
        return t

    def read_array(self, name: str) -> np.ndarray:
        """Member ``name``'s array: header checked, then its bytes read into the array itself."""
        offset, size, crc = self.members[name]
        where = f"member {name}"
        prefix = bytearray(min(size, 12))
        self.read_into(memoryview(prefix), offset, 0)
        if len(prefix) < 10 or prefix[:6] != _NPY_MAGIC or (prefix[6], prefix[7]) not in \
                ((1, 0), (2, 0)):
            raise self.error(f"{where} is not a .npy array of format version 1 or 2")
        if prefix[6] == 1:
            start = 10
            hlen = int.from_bytes(prefix[8:10], "little")
        else:
            start = 12
            hlen = int.from_bytes(prefix[8:12], "little") if len(prefix) == 12 else size
        if hlen > _MAX_NPY_HEADER or start + hlen > size:
            raise self.error(f"{where} declares a {hlen:,}-byte .npy header in "
                             f"{size:,} bytes (at most {_MAX_NPY_HEADER:,})")
        head = bytearray(start + hlen)
        self.read_into(memoryview(head), offset, 0)
        shape, dtype = self.parse_npy_header(bytes(head), where)
        count = math.prod(shape)
        if count * dtype.itemsize != size - len(head):
            raise self.error(f"{where} declares shape {shape} of {dtype} ({count:,} x "
                             f"{dtype.itemsize} bytes) but holds {size - len(head):,} bytes")
        arr = np.empty(shape, dtype)
        data = memoryview(arr.reshape(-1).view(np.uint8))
        if self.read_into(data, offset + len(head), zlib.crc32(head)) != crc:
            raise self.error(f"{where} is damaged: its CRC-32 does not match")
        if dtype.kind == "b" and count and data.obj.max() > 1:
            raise self.error(f"{where} holds a bool that is neither 0 nor 1")
        return arr

    def parse_npy_header(self, head: bytes, where: str) -> tuple[tuple[int, ...], np.dtype]:
        fp = io.BytesIO(head)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # numpy warns about Python 2 headers
                version = np.lib.format.read_magic(fp)
                read = (np.lib.format.read_array_header_1_0 if version == (1, 0) else
                        np.lib.format.read_array_header_2_0)
                shape, fortran_order, dtype = read(fp, max_header_size=_MAX_NPY_HEADER)
        except Exception as e:  # numpy parses the header with ast; any failure means bad bytes
            text = " ".join(str(e).split())[:120]
            raise self.error(f"{where} has an unreadable .npy header ({text})") from None
        if dtype not in _SAVED_DTYPES or not dtype.isnative:
            order = {">": "big-endian ", "<": "little-endian "}.get(dtype.byteorder, "")
            saved = ", ".join(sorted(d.str for d in _SAVED_DTYPES))
            raise self.error(f"{where} holds {order}dtype {dtype.str!r}; gradviz.save writes "
                             f"only {saved} (this machine's byte order)")
        if fortran_order:
            raise self.error(f"{where} is in Fortran order; gradviz.save writes C order")
        if len(shape) > 32 or any(d < 0 or d >= 2**62 for d in shape):
            raise self.error(f"{where} declares an impossible shape {str(shape)[:80]}")
        return shape, dtype


def _json_depth(outside_strings: bytes) -> int:
    """How deep JSON text whose strings were emptied nests: a scan without recursion."""
    brackets = np.frombuffer(outside_strings, np.uint8)
    deepest = depth = 0
    for i in range(0, len(brackets), 1 << 20):  # in chunks: a few MB at most
        running = np.cumsum(_OPENS[brackets[i:i + (1 << 20)]], dtype=np.int32) + depth
        if len(running):
            deepest = max(deepest, int(running.max()))
            depth = int(running[-1])
    return deepest


def _refuse_constant(name: str) -> Any:
    raise _Refused(f"{name} is not a number JSON holds (save writes {{\"float\": \"nan\"}})")


def _parse_float(text: str) -> float:
    if len(text) > _MAX_FLOAT_CHARS or not math.isfinite(value := float(text)):
        raise _Refused(f"a number too long or too large: {text[:30]}")
    return value


def _decode(entry: Any, tensor: Any, error: Any) -> Any:
    """A manifest entry back as Python objects, without recursion.

    Each open container is a frame ``[json items, next index, built items, kind, ordered,
    nesting level]`` (a dict's ``[key, value]`` pairs get frames of their own);
    an item is built when its frame reaches it, and a container when its last item is built,
    so memory beyond the result is one frame per nesting level. ``error(text)`` makes the one
    exception load raises; the path it names is read off the frames.
    """
    root: list = [None, 0, [], "root", False, 0]
    frames = [root]

    def where() -> str:
        path = "obj"
        for frame, inner in zip(frames[1:], frames[2:] + [None]):
            i = frame[1] - 1
            if frame[3] in ("list", "tuple"):
                path += f"[{i}]"
            elif frame[3] == "pair":
                if i == 0:
                    path += " key"
                else:
                    key = frame[2][0]
                    path += f"[{key!r}]"[:60] if type(key) in (str, int) else "[...]"
            elif inner is None:  # a dict whose item (a pair) is malformed
                path += f" item {i}"
        return path

    while frames:
        frame = frames[-1]
        items, i, built, kind = frame[0], frame[1], frame[2], frame[3]
        if kind == "root":
            if i == 1:
                return built[0]
            frame[0], frame[1] = [entry], 1
            e = entry
        elif i == len(items):  # the container is complete: build it and hand it up
            frames.pop()
            if kind == "tuple":
                value = tuple(built)
            elif kind == "pair":
                value = (built[0], built[1])
            elif kind == "dict":
                try:
                    value = (OrderedDict if frame[4] else dict)(built)
                except TypeError:
                    raise error(f"{where()}: a dict key is unhashable (a list or dict); "
                                "gradviz.save cannot write one") from None
            else:
                value = built
            frames[-1][2].append(value)
            continue
        else:
            e = items[i]
            frame[1] = i + 1
            if kind == "dict":
                if type(e) is not list or len(e) != 2:
                    raise error(f"{where()}: a dict item must be a [key, value] pair")
                frames.append([e, 0, [], "pair", False, frame[5]])
                continue
        if e is None or type(e) in (bool, int, float, str):
            frame[2].append(e)
            continue
        if type(e) is not dict or not e:
            raise _weights_only_error(where(), f"a JSON {type(e).__name__}")
        kinds = set(e)
        if "tensor" in kinds:
            frame[2].append(tensor(e, where()))
        elif kinds == {"float"} and e["float"] in ("nan", "inf", "-inf"):
            frame[2].append(float(e["float"]))
        elif kinds in ({"list"}, {"tuple"}) or kinds == {"dict", "ordered"}:
            kind = "dict" if "dict" in kinds else next(iter(kinds))
            if type(e[kind]) is not list or (kind == "dict" and type(e["ordered"]) is not bool):
                raise error(f"{where()}: a malformed {kind} entry")
            if frame[5] == MAX_NESTING:
                raise error(f"{where()}: containers nest more than {MAX_NESTING} deep; "
                            "gradviz.save writes at most that")
            frames.append([e[kind], 0, [], kind, kind == "dict" and e["ordered"], frame[5] + 1])
        else:
            raise _weights_only_error(where(), repr(sorted(kinds))[:60])
    raise AssertionError("unreachable")


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
    if _device.check_device(target, "load") is _device.META:
        # the values read (and checked) are dropped: shape and dtype stay (NOTE [meta device])
        return lambda t: Tensor._make(_device.meta_array(t._data.shape, t._data.dtype))
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
