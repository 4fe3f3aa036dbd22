"""The layers of ``gradviz.nn`` (one file per family, as in ``torch/nn/modules``)."""

from __future__ import annotations

from gradviz.nn.modules.activation import (
    ELU,
    GELU,
    LeakyReLU,
    LogSoftmax,
    ReLU,
    Sigmoid,
    SiLU,
    Softmax,
    Softplus,
    Tanh,
)
from gradviz.nn.modules.batchnorm import BatchNorm1d, BatchNorm2d
from gradviz.nn.modules.container import ModuleDict, ModuleList, Sequential
from gradviz.nn.modules.conv import Conv1d, Conv2d, ConvTranspose2d
from gradviz.nn.modules.dropout import Dropout, Dropout2d
from gradviz.nn.modules.flatten import Flatten
from gradviz.nn.modules.linear import Identity, Linear
from gradviz.nn.modules.loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    L1Loss,
    MSELoss,
    NLLLoss,
)
from gradviz.nn.modules.module import Module
from gradviz.nn.modules.normalization import LayerNorm
from gradviz.nn.modules.pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d
from gradviz.nn.modules.rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from gradviz.nn.modules.sparse import Embedding

__all__ = ["Module", "Sequential", "ModuleList", "ModuleDict", "Identity", "Linear", "ReLU",
           "LeakyReLU", "ELU", "SiLU", "GELU", "Softplus", "Tanh", "Sigmoid", "Softmax",
           "LogSoftmax", "Dropout", "Flatten", "Embedding", "LayerNorm", "MSELoss", "L1Loss",
           "CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss", "Conv1d", "Conv2d",
           "ConvTranspose2d", "MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d", "BatchNorm1d",
           "BatchNorm2d", "Dropout2d"]
__all__ += ["RNNCellBase", "RNNCell", "LSTMCell", "GRUCell", "RNNBase", "RNN", "LSTM", "GRU"]
