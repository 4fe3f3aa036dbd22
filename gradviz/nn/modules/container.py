"""Containers: ``Sequential``, ``ModuleList``, ``ModuleDict``."""

from __future__ import annotations

import operator
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from itertools import islice
from typing import Any, overload

from gradviz.nn.modules.module import Module, _addindent, _adopt
from gradviz.tensor import Tensor

__all__ = ["Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"]


class Sequential(Module):
    """Modules called one after the other, each on the previous one's output.

    Build it from modules (named ``0``, ``1``, ...) or from an ``OrderedDict`` of named modules.
    Supports ``len``, iteration, indexing (a slice gives a ``Sequential``), ``append``,
    ``insert`` and ``extend``.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> model = nn.Sequential(nn.Linear(2, 16), nn.ReLU())
        >>> model
        Sequential(
          (0): Linear(in_features=2, out_features=16, bias=True)
          (1): ReLU()
        )
        >>> model(gradviz.ones(3, 2)).shape, len(model), model[-1]
        (gradviz.Size([3, 16]), 2, ReLU())
    """

    def __init__(self, *args: Any) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def _get_item_by_idx(self, iterator: Iterable[Any], idx: int) -> Any:
        size = len(self)
        idx = operator.index(idx)
        if not -size <= idx < size:
            raise IndexError(f"index {idx} is out of range")
        idx %= size
        return next(islice(iterator, idx, None))

    @overload
    def __getitem__(self, idx: slice) -> Sequential: ...

    @overload
    def __getitem__(self, idx: int) -> Module: ...

    def __getitem__(self, idx: int | slice) -> Module:
        if isinstance(idx, slice):
            return self.__class__(OrderedDict(list(self._modules.items())[idx]))
        return self._get_item_by_idx(self._modules.values(), idx)

    def __setitem__(self, idx: int, module: Module) -> None:
        key = self._get_item_by_idx(self._modules.keys(), idx)
        setattr(self, key, module)

    def __delitem__(self, idx: int | slice) -> None:
        if isinstance(idx, slice):
            for key in list(self._modules.keys())[idx]:
                delattr(self, key)
        else:
            delattr(self, self._get_item_by_idx(self._modules.keys(), idx))
        # Keep the keys numbered 0..n-1, as PyTorch does.
        items = list(self._modules.items())
        self._modules = OrderedDict((str(i), m) for i, (_, m) in enumerate(items))
        self._renumber_names()

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def append(self, module: Module) -> Sequential:
        """Add ``module`` at the end; returns ``self``.

        Example:
            >>> from gradviz import nn
            >>> len(nn.Sequential(nn.ReLU()).append(nn.Tanh()))
            2
        """
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index: int, module: Module) -> Sequential:
        """Insert ``module`` before position ``index``; returns ``self``.

        Example:
            >>> from gradviz import nn
            >>> nn.Sequential(nn.ReLU()).insert(0, nn.Tanh())[0]
            Tanh()
        """
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self._modules)
        if not (-n <= index <= n):
            raise IndexError(f"Index out of range: {index}")
        if index < 0:
            index += n
        for i in range(n, index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module
        self._renumber_names()
        return self

    def extend(self, sequential: Iterable[Module]) -> Sequential:
        """Append every module of ``sequential``; returns ``self``."""
        for layer in sequential:
            self.append(layer)
        return self

    def _renumber_names(self) -> None:
        # Positions changed: re-prefix the automatic parameter names ("1.weight" -> "2.weight").
        for key, module in self._modules.items():
            if module is not None:
                _adopt(module, key)

    def forward(self, input: Any) -> Any:
        for module in self:
            input = module(input)
        return input


class ModuleList(Module):
    """A list of modules, registered as children (so their parameters are found). It has no
    ``forward``: iterate over it in your own.

    Example:
        >>> from gradviz import nn
        >>> layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
        >>> layers
        ModuleList(
          (0-2): 3 x Linear(in_features=2, out_features=2, bias=True)
        )
        >>> len(list(layers.parameters()))
        6
    """

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self += modules

    def _get_abs_string_index(self, idx: int) -> str:
        idx = operator.index(idx)
        if not (-len(self) <= idx < len(self)):
            raise IndexError(f"index {idx} is out of range")
        if idx < 0:
            idx += len(self)
        return str(idx)

    def __getitem__(self, idx: int | slice) -> Any:
        if isinstance(idx, slice):
            return self.__class__(list(self._modules.values())[idx])
        return self._modules[self._get_abs_string_index(idx)]

    def __setitem__(self, idx: int, module: Module) -> None:
        setattr(self, self._get_abs_string_index(idx), module)

    def __delitem__(self, idx: int | slice) -> None:
        if isinstance(idx, slice):
            for k in range(len(self._modules))[idx]:
                delattr(self, str(k))
        else:
            delattr(self, self._get_abs_string_index(idx))
        str_indices = [str(i) for i in range(len(self._modules))]
        self._modules = OrderedDict(zip(str_indices, self._modules.values(), strict=True))
        self._renumber_names()

    def _renumber_names(self) -> None:
        # Positions changed: re-prefix the automatic parameter names ("1.weight" -> "2.weight").
        for key, module in self._modules.items():
            if module is not None:
                _adopt(module, key)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:
        return self.extend(modules)

    def __add__(self, other: Iterable[Module]) -> ModuleList:
        combined = ModuleList()
        for i, module in enumerate(list(self) + list(other)):
            combined.add_module(str(i), module)
        return combined

    def append(self, module: Module) -> ModuleList:
        """Add ``module`` at the end; returns ``self``.

        Example:
            >>> from gradviz import nn
            >>> len(nn.ModuleList().append(nn.ReLU()))
            1
        """
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        """Append every module of ``modules``; returns ``self``."""
        if not isinstance(modules, Iterable):
            raise TypeError("ModuleList.extend should be called with an iterable, but got "
                            + type(modules).__name__)
        offset = len(self)
        for i, module in enumerate(modules):
            self.add_module(str(offset + i), module)
        return self

    def insert(self, index: int, module: Module) -> None:
        """Insert ``module`` before position ``index``."""
        for i in range(len(self._modules), index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module
        self._renumber_names()

    def __repr__(self) -> str:
        # PyTorch compresses runs of identical reprs: "(0-2): 3 x Linear(...)".
        reprs = [repr(item) for item in self]
        if not reprs:
            return self._get_name() + "()"
        spans = [[0, 0]]
        blocks = [reprs[0]]
        for i, r in enumerate(reprs[1:], 1):
            if r == blocks[-1]:
                spans[-1][1] += 1
                continue
            spans.append([i, i])
            blocks.append(r)
        lines = []
        for (start, end), block in zip(spans, blocks, strict=True):
            text = f"({start}): {block}"
            if start != end:
                text = f"({start}-{end}): {end - start + 1} x {block}"
            lines.append(_addindent(text, 2))
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"


class ModuleDict(Module):
    """A dict of modules, registered as children, in insertion order.

    Example:
        >>> from gradviz import nn
        >>> heads = nn.ModuleDict({"act": nn.ReLU(), "out": nn.Linear(2, 1)})
        >>> list(heads.keys()), heads["act"]
        (['act', 'out'], ReLU())
    """

    def __init__(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]] | None
                 = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: object) -> bool:
        return key in self._modules

    def clear(self) -> None:
        """Remove every module."""
        self._modules.clear()

    def pop(self, key: str) -> Module:
        """Remove ``key`` and return its module."""
        v = self[key]
        del self[key]
        return v

    def keys(self) -> Iterable[str]:
        """The names."""
        return self._modules.keys()

    def items(self) -> Iterable[tuple[str, Module]]:
        """``(name, module)`` pairs."""
        return self._modules.items()

    def values(self) -> Iterable[Module]:
        """The modules."""
        return self._modules.values()

    def update(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]]) -> None:
        """Add (or replace) modules from a mapping or from ``(name, module)`` pairs."""
        if isinstance(modules, Mapping):
            for key, module in modules.items():
                self[key] = module
            return
        for j, m in enumerate(modules):
            if not isinstance(m, Iterable) or isinstance(m, (str, Tensor)):
                raise TypeError("ModuleDict update sequence element #" + str(j)
                                + " should be Iterable; is" + type(m).__name__)
            m = tuple(m)
            if len(m) != 2:
                raise ValueError("ModuleDict update sequence element #" + str(j)
                                 + " has length " + str(len(m)) + "; 2 is required")
            self[m[0]] = m[1]


def _as_parameter(value: Any) -> Any:
    """A plain tensor stored in a parameter container becomes a Parameter, as in PyTorch."""
    from gradviz.nn.parameter import Parameter

    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


def _param_line(key: Any, p: Any, type_name: str) -> str:
    """One line of a parameter container's repr: kind, dtype (or type name) and size."""
    from gradviz.nn.parameter import Parameter

    if not isinstance(p, Tensor):
        return f"  ({key}): Object of type: {type(p).__name__}"
    size = "x".join(str(n) for n in p.shape)
    kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
    return f"  ({key}): {kind} containing: [{type_name} of size {size}]"


class ParameterList(Module):
    """A list of parameters, registered on the module (named ``0``, ``1`` ...), so that
    ``parameters()`` and the optimizers find them. Plain tensors are made Parameters.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> ps = nn.ParameterList([nn.Parameter(gradviz.ones(2)), gradviz.zeros(3)])
        >>> ps
        ParameterList(
            (0): Parameter containing: [gradviz.float32 of size 2]
            (1): Parameter containing: [gradviz.float32 of size 3]
        )
        >>> [n for n, _ in ps.named_parameters()]
        ['0', '1']
    """

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    def _get_abs_string_index(self, idx: int) -> str:
        idx = operator.index(idx)
        if not (-len(self) <= idx < len(self)):
            raise IndexError(f"index {idx} is out of range")
        return str(idx + len(self) if idx < 0 else idx)

    def __getitem__(self, idx: int | slice) -> Any:
        if isinstance(idx, slice):
            return self.__class__([self[i] for i in range(len(self))[idx]])
        return getattr(self, self._get_abs_string_index(idx))

    def __setitem__(self, idx: int, param: Any) -> None:
        setattr(self, self._get_abs_string_index(idx), _as_parameter(param))

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[Any]:
        return (self[i] for i in range(len(self)))

    def __iadd__(self, parameters: Iterable[Any]) -> ParameterList:
        return self.extend(parameters)

    def append(self, value: Any) -> ParameterList:
        """Add ``value`` at the end; returns ``self``."""
        self._size += 1
        self[self._size - 1] = value
        return self

    def extend(self, values: Iterable[Any]) -> ParameterList:
        """Append every value of ``values``; returns ``self``."""
        if not isinstance(values, Iterable) or isinstance(values, Tensor):
            raise TypeError("ParameterList.extend should be called with an iterable, but got "
                            + type(values).__name__)
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        return "\n".join(_param_line(k, p, str(p.dtype) if isinstance(p, Tensor) else "")
                         for k, p in enumerate(self))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    """An ordered dict of parameters (string keys), registered on the module under their keys.
    Plain tensors are made Parameters.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> pd = nn.ParameterDict({"scale": gradviz.ones(2)})
        >>> pd
        ParameterDict(  (scale): Parameter containing: [gradviz.FloatTensor of size 2])
        >>> list(pd.keys()), [n for n, _ in pd.named_parameters()]
        (['scale'], ['scale'])
    """

    def __init__(self, parameters: Any = None) -> None:
        super().__init__()
        self._keys: dict[str, None] = {}
        if parameters is not None:
            self.update(parameters)

    @staticmethod
    def _key(key: Any) -> str:
        if not isinstance(key, str):
            raise TypeError("Index given to ParameterDict cannot be used as a key as it is not a "
                            f"string (type is '{type(key).__name__}'). Open an issue on github "
                            "if you need non-string keys.")
        return key

    def __getitem__(self, key: str) -> Any:
        return getattr(self, self._key(key))

    def __setitem__(self, key: str, value: Any) -> None:
        self._keys[self._key(key)] = None
        setattr(self, key, _as_parameter(value))

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        delattr(self, key)

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def keys(self) -> Iterable[str]:
        """The keys, in insertion order."""
        return self._keys.keys()

    def items(self) -> Iterable[tuple[str, Any]]:
        """``(key, parameter)`` pairs, in insertion order."""
        return ((k, self[k]) for k in self._keys)

    def values(self) -> Iterable[Any]:
        """The parameters, in insertion order."""
        return (self[k] for k in self._keys)

    def get(self, key: str, default: Any = None) -> Any:
        """``self[key]`` if ``key`` is present, else ``default``."""
        return self[key] if key in self else default

    def pop(self, key: str) -> Any:
        """Remove ``key`` and return its parameter."""
        value = self[key]
        del self[key]
        return value

    def clear(self) -> None:
        """Remove every parameter."""
        for k in list(self._keys):
            del self[k]

    def update(self, parameters: Any) -> None:
        """Add or replace entries from a mapping or an iterable of ``(key, value)`` pairs."""
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            pairs = list(parameters.items())
        elif isinstance(parameters, Mapping):
            pairs = sorted(parameters.items())  # a plain mapping is sorted, as in PyTorch
        elif isinstance(parameters, Iterable):
            pairs = []
            for j, p in enumerate(parameters):
                if not isinstance(p, Iterable):
                    raise TypeError(f"ParameterDict update sequence element #{j} should be "
                                    f"Iterable; is{type(p).__name__}")  # sic: torch's text
                p = tuple(p)
                if len(p) != 2:
                    raise ValueError(f"ParameterDict update sequence element #{j} has length "
                                     f"{len(p)}; 2 is required")
                pairs.append(p)
        else:
            raise TypeError("ParametersDict.update should be called with an iterable of "
                            "key/value pairs, but got " + type(parameters).__name__)
        for k, v in pairs:
            self[k] = v

    def extra_repr(self) -> str:
        return "\n".join(_param_line(k, p, p.type() if isinstance(p, Tensor) else "")
                         for k, p in self.items())

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("ParameterDict should not be called.")
