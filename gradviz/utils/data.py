"""``gradviz.utils.data``: PyTorch's import path (``torch.utils.data``) for the datasets and
loader of :mod:`gradviz.data`, so that ``from torch.utils.data import DataLoader`` reads the
same with ``import gradviz as torch``.

Example:
    >>> import gradviz
    >>> from gradviz.utils.data import DataLoader, TensorDataset
    >>> ds = TensorDataset(gradviz.arange(10.0).reshape(5, 2), gradviz.arange(5))
    >>> [yb.tolist() for _, yb in DataLoader(ds, batch_size=2)]
    [[0, 1], [2, 3], [4]]
"""

from gradviz.data import (
    DataLoader,
    Dataset,
    Subset,
    TensorDataset,
    default_collate,
    random_split,
)

__all__ = ["Dataset", "TensorDataset", "Subset", "DataLoader", "default_collate",
           "random_split"]
