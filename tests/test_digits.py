"""The bundled 8x8 digits and train_test_split: shapes, counts, scaling, determinism."""

from __future__ import annotations

import hashlib
from importlib import resources

import numpy as np
import pytest

import gradviz
from gradviz.data import DataLoader, Digits, load_digits, train_test_split

# docs/datasets.md: the file's checksum and the per-class counts of the UCI test set.
DIGITS_SHA256 = "b2dab7b501728c22e9119ad76740b2e17c77a231e42d1e592380d90886f1a05e"
COUNTS = [178, 182, 177, 183, 181, 182, 181, 179, 174, 180]


def test_file_is_the_documented_one() -> None:
    data = resources.files("gradviz").joinpath("datasets/digits.npz").read_bytes()
    assert hashlib.sha256(data).hexdigest() == DIGITS_SHA256


def test_load_digits_shapes_and_scaling() -> None:
    X, y = load_digits()
    assert X.shape == (1797, 1, 8, 8) and X.dtype == gradviz.float32
    assert y.shape == (1797,) and y.dtype == gradviz.int64
    pixels = X.numpy() * 16
    np.testing.assert_array_equal(pixels, np.round(pixels))  # integers 0..16, scaled by 1/16
    assert pixels.min() == 0 and pixels.max() == 16
    flat, y2 = load_digits(flatten=True)
    assert flat.shape == (1797, 64)
    np.testing.assert_array_equal(flat.numpy(), X.numpy().reshape(1797, 64))
    np.testing.assert_array_equal(y.numpy(), y2.numpy())


def test_label_counts() -> None:
    _, y = load_digits()
    counts = np.bincount(y.numpy(), minlength=10)
    assert counts.tolist() == COUNTS and counts.sum() == 1797
    _, y3 = load_digits(n_class=3)
    assert np.bincount(y3.numpy()).tolist() == COUNTS[:3]
    with pytest.raises(ValueError, match="n_class"):
        load_digits(n_class=11)


def test_first_image_is_a_zero() -> None:
    X, y = load_digits()
    img = (X[0, 0].numpy() * 16).astype(int)
    assert y[0].item() == 0
    assert img[0].tolist() == [0, 0, 5, 13, 9, 1, 0, 0]  # the top of the ring


def test_digits_dataset() -> None:
    ds = Digits()
    assert len(ds) == 1797 and ds.classes == [str(d) for d in range(10)]
    x, t = ds[5]
    assert x.shape == (1, 8, 8) and t.item() == 5
    batches = list(DataLoader(ds, batch_size=500))
    assert [len(b[1]) for b in batches] == [500, 500, 500, 297]
    assert Digits(flatten=True, n_class=2)[0][0].shape == (64,)
    assert repr(Digits()).startswith("Dataset Digits\n    Number of datapoints: 1797")


def test_split_is_deterministic_and_disjoint() -> None:
    X, y = load_digits(flatten=True)
    idx = gradviz.arange(1797)
    a = train_test_split(X, y, idx, test_size=0.2, seed=3)
    b = train_test_split(X, y, idx, test_size=0.2, seed=3)
    c = train_test_split(X, y, idx, test_size=0.2, seed=4)
    for p, q in zip(a, b):
        np.testing.assert_array_equal(p.numpy(), q.numpy())
    assert not np.array_equal(a[5].numpy(), c[5].numpy())
    train_idx, test_idx = a[4].numpy(), a[5].numpy()
    assert len(test_idx) == 360 and len(train_idx) == 1437  # ceil(0.2 * 1797)
    assert sorted(np.concatenate([train_idx, test_idx]).tolist()) == list(range(1797))
    np.testing.assert_array_equal(a[0].numpy(), X.numpy()[train_idx])  # rows stay together
    np.testing.assert_array_equal(a[3].numpy(), y.numpy()[test_idx])
    gradviz.manual_seed(0)
    d = train_test_split(idx, test_size=10)
    gradviz.manual_seed(0)
    e = train_test_split(idx, test_size=10)
    np.testing.assert_array_equal(d[1].numpy(), e[1].numpy())


def test_stratified_split_keeps_class_proportions() -> None:
    _, y = load_digits()
    y_tr, y_te = train_test_split(y, test_size=0.25, stratify=y, seed=0)
    assert len(y_te) == 450 and len(y_tr) == 1347  # ceil(0.25 * 1797)
    te = np.bincount(y_te.numpy(), minlength=10)
    assert np.all(np.abs(te - np.array(COUNTS) * 450 / 1797) < 1)
    assert (te + np.bincount(y_tr.numpy(), minlength=10)).tolist() == COUNTS


def test_unshuffled_split_takes_the_end() -> None:
    idx = gradviz.arange(10)
    tr, te = train_test_split(idx, test_size=0.3, shuffle=False)
    assert tr.tolist() == list(range(7)) and te.tolist() == [7, 8, 9]


@pytest.mark.parametrize(("kwargs", "text"), [
    ({"test_size": 1.5}, "should be a float in the (0, 1) range"),
    ({"test_size": 0}, "leaves an empty training or test set"),
    ({"shuffle": False, "stratify": gradviz.zeros(10)}, "not implemented for shuffle=False"),
])
def test_split_errors(kwargs: dict, text: str) -> None:
    with pytest.raises(ValueError) as info:
        train_test_split(gradviz.arange(10), **kwargs)
    assert text in str(info.value)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        train_test_split(gradviz.arange(10), gradviz.arange(9))
