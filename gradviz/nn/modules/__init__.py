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
    Softmax2d,
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
from gradviz.nn.modules.conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d
from gradviz.nn.modules.distance import CosineSimilarity, PairwiseDistance
from gradviz.nn.modules.dropout import (
    AlphaDropout,
    Dropout,
    Dropout1d,
    Dropout2d,
    Dropout3d,
    FeatureAlphaDropout,
)
from gradviz.nn.modules.flatten import Flatten, Unflatten
from gradviz.nn.modules.fold import Fold, Unfold
from gradviz.nn.modules.instancenorm import InstanceNorm1d, InstanceNorm2d
from gradviz.nn.modules.linear import Bilinear, Identity, Linear
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
from gradviz.nn.modules.normalization import (
    GroupNorm,
    LayerNorm,
    LocalResponseNorm,
    RMSNorm,
)
from gradviz.nn.modules.padding import (
    CircularPad1d,
    CircularPad2d,
    ConstantPad1d,
    ConstantPad2d,
    ReflectionPad1d,
    ReflectionPad2d,
    ReplicationPad1d,
    ReplicationPad2d,
    ZeroPad1d,
    ZeroPad2d,
)
from gradviz.nn.modules.pixelshuffle import PixelShuffle, PixelUnshuffle
from gradviz.nn.modules.pooling import (
    AdaptiveAvgPool1d,
    AdaptiveAvgPool2d,
    AdaptiveMaxPool1d,
    AdaptiveMaxPool2d,
    AvgPool1d,
    AvgPool2d,
    AvgPool3d,
    LPPool1d,
    LPPool2d,
    MaxPool1d,
    MaxPool2d,
)
from gradviz.nn.modules.rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from gradviz.nn.modules.sparse import Embedding
from gradviz.nn.modules.transformer import (
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)
from gradviz.nn.modules.upsampling import (
    Upsample,
    UpsamplingBilinear2d,
    UpsamplingNearest2d,
)

__all__ = [
    # module, containers
    "Module", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict",
    # linear
    "Identity", "Linear", "Bilinear",
    # activations
    "ReLU", "Hardtanh", "ReLU6", "LeakyReLU", "PReLU", "ELU", "SELU", "CELU", "GELU", "SiLU",
    "Mish", "Softplus", "Tanh", "Tanhshrink", "Softsign", "Sigmoid", "LogSigmoid", "Hardswish",
    "Hardsigmoid", "Softshrink", "Hardshrink", "Threshold", "GLU", "Softmax", "Softmin",
    "Softmax2d", "LogSoftmax",
    # losses
    "L1Loss", "MSELoss", "SmoothL1Loss", "HuberLoss", "NLLLoss", "CrossEntropyLoss",
    "PoissonNLLLoss", "GaussianNLLLoss", "KLDivLoss", "BCELoss", "BCEWithLogitsLoss",
    "MarginRankingLoss", "HingeEmbeddingLoss", "SoftMarginLoss", "CosineEmbeddingLoss",
    # distances
    "CosineSimilarity", "PairwiseDistance",
    # convolution, pooling
    "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "MaxPool1d", "MaxPool2d",
    "AvgPool1d", "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d",
    "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "LPPool1d", "LPPool2d",
    # normalization
    "BatchNorm1d", "BatchNorm2d", "InstanceNorm1d", "InstanceNorm2d", "LayerNorm", "GroupNorm",
    "RMSNorm", "LocalResponseNorm",
    # dropout
    "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout",
    # shapes, padding, resampling
    "Flatten", "Unflatten", "ConstantPad1d", "ConstantPad2d", "ZeroPad1d", "ZeroPad2d",
    "ReflectionPad1d", "ReflectionPad2d", "ReplicationPad1d", "ReplicationPad2d", "CircularPad1d",
    "CircularPad2d", "Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d", "PixelShuffle",
    "PixelUnshuffle", "Fold", "Unfold",
    # embedding, attention, transformers, recurrent
    "Embedding", "MultiheadAttention", "NonDynamicallyQuantizableLinear", "Transformer",
    "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer",
    "TransformerDecoderLayer", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell", "RNNBase", "RNN",
    "LSTM", "GRU",
]
