"""The layers of ``gradviz.nn`` (one file per family, as in ``torch/nn/modules``)."""

from __future__ import annotations

from gradviz.nn.modules.activation import (
    CELU,
    ELU,
    GELU,
    GLU,
    SELU,
    Hardshrink,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
    LeakyReLU,
    LogSigmoid,
    LogSoftmax,
    Mish,
    PReLU,
    ReLU,
    ReLU6,
    Sigmoid,
    SiLU,
    Softmax,
    Softmin,
    Softplus,
    Softshrink,
    Softsign,
    Tanh,
    Tanhshrink,
    Threshold,
)
from gradviz.nn.modules.attention import MultiheadAttention, NonDynamicallyQuantizableLinear
from gradviz.nn.modules.batchnorm import BatchNorm1d, BatchNorm2d
from gradviz.nn.modules.container import (
    ModuleDict,
    ModuleList,
    ParameterDict,
    ParameterList,
    Sequential,
)
from gradviz.nn.modules.conv import Conv1d, Conv2d, ConvTranspose2d
from gradviz.nn.modules.distance import CosineSimilarity, PairwiseDistance
from gradviz.nn.modules.dropout import Dropout, Dropout2d
from gradviz.nn.modules.flatten import Flatten, Unflatten
from gradviz.nn.modules.linear import Identity, Linear
from gradviz.nn.modules.loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CosineEmbeddingLoss,
    CrossEntropyLoss,
    GaussianNLLLoss,
    HingeEmbeddingLoss,
    HuberLoss,
    KLDivLoss,
    L1Loss,
    MarginRankingLoss,
    MSELoss,
    NLLLoss,
    PoissonNLLLoss,
    SmoothL1Loss,
    SoftMarginLoss,
)
from gradviz.nn.modules.module import Module
from gradviz.nn.modules.normalization import LayerNorm
from gradviz.nn.modules.padding import ZeroPad2d
from gradviz.nn.modules.pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d
from gradviz.nn.modules.rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from gradviz.nn.modules.sparse import Embedding
from gradviz.nn.modules.transformer import (
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)

__all__ = ["Module", "Sequential", "ModuleList", "ModuleDict", "Identity", "Linear", "ReLU",
           "LeakyReLU", "ELU", "SiLU", "GELU", "Softplus", "Tanh", "Sigmoid", "Softmax",
           "LogSoftmax", "Dropout", "Flatten", "Embedding", "LayerNorm", "MSELoss", "L1Loss",
           "CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss", "Conv1d", "Conv2d",
           "ConvTranspose2d", "MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d", "BatchNorm1d",
           "BatchNorm2d", "Dropout2d"]
__all__ += ["MultiheadAttention", "NonDynamicallyQuantizableLinear"]  # modules/attention.py
__all__ += ["Transformer", "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer",
            "TransformerDecoderLayer"]  # modules/transformer.py
__all__ += ["RNNCellBase", "RNNCell", "LSTMCell", "GRUCell", "RNNBase", "RNN", "LSTM", "GRU"]
__all__ += ["Hardtanh", "ReLU6", "SELU", "CELU", "Mish", "PReLU", "GLU", "Hardswish",
            "Hardsigmoid", "LogSigmoid", "Softsign", "Softshrink", "Hardshrink", "Tanhshrink",
            "Threshold", "Softmin", "SmoothL1Loss", "HuberLoss", "KLDivLoss", "MarginRankingLoss",
            "SoftMarginLoss", "CosineSimilarity", "Unflatten", "ZeroPad2d", "ParameterList",
            "ParameterDict", "PairwiseDistance", "HingeEmbeddingLoss", "CosineEmbeddingLoss",
            "PoissonNLLLoss", "GaussianNLLLoss"]
