"""Small datasets and a minimal ``DataLoader``, all local (nothing is downloaded).

Besides the synthetic generators there is one real image data set, shipped inside the package:
the 8x8 handwritten digits (:func:`load_digits`, :class:`Digits`), with
:func:`train_test_split` to hold part of it out. See ``docs/datasets.md`` for where the file
comes from and its licence.

The generators follow scikit-learn's recipes (``make_moons``, ``make_blobs``,
``make_regression``) and CS231n's spiral, and return ``(X, y)`` as gradviz tensors: ``X``
float32, ``y`` int64 class labels (float32 targets for regression). Randomness comes from
``seed`` (an int), from ``generator`` (a ``numpy.random.Generator``), or else from gradviz's
generator, which :func:`gradviz.manual_seed` resets.

Example:
    >>> import gradviz
    >>> from gradviz.data import DataLoader, make_moons
    >>> X, y = make_moons(100, noise=0.1, seed=0)
    >>> X.shape, X.dtype, y.dtype
    (gradviz.Size([100, 2]), gradviz.float32, gradviz.int64)
    >>> xb, yb = next(iter(DataLoader((X, y), batch_size=32, shuffle=True, seed=0)))
    >>> xb.shape, yb.shape
    (gradviz.Size([32, 2]), gradviz.Size([32]))
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from importlib import resources
from typing import Any

import numpy as np

from gradviz import _factories
from gradviz.tensor import Tensor

__all__ = ["make_moons", "make_spirals", "make_blobs", "make_regression", "load_digits",
           "train_test_split", "Dataset", "TensorDataset", "Subset", "random_split", "Digits",
           "DataLoader", "default_collate"]

SeedLike = int | np.random.Generator | _factories.Generator | None


def _rng(seed: SeedLike, generator: Any = None) -> np.random.Generator:
    if generator is not None:
        return _factories.rng(generator)
    if isinstance(seed, (np.random.Generator, _factories.Generator)):
        return _factories.rng(seed)
    if seed is not None:
        return np.random.default_rng(seed)
    return _factories.rng()


def _xy(X: np.ndarray, y: np.ndarray) -> tuple[Tensor, Tensor]:
    return Tensor._make(np.ascontiguousarray(X, dtype=np.float32)), Tensor._make(y)


def _shuffled(rng: np.random.Generator, X: np.ndarray, y: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray]:
    order = rng.permutation(len(X))
    return X[order], y[order]


def make_moons(n_samples: int = 100, *, noise: float | None = None, shuffle: bool = True,
               seed: SeedLike = None, generator: np.random.Generator | None = None
               ) -> tuple[Tensor, Tensor]:
    """Two interleaving half circles (classes 0 and 1), as scikit-learn's ``make_moons``.

    Args:
        n_samples: total number of points (the outer moon gets ``n_samples // 2``).
        noise: standard deviation of Gaussian noise added to the points.
        shuffle: shuffle the points (else class 0 comes first).
        seed, generator: where the randomness comes from (see the module docstring).

    Example:
        >>> from gradviz.data import make_moons
        >>> X, y = make_moons(10, seed=0)
        >>> X.shape, sorted(set(y.tolist()))
        (gradviz.Size([10, 2]), [0, 1])
    """
    rng = _rng(seed, generator)
    n_out = n_samples // 2
    n_in = n_samples - n_out
    t_out = np.linspace(0, np.pi, n_out)
    t_in = np.linspace(0, np.pi, n_in)
    X = np.vstack([np.stack([np.cos(t_out), np.sin(t_out)], 1),
                   np.stack([1 - np.cos(t_in), 1 - np.sin(t_in) - 0.5], 1)])
    y = np.concatenate([np.zeros(n_out, np.int64), np.ones(n_in, np.int64)])
    if shuffle:
        X, y = _shuffled(rng, X, y)
    if noise is not None:
        X = X + rng.normal(scale=noise, size=X.shape)
    return _xy(X, y)


def make_spirals(n_samples: int = 300, n_classes: int = 3, *, noise: float = 0.2,
                 turns: float = 0.64, shuffle: bool = True, seed: SeedLike = None,
                 generator: np.random.Generator | None = None) -> tuple[Tensor, Tensor]:
    """Interleaved spiral arms, one per class (CS231n's classic toy problem).

    Point ``i`` of arm ``k`` lies at radius ``r = i / (n - 1)`` and angle
    ``2 pi (turns * r + k / n_classes)`` plus Gaussian noise of ``noise`` radians.

    Args:
        n_samples: total number of points, spread evenly over the classes.
        n_classes: number of arms (classes ``0 .. n_classes - 1``).
        noise: standard deviation of the angular noise.
        turns: how far each arm winds (in full turns).
        shuffle: shuffle the points.
        seed, generator: where the randomness comes from (see the module docstring).

    Example:
        >>> from gradviz.data import make_spirals
        >>> X, y = make_spirals(90, n_classes=3, seed=0)
        >>> X.shape, sorted(set(y.tolist()))
        (gradviz.Size([90, 2]), [0, 1, 2])
    """
    rng = _rng(seed, generator)
    counts = [n_samples // n_classes + (1 if k < n_samples % n_classes else 0)
              for k in range(n_classes)]
    xs, ys = [], []
    for k, n in enumerate(counts):
        r = np.linspace(0.0, 1.0, n)
        t = 2 * np.pi * (turns * r + k / n_classes) + rng.normal(scale=noise, size=n)
        xs.append(np.stack([r * np.sin(t), r * np.cos(t)], 1))
        ys.append(np.full(n, k, np.int64))
    X, y = np.vstack(xs), np.concatenate(ys)
    if shuffle:
        X, y = _shuffled(rng, X, y)
    return _xy(X, y)


def make_blobs(n_samples: int = 100, n_features: int = 2, *,
               centers: int | Sequence[Sequence[float]] | np.ndarray = 3,
               cluster_std: float = 1.0, center_box: tuple[float, float] = (-10.0, 10.0),
               shuffle: bool = True, seed: SeedLike = None,
               generator: np.random.Generator | None = None) -> tuple[Tensor, Tensor]:
    """Isotropic Gaussian clusters, one class per center (scikit-learn's ``make_blobs``).

    Args:
        n_samples: total number of points, spread evenly over the centers.
        n_features: dimension of the points (ignored when ``centers`` is an array).
        centers: number of centers (drawn uniformly in ``center_box``) or their coordinates.
        cluster_std: standard deviation of each cluster.
        center_box: bounds for randomly drawn centers.
        shuffle: shuffle the points.
        seed, generator: where the randomness comes from (see the module docstring).

    Example:
        >>> from gradviz.data import make_blobs
        >>> X, y = make_blobs(30, centers=[[0, 0], [5, 5]], seed=0)
        >>> X.shape, sorted(set(y.tolist()))
        (gradviz.Size([30, 2]), [0, 1])
    """
    rng = _rng(seed, generator)
    if isinstance(centers, (int, np.integer)):
        c = rng.uniform(center_box[0], center_box[1], size=(int(centers), n_features))
    else:
        c = np.asarray(centers, dtype=np.float64)
        if c.ndim != 2:
            raise ValueError("centers must be an int or an array of shape (n_centers, "
                             "n_features)")
    n_centers = len(c)
    counts = [n_samples // n_centers + (1 if k < n_samples % n_centers else 0)
              for k in range(n_centers)]
    X = np.vstack([rng.normal(c[k], cluster_std, size=(n, c.shape[1]))
                   for k, n in enumerate(counts)])
    y = np.concatenate([np.full(n, k, np.int64) for k, n in enumerate(counts)])
    if shuffle:
        X, y = _shuffled(rng, X, y)
    return _xy(X, y)


def make_regression(n_samples: int = 100, n_features: int = 1, *, noise: float = 0.0,
                    bias: float = 0.0, coef_scale: float = 1.0, shuffle: bool = True,
                    return_coef: bool = False, seed: SeedLike = None,
                    generator: np.random.Generator | None = None) -> Any:
    """A linear regression problem ``y = X @ coef + bias + noise``.

    ``X`` is standard normal (float32, ``(n_samples, n_features)``), ``coef`` is drawn from
    ``U(0, coef_scale)`` per feature (scikit-learn uses a scale of 100), ``y`` is float32 of
    shape ``(n_samples,)``.

    Args:
        n_samples: number of points.
        n_features: number of input features.
        noise: standard deviation of Gaussian noise added to ``y``.
        bias: the intercept.
        coef_scale: upper bound of the true coefficients.
        shuffle: shuffle the points (they are i.i.d., so this only changes the order).
        return_coef: also return the true coefficients (a float32 tensor).
        seed, generator: where the randomness comes from (see the module docstring).

    Example:
        >>> from gradviz.data import make_regression
        >>> X, y, coef = make_regression(50, 3, noise=0.1, return_coef=True, seed=0)
        >>> X.shape, y.shape, y.dtype, coef.shape
        (gradviz.Size([50, 3]), gradviz.Size([50]), gradviz.float32, gradviz.Size([3]))
    """
    rng = _rng(seed, generator)
    X = rng.standard_normal((n_samples, n_features))
    coef = rng.uniform(0.0, coef_scale, size=n_features)
    y = X @ coef + bias
    if noise > 0.0:
        y = y + rng.normal(scale=noise, size=y.shape)
    if shuffle:
        X, y = _shuffled(rng, X, y)
    Xt, yt = _xy(X, y.astype(np.float32))
    if return_coef:
        return Xt, yt, Tensor._make(coef.astype(np.float32))
    return Xt, yt


# -- a real data set: the 8x8 handwritten digits ---------------------------------------------------
# NOTE [digits data] gradviz/datasets/digits.npz holds the test set of the UCI "Optical
# Recognition of Handwritten Digits" data (E. Alpaydin, C. Kaynak, 1998; UCI Machine Learning
# Repository, doi:10.24432/C50P49, licensed CC BY 4.0), the copy scikit-learn ships as
# `load_digits`: 1,797 images of 8x8 pixels counting the "on" pixels of 4x4 blocks of a 32x32
# bitmap (integers 0..16), 10 classes, 174 to 183 images each. Stored as `images` (uint8,
# (1797, 8, 8)) and `labels` (uint8, (1797,)) in file order; docs/datasets.md records how the
# file was made from scikit-learn's digits.csv.gz and its checksums.
DIGITS_FILE = "datasets/digits.npz"
DIGITS_MAX = 16  # the largest pixel value: a 4x4 block has 16 pixels


def _digits_arrays() -> tuple[np.ndarray, np.ndarray]:
    with resources.files("gradviz").joinpath(DIGITS_FILE).open("rb") as f, np.load(f) as z:
        return z["images"], z["labels"]


def load_digits(*, flatten: bool = False, n_class: int = 10) -> tuple[Tensor, Tensor]:
    """The 8x8 handwritten digits (1,797 images of 10 classes), read from the package.

    Pixels are float32 scaled from 0..16 to ``[0, 1]``; labels are int64 digits. The images
    come in the file's order (the classes are interleaved, not sorted).

    Args:
        flatten: return images as rows of 64 features ``(N, 64)`` instead of ``(N, 1, 8, 8)``
            (one channel, ready for a convolution).
        n_class: keep only the digits ``0 .. n_class - 1`` (as scikit-learn's ``n_class``).

    Example:
        >>> from gradviz.data import load_digits
        >>> X, y = load_digits()
        >>> X.shape, X.dtype, y.shape, y.dtype
        (gradviz.Size([1797, 1, 8, 8]), gradviz.float32, gradviz.Size([1797]), gradviz.int64)
        >>> float(X.max()), y[:5].tolist()
        (1.0, [0, 1, 2, 3, 4])
        >>> load_digits(flatten=True, n_class=2)[0].shape
        gradviz.Size([360, 64])
    """
    if not 1 <= n_class <= 10:
        raise ValueError(f"n_class must be between 1 and 10, got {n_class}")
    images, labels = _digits_arrays()
    keep = labels < n_class
    X = images[keep].astype(np.float32) / np.float32(DIGITS_MAX)
    X = X.reshape(len(X), 64) if flatten else X.reshape(len(X), 1, 8, 8)
    return Tensor._make(np.ascontiguousarray(X)), Tensor._make(labels[keep].astype(np.int64))


def train_test_split(*tensors: Tensor, test_size: float | int = 0.25, shuffle: bool = True,
                     stratify: Tensor | None = None, seed: SeedLike = None,
                     generator: np.random.Generator | None = None) -> list[Tensor]:
    """Split tensors that share their first dimension into a training and a test part.

    Returns ``[a_train, a_test, b_train, b_test, ...]``, as scikit-learn's function does.

    * ``test_size``: a fraction in ``(0, 1)`` of the samples (rounded up), or a count.
    * ``shuffle=False``: the last ``test_size`` samples are the test part, order kept.
    * ``stratify``: class labels (usually ``y``); each class then gives the test part its share
      of the samples (largest remainders decide the rounding), so both parts keep the class
      proportions. Within each part the samples are shuffled.
    * ``seed``/``generator``: where the randomness comes from (see the module docstring); the
      same seed gives the same split on every run.

    Example:
        >>> import gradviz
        >>> from gradviz.data import train_test_split
        >>> X, y = gradviz.arange(20.0).reshape(10, 2), gradviz.tensor([0, 1] * 5)
        >>> X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.4, stratify=y, seed=0)
        >>> X_tr.shape, X_te.shape, sorted(y_te.tolist())
        (gradviz.Size([6, 2]), gradviz.Size([4, 2]), [0, 0, 1, 1])
    """
    if not tensors:
        raise ValueError("At least one array required as input")
    n = tensors[0].shape[0]
    if any(t.shape[0] != n for t in tensors):
        raise ValueError("Found input variables with inconsistent numbers of samples: "
                         f"{[t.shape[0] for t in tensors]}")
    if isinstance(test_size, float):
        if not 0.0 < test_size < 1.0:
            raise ValueError(f"test_size={test_size} should be a float in the (0, 1) range or "
                             "an int")
        n_test = math.ceil(test_size * n)
    else:
        n_test = int(test_size)
    if not 0 < n_test < n:
        raise ValueError(f"test_size={test_size} leaves an empty training or test set for "
                         f"{n} samples")
    if not shuffle:
        if stratify is not None:
            raise ValueError("Stratified train/test split is not implemented for shuffle=False")
        order = np.arange(n)
        train, test = order[:n - n_test], order[n - n_test:]
    else:
        rng = _rng(seed, generator)
        if stratify is None:
            order = rng.permutation(n)
            test, train = order[:n_test], order[n_test:]
        else:
            train, test = _stratified(np.asarray(stratify._data), n_test, rng)
    return [Tensor._make(np.ascontiguousarray(t._data[idx])) for t in tensors
            for idx in (train, test)]


def _stratified(labels: np.ndarray, n_test: int, rng: np.random.Generator
                ) -> tuple[np.ndarray, np.ndarray]:
    classes, counts = np.unique(labels, return_counts=True)
    # Each class's exact share of the test set, rounded down; the samples still missing go to
    # the classes with the largest remainders (ties to the smaller class label).
    share = counts * n_test / len(labels)
    take = np.floor(share).astype(np.int64)
    missing = n_test - int(take.sum())
    take[np.argsort(-(share - take), kind="stable")[:missing]] += 1
    train, test = [], []
    for c, k in zip(classes, take):
        idx = rng.permutation(np.flatnonzero(labels == c))
        test.append(idx[:k])
        train.append(idx[k:])
    return rng.permutation(np.concatenate(train)), rng.permutation(np.concatenate(test))


# -- datasets and batching -----------------------------------------------------------------------
class Dataset:
    """Base class of map-style datasets: subclasses define ``__getitem__(index)`` and
    ``__len__`` (any object with both works with :class:`DataLoader`).

    Example:
        >>> from gradviz.data import DataLoader, Dataset
        >>> class Squares(Dataset):
        ...     def __len__(self): return 4
        ...     def __getitem__(self, i): return i * i
        >>> [b.tolist() for b in DataLoader(Squares(), batch_size=2)]
        [[0, 1], [4, 9]]
    """

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __len__(self) -> int:
        raise NotImplementedError


class TensorDataset(Dataset):
    """Samples are rows of tensors that share their first dimension: item ``i`` is
    ``(t[i] for t in tensors)``.

    Example:
        >>> import gradviz
        >>> from gradviz.data import TensorDataset
        >>> ds = TensorDataset(gradviz.arange(6.0).reshape(3, 2), gradviz.tensor([0, 1, 0]))
        >>> len(ds), ds[1]
        (3, (tensor([2., 3.]), tensor(1)))
    """

    def __init__(self, *tensors: Tensor) -> None:
        if not tensors:
            raise ValueError("TensorDataset needs at least one tensor")
        n = tensors[0].shape[0] if tensors[0].ndim else None
        if any(t.ndim == 0 or t.shape[0] != n for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tuple(tensors)

    def __getitem__(self, index: Any) -> tuple[Tensor, ...]:
        return tuple(Tensor._make(np.asarray(t._data[index])) for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]

    def _batch(self, indices: np.ndarray) -> list[Tensor]:
        # One fancy-indexing copy per tensor instead of collating single rows.
        return [Tensor._make(t._data[indices]) for t in self.tensors]


class Subset(Dataset):
    """The items of ``dataset`` at ``indices``, in that order.

    Example:
        >>> import gradviz
        >>> from gradviz.data import Subset, TensorDataset
        >>> part = Subset(TensorDataset(gradviz.arange(5.0)), [4, 1])
        >>> len(part), part[0]
        (2, (tensor(4.),))
    """

    def __init__(self, dataset: Any, indices: Any) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, list):
            return [self.dataset[self.indices[i]] for i in index]
        return self.dataset[self.indices[index]]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(dataset: Any, lengths: Any, generator: SeedLike = None) -> list[Subset]:
    """Split ``dataset`` at random into non-overlapping :class:`Subset` s of the given lengths,
    or fractions of its length (summing to 1; what rounding leaves over goes one by one to the
    first subsets, as PyTorch does).

    Example:
        >>> import gradviz
        >>> from gradviz.data import TensorDataset, random_split
        >>> train, test = random_split(TensorDataset(gradviz.arange(10.0)), [0.8, 0.2], 0)
        >>> len(train), len(test), sorted(train.indices + test.indices) == list(range(10))
        (8, 2, True)
    """
    n = len(dataset)
    lengths = list(lengths)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        counts = []
        for k, frac in enumerate(lengths):
            if not 0 <= frac <= 1:
                raise ValueError(f"Fraction at index {k} is not between 0 and 1")
            counts.append(int(math.floor(n * frac)))
        for k in range(n - sum(counts)):  # the remainder, round-robin
            counts[k % len(counts)] += 1
        lengths = counts
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    order = _rng(generator).permutation(n).tolist()
    parts, start = [], 0
    for length in lengths:
        parts.append(Subset(dataset, order[start:start + length]))
        start += length
    return parts


class Digits(TensorDataset):
    """The 8x8 handwritten digits as a dataset: item ``i`` is ``(image, label)``, the image
    float32 in ``[0, 1]`` of shape ``(1, 8, 8)`` (``(64,)`` with ``flatten=True``), the label an
    int64 scalar. ``data`` and ``targets`` hold the whole set (see :func:`load_digits`).

    Args:
        flatten: items as rows of 64 features.
        n_class: keep only the digits ``0 .. n_class - 1``.

    Example:
        >>> from gradviz.data import DataLoader, Digits
        >>> ds = Digits()
        >>> len(ds), ds[0][0].shape, ds[0][1]
        (1797, gradviz.Size([1, 8, 8]), tensor(0))
        >>> xb, yb = next(iter(DataLoader(ds, batch_size=64, shuffle=True, seed=0)))
        >>> xb.shape, yb.shape
        (gradviz.Size([64, 1, 8, 8]), gradviz.Size([64]))
    """

    classes = [str(d) for d in range(10)]

    def __init__(self, *, flatten: bool = False, n_class: int = 10) -> None:
        super().__init__(*load_digits(flatten=flatten, n_class=n_class))
        self.data, self.targets = self.tensors
        self.classes = self.classes[:n_class]

    def __repr__(self) -> str:
        return (f"Dataset Digits\n    Number of datapoints: {len(self)}\n"
                f"    Image shape: {tuple(self.data.shape[1:])}")


def default_collate(batch: list[Any]) -> Any:
    """Stack a list of samples into a batch: tensors and NumPy arrays are stacked along a new
    first dimension, numbers become a tensor, tuples/lists/dicts are collated field by field
    (tuples become lists, as in PyTorch).

    Example:
        >>> import gradviz
        >>> from gradviz.data import default_collate
        >>> default_collate([(gradviz.ones(2), 0), (gradviz.zeros(2), 1)])
        [tensor([[1., 1.],
                [0., 0.]]), tensor([0, 1])]
    """
    # A stack of (samples of one field, where its batch goes: container and key); a dict or a
    # sequence of fields puts one entry per field on it.
    out: list[Any] = [None]
    stack: list[tuple[list[Any], Any, Any]] = [(list(batch), out, 0)]
    while stack:
        samples, into, key = stack.pop()
        elem = samples[0]
        if isinstance(elem, dict):
            into[key] = fields = {k: None for k in elem}
            stack.extend(([d[k] for d in samples], fields, k) for k in elem)
        elif isinstance(elem, (tuple, list)):
            columns = list(zip(*samples, strict=True))
            into[key] = fields = [None] * len(columns)
            stack.extend((list(c), fields, i) for i, c in enumerate(columns))
        else:
            into[key] = _collate_field(samples)
    return out[0]


def _collate_field(batch: list[Any]) -> Any:
    """One field of the samples (not a dict or a sequence) as a batch."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        return Tensor._make(np.stack([t._data for t in batch]))
    if isinstance(elem, np.ndarray):
        return Tensor._make(np.stack(batch))
    if isinstance(elem, bool):
        return Tensor._make(np.array(batch, dtype=np.bool_))
    if isinstance(elem, (int, np.integer)):
        return Tensor._make(np.array(batch, dtype=np.int64))
    if isinstance(elem, (float, np.floating)):
        return Tensor._make(np.array(batch, dtype=np.float64))
    return batch


class DataLoader:
    """Iterate over a dataset in mini-batches.

    Args:
        dataset: a dataset (``__getitem__`` and ``__len__``), or a tensor / tuple of tensors
            (wrapped in a :class:`TensorDataset`).
        batch_size: samples per batch (default 1).
        shuffle: draw a new random order at the start of every epoch.
        drop_last: drop the last batch when it is smaller than ``batch_size``.
        seed, generator: where the shuffling randomness comes from (a seeded loader gives
            the same sequence of epochs on every run); default gradviz's generator.
        collate_fn: how a list of samples becomes a batch (default :func:`default_collate`).

    Batches of a :class:`TensorDataset` are lists ``[x_batch, y_batch, ...]``, as in PyTorch.

    Example:
        >>> import gradviz
        >>> from gradviz.data import DataLoader
        >>> X, y = gradviz.arange(10.0).reshape(5, 2), gradviz.arange(5)
        >>> [yb.tolist() for _, yb in DataLoader((X, y), batch_size=2)]
        [[0, 1], [2, 3], [4]]
        >>> len(DataLoader((X, y), batch_size=2, drop_last=True))
        2
    """

    def __init__(self, dataset: Any, batch_size: int = 1, shuffle: bool = False, *,
                 drop_last: bool = False, seed: SeedLike = None,
                 generator: np.random.Generator | None = None,
                 collate_fn: Callable[[list[Any]], Any] | None = None) -> None:
        if isinstance(dataset, Tensor):
            dataset = TensorDataset(dataset)
        elif isinstance(dataset, (tuple, list)) and dataset and all(
                isinstance(t, Tensor) for t in dataset):
            dataset = TensorDataset(*dataset)
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError("batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.drop_last = drop_last
        self.collate_fn = collate_fn
        # A seed gives the loader its own generator: epochs differ, runs repeat.
        self.generator = generator if generator is not None else (
            seed if isinstance(seed, (np.random.Generator, _factories.Generator)) else
            np.random.default_rng(seed) if seed is not None else None)

    def __len__(self) -> int:
        n = len(self.dataset)
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)

    def __iter__(self) -> Iterator[Any]:
        n = len(self.dataset)
        if self.shuffle:
            rng = _factories.rng(self.generator)
            order = rng.permutation(n)
        else:
            order = np.arange(n)
        stop = n - n % self.batch_size if self.drop_last else n
        # A TensorDataset whose items are its rows (a subclass may override __getitem__):
        # index whole batches.
        fast = (isinstance(self.dataset, TensorDataset)
                and type(self.dataset).__getitem__ is TensorDataset.__getitem__
                and self.collate_fn is None)
        for start in range(0, stop, self.batch_size):
            indices = order[start:start + self.batch_size]
            if fast:
                yield self.dataset._batch(indices)
            else:
                samples = [self.dataset[int(i)] for i in indices]
                yield (self.collate_fn or default_collate)(samples)
