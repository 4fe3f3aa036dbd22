"""Recurrent layers: ``RNNCell``, ``LSTMCell``, ``GRUCell`` and ``RNN``, ``LSTM``, ``GRU``.

NOTE [recurrent graphs] PyTorch computes a cell on the CPU with ordinary ops (the fused
``_thnn_fused_*_cell`` kernels are CUDA only), so a cell step records a small graph a learner can
read: ``linear(hx, w_hh, b_hh)`` (``AddmmBackward0``) plus ``linear(input, w_ih, b_ih)``, the sum
cut into gates, then ``sigmoid``/``tanh``/``mul``/``add``. gradviz records the same ops in the
same order (hidden projection first, as ATen's ``RNN.cpp`` adds the input projection to it).
The sequence modules follow ATen's CPU path for float64 too: the input projection of a whole
layer is one ``linear`` over the sequence, ``unbind`` into steps, one cell per step with that
projection precomputed, and ``stack`` of the step outputs; layers run one after the other, with
``dropout`` between them while training. Two differences are documented in ``docs/ops.md``
("Where gradviz differs"), among them: float32 sequence modules in PyTorch run one fused oneDNN
kernel (``MkldnnRnnLayerBackward0``) while gradviz always shows the steps. The gates are cut
with ``unsafe_chunk`` (``UnsafeSplitBackward0``), as ATen's CPU ``LSTMCell``/``GRUCell`` do in
torch 2.13 (CUDA runs the fused cells instead, a different graph).

Example:
    >>> import gradviz
    >>> from gradviz import nn
    >>> lstm = nn.LSTM(3, 5, num_layers=2, batch_first=True)
    >>> out, (h, c) = lstm(gradviz.randn(4, 7, 3))
    >>> out.shape, h.shape, c.shape
    (gradviz.Size([4, 7, 5]), gradviz.Size([2, 4, 5]), gradviz.Size([2, 4, 5]))
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Callable
from typing import Any

from gradviz import _dtype as _dt
from gradviz import _factories
from gradviz.nn import functional as F
from gradviz.nn import init
from gradviz.nn.modules.module import Module, _factory_dtype, _on_device
from gradviz.nn.parameter import Parameter
from gradviz.ops import functional as _F
from gradviz.tensor import Tensor

__all__ = ["RNNCellBase", "RNNCell", "LSTMCell", "GRUCell", "RNNBase", "RNN", "LSTM", "GRU"]

# How many gate blocks each kind of cell stacks in its weights (PyTorch's gate_size factor).
_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


# -- one time step, as ATen's RNN.cpp computes it on the CPU ------------------------------------
# `gi` is either the input (the projection is done here) or, for the sequence modules, the input
# projection computed for the whole sequence at once (`precomputed=True`).
def _ih(gi: Tensor, w_ih: Tensor, b_ih: Tensor | None, precomputed: bool) -> Tensor:
    return gi if precomputed else F.linear(gi, w_ih, b_ih)


def _simple_step(act: Callable[[Tensor], Tensor]) -> Callable[..., Tensor]:
    def step(gi: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None,
             b_hh: Tensor | None, precomputed: bool = False) -> Tensor:
        return act(_F.add(F.linear(hx, w_hh, b_hh), _ih(gi, w_ih, b_ih, precomputed)))
    return step


_tanh_step = _simple_step(_F.tanh)
_relu_step = _simple_step(_F.relu)


def _lstm_step(gi: Tensor, hidden: tuple[Tensor, Tensor], w_ih: Tensor, w_hh: Tensor,
               b_ih: Tensor | None, b_hh: Tensor | None, precomputed: bool = False
               ) -> tuple[Tensor, Tensor]:
    hx, cx = hidden
    gates = _F.add(F.linear(hx, w_hh, b_hh), _ih(gi, w_ih, b_ih, precomputed))
    # torch 2.13 CPU: `unsafe_chunk` (UnsafeSplitBackward0); gate order input, forget, cell, output
    i, f, g, o = _F.unsafe_chunk(gates, 4, 1)
    i, f, g, o = _F.sigmoid(i), _F.sigmoid(f), _F.tanh(g), _F.sigmoid(o)
    cy = _F.add(_F.mul(f, cx), _F.mul(i, g))
    hy = _F.mul(o, _F.tanh(cy))
    return hy, cy


def _gru_step(gi: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None,
              b_hh: Tensor | None, precomputed: bool = False) -> Tensor:
    # torch 2.13 CPU: `unsafe_chunk` (UnsafeSplitBackward0), input gates cut first
    i_r, i_z, i_n = _F.unsafe_chunk(_ih(gi, w_ih, b_ih, precomputed), 3, 1)
    h_r, h_z, h_n = _F.unsafe_chunk(F.linear(hx, w_hh, b_hh), 3, 1)
    r = _F.sigmoid(_F.add(h_r, i_r))
    z = _F.sigmoid(_F.add(h_z, i_z))
    # The reset gate scales the *projected* hidden state, bias included (b_hn inside r * (...)).
    n = _F.tanh(_F.add(i_n, _F.mul(h_n, r)))
    # h' = (1 - z) * n + z * h, written as ATen writes it: (h - n) * z + n.
    return _F.add(_F.mul(_F.sub(hx, n), z), n)


_STEPS: dict[str, Callable[..., Any]] = {"RNN_TANH": _tanh_step, "RNN_RELU": _relu_step,
                                         "LSTM": _lstm_step, "GRU": _gru_step}


def _uniform_init(module: Module, hidden_size: int) -> None:
    # PyTorch draws every weight and bias of a recurrent layer from U(-1/sqrt(H), 1/sqrt(H)).
    stdv = 1.0 / math.sqrt(hidden_size) if hidden_size > 0 else 0
    for weight in module.parameters():
        init.uniform_(weight, -stdv, stdv)


# -- cells ---------------------------------------------------------------------------------------
class RNNCellBase(Module):
    """What the three cells share: ``weight_ih`` ``(G*H, input_size)``, ``weight_hh``
    ``(G*H, H)``, ``bias_ih`` and ``bias_hh`` ``(G*H,)`` with ``G`` gates, all drawn from
    ``U(-1/sqrt(H), 1/sqrt(H))``.
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int,
                 device: Any = None, dtype: _dt.dtype | None = None) -> None:
        super().__init__()
        dt = _factory_dtype(device, dtype)
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(_factories.empty(num_chunks * hidden_size, input_size,
                                                    dtype=dt))
        self.weight_hh = Parameter(_factories.empty(num_chunks * hidden_size, hidden_size,
                                                    dtype=dt))
        if bias:
            self.bias_ih = Parameter(_factories.empty(num_chunks * hidden_size, dtype=dt))
            self.bias_hh = Parameter(_factories.empty(num_chunks * hidden_size, dtype=dt))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        _on_device(self, device)  # device="meta": its tensors become meta
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw every parameter from ``U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))``."""
        _uniform_init(self, self.hidden_size)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        nonlinearity = self.__dict__.get("nonlinearity", "tanh")
        if nonlinearity != "tanh":
            s += f", nonlinearity={nonlinearity}"
        return s

    def _check(self, input: Tensor, hx: Tensor, label: str = "0") -> None:
        # ATen's check_rnn_cell_forward_input / _hidden, with their messages.
        if input.shape[1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[1]} "
                               f"expected {self.input_size}")
        if input.shape[0] != hx.shape[0]:
            raise RuntimeError(f"Input batch size {input.shape[0]} doesn't match hidden{label} "
                               f"batch size {hx.shape[0]}")
        if hx.shape[1] != self.hidden_size:
            raise RuntimeError(f"hidden{label} has inconsistent hidden_size: got {hx.shape[1]}, "
                               f"expected {self.hidden_size}")

    def _zeros(self, input: Tensor) -> Tensor:
        return _factories.zeros(input.shape[0], self.hidden_size, dtype=input.dtype)

    def _params(self) -> tuple[Tensor, Tensor, Tensor | None, Tensor | None]:
        return self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh


def _check_cell_dims(name: str, input: Tensor, hx: Tensor | None) -> bool:
    if input.dim() not in (1, 2):
        raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
    if hx is not None and hx.dim() not in (1, 2):
        raise ValueError(f"{name}: Expected hidden to be 1D or 2D, got {hx.dim()}D instead")
    return input.dim() == 2


class RNNCell(RNNCellBase):
    """One step of an Elman RNN: ``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)`` (or ``relu``).

    Args:
        input_size: features of the input ``x``.
        hidden_size: features of the hidden state ``h``.
        bias: learn ``bias_ih`` and ``bias_hh`` (default ``True``).
        nonlinearity: ``'tanh'`` (default) or ``'relu'``.

    Inputs ``(N, input_size)`` or unbatched ``(input_size,)``; ``hx`` defaults to zeros.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> cell = nn.RNNCell(3, 4)
        >>> h = cell(gradviz.randn(2, 3))
        >>> h.shape, h.grad_fn.name()
        (gradviz.Size([2, 4]), 'TanhBackward0')
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device: Any = None,
                 dtype: _dt.dtype | None = None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        is_batched = _check_cell_dims("RNNCell", input, hx)
        if not is_batched:
            input = _F.unsqueeze(input, 0)
        hx = self._zeros(input) if hx is None else (hx if is_batched else _F.unsqueeze(hx, 0))
        if self.nonlinearity == "tanh":
            step = _tanh_step
        elif self.nonlinearity == "relu":
            step = _relu_step
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        self._check(input, hx)
        ret = step(input, hx, *self._params())
        return ret if is_batched else _F.squeeze(ret, 0)


class LSTMCell(RNNCellBase):
    """One step of an LSTM, with PyTorch's gate order (input, forget, cell, output)::

        i, f, g, o = unsafe_chunk(x W_ih^T + b_ih + h W_hh^T + b_hh, 4)
        c' = sigmoid(f) * c + sigmoid(i) * tanh(g)
        h' = sigmoid(o) * tanh(c')

    Returns ``(h', c')``; ``hx`` is ``(h, c)`` and defaults to zeros.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> h, c = nn.LSTMCell(3, 4)(gradviz.randn(2, 3))
        >>> h.shape, c.shape, h.grad_fn.name(), c.grad_fn.name()
        (gradviz.Size([2, 4]), gradviz.Size([2, 4]), 'MulBackward0', 'AddBackward0')
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None,
                 dtype: _dt.dtype | None = None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None
                ) -> tuple[Tensor, Tensor]:
        if input.dim() not in (1, 2):
            raise ValueError(f"LSTMCell: Expected input to be 1D or 2D, got {input.dim()}D "
                             "instead")
        if hx is not None:
            for idx, value in enumerate(hx):
                if value.dim() not in (1, 2):
                    raise ValueError(f"LSTMCell: Expected hx[{idx}] to be 1D or 2D, got "
                                     f"{value.dim()}D instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = _F.unsqueeze(input, 0)
        if hx is None:
            zeros = self._zeros(input)
            hx = (zeros, zeros)
        elif not is_batched:
            hx = (_F.unsqueeze(hx[0], 0), _F.unsqueeze(hx[1], 0))
        self._check(input, hx[0], "0")
        self._check(input, hx[1], "1")
        hy, cy = _lstm_step(input, (hx[0], hx[1]), *self._params())
        if not is_batched:
            return _F.squeeze(hy, 0), _F.squeeze(cy, 0)
        return hy, cy


class GRUCell(RNNCellBase):
    """One step of a GRU, with PyTorch's gate order (reset, update, new)::

        r = sigmoid(W_ir x + b_ir + W_hr h + b_hr)
        z = sigmoid(W_iz x + b_iz + W_hz h + b_hz)
        n = tanh(W_in x + b_in + r * (W_hn h + b_hn))
        h' = (1 - z) * n + z * h

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> h = nn.GRUCell(3, 4)(gradviz.randn(3))
        >>> h.shape
        gradviz.Size([4])
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None,
                 dtype: _dt.dtype | None = None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        is_batched = _check_cell_dims("GRUCell", input, hx)
        if not is_batched:
            input = _F.unsqueeze(input, 0)
        hx = self._zeros(input) if hx is None else (hx if is_batched else _F.unsqueeze(hx, 0))
        self._check(input, hx)
        ret = _gru_step(input, hx, *self._params())
        return ret if is_batched else _F.squeeze(ret, 0)


# -- sequence modules ----------------------------------------------------------------------------
class RNNBase(Module):
    """What ``RNN``, ``LSTM`` and ``GRU`` share: the stacked, optionally bidirectional layers.

    Parameters are named as in PyTorch: ``weight_ih_l{k}``, ``weight_hh_l{k}``, ``bias_ih_l{k}``,
    ``bias_hh_l{k}``, with the suffix ``_reverse`` for the backward direction; layer ``k > 0``
    takes ``hidden_size * num_directions`` input features.
    """

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, device: Any = None,
                 dtype: _dt.dtype | None = None) -> None:
        super().__init__()
        dt = _factory_dtype(device, dtype)
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        if (not isinstance(dropout, numbers.Number) or isinstance(dropout, bool)
                or not 0 <= dropout <= 1):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                          "non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", stacklevel=3)
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: "
                            f"{type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size = _GATES[mode] * hidden_size
        num_directions = 2 if bidirectional else 1
        self._flat_weights_names: list[str] = []
        for layer in range(num_layers):
            layer_input_size = input_size if layer == 0 else hidden_size * num_directions
            for direction in range(num_directions):
                suffix = f"_l{layer}" + ("_reverse" if direction == 1 else "")
                shapes = [("weight_ih", (gate_size, layer_input_size)),
                          ("weight_hh", (gate_size, hidden_size))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                for name, shape in shapes:
                    setattr(self, name + suffix, Parameter(_factories.empty(*shape, dtype=dt)))
                    self._flat_weights_names.append(name + suffix)
        _on_device(self, device)  # device="meta": its tensors become meta
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw every parameter from ``U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))``."""
        _uniform_init(self, self.hidden_size)

    @property
    def all_weights(self) -> list[list[Parameter]]:
        """The parameters grouped per layer and direction, as PyTorch's ``all_weights``."""
        per = 4 if self.bias else 2
        names = self._flat_weights_names
        return [[getattr(self, n) for n in names[i:i + per]] for i in range(0, len(names), per)]

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # -- forward helpers ---------------------------------------------------------------------------
    def _check_input(self, input: Tensor) -> None:
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.shape[-1]}")

    def _check_hidden(self, hx: Tensor, batch: int, msg: str = "Expected hidden size {}, got {}"
                      ) -> None:
        expected = (self.num_layers * (2 if self.bidirectional else 1), batch, self.hidden_size)
        if tuple(hx.shape) != expected:
            raise RuntimeError(msg.format(expected, list(hx.shape)))

    def _zeros(self, input: Tensor, batch: int) -> Tensor:
        num_directions = 2 if self.bidirectional else 1
        return _factories.zeros(self.num_layers * num_directions, batch, self.hidden_size,
                                dtype=input.dtype)

    def _layer_params(self, layer: int, direction: int
                      ) -> tuple[Tensor, Tensor, Tensor | None, Tensor | None]:
        suffix = f"_l{layer}" + ("_reverse" if direction == 1 else "")
        if self.bias:
            return (getattr(self, "weight_ih" + suffix), getattr(self, "weight_hh" + suffix),
                    getattr(self, "bias_ih" + suffix), getattr(self, "bias_hh" + suffix))
        return getattr(self, "weight_ih" + suffix), getattr(self, "weight_hh" + suffix), None, None

    def _run(self, input: Tensor, hiddens: list[Any]) -> tuple[Tensor, list[Any]]:
        """The layers over a time-major ``(T, N, F)`` input, as ATen's ``_rnn_impl`` runs them.

        ``hiddens`` holds one initial state per layer and direction (a tensor, or ``(h, c)`` for
        an LSTM); returns the last layer's output and the final state of each.
        """
        step = _STEPS[self.mode]
        finals: list[Any] = []
        num_directions = 2 if self.bidirectional else 1
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(num_directions):
                params = self._layer_params(layer, direction)
                hidden = hiddens[layer * num_directions + direction]
                # The whole sequence's input projection is one linear; each time step's slice
                # of it goes to the cell (the reverse direction walks the slices backwards).
                projected = _F.unbind(F.linear(input, params[0], params[2]), 0)
                steps = []
                for x_t in (projected if direction == 0 else reversed(projected)):
                    hidden = step(x_t, hidden, *params, precomputed=True)
                    steps.append(hidden[0] if self.mode == "LSTM" else hidden)
                if direction == 1:
                    steps.reverse()
                outputs.append(_F.stack(steps, 0))
                finals.append(hidden)
            output = outputs[0] if num_directions == 1 else _F.cat(outputs, outputs[0].dim() - 1)
            if self.dropout != 0 and self.training and layer < self.num_layers - 1:
                output = F.dropout(output, self.dropout, True)
            input = output
        return input, finals

    def _forward(self, input: Tensor, hx: Any) -> tuple[Tensor, Any]:
        name = type(self).__name__
        lstm = self.mode == "LSTM"
        if input.dim() not in (2, 3):
            tail = "tensor instead" if self.mode.startswith("RNN") else "instead"
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D {tail}")
        is_batched = input.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        dims = "3-D" if is_batched else "2-D"
        kind = "batched 3-D" if is_batched else "unbatched 2-D"
        if hx is not None:
            if lstm and (hx[0].dim() != input.dim() or hx[1].dim() != input.dim()):
                raise RuntimeError(f"For {kind} input, hx and cx should also be {dims} but got "
                                   f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
            if not lstm and hx.dim() != input.dim():
                raise RuntimeError(f"For {kind} input, hx should also be {dims} but got "
                                   f"{hx.dim()}-D tensor")
        if not is_batched:
            input = _F.unsqueeze(input, batch_dim)
            if hx is not None:
                hx = ((_F.unsqueeze(hx[0], 1), _F.unsqueeze(hx[1], 1)) if lstm
                      else _F.unsqueeze(hx, 1))
        batch = input.shape[0] if self.batch_first else input.shape[1]
        if hx is None:
            zeros = self._zeros(input, batch)
            hx = (zeros, zeros) if lstm else zeros
        self._check_input(input)
        if lstm:
            self._check_hidden(hx[0], batch, "Expected hidden[0] size {}, got {}")
            self._check_hidden(hx[1], batch, "Expected hidden[1] size {}, got {}")
            hiddens: list[Any] = list(zip(_F.unbind(hx[0], 0), _F.unbind(hx[1], 0)))
        else:
            self._check_hidden(hx, batch)
            hiddens = list(_F.unbind(hx, 0))
        if self.batch_first:
            input = _F.transpose(input, 0, 1)
        output, finals = self._run(input, hiddens)
        if self.batch_first:
            output = _F.transpose(output, 0, 1)
        if lstm:
            hidden: Any = (_F.stack([h for h, _ in finals], 0), _F.stack([c for _, c in finals], 0))
        else:
            hidden = _F.stack(finals, 0)
        if not is_batched:
            output = _F.squeeze(output, batch_dim)
            hidden = ((_F.squeeze(hidden[0], 1), _F.squeeze(hidden[1], 1)) if lstm
                      else _F.squeeze(hidden, 1))
        return output, hidden


_SEQ_ARGS = """
    Args:
        input_size: features of each time step of the input.
        hidden_size: features of the hidden state.
        num_layers: recurrent layers stacked on each other (default 1).
        bias: learn the ``bias_ih_l{k}`` and ``bias_hh_l{k}`` parameters (default ``True``).
        batch_first: inputs and outputs are ``(N, T, F)`` instead of ``(T, N, F)`` (the hidden
            state stays ``(num_layers * num_directions, N, H)``).
        dropout: probability of dropout on the outputs of every layer but the last, in training.
        bidirectional: also run each layer backwards in time and concatenate both outputs.

    Unbatched input ``(T, F)`` goes with an unbatched hidden state ``(num_layers, H)``."""


class RNN(RNNBase):
    __doc__ = """A stack of Elman RNN layers: ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T
    + b_hh)`` (``nonlinearity='relu'`` for ReLU). Returns ``(output, h_n)``: ``output`` holds
    the last layer's ``h_t`` for every ``t``, ``h_n`` every layer's last state.
""" + _SEQ_ARGS + """

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> rnn = nn.RNN(3, 4, num_layers=2)
        >>> out, h = rnn(gradviz.randn(5, 2, 3))
        >>> out.shape, h.shape, out.grad_fn.name()
        (gradviz.Size([5, 2, 4]), gradviz.Size([2, 2, 4]), 'StackBackward0')
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 nonlinearity: str = "tanh", bias: bool = True, batch_first: bool = False,
                 dropout: float = 0.0, bidirectional: bool = False, device: Any = None,
                 dtype: _dt.dtype | None = None) -> None:
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or "
                             "'relu'.")
        super().__init__(mode, input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> tuple[Tensor, Tensor]:
        return self._forward(input, hx)


class LSTM(RNNBase):
    __doc__ = """A stack of LSTM layers (gates as in :class:`LSTMCell`). Returns
    ``(output, (h_n, c_n))``; ``hx`` is ``(h_0, c_0)`` and defaults to zeros.
""" + _SEQ_ARGS + """

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> lstm = nn.LSTM(10, 20, num_layers=2, batch_first=True); lstm
        LSTM(10, 20, num_layers=2, batch_first=True)
        >>> out, (h, c) = lstm(gradviz.randn(3, 6, 10))
        >>> out.shape, h.shape
        (gradviz.Size([3, 6, 20]), gradviz.Size([2, 3, 20]))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, device: Any = None,
                 dtype: _dt.dtype | None = None) -> None:
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, device, dtype)

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None
                ) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        return self._forward(input, hx)


class GRU(RNNBase):
    __doc__ = """A stack of GRU layers (gates as in :class:`GRUCell`). Returns
    ``(output, h_n)``.
""" + _SEQ_ARGS + """

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> out, h = nn.GRU(3, 4, bidirectional=True)(gradviz.randn(5, 3))
        >>> out.shape, h.shape
        (gradviz.Size([5, 8]), gradviz.Size([2, 4]))
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, device: Any = None,
                 dtype: _dt.dtype | None = None) -> None:
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, device, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> tuple[Tensor, Tensor]:
        return self._forward(input, hx)
