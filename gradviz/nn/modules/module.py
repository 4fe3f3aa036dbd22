"""``gradviz.nn.Module``: the base class of every layer, as ``torch.nn.Module``.

A module owns three ordered registries, filled by attribute assignment exactly as in PyTorch:
``_parameters`` (:class:`~gradviz.nn.Parameter` values), ``_buffers`` (tensors that are state but
not trained) and ``_modules`` (child modules). Everything else (``parameters()``,
``state_dict()``, ``train()``, the ``repr``) walks those registries.

Traversals are iterative (an explicit stack), so their cost and depth do not depend on Python's
recursion limit. The pre-order they produce is the one PyTorch's recursive walks produce.

NOTE [module scopes] When listeners are registered (:mod:`gradviz.autograd.events`), every
``Module.__call__`` emits ``module_enter`` before the forward pre-hooks and ``module_exit``
after the forward hooks (also when forward raises), so that the tracer can group the ops a
module ran. The event's ``name`` is the module's qualified name from the outermost module being
called (``0``, ``encoder.fc1``), or its class name for that outermost module (and for modules
called from a forward that does not own them). With no listener, ``__call__`` checks one list.
"""

from __future__ import annotations

import threading
import warnings
from collections import OrderedDict, namedtuple
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np

from gradviz import _device, _dtype
from gradviz.autograd.events import emit_module_enter, emit_module_exit, watchers
from gradviz.autograd.hooks import HookDict, RemovableHandle, add_hook
from gradviz.nn.modules._backward_hooks import BackwardHookCall, warn_non_full_hook
from gradviz.nn.parameter import Parameter, set_auto_name
from gradviz.tensor import Tensor

__all__ = ["Module"]


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns: the keys it did not find and the keys it did not use."""

    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def typename(obj: Any) -> str:
    """``torch.typename``: a tensor's type string, else the object's qualified (class) name.

    Example:
        >>> import gradviz
        >>> typename(gradviz.ones(2)), typename(3), typename(Module)
        ('gradviz.FloatTensor', 'int', 'gradviz.nn.modules.module.Module')
    """
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module = type(obj).__module__ or ""
        qualname = type(obj).__qualname__
    if module in ("", "builtins"):
        return qualname
    return f"{module}.{qualname}"


def _addindent(s: str, num_spaces: int) -> str:
    """Indent every line but the first (blank lines stay empty), as PyTorch's repr does."""
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    first = lines.pop(0)
    rest = [(num_spaces * " ") + line if line.strip() else "" for line in lines]
    return first + "\n" + "\n".join(rest)


def _size_text(shape: tuple[int, ...]) -> str:
    return f"gradviz.Size({list(shape)})"


def _write_(dst: Tensor, values: np.ndarray) -> None:
    """Overwrite ``dst``'s values in place (no graph is recorded) and bump its version, as an
    in-place op under ``no_grad`` does in PyTorch."""
    np.copyto(dst._data, values, casting="unsafe")
    dst._version_counter.version += 1


# -- module scopes for the tracer (see NOTE [module scopes]) -------------------------------------
class _ScopeStack(threading.local):
    def __init__(self) -> None:
        # Entries are [module, qualified name ('' for the outermost), {id(descendant): name}].
        self.stack: list[list[Any]] = []


_scopes = _ScopeStack()


def _scope_names(module: Module) -> tuple[str, str]:
    """``(qualified name, display name)`` of ``module`` inside the modules being called."""
    stack = _scopes.stack
    for entry in reversed(stack):
        names = entry[2]
        if names is None:  # built once per enclosing call, on first need
            names = entry[2] = {id(m): n for n, m in entry[0].named_modules() if n}
        rel = names.get(id(module))
        if rel is not None:
            qual = f"{entry[1]}.{rel}" if entry[1] else rel
            return qual, qual
    cls = type(module).__name__
    return ("" if not stack else cls), cls


class Module:
    """Base class for all neural network modules; subclasses define ``forward``.

    Assigning a :class:`~gradviz.nn.Parameter`, a :class:`Module` or (via
    :meth:`register_buffer`) a tensor to an attribute registers it; calling the module runs its
    hooks and ``forward``.

    Example:
        >>> import gradviz
        >>> from gradviz import nn
        >>> class Net(nn.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.fc = nn.Linear(2, 1)
        ...     def forward(self, x):
        ...         return self.fc(x)
        >>> net = Net()
        >>> [name for name, _ in net.named_parameters()]
        ['fc.weight', 'fc.bias']
        >>> net(gradviz.ones(3, 2)).shape
        gradviz.Size([3, 1])
    """

    training: bool
    _version: int = 1
    call_super_init: bool = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword "
                            f"argument '{next(iter(kwargs))}'")
        if args:
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but "
                            f"{len(args) + 1} were given")
        setattr_ = super().__setattr__
        setattr_("training", True)
        setattr_("_parameters", {})
        setattr_("_buffers", {})
        setattr_("_non_persistent_buffers_set", set())
        setattr_("_modules", {})
        setattr_("_forward_pre_hooks", HookDict())
        setattr_("_forward_pre_hooks_with_kwargs", {})
        setattr_("_forward_hooks", HookDict())
        setattr_("_forward_hooks_with_kwargs", {})
        setattr_("_forward_hooks_always_called", {})
        setattr_("_backward_pre_hooks", HookDict())
        setattr_("_backward_hooks", HookDict())
        setattr_("_is_full_backward_hook", None)  # None: no backward hook yet

    def forward(self, *input: Any) -> Any:
        """The computation of the module; every subclass overrides it."""
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function')

    # -- calling -------------------------------------------------------------------------------
    def _call_impl(self, *args: Any, **kwargs: Any) -> Any:
        if not (self._forward_pre_hooks or self._forward_hooks or watchers
                or self._backward_hooks or self._backward_pre_hooks):
            return self.forward(*args, **kwargs)
        if not watchers:
            return self._call_with_hooks(args, kwargs)
        qual, display = _scope_names(self)
        emit_module_enter(self, display, args)
        stack = _scopes.stack
        stack.append([self, qual, None])
        result = None
        try:
            result = self._call_with_hooks(args, kwargs)
            return result
        finally:
            stack.pop()
            emit_module_exit(self, display, result)

    __call__ = _call_impl

    def _call_with_hooks(self, args: tuple, kwargs: dict) -> Any:
        pre_kwargs = self._forward_pre_hooks_with_kwargs
        for hook_id, hook in tuple(self._forward_pre_hooks.items()):
            if hook_id in pre_kwargs:
                out = hook(self, args, kwargs)
                if out is not None:
                    if isinstance(out, tuple) and len(out) == 2:
                        args, kwargs = out
                    else:
                        raise RuntimeError("forward pre-hook must return None or a tuple of "
                                           f"(new_args, new_kwargs), but got {out}.")
            else:
                out = hook(self, args)
                if out is not None:
                    args = out if isinstance(out, tuple) else (out,)
        # NOTE [module backward hooks]: the call's inputs and outputs pass through a node each.
        backward_call = None
        if self._backward_pre_hooks or (self._backward_hooks and self._is_full_backward_hook):
            backward_call = BackwardHookCall(
                self, list(self._backward_hooks.values()) if self._is_full_backward_hook else [],
                list(self._backward_pre_hooks.values()))
            args = backward_call.wrap_inputs(args)
        called: set[int] = set()
        result = None
        try:
            result = self.forward(*args, **kwargs)
            post_kwargs = self._forward_hooks_with_kwargs
            for hook_id, hook in tuple(self._forward_hooks.items()):
                called.add(hook_id)
                if hook_id in post_kwargs:
                    out = hook(self, args, kwargs, result)
                else:
                    out = hook(self, args, result)
                if out is not None:
                    result = out
            if backward_call is not None:
                result = backward_call.wrap_outputs(result)
            if self._backward_hooks and self._is_full_backward_hook is False:
                self._hang_non_full_hooks(args, result)
            return result
        except Exception:
            always = self._forward_hooks_always_called
            for hook_id, hook in tuple(self._forward_hooks.items()):
                if hook_id in always and hook_id not in called:
                    try:
                        out = hook(self, args, result)
                        if out is not None:
                            result = out
                    except Exception as e:
                        warnings.warn("module forward hook with ``always_call=True`` raised an "
                                      "exception that was silenced as another error was raised "
                                      f"in forward: {e}", stacklevel=2)
            raise

    def register_forward_pre_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """Call ``hook(module, args)`` before every ``forward``; a value it returns replaces the
        positional arguments (a non-tuple is wrapped in one). With ``with_kwargs=True`` the hook
        is ``hook(module, args, kwargs)`` and may return ``(args, kwargs)``.

        Example:
            >>> import gradviz
            >>> from gradviz import nn
            >>> m = nn.Identity()
            >>> h = m.register_forward_pre_hook(lambda mod, args: (args[0] * 2,))
            >>> m(gradviz.ones(2))
            tensor([2., 2.])
            >>> h.remove(); m(gradviz.ones(2))
            tensor([1., 1.])
        """
        handle = add_hook(self._forward_pre_hooks, hook)
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                              with_kwargs: bool = False, always_call: bool = False
                              ) -> RemovableHandle:
        """Call ``hook(module, args, output)`` after every ``forward``; a value it returns
        replaces the output. With ``with_kwargs=True`` the hook is
        ``hook(module, args, kwargs, output)``; ``always_call=True`` runs it even when forward
        raises.

        Example:
            >>> import gradviz
            >>> from gradviz import nn
            >>> m = nn.Identity()
            >>> h = m.register_forward_hook(lambda mod, args, out: out + 1)
            >>> m(gradviz.zeros(2))
            tensor([1., 1.])
        """
        handle = add_hook(self._forward_hooks, hook)
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_pre_hook(self, hook: Callable[..., Any], prepend: bool = False
                                        ) -> RemovableHandle:
        """Call ``hook(module, grad_output)`` when the gradients with respect to the module's
        outputs are known, before the rest of the backward pass uses them; a tuple it returns
        replaces them (NOTE [module backward hooks] in ``_backward_hooks.py``).

        Example:
            >>> import gradviz
            >>> from gradviz import nn
            >>> m = nn.Linear(2, 1)
            >>> h = m.register_full_backward_pre_hook(lambda mod, go: print(go[0].shape))
            >>> m(gradviz.ones(3, 2)).sum().backward()
            gradviz.Size([3, 1])
        """
        handle = add_hook(self._backward_pre_hooks, hook)
        if prepend:
            self._backward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_hook(self, hook: Callable[..., Any], prepend: bool = False
                                    ) -> RemovableHandle:
        """Call ``hook(module, grad_input, grad_output)`` once the gradients with respect to
        the module's inputs are computed (``grad_input`` has one entry per positional
        argument, None for one that is not a tensor); a tuple it returns replaces
        ``grad_input``. The call's inputs and outputs each pass through a
        ``BackwardHookFunctionBackward`` node, as in PyTorch (NOTE [module backward hooks]).

        Example:
            >>> import gradviz
            >>> from gradviz import nn
            >>> m = nn.Linear(2, 1)
            >>> h = m.register_full_backward_hook(
            ...     lambda mod, gi, go: print(gi[0].shape, go[0].shape))
            >>> x = gradviz.ones(3, 2, requires_grad=True)
            >>> m(x).sum().backward()
            gradviz.Size([3, 2]) gradviz.Size([3, 1])
        """
        if self._is_full_backward_hook is False:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks "
                               "on a single Module. Please use only one of them.")
        self._is_full_backward_hook = True
        handle = add_hook(self._backward_hooks, hook)
        if prepend:
            self._backward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_backward_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Deprecated (use :meth:`register_full_backward_hook`): call ``hook(module,
        grad_input, grad_output)`` with the gradients of the node that made the module's
        output, which are the module's own only when its forward is a single op.
        """
        if self._is_full_backward_hook is True:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks "
                               "on a single Module. Please use only one of them.")
        self._is_full_backward_hook = False
        return add_hook(self._backward_hooks, hook)

    def _hang_non_full_hooks(self, args: tuple, result: Any) -> None:
        """``register_backward_hook``'s hooks, as post hooks of the output's node."""
        first = result
        while not isinstance(first, Tensor):
            if isinstance(first, dict):
                first = next(iter(first.values()))
            elif isinstance(first, (tuple, list)) and first:
                first = first[0]
            else:
                return
        grad_fn = first.grad_fn
        if grad_fn is None:
            return
        for hook in self._backward_hooks.values():
            grad_fn.register_hook(
                lambda grad_input, grad_output, hook=hook: hook(self, grad_input, grad_output))
        warn_non_full_hook(args, result, grad_fn)

    # -- registration --------------------------------------------------------------------------
    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter (or a ``None`` placeholder) under ``name``.

        Example:
            >>> import gradviz
            >>> from gradviz import nn
            >>> m = nn.Module(); m.register_parameter("scale", nn.Parameter(gradviz.ones(1)))
            >>> [n for n, _ in m.named_parameters()]
            ['scale']
        """
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {typename(name)}")
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{typename(param)}' object to parameter '{name}' "
                            "(gradviz.nn.Parameter or None required)")
        if param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                f"created explicitly. To express '{name}' as a function of another Tensor, "
                "compute the value in the forward() method.")
        self._parameters[name] = param
        set_auto_name(param, name)

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a tensor that is part of the module's state but not trained (e.g. running
        statistics). Persistent buffers are saved in ``state_dict``.

        Example:
            >>> import gradviz
            >>> from gradviz import nn
            >>> m = nn.Module(); m.register_buffer("steps", gradviz.zeros(1))
            >>> list(m.state_dict())
            ['steps']
        """
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {typename(name)}")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{typename(tensor)}' object to buffer '{name}' "
                            "(gradviz Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a child module under ``name`` (what ``self.name = module`` does).

        Example:
            >>> from gradviz import nn
            >>> m = nn.Module(); m.add_module("act", nn.ReLU()); m
            Module(
              (act): ReLU()
            )
        """
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = module
        if module is not None:
            _adopt(module, name)

    register_module = add_module

    def get_submodule(self, target: str) -> Module:
        """The submodule at a dotted path such as ``"net.0"`` (``""`` is the module itself).

        Example:
            >>> from gradviz import nn
            >>> nn.Sequential(nn.Linear(1, 1)).get_submodule("0")
            Linear(in_features=1, out_features=1, bias=True)
        """
        if target == "":
            return self
        mod: Module = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    # -- attribute protocol (as torch.nn.Module) ---------------------------------------------
    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        for registry in ("_parameters", "_buffers", "_modules"):
            if registry in d:
                values = d[registry]
                if name in values:
                    return values[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__

        def remove_from(*containers: Any) -> None:
            for c in containers:
                if name in c:
                    if isinstance(c, dict):
                        del c[name]
                    else:
                        c.discard(name)

        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(d, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{typename(value)}' as parameter '{name}' "
                                "(gradviz.nn.Parameter or None expected)")
            self.register_parameter(name, value)
            return
        modules = d.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            remove_from(d, self._parameters, self._buffers, self._non_persistent_buffers_set)
            modules[name] = value
            _adopt(value, name)
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{typename(value)}' as child module '{name}' "
                                "(gradviz.nn.Module or None expected)")
            modules[name] = value
            return
        buffers = d.get("_buffers")
        if buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{typename(value)}' as buffer '{name}' "
                                "(gradviz.Tensor or None expected)")
            buffers[name] = value
            return
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self) -> list[str]:
        keys = list(object.__dir__(self))
        keys += list(self._parameters) + list(self._modules) + list(self._buffers)
        return sorted(k for k in set(keys) if not k[:1].isdigit())

    # -- traversal -----------------------------------------------------------------------------
    def named_modules(self, memo: set[Module] | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        """Every module in the tree, this one first (pre-order), with its qualified name.

        Example:
            >>> from gradviz import nn
            >>> [n for n, _ in nn.Sequential(nn.Linear(1, 1), nn.ReLU()).named_modules()]
            ['', '0', '1']
        """
        if memo is None:
            memo = set()
        stack: list[tuple[str, Module]] = [(prefix, self)]
        while stack:
            name, module = stack.pop()
            if remove_duplicate:
                if module in memo:
                    continue
                memo.add(module)
            yield name, module
            sep = "." if name else ""
            children = [(name + sep + k, m) for k, m in module._modules.items() if m is not None]
            stack.extend(reversed(children))

    def modules(self) -> Iterator[Module]:
        """Every module in the tree, this one first.

        Example:
            >>> from gradviz import nn
            >>> len(list(nn.Sequential(nn.Linear(1, 1), nn.ReLU()).modules()))
            3
        """
        for _, module in self.named_modules():
            yield module

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """The direct children with their names (each module once).

        Example:
            >>> from gradviz import nn
            >>> [n for n, _ in nn.Sequential(nn.ReLU(), nn.Tanh()).named_children()]
            ['0', '1']
        """
        memo: set[Module] = set()
        for name, module in self._modules.items():
            if module is not None and module not in memo:
                memo.add(module)
                yield name, module

    def children(self) -> Iterator[Module]:
        """The direct children.

        Example:
            >>> from gradviz import nn
            >>> list(nn.Sequential(nn.ReLU()).children())
            [ReLU()]
        """
        for _, module in self.named_children():
            yield module

    def _named_members(self, get_members: Callable[[Module], Any], prefix: str = "",
                       recurse: bool = True, remove_duplicate: bool = True
                       ) -> Iterator[tuple[str, Any]]:
        memo: set[int] = set()
        modules = (self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
                   if recurse else [(prefix, self)])
        for module_prefix, module in modules:
            for k, v in get_members(module):
                if v is None or id(v) in memo:
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                yield module_prefix + ("." if module_prefix else "") + k, v

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        """Every parameter with its qualified name (``0.weight``), each parameter once.

        Called on a root module, it also sets each parameter's ``.name`` (what gradviz's
        drawings show) to that qualified name, unless the user named the parameter.

        Example:
            >>> from gradviz import nn
            >>> model = nn.Sequential(nn.Linear(2, 3))
            >>> [(n, p.shape) for n, p in model.named_parameters()]
            [('0.weight', gradviz.Size([3, 2])), ('0.bias', gradviz.Size([3]))]
            >>> model[0].weight.name
            '0.weight'
        """
        name_them = recurse and prefix == "" and not self.__dict__.get("_gv_is_child", False)
        for name, p in self._named_members(lambda m: m._parameters.items(), prefix, recurse,
                                           remove_duplicate):
            if name_them:
                set_auto_name(p, name)
            yield name, p

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """Every parameter (what an optimizer takes).

        Example:
            >>> from gradviz import nn
            >>> sum(p.numel() for p in nn.Linear(2, 3).parameters())
            9
        """
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        """Every buffer with its qualified name.

        Example:
            >>> import gradviz
            >>> from gradviz import nn
            >>> m = nn.Module(); m.register_buffer("mean", gradviz.zeros(2))
            >>> [n for n, _ in m.named_buffers()]
            ['mean']
        """
        yield from self._named_members(lambda m: m._buffers.items(), prefix, recurse,
                                       remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        """Every buffer.

        Example:
            >>> from gradviz import nn
            >>> list(nn.Linear(1, 1).buffers())
            []
        """
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    # -- modes and bulk operations ---------------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        """Set training mode (affects e.g. ``Dropout``) on this module and all below it.

        Example:
            >>> from gradviz import nn
            >>> m = nn.Sequential(nn.Dropout()); m.train(False)[0].training
            False
        """
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        object.__setattr__(self, "training", mode)
        for module in self.modules():
            if module is self:
                continue
            if type(module).train is not Module.train:
                module.train(mode)  # a subclass's own train() is honoured, as in PyTorch
            else:
                object.__setattr__(module, "training", mode)
        return self

    def eval(self) -> Module:
        """Evaluation mode: ``train(False)``.

        Example:
            >>> from gradviz import nn
            >>> nn.Dropout().eval().training
            False
        """
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Set ``requires_grad`` on every parameter (e.g. ``False`` to freeze the module).

        Example:
            >>> from gradviz import nn
            >>> m = nn.Linear(2, 2).requires_grad_(False); m.weight.requires_grad
            False
        """
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all parameters: to ``None`` (default) or to zeros.

        Example:
            >>> import gradviz
            >>> from gradviz import nn
            >>> m = nn.Linear(2, 1); m(gradviz.ones(1, 2)).sum().backward()
            >>> m.zero_grad(); m.weight.grad is None
            True
        """
        for p in self.parameters():
            reset_grad(p, set_to_none)

    def apply(self, fn: Callable[[Module], None]) -> Module:
        """Call ``fn`` on every submodule (children first) and then on this module.

        Example:
            >>> from gradviz import nn
            >>> seen = []
            >>> model = nn.Sequential(nn.ReLU(), nn.Tanh())
            >>> _ = model.apply(lambda m: seen.append(type(m).__name__))
            >>> seen
            ['ReLU', 'Tanh', 'Sequential']
        """
        # Visit parent before its children (last child first), then reverse: children before
        # parents, siblings in order -- PyTorch's recursive post-order, without recursion.
        order: list[Module] = []
        stack: list[Module] = [self]
        while stack:
            module = stack.pop()
            order.append(module)
            stack.extend(module.children())
        for module in reversed(order):
            fn(module)
        return self

    def _apply_dtype(self, np_dtype: np.dtype) -> Module:
        for module in self.modules():
            for registry in (module._parameters, module._buffers):
                for t in registry.values():
                    if t is None or t._data.dtype.kind != "f":
                        continue
                    t._data = t._data.astype(np_dtype)
                    if t.grad is not None:
                        t.grad._data = t.grad._data.astype(np_dtype)
        return self

    def to(self, *args: Any, **kwargs: Any) -> Module:
        """Cast floating point parameters and buffers to a dtype, in place; ``'cpu'`` is
        accepted and changes nothing, ``'meta'`` drops their values (new parameters of the
        same shapes and dtypes on the meta device, NOTE [meta device] in gradviz/_device.py).

        Example:
            >>> import gradviz
            >>> from gradviz import nn
            >>> nn.Linear(1, 1).to(gradviz.float64).weight.dtype
            gradviz.float64
            >>> nn.Linear(1, 1).to("meta").weight.device
            device(type='meta')
        """
        target = kwargs.pop("dtype", None)
        dev = kwargs.pop("device", None)
        kwargs.pop("non_blocking", None)
        if kwargs:
            raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
        for a in args:
            if isinstance(a, _dtype.dtype):
                target = a
            elif isinstance(a, (str, _device.device)):
                dev = a
        if dev is not None:
            name = str(dev).split(":")[0]
            if name not in ("cpu", "meta"):
                raise RuntimeError(f"gradviz computes on the CPU only; cannot move a module to "
                                   f"{str(dev)!r}")
            dev = _device.device(name)
        if target is not None and not target.is_floating_point:
            raise TypeError("nn.Module.to only accepts floating point or complex dtypes, but "
                            f"got desired dtype={target}")
        if dev is not None and dev.type == "cpu" and any(t.is_meta for t in self._tensors()):
            raise NotImplementedError(
                _device.NO_DATA + " Please use gradviz.nn.Module.to_empty() "
                "instead of gradviz.nn.Module.to() when moving module from meta to a different "
                "device.")
        if target is not None:
            self._apply_dtype(target.np)
        if dev is not None and dev.type == "meta":
            self._replace_tensors(lambda t: _device.meta_array(t.shape, t._data.dtype))
        return self

    def to_empty(self, *, device: Any, recurse: bool = True) -> Module:
        """Parameters and buffers replaced by new ones of the same shapes and dtypes on
        ``device``, with no values to rely on (zeros on the CPU): PyTorch's deferred
        initialisation, a module built on ``meta`` and given memory afterwards, then
        initialised (``reset_parameters()``) or loaded (``load_state_dict``).

        Args:
            device: ``"cpu"`` or ``"meta"`` (a string or a :class:`gradviz.device`).
            recurse: also the submodules' (default); only this module's when False.

        Example:
            >>> from gradviz import nn
            >>> lin = nn.Linear(3, 4, device="meta").to_empty(device="cpu")
            >>> lin.weight.device, lin.weight.shape
            (device(type='cpu'), gradviz.Size([4, 3]))
        """
        meta = _device.check_device(device, "to_empty") is _device.META
        self._replace_tensors(lambda t: (_device.meta_array(t.shape, t._data.dtype) if meta
                                         else np.zeros(t.shape, t._data.dtype)), recurse)
        return self

    def _tensors(self) -> Iterator[Tensor]:
        for module in self.modules():
            for registry in (module._parameters, module._buffers):
                yield from (t for t in registry.values() if t is not None)

    def _replace_tensors(self, make: Callable[[Tensor], np.ndarray], recurse: bool = True
                         ) -> None:
        # New tensors holding make(old) (PyTorch's _apply swaps in new parameters when the
        # device changes): a Parameter stays one, with its requires_grad; a grad is remade too.
        for module in (self.modules() if recurse else (self,)):
            for registry in (module._parameters, module._buffers):
                for name, t in registry.items():
                    if t is None:
                        continue
                    new = Tensor._make(make(t))
                    if isinstance(t, Parameter):
                        new = Parameter(new, requires_grad=t.requires_grad)
                    if t.grad is not None:
                        new.grad = Tensor._make(make(t.grad))
                    registry[name] = new

    def float(self) -> Module:
        """Cast floating point parameters and buffers to float32."""
        return self._apply_dtype(np.dtype(np.float32))

    def double(self) -> Module:
        """Cast floating point parameters and buffers to float64.

        Example:
            >>> from gradviz import nn
            >>> nn.Linear(1, 1).double().weight.dtype
            gradviz.float64
        """
        return self._apply_dtype(np.dtype(np.float64))

    def half(self) -> Module:
        """Cast floating point parameters and buffers to float16."""
        return self._apply_dtype(np.dtype(np.float16))

    def cpu(self) -> Module:
        """Return ``self``: gradviz computes on the CPU (a module with meta tensors has no
        values to bring there: PyTorch's error)."""
        if any(t.is_meta for t in self._tensors()):
            raise NotImplementedError(_device.NO_DATA)
        return self

    # -- state dict ------------------------------------------------------------------------------
    def state_dict(self, *, destination: dict | None = None, prefix: str = "",
                   keep_vars: bool = False) -> dict[str, Tensor]:
        """An ordered ``{qualified name: tensor}`` of all parameters and persistent buffers
        (detached unless ``keep_vars``; they share memory with the module).

        Example:
            >>> from gradviz import nn
            >>> list(nn.Sequential(nn.Linear(2, 1)).state_dict())
            ['0.weight', '0.bias']
        """
        if destination is None:
            destination = OrderedDict()
        for rel, module in self.named_modules(remove_duplicate=False):
            mprefix = prefix + (rel + "." if rel else "")
            for name, p in module._parameters.items():
                if p is not None:
                    destination[mprefix + name] = p if keep_vars else p.detach()
            for name, b in module._buffers.items():
                if b is not None and name not in module._non_persistent_buffers_set:
                    destination[mprefix + name] = b if keep_vars else b.detach()
        return destination

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True,
                        assign: bool = False) -> _IncompatibleKeys:
        """Copy parameters and buffers from ``state_dict`` into this module (in place, unless
        ``assign``). With ``strict`` (default) the keys must match exactly, else PyTorch's
        ``RuntimeError`` lists the missing and unexpected keys.

        Example:
            >>> from gradviz import nn
            >>> a, b = nn.Linear(2, 1), nn.Linear(2, 1)
            >>> b.load_state_dict(a.state_dict())
            <All keys matched successfully>
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing: list[str] = []
        unexpected: list[str] = []
        errors: list[str] = []
        for rel, module in self.named_modules(remove_duplicate=False):
            module._load_from_state_dict(state_dict, rel + "." if rel else "", missing,
                                         unexpected, errors, assign)
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected)))
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing)))
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(errors)))
        return _IncompatibleKeys(missing, unexpected)

    def _load_from_state_dict(self, state_dict: Mapping[str, Any], prefix: str,
                              missing_keys: list[str], unexpected_keys: list[str],
                              error_msgs: list[str], assign: bool = False) -> None:
        """Load this module's own entries (PyTorch's per-module step of ``load_state_dict``)."""
        local_state = {k: v for k, v in self._parameters.items() if v is not None}
        local_state.update((k, v) for k, v in self._buffers.items()
                           if v is not None and k not in self._non_persistent_buffers_set)
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                error_msgs.append(
                    f'While copying the parameter named "{key}", expected gradviz.Tensor or '
                    f"Tensor-like object from checkpoint but received {type(value)}")
                continue
            arr = value._data
            if param.ndim == 0 and arr.shape == (1,):  # 1-element checkpoints of scalars
                arr = arr.reshape(())
            if arr.shape != param.shape:
                error_msgs.append(
                    f"size mismatch for {key}: copying a param with shape "
                    f"{_size_text(arr.shape)} from checkpoint, the shape in current model is "
                    f"{_size_text(param.shape)}.")
                continue
            if value.is_meta and not param.is_meta and not assign:
                error_msgs.append(
                    f'While copying the parameter named "{key}", whose dimensions in the model '
                    f"are {_size_text(param.shape)} and whose dimensions in the checkpoint are "
                    f"{_size_text(value.shape)}, an exception occurred : ('Cannot copy out of "
                    "meta tensor; no data!',).")
                continue
            if param.is_meta and not value.is_meta and not assign:
                warnings.warn(f"for {key}: copying from a non-meta parameter in the checkpoint "
                              "to a meta parameter in the current model, which is a no-op. (Did "
                              "you mean to pass `assign=True` to assign items in the state "
                              "dictionary to their corresponding key in the module instead of "
                              "copying them in place?)", UserWarning, stacklevel=3)
                continue
            if assign:
                if isinstance(param, Parameter) and not isinstance(value, Parameter):
                    value = Parameter(value, requires_grad=param.requires_grad)
                elif isinstance(param, Parameter):
                    value.requires_grad_(param.requires_grad)
                setattr(self, name, value)
            else:
                _write_(param, arr)
        for key in state_dict:
            if key.startswith(prefix):
                input_name = key[len(prefix):].split(".", 1)
                if len(input_name) > 1:
                    if input_name[0] not in self._modules:
                        unexpected_keys.append(key)
                elif input_name[0] not in local_state:
                    unexpected_keys.append(key)

    # -- repr ------------------------------------------------------------------------------------
    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        """The text inside the parentheses of this module's ``repr`` (subclasses override).

        Example:
            >>> from gradviz import nn
            >>> nn.Linear(2, 3).extra_repr()
            'in_features=2, out_features=3, bias=True'
        """
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({key}): " + _addindent(repr(module), 2)
                       for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"


def _adopt(child: Module, name: str) -> None:
    """``child`` was registered as ``name`` in some module: mark it as not being a root, and
    prefix its parameters' automatic names (see NOTE [parameter names] in parameter.py)."""
    child.__dict__["_gv_is_child"] = True
    for rel, p in child._named_members(lambda m: m._parameters.items()):
        set_auto_name(p, f"{name}.{rel}")


def reset_grad(p: Tensor, set_to_none: bool) -> None:
    """What ``zero_grad`` does to one tensor: drop ``.grad``, or zero it in place (detached).

    Example:
        >>> import gradviz
        >>> w = gradviz.ones(2, requires_grad=True); (w * 3).sum().backward()
        >>> reset_grad(w, set_to_none=False); w.grad
        tensor([0., 0.])
    """
    g = p._grad  # a parameter is a leaf: its .grad without the property's non-leaf check
    if g is None:
        return
    if set_to_none:
        p._grad = None  # what the setter does with None
        return
    if g.grad_fn is not None:
        g.detach_()
    else:
        g.requires_grad_(False)
    g._data[...] = 0
    g._version_counter.version += 1


def _factory_dtype(device: Any, dtype: _dtype.dtype | None) -> _dtype.dtype:
    """The dtype for a layer's new parameters; ``device`` may only name the CPU or ``meta``
    (the layer then calls :func:`_on_device` once built)."""
    if device is not None and str(device) not in ("cpu", "meta"):
        raise RuntimeError(f"gradviz computes on the CPU only; cannot create parameters on "
                           f"{device!r}")
    if dtype is None:
        return _dtype.get_default_dtype()
    if not isinstance(dtype, _dtype.dtype):
        raise TypeError(f"dtype must be a gradviz.dtype, got {dtype!r}")
    return dtype


def _on_device(module: Module, device: Any) -> None:
    """The end of a layer's ``__init__`` given ``device``: on ``meta``, its parameters and
    buffers (made and initialised on the CPU) become meta tensors, as PyTorch's layers made
    with ``device="meta"`` (NOTE [meta device] in gradviz/_device.py)."""
    if device is not None and str(device) == "meta":
        module.to_empty(device="meta", recurse=False)
