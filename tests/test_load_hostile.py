"""Issue #33: ``gradviz.load`` on a file from someone else: bounded, strict, one clear error.

Every refusal is one ``pickle.UnpicklingError`` line (NOTE [what load accepts] in
gradviz/serialization.py, docs/guarantees.md). Bounds are asserted by construction: bytes read
from the file and memory allocated (tracemalloc), never time.
"""

from __future__ import annotations

import io
import json
import pickle
import struct
import tracemalloc
import zipfile
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gradviz
from gradviz import serialization

MANIFEST = "gradviz/manifest.json"


def _saved(obj: Any) -> bytes:
    buf = io.BytesIO()
    gradviz.save(obj, buf)
    return buf.getvalue()


def _npy(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=False)
    return buf.getvalue()


def _with_shape(npy: bytes, shape: bytes) -> bytes:
    """``npy`` with its header's shape replaced by ``shape``, the padding adjusted to match."""
    start = npy.index(b"'shape': (") + 9
    end = npy.index(b"), }", start) + 1
    header = npy[:start] + shape + npy[end:]
    pad = len(npy) - len(header)
    newline = header.index(b"\n")
    return header[:newline - max(0, -pad)] + b" " * max(0, pad) + header[newline:]


def _manifest(entry: Any) -> str:
    return json.dumps({"format": "gradviz.save", "version": 1, "object": entry})


def _zip(members: list[tuple[str, bytes | str]], compression: int = zipfile.ZIP_STORED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=compression) as zf:
        for name, data in members:  # a fixed time: the same members give the same bytes
            zf.writestr(zipfile.ZipInfo(name, (2020, 1, 1, 0, 0, 0)), data,
                        compress_type=compression)
    return buf.getvalue()


def _tensor_file(arr: np.ndarray, **entry: Any) -> bytes:
    t = {"tensor": 0, "requires_grad": False, "parameter": False, **entry}
    return _zip([(MANIFEST, _manifest(t)), ("gradviz/data/0.npy", _npy(arr))])


def _one_tensor_entry() -> str:
    return _manifest({"tensor": 0, "requires_grad": False, "parameter": False})


def _refused(data: bytes, match: str) -> str:
    with pytest.raises(pickle.UnpicklingError, match=match) as info:
        gradviz.load(io.BytesIO(data))
    text = str(info.value)
    assert "\n" not in text and text.startswith(("gradviz.load: ", "Weights only load failed"))
    return text


def _patch_central(data: bytes, name: str, **fields: int) -> bytes:
    """``data`` with member ``name``'s central directory sizes replaced (zip's own layout)."""
    out = bytearray(data)
    at = struct.unpack_from("<L", out, out.rfind(b"PK\x05\x06") + 16)[0]  # the directory
    while at != -1:
        name_len = struct.unpack_from("<H", out, at + 28)[0]
        if out[at + 46:at + 46 + name_len] == name.encode():
            for field, offset in (("compress_size", 20), ("file_size", 24),
                                  ("header_offset", 42)):
                if field in fields:
                    struct.pack_into("<L", out, at + offset, fields[field])
            return bytes(out)
        at = out.find(b"PK\x01\x02", at + 46)
    raise AssertionError(name)


class CountingFile(io.BytesIO):
    """A file that counts the bytes read from it."""

    read_bytes = 0

    def read(self, n: int | None = -1) -> bytes:
        chunk = super().read(n)
        self.read_bytes += len(chunk)
        return chunk

    def readinto(self, b: Any) -> int:
        n = super().readinto(b)
        self.read_bytes += n
        return n


# --- sizes: nothing is inflated, nothing allocated before it is checked -----------------------

def test_a_compressed_member_declaring_more_than_it_stores_is_refused_before_decompressing(
) -> None:
    # 64 MB of zeros deflates to about 64 KB; bz2 would shrink it to a few hundred bytes.
    bomb = _zip([(MANIFEST, _manifest({"tensor": 0, "requires_grad": False,
                                       "parameter": False})),
                 ("gradviz/data/0.npy", _npy(np.zeros(16 * 2**20, np.float32)))],
                compression=zipfile.ZIP_DEFLATED)
    assert len(bomb) < 2**20
    tracemalloc.start()
    try:
        _refused(bomb, r"member 'gradviz/manifest.json' is compressed \(method 8\); "
                 "gradviz.save stores members uncompressed")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * 2**20


def test_a_compressed_manifest_is_refused() -> None:
    data = _zip([(MANIFEST, _manifest([1] * 1000))], compression=zipfile.ZIP_BZIP2)
    _refused(data, "is compressed")


def test_a_member_declaring_more_bytes_than_the_file_holds_is_refused() -> None:
    data = _saved({"w": gradviz.ones(4)})
    huge = _patch_central(data, "gradviz/data/0.npy", compress_size=2**31, file_size=2**31)
    _refused(huge, r"member 'gradviz/data/0.npy' declares 2,147,483,648 bytes, but only "
             r"\d+ of the file's \d+ bytes follow it")


def test_members_that_overlap_are_refused() -> None:
    """The classic overlapping-entries bomb: member 1's directory entry points inside member 0,
    where a copy of its local header and data sits, so one stretch of bytes counts twice."""
    w = np.ones(4, np.float32)
    two = _manifest({"list": [{"tensor": i, "requires_grad": False, "parameter": False}
                              for i in range(2)]})
    plain = _zip([(MANIFEST, two), ("gradviz/data/0.npy", _npy(w)),
                  ("gradviz/data/1.npy", _npy(w))])
    info = zipfile.ZipFile(io.BytesIO(plain)).getinfo("gradviz/data/1.npy")
    blob = plain[info.header_offset:info.header_offset + 30 + len(info.filename) + info.file_size]
    data = _zip([(MANIFEST, two), ("gradviz/data/0.npy", _npy(np.frombuffer(blob, np.uint8))),
                 ("gradviz/data/1.npy", _npy(w))])
    inside = _patch_central(data, "gradviz/data/1.npy", header_offset=data.find(blob))
    _refused(inside, "members 'gradviz/data/0.npy' and 'gradviz/data/1.npy' overlap")


def test_a_header_whose_shape_disagrees_with_the_member_size_is_refused() -> None:
    for shape, match in ((b"(9,)", r"declares shape \(9,\) of float32 \(9 x 4 bytes\) but "
                          "holds 16 bytes"),  # was ValueError from numpy
                         (b"(2**62,)", "unreadable .npy header"),
                         (b"(4611686018427387904, 4611686018427387904)",
                          "impossible shape"),
                         (b"(-1, -4)", "impossible shape")):  # the product matches
        npy = _with_shape(_npy(np.ones(4, np.float32)), shape)
        data = _zip([(MANIFEST, _one_tensor_entry()), ("gradviz/data/0.npy", npy)])
        _refused(data, match)


def test_a_manifest_larger_than_the_limit_is_refused_before_it_is_read(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(serialization, "MAX_MANIFEST_BYTES", 1000)
    data = _zip([(MANIFEST, _manifest(list(range(1000))))])
    f = CountingFile(data)
    with pytest.raises(pickle.UnpicklingError, match=r"manifest.json is \d,\d+ bytes; "
                       r"gradviz.load reads at most 1,000$"):
        gradviz.load(f)
    assert f.read_bytes < len(data) // 2  # the directory, not the manifest


# --- hostile manifests: one error, never a raw exception ---------------------------------------

@pytest.mark.parametrize("manifest, match", [
    ("[1, 2]", "is not a gradviz.save manifest"),  # was AttributeError
    (_manifest({"tensor": [], "requires_grad": False, "parameter": False}),
     r"obj: a malformed tensor entry"),  # was TypeError: unhashable type: 'list'
    (_manifest({"dict": [[{"list": []}, 1]], "ordered": False}),
     "a dict key is unhashable"),
    ("[" * 100_000 + "]" * 100_000, r"nests 100,000 levels deep; a gradviz file nests at most "
     "302"),  # was RecursionError
    ('{"format": "gradviz.save", "version": 1, "object": [1,', "is not valid JSON: "
     "Expecting value at line 1 column 55"),  # was json.JSONDecodeError
    (_manifest({"list": ["\udcff"]}).encode("utf-8", "surrogatepass").replace(
        b"\\udcff", b"\xff"), r"is not UTF-8 \(byte 62\)"),  # was UnicodeDecodeError
    ('{"format": "gradviz.save", "version": 1, "object": NaN}', "NaN is not a number"),
    ('{"format": "gradviz.save", "version": 1, "object": ' + "9" * 5000 + "}",
     "a number of 5,000 digits"),
    ('{"format": "gradviz.save", "version": 1, "object": 1e400}', "too large: 1e400$"),
    ('{"format": "gradviz.save", "version": 1, "object": 1.' + "0" * 60 + "e5}",
     "too long"),
    (_manifest({"tensor": 0, "requires_grad": False, "parameter": False}),
     r"obj is tensor 0, but the file has no gradviz/data/0.npy"),
    (_manifest({"list": [1, {"float": "pi"}]}), r"^Weights only load failed.*obj\[1\] in "
     r"this file is \['float'\]"),
    (_manifest({"dict": [[1, 2, 3]], "ordered": False}),
     r"obj item 0: a dict item must be a \[key, value\] pair"),
    (_manifest({"dict": [["a", {"dict": [["b", {"global": "os.system"}]],
                                "ordered": True}]], "ordered": False}),
     r"Weights only load failed.*obj\['a'\]\['b'\] in this file is \['global'\]"),
    (json.dumps({"format": "gradviz.save", "version": 2, "object": None}),
     r"unsupported file version 2 \(this gradviz reads version 1\)"),  # was RuntimeError
])
def test_a_hostile_manifest_is_one_unpickling_error(manifest: str | bytes, match: str) -> None:
    _refused(_zip([(MANIFEST, manifest)]), match)


def test_nesting_is_bounded_the_same_way_on_save_and_load() -> None:
    deep: list = []
    cur = deep
    for _ in range(serialization.MAX_NESTING - 2):  # the dict, then 99 lists
        cur.append([])
        cur = cur[0]
    back = gradviz.load(io.BytesIO(_saved({"d": deep})))  # 100 containers: the limit
    assert back == {"d": deep}
    with pytest.raises(ValueError, match=r"gradviz.save: obj\['d'\](\[0\])+ is a list nested "
                       "101 containers deep; gradviz files nest at most 100"):
        _saved({"d": [deep]})
    entry: Any = 1
    for _ in range(serialization.MAX_NESTING + 1):
        entry = {"list": [entry]}
    _refused(_zip([(MANIFEST, _manifest(entry))]), r"obj(\[0\]){100}: containers nest more "
             "than 100 deep")


# --- members: names, dtypes, headers, contents -------------------------------------------------

@pytest.mark.parametrize("members, match", [
    ([(MANIFEST, _manifest(1)), ("gradviz/data/0.npy", _npy(np.ones(2)))],
     r"member gradviz/data/0.npy is not referenced by the manifest \(1 such\)"),
    ([(MANIFEST, _manifest(1)), ("evil.py", b"import os")],
     r"member 'evil.py' is not one gradviz.save writes"),
    ([(MANIFEST, _one_tensor_entry()), ("gradviz/data/1.npy", _npy(np.ones(2)))],
     r"member gradviz/data/0.npy is missing"),
    ([(MANIFEST, _one_tensor_entry()), ("gradviz/data/0.npy", _npy(np.ones(2, ">f4")))],
     r"member gradviz/data/0.npy holds big-endian dtype '>f4'; gradviz.save writes only "),
    ([(MANIFEST, _one_tensor_entry()), ("gradviz/data/0.npy", _npy(np.ones(2, np.uint16)))],
     r"holds dtype '<u2'"),
    ([(MANIFEST, _one_tensor_entry()),
      ("gradviz/data/0.npy", _npy(np.ones((2, 3), np.float32, order="F")))],
     "is in Fortran order"),
    ([(MANIFEST, _one_tensor_entry()), ("gradviz/data/0.npy", b"\x93NUMPY\x01\x00")],
     "is not a .npy array of format version 1 or 2"),
    ([(MANIFEST, _one_tensor_entry()), ("gradviz/data/0.npy", _npy(np.ones(2)) .replace(
        b"}", b'} """', 1))], r"has an unreadable .npy header"),  # was tokenize.TokenError
    ([(MANIFEST, _one_tensor_entry()), ("gradviz/data/0.npy", _npy(np.ones(2, bool)).replace(
        b"\x01\x01", b"\x01\x07"))], "holds a bool that is neither 0 nor 1"),
    ([(MANIFEST, _manifest({"tensor": 0, "requires_grad": True, "parameter": False})),
      ("gradviz/data/0.npy", _npy(np.ones(2, np.int64)))],
     r"obj: a int64 tensor cannot require grad"),  # was RuntimeError
])
def test_members_must_be_what_save_writes(members: list, match: str) -> None:
    _refused(_zip(members), match)


def test_a_damaged_member_is_refused_by_its_crc() -> None:
    data = bytearray(_saved(gradviz.arange(8.0)))
    at = data.find(struct.pack("<f", 5.0))
    data[at] ^= 1
    _refused(bytes(data), r"member gradviz/data/0.npy is damaged: its CRC-32 does not "
             "match")  # was zipfile.BadZipFile


def test_a_truncated_file_and_garbage_are_not_a_gradviz_file() -> None:
    data = _saved({"w": gradviz.ones(3)})
    for cut in (data[:len(data) // 2], data[:-30], b"", b"PK\x05\x06" + b"\xff" * 18):
        _refused(cut, "not a zip archive")


# --- memory: about one copy of the data --------------------------------------------------------

def test_loading_allocates_about_one_copy_of_the_data(tmp_path: Any) -> None:
    x = gradviz.from_numpy(np.arange(2**20, dtype=np.float32))  # 4 MiB
    path = tmp_path / "x.pt"
    gradviz.save({"x": x}, path)
    for source in (path, io.BytesIO(path.read_bytes())):
        tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]
            back = gradviz.load(source)
            peak = tracemalloc.get_traced_memory()[1] - base
        finally:
            tracemalloc.stop()
        assert np.array_equal(back["x"].numpy(), x.numpy())
        # np.load(io.BytesIO(member.read())) held three copies at once.
        assert peak < 1.1 * x.numpy().nbytes, peak


# --- the property test -------------------------------------------------------------------------

def _base_files() -> list[bytes]:
    gradviz.manual_seed(0)
    lin = gradviz.nn.Linear(3, 2)
    return [
        _saved({"model": lin.state_dict(), "step": 3, "lr": [0.1, float("nan")],
                "flags": (True, None, "s"), 7: {"b": gradviz.tensor([True, False])}}),
        _saved([gradviz.arange(6, dtype=gradviz.int16).reshape(2, 3), gradviz.tensor(2.5),
                gradviz.zeros(0, 4, dtype=gradviz.float16)]),
    ]


BASES = _base_files()
HOSTILE_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["tensor", "list", "tuple", "dict", "ordered", "float", "parameter",
                         "requires_grad", "x"]), inner, max_size=3),
    max_leaves=12)


def _mutate(data: st.DataObject, raw: bytes) -> bytes:
    out = bytearray(raw)
    how = data.draw(st.sampled_from(["flip", "truncate", "insert", "manifest", "shape",
                                     "central", "none"]))
    if how == "flip":
        for _ in range(data.draw(st.integers(1, 8))):
            out[data.draw(st.integers(0, len(out) - 1))] ^= data.draw(st.integers(1, 255))
    elif how == "truncate":
        out = out[:data.draw(st.integers(0, len(out)))]
    elif how == "insert":
        at = data.draw(st.integers(0, len(out)))
        out[at:at] = data.draw(st.binary(min_size=1, max_size=16))
    elif how == "manifest":
        with zipfile.ZipFile(io.BytesIO(raw)) as zf:
            members = [(n, zf.read(n)) for n in zf.namelist() if n != MANIFEST]
        entry = data.draw(HOSTILE_VALUES)
        text = (_manifest(entry) if data.draw(st.booleans()) else json.dumps(entry))
        out = bytearray(_zip([(MANIFEST, text)] + members))
    elif how == "shape":  # a huge, negative or empty declared shape in an array's header
        dims = data.draw(st.lists(st.integers(-2, 2**62), min_size=0, max_size=3))
        with zipfile.ZipFile(io.BytesIO(raw)) as zf:
            members = [(n, zf.read(n)) for n in zf.namelist()]
        i = data.draw(st.integers(1, len(members) - 1))
        shape = ("(" + ", ".join(map(str, dims)) + ",)").encode()
        members[i] = (members[i][0], _with_shape(members[i][1], shape))
        out = bytearray(_zip(members))
    elif how == "central":  # declared sizes and offsets in the central directory
        with zipfile.ZipFile(io.BytesIO(raw)) as zf:
            name = data.draw(st.sampled_from(zf.namelist()))
        field = data.draw(st.sampled_from(["compress_size", "file_size", "header_offset"]))
        out = bytearray(_patch_central(raw, name, **{field: data.draw(
            st.integers(0, 2**32 - 1))}))
    return bytes(out)


@settings(max_examples=200, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_mutated_file_loads_or_is_one_unpickling_error(data: st.DataObject) -> None:
    raw = data.draw(st.sampled_from(BASES))
    mutated = _mutate(data, raw)
    f = CountingFile(mutated)
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        try:
            obj = gradviz.load(f)
        except pickle.UnpicklingError as e:
            assert "\n" not in str(e)
            obj = None
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    if mutated == raw:
        assert obj is not None
    # The directory and end record (zipfile looks at most 64 KiB back), each member once.
    assert f.read_bytes <= 2 * len(mutated) + 2**16 + 22
    # The arrays (at most the file), Python objects for a manifest of a few KB, zipfile's
    # directory: a fixed allowance, never what a declared size asks for.
    assert peak < 64 * len(mutated) + 2**20, (peak, len(mutated))


def test_an_unchanged_save_loads_back_exactly() -> None:
    obj = gradviz.load(io.BytesIO(BASES[1]))
    assert obj[0].dtype == gradviz.int16 and obj[0].tolist() == [[0, 1, 2], [3, 4, 5]]
    assert obj[2].shape == (0, 4) and obj[2].dtype == gradviz.float16
