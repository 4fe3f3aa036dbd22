"""``gradviz.utils``: where PyTorch keeps its data loading (``torch.utils.data``).

Example:
    >>> from gradviz.utils.data import DataLoader, TensorDataset
"""

from gradviz.utils import data

__all__ = ["data"]
