"""gradviz.data: the synthetic datasets and the DataLoader (everything local and seeded)."""

from __future__ import annotations

import numpy as np
import pytest

import gradviz
from gradviz.data import (
    DataLoader,
    Dataset,
    TensorDataset,
    default_collate,
    make_blobs,
    make_moons,
    make_regression,
    make_spirals,
)


@pytest.mark.parametrize("make", [make_moons, make_spirals, make_blobs])
def test_classification_sets_have_the_documented_types_and_are_seeded(make) -> None:  # noqa: ANN001
    X, y = make(120, seed=3)
    assert X.shape == (120, 2) and X.dtype is gradviz.float32
    assert y.shape == (120,) and y.dtype is gradviz.int64
    assert not X.requires_grad
    X2, y2 = make(120, seed=3)
    np.testing.assert_array_equal(X.numpy(), X2.numpy())
    np.testing.assert_array_equal(y.numpy(), y2.numpy())
    X3, _ = make(120, seed=4)
    assert not np.array_equal(X.numpy(), X3.numpy())
    # A NumPy generator works too, and gradviz.manual_seed drives the default.
    Xg, _ = make(120, generator=np.random.default_rng(3))
    np.testing.assert_array_equal(X.numpy(), Xg.numpy())
    gradviz.manual_seed(11)
    Xa, _ = make(120)
    gradviz.manual_seed(11)
    Xb, _ = make(120)
    np.testing.assert_array_equal(Xa.numpy(), Xb.numpy())


def test_moons_geometry() -> None:
    X, y = make_moons(101, shuffle=False)
    x, labels = X.numpy(), y.numpy()
    assert (labels[:50] == 0).all() and (labels[50:] == 1).all()
    # Noise-free: the outer moon is the upper unit half circle, the inner one is shifted.
    np.testing.assert_allclose(np.hypot(x[:50, 0], x[:50, 1]), 1.0, rtol=1e-6)
    np.testing.assert_allclose(np.hypot(x[50:, 0] - 1, x[50:, 1] - 0.5), 1.0, rtol=1e-6)
    assert (x[:50, 1] >= -1e-7).all() and (x[50:, 1] <= 0.5 + 1e-7).all()
    Xn, yn = make_moons(101, noise=0.2, seed=0)
    assert sorted(np.bincount(yn.numpy())) == [50, 51]
    assert np.abs(np.hypot(*Xn.numpy()[yn.numpy() == 0].T) - 1.0).max() > 0.05


def test_spirals_and_blobs_class_balance() -> None:
    _, y = make_spirals(100, n_classes=3, seed=0)
    assert np.bincount(y.numpy()).tolist() == [34, 33, 33]
    X, y = make_blobs(60, centers=[[0.0, 0.0], [10.0, 10.0], [-10.0, 10.0]], cluster_std=0.5,
                      seed=0)
    assert np.bincount(y.numpy()).tolist() == [20, 20, 20]
    means = np.array([X.numpy()[y.numpy() == k].mean(0) for k in range(3)])
    np.testing.assert_allclose(means, [[0, 0], [10, 10], [-10, 10]], atol=0.5)
    X4, _ = make_blobs(10, n_features=4, centers=2, seed=0)
    assert X4.shape == (10, 4)


def test_regression() -> None:
    X, y, coef = make_regression(200, 3, bias=2.0, return_coef=True, seed=0)
    assert X.shape == (200, 3) and y.shape == (200,) and coef.shape == (3,)
    assert X.dtype is gradviz.float32 and y.dtype is gradviz.float32
    np.testing.assert_allclose(y.numpy(), X.numpy() @ coef.numpy() + 2.0, rtol=1e-5, atol=1e-5)
    _, noisy = make_regression(200, 3, noise=1.0, bias=2.0, seed=0)
    assert not np.allclose(noisy.numpy(), y.numpy())


def test_tensor_dataset() -> None:
    X = gradviz.arange(6.0).reshape(3, 2)
    y = gradviz.tensor([0, 1, 0])
    ds = TensorDataset(X, y)
    assert len(ds) == 3
    x1, y1 = ds[1]
    assert x1.tolist() == [2.0, 3.0] and y1.item() == 1 and y1.dtype is gradviz.int64
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        TensorDataset(X, gradviz.tensor([0, 1]))


def test_loader_batches_in_order_without_shuffle() -> None:
    X = gradviz.arange(10.0).reshape(5, 2)
    y = gradviz.arange(5)
    loader = DataLoader((X, y), batch_size=2)
    batches = list(loader)
    assert len(loader) == 3 and len(batches) == 3
    assert isinstance(batches[0], list)
    assert [yb.tolist() for _, yb in batches] == [[0, 1], [2, 3], [4]]
    assert batches[0][0].tolist() == [[0.0, 1.0], [2.0, 3.0]]
    assert batches[0][0].dtype is gradviz.float32
    dropped = DataLoader(TensorDataset(X, y), batch_size=2, drop_last=True)
    assert len(dropped) == 2 and [yb.tolist() for _, yb in dropped] == [[0, 1], [2, 3]]
    single = DataLoader(X, batch_size=5)
    assert [b[0].shape for b in single] == [(5, 2)]


def test_loader_shuffles_every_epoch_reproducibly() -> None:
    y = gradviz.arange(20)
    loader = DataLoader((y,), batch_size=20, shuffle=True, seed=0)
    epoch1 = next(iter(loader))[0].tolist()
    epoch2 = next(iter(loader))[0].tolist()
    assert sorted(epoch1) == list(range(20)) and epoch1 != epoch2 and epoch1 != list(range(20))
    again = DataLoader((y,), batch_size=20, shuffle=True, seed=0)
    assert next(iter(again))[0].tolist() == epoch1
    assert next(iter(again))[0].tolist() == epoch2
    gen = DataLoader((y,), batch_size=20, shuffle=True, generator=np.random.default_rng(0))
    assert next(iter(gen))[0].tolist() == epoch1
    gradviz.manual_seed(5)
    a = next(iter(DataLoader((y,), batch_size=20, shuffle=True)))[0].tolist()
    gradviz.manual_seed(5)
    assert next(iter(DataLoader((y,), batch_size=20, shuffle=True)))[0].tolist() == a


def test_loader_pairs_stay_aligned_after_shuffling() -> None:
    X, y = make_blobs(50, centers=[[0, 0], [100, 100]], cluster_std=0.1, seed=1)
    for xb, yb in DataLoader((X, y), batch_size=7, shuffle=True, seed=2):
        assert ((xb.numpy()[:, 0] > 50) == (yb.numpy() == 1)).all()


def test_loader_over_a_custom_dataset_collates() -> None:
    class Squares(Dataset):
        def __len__(self) -> int:
            return 5

        def __getitem__(self, i: int) -> tuple:
            return gradviz.tensor([float(i)]), i * i, {"half": i / 2}

    batches = list(DataLoader(Squares(), batch_size=3))
    xb, yb, extra = batches[0]
    assert xb.shape == (3, 1) and yb.tolist() == [0, 1, 4] and yb.dtype is gradviz.int64
    assert extra["half"].tolist() == [0.0, 0.5, 1.0] and extra["half"].dtype is gradviz.float64
    assert len(batches) == 2 and batches[1][1].tolist() == [9, 16]
    custom = DataLoader(Squares(), batch_size=2, collate_fn=lambda samples: len(samples))
    assert list(custom) == [2, 2, 1]


def test_default_collate_and_bad_arguments() -> None:
    batch = default_collate([(gradviz.ones(2), 0), (gradviz.zeros(2), 1)])
    assert batch[0].tolist() == [[1.0, 1.0], [0.0, 0.0]] and batch[1].tolist() == [0, 1]
    with pytest.raises(ValueError, match="batch_size should be a positive integer value"):
        DataLoader((gradviz.ones(2),), batch_size=0)


def test_torchs_import_path_gives_the_same_classes() -> None:
    from gradviz.utils import data as utils_data

    assert utils_data.DataLoader is gradviz.data.DataLoader
    assert gradviz.utils.data.TensorDataset is gradviz.data.TensorDataset
    # PyTorch's "What is torch.nn really?": a TensorDataset batched by a DataLoader
    x, y = gradviz.arange(10.0).reshape(5, 2), gradviz.arange(5)
    batches = [(xb.shape, yb.tolist()) for xb, yb in utils_data.DataLoader(
        utils_data.TensorDataset(x, y), batch_size=2)]
    assert batches == [((2, 2), [0, 1]), ((2, 2), [2, 3]), ((1, 2), [4])]


def test_subset_and_random_split_as_torch() -> None:
    from gradviz.utils.data import Subset, TensorDataset, random_split

    ds = TensorDataset(gradviz.arange(10.0))
    part = Subset(ds, [1, 3])
    assert len(part) == 2 and part[1][0].item() == 3.0 and part.dataset is ds
    assert [p[0].item() for p in part[[0, 1]]] == [1.0, 3.0]
    for lengths, sizes in (([3, 7], [3, 7]), ([0.3, 0.7], [3, 7]),
                           ([0.33, 0.33, 0.34], [4, 3, 3])):  # the remainder goes to the first
        parts = random_split(ds, lengths, generator=np.random.default_rng(0))
        assert [len(p) for p in parts] == sizes
        assert sorted(i for p in parts for i in p.indices) == list(range(10))
    first = [p.indices for p in random_split(ds, [5, 5], generator=np.random.default_rng(1))]
    again = [p.indices for p in random_split(ds, [5, 5], generator=np.random.default_rng(1))]
    assert first == again and first[0] != list(range(5))
    for bad in ([3, 3], [0.5, 0.6]):  # torch 2.13's text
        with pytest.raises(ValueError, match="^Sum of input lengths does not equal the length "
                                             "of the input dataset!$"):
            random_split(ds, bad)
    with pytest.raises(ValueError, match="^Fraction at index 0 is not between 0 and 1$"):
        random_split(ds, [1.5, -0.5])
