"""The one dispatch point: every op in the derivative table runs through :func:`dispatch`.

It runs the op's NumPy forward, and when recording is on and some input requires grad it builds
the backward node: ``next_functions`` from each input's gradient edge, the saved values the
formulas ask for, and the shapes needed to undo broadcasting. Then it tells the listeners.
Custom :class:`gradviz.autograd.Function` nodes are wired with the same helpers
(``collect_next_edges``, ``set_history``) and reported with the same ``op`` event.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from gradviz import _device, _dtype
from gradviz._factories import check_out, write_out
from gradviz.autograd import graph
from gradviz.autograd.events import emit_op, unwatched, watchers
from gradviz.autograd.grad_mode import state as _state
from gradviz.autograd.graph import (
    FREED_MESSAGE,
    HOOKED_SAVES,
    NO_EDGE,
    Node,
    SavedTensor,
    SavedVariable,
    SavedVariableList,
    collect_next_edges,
    gradient_edge,
    move_retains_grad,
    next_sequence_nr,
    save_value,
    set_history,
)
from gradviz.ops import _formula
from gradviz.ops.opinfo import OPS, OpInfo, saved_for
from gradviz.tensor import Tensor, _AsGiven, _is_number, _type_name

__all__ = ["dispatch", "general_dispatch", "specialise", "dispatch_inplace", "OpNode",
           "install_generated", "save_kwarg",
           "dispatch_inplace_view", "out_variant",
           "node_source",
           "CopySlices", "AsStridedBackward0", "ViewMeta", "broadcast_message", "rebase_history",
           "rebase_message", "DEFAULT", "NO_GRAD_MODE", "MULTI_OUTPUT_NODE",
           "IN_CUSTOM_FUNCTION", "INFERENCE_MODE", "no_meta_kernel"]

_FLOAT64 = np.dtype(np.float64)
_MetaArray = _device.MetaArray
_META_SEEN = _device.META_SEEN
_new = object.__new__
# Nodes written by hand in PyTorch's C++ (not generated from derivatives.yaml): their name()
# is qualified, e.g. "torch::autograd::CopyBackwards", while the class is "CopyBackwards".
_CPP_NODES = frozenset({"CopyBackwards", "NotImplemented"})


class _Freed:
    """Marks a saved tensor released after backward."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<freed>"


FREED = _Freed()


class OpNode(Node):
    """Base of every table op's node class (``MulBackward0`` ...). The formulas are the op's."""

    __slots__ = ("_store", "_in_meta")
    _op: OpInfo  # set on each generated subclass
    _formulas: tuple  # ((saved names, formula) per input), set on each generated subclass
    _wrapped_numbers: tuple  # inputs a Python number may stand for (freed with the tensors)

    def apply(self, grad_outputs: list, create_graph: bool) -> tuple:
        grad = grad_outputs[0]
        edges = self.next_functions
        if grad is None:
            return (None,) * len(edges)
        saved = self._store
        in_meta = self._in_meta
        out = []
        i = 0
        for names, formula in self._formulas:
            if names is None or edges[i][0] is None:
                g = None
            elif create_graph:
                g = formula(grad, *[_value(self, saved, n, True) for n in names])
            else:
                g = formula(grad, *_plain_args(self, names)) if names else formula(grad)
            if in_meta is not None and in_meta[i] is not None and g is not None:
                g = _unbroadcast(g, in_meta[i])
            out.append(g)
            i += 1
        return tuple(out)

    def release_variables(self) -> bool:
        saved = self._store
        # A number operand of a tensor-tensor op (x * 3) is a wrapped-number tensor in PyTorch,
        # saved and freed like any tensor; Scalar arguments (x ** 3's exponent, alpha) are kept.
        wrapped = self._wrapped_numbers
        freed = False
        for name, value in saved.items():
            t = type(value)
            if t is SavedVariable or t is SavedVariableList or (name in wrapped and (
                    t is float or t is int or (value is not FREED and _is_number(value)))):
                saved[name] = FREED
                freed = True
        return freed

    def _inspect_saved(self) -> list[tuple[str, Any]]:
        store = getattr(self, "_store", None)
        if store is None:  # still being built: a saved-tensor pack hook is looking at its output
            return []
        # Integers as PyTorch shows them (NOTE [saved as given]): a trace of gradviz's engine
        # then holds what one of real PyTorch holds (ignore_index=-100 as 18446744073709551516).
        return [(n, store[n].tensors() if type(store[n]) is SavedVariableList
                 else store[n] if type(store[n]) is SavedVariable
                 else _as_pytorch_shows(n, store[n]))
                for n in self._op.saved_names if n in store]

    def run(self, grad_outputs: list, create_graph: bool, observer: Any) -> tuple:
        """``Node.run``. Once saved-tensor hooks were ever used, values packed by a hook are
        unpacked once per call, all of them first, in the order they were saved, as PyTorch's
        nodes unpack them; until then that costs one test (NOTE [perf])."""
        if HOOKED_SAVES[0]:
            store = self._store
            if any(type(v) is SavedVariable and v.data is None for v in store.values()):
                self._store = {n: (v.unpack(self) if create_graph else v.unpack_data(self))
                               if type(v) is SavedVariable and v.data is None else v
                               for n, v in store.items()}
                try:
                    grad_inputs = self.apply(grad_outputs, create_graph)
                finally:
                    self._store = store
            else:
                grad_inputs = self.apply(grad_outputs, create_graph)
        else:
            grad_inputs = self.apply(grad_outputs, create_graph)
        extra = self._extra
        if extra is not None and extra.on_meta:
            grad_inputs = graph.meta_gradients(grad_inputs)
        observer.execute(self, grad_outputs, grad_inputs)
        return grad_inputs

    def __dir__(self) -> list[str]:
        # `_raw_saved_<arg>` only for keyword arguments that are tensors (see its property).
        return [a for a in super().__dir__() if not a.startswith("_raw_saved_")
                or hasattr(self, a)]


def _plain_args(node: OpNode, names: tuple) -> list:
    """The saved values a formula asks for, as arrays (a plain backward)."""
    saved = node._store
    args = []
    for n in names:
        v = saved[n]
        if type(v) is SavedVariable:
            data = v.data
            if data is None or v._counter.version != v.version or (
                    v._was_non_leaf and v._tensor._grad_fn is None):
                # packed by a hook, modified in place or detached in place (the last two raise)
                data = v.unpack_data(node)
            v = data
        elif v is FREED:
            raise RuntimeError(FREED_MESSAGE)
        elif type(v) is SavedVariableList:
            v = v.unpack(node)
        args.append(v)
    return args


def _unbroadcast(grad: Any, meta: tuple) -> Any:
    """The gradient of a broadcast input: summed back to its shape, cast to its dtype."""
    shape, dt = meta
    if type(grad) is np.ndarray and len(shape) == 1 and grad.ndim == 2 and \
            grad.shape[1] == shape[0]:
        # NOTE [perf]: a bias's gradient (F.linear's addmm, `h + b`): the rows summed in one
        # ufunc reduce, the sum sum_to computes (~1.7 us less per call)
        out = _ADD_REDUCE(grad, 0)
        return out if out.dtype == dt else out.astype(dt)
    return _formula.to_dtype(_formula.sum_to(grad, shape), dt)


_ADD_REDUCE = np.add.reduce


def node_source(op: OpInfo) -> str:
    """The generated source of ``op``'s node methods (``apply``, ``release_variables``), as
    scripts/gen_fastpath.py writes it into gradviz/ops/generated/ (with the row's name first).

    Example:
        >>> from gradviz.ops import OPS
        >>> print(node_source(OPS["exp"]).splitlines()[0])
        def apply(_g_node, grad_outputs, create_graph):
    """
    from gradviz.ops import fastpath  # the code writer: not needed to run the generated code

    return fastpath.node_source(op)[0]


def _unpack_rare(node: OpNode, v: Any) -> Any:
    """A saved value that is freed (an error) or a list of tensors, for a generated apply."""
    if v is FREED:
        raise RuntimeError(FREED_MESSAGE)
    return v.unpack(node)


def _value(node: Node, saved: dict, name: str, create_graph: bool) -> Any:
    """A saved value for a formula: an array in a plain backward, a tensor under create_graph."""
    v = saved[name]
    if type(v) is SavedVariable:
        return v.unpack(node) if create_graph else v.unpack_data(node)
    if v is FREED:
        raise RuntimeError(FREED_MESSAGE)
    if type(v) is SavedVariableList:
        return v.unpack(node)
    return v


_UINT64 = 2 ** 64
# Saved arguments PyTorch declares as integers (int64_t, SymInt and lists of them), whose
# negative values its ``_saved_*`` reads back as unsigned; a Scalar argument (``alpha``,
# ``min``, ``negative_slope``, ``correction`` ...) reads back signed.
_INTEGER_ARGS = frozenset((
    "dim", "dims", "dim0", "dim1", "dim2", "dimension", "index", "start", "end", "step",
    "offset", "diagonal", "shifts", "pad", "padding", "stride", "dilation", "output_padding",
    "kernel_size", "groups", "repeats", "size", "sizes", "split_size", "split_sizes", "chunks",
    "ignore_index", "k", "output_size", "source", "destination"))


def _as_pytorch_shows(name: str, v: Any) -> Any:
    """A saved argument as PyTorch's ``_saved_<name>`` shows it: an integer as the caller wrote
    it (NOTE [saved as given] in gradviz/tensor.py), and a negative integer argument read as the
    unsigned 64-bit number it is stored as (``-1`` is ``18446744073709551615``).

    Example:
        >>> _as_pytorch_shows("dim", (-1, 0)), _as_pytorch_shows("alpha", -2)
        ((18446744073709551615, 0), -2)
    """
    integer = name in _INTEGER_ARGS
    if type(v) is tuple:
        return tuple(_shown_int(x, integer) for x in v)
    return _shown_int(v, integer)


def _shown_int(v: Any, integer: bool) -> Any:
    if type(v) is _AsGiven:
        v = v.given
    if integer and type(v) is int and v < 0:
        return v + _UINT64
    return v


def _saved_property(name: str) -> property:
    def get(self: OpNode) -> Any:
        if name not in self._store:
            # Not needed by this graph's gradients: PyTorch reports an unset tensor as None and
            # unset strides (an optional list) as ().
            return () if name.endswith("_sym_strides") else None
        v = self._store[name]
        if v is FREED:
            raise RuntimeError(FREED_MESSAGE)
        if type(v) is SavedVariable or type(v) is SavedVariableList:
            return v.unpack(self)
        if _is_number(v) and name in self._op.inputs:
            return Tensor._make(np.asarray(v))  # PyTorch wraps a scalar operand in a tensor
        return _as_pytorch_shows(name, v)

    get.__name__ = f"_saved_{name}"
    return property(get, doc=f"The value saved for backward as ``{name}``.")


def _raw_saved_property(name: str) -> property:
    def get(self: OpNode) -> SavedTensor | tuple[SavedTensor, ...]:
        v = self._store.get(name)
        if type(v) is SavedVariableList:
            # A saved list (IndexBackward0's indices): one handle per entry, None ones too.
            return tuple(SavedTensor(s, self) for s in v)
        if name in self._op.attr_names and type(v) is not SavedVariable and v is not FREED:
            # A keyword argument that is not a tensor (a dim) has no _raw_saved_, as in torch.
            raise AttributeError(f"'{type(self).__name__}' object has no attribute "
                                 f"'_raw_saved_{name}'")
        return SavedTensor(v, self)

    get.__name__ = f"_raw_saved_{name}"
    return property(get, doc=f"The saved tensor ``{name}`` as a ``SavedTensor`` (to give it "
                             "pack and unpack hooks).")


def _node_class(op: OpInfo) -> type:
    cls = op.node_cls
    if cls is None:
        ns: dict[str, Any] = {"__slots__": (), "_op": op, "__module__": "gradviz.autograd.nodes",
                              "__doc__": f"Backward of ``{op.name}`` (PyTorch's {op.node})."}
        if op.node in _CPP_NODES:
            ns["name"] = lambda self, _n=f"torch::autograd::{op.node}": _n
        for name in op.saved_names:
            if name not in op.hidden:
                ns[f"_saved_{name}"] = _saved_property(name)
                if (name in op.inputs or name == "result" or name in op.outputs
                        or name in op.attr_names):  # a keyword argument may be a tensor
                    ns[f"_raw_saved_{name}"] = _raw_saved_property(name)
        # Each input's formula and the saved names it reads, in input order (apply's loop).
        ns["_formulas"] = tuple((names, op.grads.get(inp))
                                for names, inp in zip(op.needs, op.inputs))
        ns["_wrapped_numbers"] = op.inputs if op.broadcasts else ()
        # A row with generated methods gets them from gradviz/ops/generated/ when the op layer
        # is imported (NOTE [generated fast paths]); with GRADVIZ_FAST=0 it keeps these.
        base = _GeneralOpNode if op.general else OpNode
        cls = op.node_cls = type(op.node, (base,), ns)
    return cls


def _save(op: OpInfo, name: str, args: tuple, arrays: list, kwargs: dict, result: Tensor) -> Any:
    if name == "result":
        return SavedVariable(result, is_output=True)
    inputs = op.inputs
    if name in inputs:
        a = args[inputs.index(name)]
        return SavedVariable(a) if isinstance(a, Tensor) else a
    if name.endswith("_sym_sizes"):
        return tuple(np.shape(arrays[inputs.index(name[:-10])]))
    if name.endswith("_sym_strides"):  # in elements, as PyTorch counts them
        a = arrays[inputs.index(name[:-12])]
        return tuple(st // a.itemsize for st in a.strides)
    if name.endswith("_sym_numel"):
        return int(np.size(arrays[inputs.index(name[:-10])]))
    if name.endswith("_dtype"):
        return arrays[inputs.index(name[:-6])].dtype
    if name.endswith("_sym_sizes_opt"):  # an optional input's shape; PyTorch shows (0,) if None
        a = arrays[inputs.index(name[:-14])]
        return (0,) if a is None else tuple(np.shape(a))
    if "_sym_argsize_" in name:  # one dimension's size (embedding's weight_sym_argsize_0)
        inp, k = name.rsplit("_sym_argsize_", 1)
        # ..._sym_argsize_minus_1 counts from the end (adaptive_avg_pool2d_backward's)
        dim = -int(k[6:]) if k.startswith("minus_") else int(k)
        return int(np.shape(arrays[inputs.index(inp)])[dim])
    if name.endswith("_args_sizes"):  # a list input's shapes (cat's tensors_args_sizes)
        return tuple(np.shape(a) for a in arrays)
    v = kwargs[name] if name in kwargs else op.defaults[name]
    # A tensor argument that gets no edge (nll_loss's target, masked_fill's mask) is saved
    # like any tensor: version-checked, and handed to formulas as an array or a tensor.
    return save_value(v)


# NOTE [perf]: a node's `_out_meta` (its output's shape and dtype) is one shared tuple per
# shape and dtype: a large graph then holds two fewer objects per node for the cyclic garbage
# collector to walk over and over while the graph grows (it walks every tuple holding a dtype).
_OUT_META: dict[tuple, tuple] = {}


def _out_meta(key: tuple) -> tuple:
    if len(_OUT_META) >= 4096:  # bounded: a program with ever-new shapes does not grow it
        _OUT_META.clear()
    meta = _OUT_META[key] = (key,)
    return meta


# How _record gets each saved value (see _save_plan).
_FROM_INPUT, _FROM_KWARG, _FROM_RESULT, _SIZES_OF, _DERIVED = range(5)


def _save_plan(op: OpInfo, bits: int) -> tuple[tuple[str, int, Any], ...]:
    """What to save when the inputs flagged in ``bits`` (bit i: input i) need gradients.

    NOTE [perf]: which values an op saves, and where each comes from, depend only on which
    inputs need a gradient, so they are worked out once per op and mask rather than per call.
    An output is named by its index (``result`` is output 0 of a one-output row); a keyword
    attribute may have no default (nll_loss's target is always passed).
    """
    plan = []
    for n in saved_for(op, bits):
        if op.variadic:
            plan.append((n, _DERIVED, None))  # a list's tensors: _save_general
        elif n in op.outputs:
            plan.append((n, _FROM_RESULT, op.outputs.index(n)))
        elif n in op.inputs:
            plan.append((n, _FROM_INPUT, op.inputs.index(n)))
        elif n == "result" and not op.multi:
            plan.append((n, _FROM_RESULT, 0))
        elif n in op.attr_names:
            plan.append((n, _FROM_KWARG, op.defaults.get(n, _NO_DEFAULT)))
        elif n.endswith("_sym_sizes") and n[:-10] in op.inputs:
            plan.append((n, _SIZES_OF, op.inputs.index(n[:-10])))
        else:  # other sizes, dtypes ... of the inputs
            plan.append((n, _DERIVED, None))
    op.save_plans[bits] = result = tuple(plan)
    return result


_NO_DEFAULT = object()  # a kwarg-saved attribute without a default in the row


def _edge_bits(edges: tuple) -> int:
    """Bit i set when input i has an edge (needs a gradient): the key of an op's save plans."""
    bits = 0
    for i, e in enumerate(edges):
        if e[0] is not None:
            bits |= 1 << i
    return bits


# NOTE [one way to record a node]
# `_record` is the one function that records a table row's node: for the general dispatch of
# one-output and multi-output rows, in-place writes (dispatch_inplace, the in-place views),
# CopySlices' wrapped node and a view's regenerated history. It builds the node (Node.__init__'s
# body, inlined: NOTE [perf]), wires `next_functions`, makes it its outputs' grad_fn
# (set_history, inlined), saves what the formulas of the inputs needing a gradient ask for (one
# plan per op and mask, `_save_plan`) and keeps the shapes that undo broadcasting. The generated
# fast paths (gradviz/ops/generated/) spell the same steps out in line for the calls they take,
# resolved per row, rather than call it: calling it would give back the time the fast paths
# exist to save (the argument tuple, the plan loop). What they write is kept equal to what
# `_record` makes by tests/test_fastpath_rows.py, for every row with samples.
def _record(op: OpInfo, result: Tensor, args: tuple, arrays: list, kwargs: dict,
            edges: tuple, results: tuple | None = None) -> Node:
    """Make ``op``'s node the ``grad_fn`` of ``result``, its inputs' ``edges`` its
    ``next_functions`` (NOTE [one way to record a node]). A multi-output or variadic row
    passes all its outputs as ``results``; ``result`` is then the tuple of the differentiable
    ones, which get output numbers 0, 1 ... in that order."""
    # NOTE [perf]: Node.__init__'s body, inlined: this runs once per recorded op.
    node = _new(op.node_cls or _node_class(op))
    node.next_functions = edges
    node._seq = next_sequence_nr()
    node._extra = None
    if results is None:
        out = result._data
        key = (out.shape, out.dtype)
        node._out_meta = _OUT_META.get(key) or _out_meta(key)
        result._grad_fn = node  # set_history for the single output, inlined
        result._output_nr = 0
        result._requires_grad = True
        results = (result,)
        bits = _edge_bits(edges)
    else:
        node._out_meta = tuple([(r._data.shape, r._data.dtype) for r in result])
        for i, r in enumerate(result):
            r._grad_fn = node
            r._output_nr = i
            r._requires_grad = True
        bits = 1 if op.variadic else _edge_bits(edges)  # a variadic op: one formula, one list
    plan = op.save_plans.get(bits)
    if plan is None:
        plan = _save_plan(op, bits)
    store = {}
    for name, kind, where in plan:
        if kind == _FROM_INPUT:
            v = args[where]
            store[name] = SavedVariable(v) if isinstance(v, Tensor) else v
        elif kind == _FROM_KWARG:
            # A tensor argument that gets no edge (nll_loss's target, masked_fill's mask) is
            # saved like any tensor: version-checked, handed to formulas as an array or a tensor.
            if where is _NO_DEFAULT or op.general:  # (no default: the call passes it)
                store[name] = save_value(kwargs[name] if name in kwargs else op.defaults[name])
            else:
                v = kwargs.get(name, where)
                store[name] = SavedVariable(v) if isinstance(v, Tensor) else (
                    save_value(v) if type(v) is tuple else v)
        elif kind == _FROM_RESULT:  # an output: saved without the tensor if differentiable
            store[name] = SavedVariable(results[where],
                                        is_output=where not in op.nondiff_outputs)
        elif kind == _SIZES_OF:
            store[name] = np.shape(arrays[where])
        else:
            store[name] = _save_general(op, name, args, arrays, kwargs, results)
    node._store = store
    in_meta = None
    if op.general:  # (no broadcast input: nothing to undo)
        node._in_meta = None
        return node
    for i in op.broadcast_idx:
        a = arrays[i]
        # NOTE [perf]: a broadcast input with the output's ndim and (non-zero) size has its
        # shape, which integer comparisons tell faster than comparing the shape tuples.
        if edges[i][0] is not None and (
                a.ndim != out.ndim or a.size != out.size or (not a.size and a.shape != out.shape)
                or (a.dtype is not out.dtype and a.dtype != out.dtype)):
            if in_meta is None:
                in_meta = [None] * len(arrays)
            in_meta[i] = (a.shape, a.dtype)
    node._in_meta = in_meta
    return node


def _arrays(op: OpInfo, args: tuple) -> tuple[list, bool]:
    """The NumPy value of each argument, and whether any argument requires grad.

    NOTE [perf]: every op comes through here; the common argument types (tensors, floats,
    ints) are tested first and in line, anything else in _plain_value.
    """
    arrays = []
    requires = False
    for a in args:
        t = type(a)
        if t is Tensor or (t is not float and t is not int and isinstance(a, Tensor)):
            arrays.append(a._data)
            if a._requires_grad:
                requires = True
        elif t is float or t is int:
            arrays.append(a)
        else:
            arrays.append(_plain_value(op, a))
    return arrays, requires


def _plain_value(op: OpInfo, a: Any) -> Any:
    if _is_number(a):
        return a
    if a is None:  # an optional tensor input left out (layer_norm's weight): no edge
        return None
    raise TypeError(f"{op.name}(): expected a Tensor or a number, got {type(a).__name__}")


# Type categories, for PyTorch's promotion across ranks (_ranked_operands).
_CATEGORY = {"b": 0, "i": 1, "u": 1, "f": 2, "c": 3}


def _ranked_operands(arrays: list) -> list:
    """``arrays`` cast as PyTorch's type promotion would compute them, where 0-dim tensors meet
    tensors with dimensions: the 0-dim ones count only when their category (bool < integer <
    floating) is higher, as numbers do. ``float32_vector * float64_0dim`` is float32, and
    ``int32_vector * float64_0dim`` float64. NumPy promotes a 0-dim array like any other.

    Example:
        >>> [a.dtype.name for a in _ranked_operands([np.ones(2, np.float32), np.array(2.0)])]
        ['float32', 'float32']
    """
    dims = [a for a in arrays if type(a) is np.ndarray and a.ndim]
    zeros = [a for a in arrays if type(a) is np.ndarray and not a.ndim]
    if not dims or not zeros:
        return arrays
    target = np.result_type(*dims)
    higher = np.result_type(*zeros)
    if _CATEGORY.get(higher.kind, 0) > _CATEGORY.get(target.kind, 0):
        target = higher  # an integer vector times a float 0-dim tensor: that float type
    return [a.astype(target) if type(a) is np.ndarray and a.dtype != target else a
            for a in arrays]


def _forward(op: OpInfo, arrays: list, kwargs: dict) -> np.ndarray:
    if op.broadcasts is True and len(arrays) > 1:
        for a in arrays:  # a 0-dim tensor among them: PyTorch ranks it below the others
            if type(a) is np.ndarray and not a.ndim:
                arrays = _ranked_operands(arrays)
                break
    try:
        if op.quiet:
            with np.errstate(all="ignore"):
                out = op.forward(*arrays, **kwargs)
        else:
            out = op.forward(*arrays, **kwargs)
    except ValueError as e:
        # Comparisons broadcast too, with no node to undo it: NumPy's text says so.
        if op.broadcasts or "could not be broadcast" in str(e):
            raise RuntimeError(_broadcast_message(op, arrays)) from None
        raise RuntimeError(f"{op.name}(): {e}") from None
    if type(out) is not np.ndarray:
        out = np.asarray(out)
    # NOTE: test ndarray-ness, not getattr(a, "dtype", None): np.dtype(None) is float64, so a
    # Python scalar operand would compare equal to float64 and `int_tensor * 2.5` stay float64.
    if op.promotes and out.dtype == _FLOAT64:
        for a in arrays:
            if type(a) is np.ndarray and a.dtype == _FLOAT64:
                break
        else:
            # PyTorch: integer tensors combined with Python floats (or divided) give the
            # default float type; NumPy would give float64.
            out = out.astype(_dtype.get_default_dtype().np)
    return out


def dispatch(op: OpInfo, *args: Any, **kwargs: Any) -> Tensor:
    """Run ``op`` on ``args`` (tensors or numbers) and record its node when needed.

    Calls of the common shapes take the row's fast path (NOTE [fast paths] in
    :mod:`gradviz.ops.fastpath`); the others, and every row without one, the general path.

    Example:
        >>> import gradviz
        >>> from gradviz.ops.derivatives import OPS
        >>> x = gradviz.ones(2, requires_grad=True)
        >>> dispatch(OPS["mul"], x, 3).grad_fn
        <MulBackward0 object at ...>
    """
    fast = op.fast
    if fast is not None:
        return fast(*args, **kwargs)
    return general_dispatch(op, *args, **kwargs)


def specialise(op: OpInfo) -> None:
    """Give ``op`` its node class (its fast path, if it has one, is installed from the checked-in
    gradviz/ops/generated/ when the op layer is imported: a row added later takes the plain
    path)."""
    if op.node is not None:
        _node_class(op)


def install_generated(fast: dict[str, Callable[..., Tensor]],
                      node_methods: dict[str, tuple[Callable[..., Any], Any]]) -> None:
    """Install checked-in generated code (gradviz/ops/generated/): ``fast`` maps a row's name
    to its fast path (``op.fast``), ``node_methods`` to its node class's ``apply`` and
    ``release_variables`` (None: the class keeps ``OpNode.release_variables``)."""
    for name, fn in fast.items():
        OPS[name].fast = fn
    for name, (apply, release) in node_methods.items():
        cls = _node_class(OPS[name])
        cls.apply = apply
        if release is not None:
            cls.release_variables = release


def save_kwarg(kwargs: dict, name: str, op: OpInfo) -> Any:
    """A forward keyword argument saved by a generated fast path: a tensor one (where's
    condition) as a saved tensor, a tuple as ``save_value`` keeps it."""
    v = kwargs[name] if name in kwargs else op.defaults[name]
    return SavedVariable(v) if isinstance(v, Tensor) else (
        save_value(v) if type(v) is tuple else v)


def general_dispatch(op: OpInfo, *args: Any, **kwargs: Any) -> Tensor:
    """:func:`dispatch` for any call: tensors and numbers, broadcasting, promotion, views."""
    if _META_SEEN[0] and _meta_inputs(args, kwargs):  # NOTE [meta device: ops]
        return _on_meta(general_dispatch, op, args, kwargs, False)
    if op.general:  # several outputs or a list of inputs: see NOTE [multi-output and variadic]
        return _dispatch_general(op, args, kwargs)
    arrays, requires = _arrays(op, args)
    out = _forward(op, arrays, kwargs)
    result = Tensor._make(out)
    if op.view:
        _make_view(result, args[0], op, kwargs)
    node = None
    # Only floating point results can carry gradients (a cast to int ends the graph).
    if requires and _state.enabled and op.node is not None and out.dtype.kind == "f":
        node = _record(op, result, args, arrays, kwargs, collect_next_edges(args))
    if watchers:
        emit_op(op.name, node, args, (result,), kwargs, False)
    return result


def dispatch_inplace(op: OpInfo, self: Tensor, *others: Any, **kwargs: Any) -> Tensor:
    """Run ``op`` writing into ``self``: bump its version, and make the op's node its
    ``grad_fn`` when recording (its old ``grad_fn`` becomes the node's first edge)."""
    if _META_SEEN[0] and _meta_inputs((self, *others), kwargs):  # NOTE [meta device: ops]
        return _on_meta(dispatch_inplace, op, (self, *others), kwargs, True)
    recording = _state.enabled
    args = (self, *others)
    arrays, requires = _arrays(op, args)
    record = recording and requires and op.node is not None
    base = self._base
    # A view requires grad when its base does, also one taken before the base did (torch's
    # view of a leaf that later requires grad): the checks apply to it too.
    if recording and (requires or base is not None and base._requires_grad):
        _check_inplace(self)
    out = _forward(op, arrays, kwargs)
    if out.shape != self._data.shape:
        raise RuntimeError(f"output with shape {list(self._data.shape)} doesn't match the "
                           f"broadcast shape {list(out.shape)}")
    if 0 in self._data.strides and op.name not in _OVERLAP_OK and _has_internal_overlap(self):
        raise RuntimeError(_OVERLAP_MESSAGE + f" ({_inplace_name(op)} on an expanded tensor of "
                           f"shape {list(self.shape)})")
    original = self
    if record and "self" in op.saved_names:
        # Formulas see `self` as it was before the write: keep a snapshot of it.
        original = Tensor._make(self._data.copy(), self._requires_grad)
        original._grad_fn, original._output_nr = self._grad_fn, self._output_nr
    edges = collect_next_edges(args) if record else ()
    try:
        np.copyto(self._data, out, casting="same_kind")
    except TypeError:
        raise RuntimeError(
            f"result type {_type_name(out.dtype)[8:-6]} can't be cast to the desired output "
            f"type {_type_name(self._data.dtype)[8:-6]}") from None
    except ValueError:  # a read-only NumPy view: an expanded tensor
        raise RuntimeError(_OVERLAP_MESSAGE + f" ({_inplace_name(op)} on an expanded tensor of "
                           f"shape {list(self.shape)})") from None
    _bump_version(self, op, record)
    node = None
    if record:
        if base is None:
            old = self._grad_fn
            node = _record(op, self, (original, *others), arrays, kwargs, edges)
            move_retains_grad(self, old)
        else:
            node = _copy_slices(op, self, base, (original, *others), arrays, kwargs, edges)
    if watchers:
        emit_op(op.name + "_" if not op.name.endswith("_") else op.name, node, args, (self,),
                kwargs, True)
    return self



def dispatch_inplace_view(op: OpInfo, view_op: OpInfo, self: Tensor, **kwargs: Any) -> Tensor:
    """Run ``op``, the in-place form of the view op ``view_op``, on ``self`` (``unsqueeze_``,
    ``squeeze_``, ``transpose_``, ``t_``): ``self`` takes the view's shape and strides over the
    same memory, its version is bumped, and when recording the op's node becomes its
    ``grad_fn`` (the old ``grad_fn`` is the node's edge). No element is written, so a view's
    base keeps its own ``grad_fn``, as in PyTorch; the view's recipe gains ``view_op``.

    Example:
        >>> import gradviz
        >>> from gradviz.ops import OPS
        >>> y = gradviz.ones(2, requires_grad=True) * 1
        >>> out = dispatch_inplace_view(OPS["unsqueeze_"], OPS["unsqueeze"], y, dim=0)
        >>> out is y, y.shape, y.grad_fn.name(), y._version
        (True, gradviz.Size([1, 2]), 'UnsqueezeBackward1', 1)
    """
    if _META_SEEN[0] and _meta_inputs((self,), kwargs):  # NOTE [meta device: ops]
        return _on_meta(lambda o, s, **kw: _inplace_view(o, view_op, s, **kw), op,
                        (self,), kwargs, False)
    return _inplace_view(op, view_op, self, **kwargs)


def _bump_version(t: Tensor, op: OpInfo, record: bool) -> Any:
    """An in-place write's version bump (values saved before it are refused by backward), and
    the op that made it, for that error's text; returns ``t``'s version counter."""
    counter = t._version_counter
    counter.version += 1
    counter.last_op = op.node if record else None
    return counter


def _inplace_view(op: OpInfo, view_op: OpInfo, self: Tensor, **kwargs: Any) -> Tensor:
    """:func:`dispatch_inplace_view` on a CPU tensor (a meta one was shown as one)."""
    recording = _state.enabled
    arrays, requires = _arrays(op, (self,))
    record = recording and requires and op.node is not None
    if recording and requires:
        _check_inplace(self)
    out = _forward(op, arrays, kwargs)
    edges = collect_next_edges((self,)) if record else ()
    old = self._grad_fn
    self._data = out  # the same memory, seen with the new shape
    counter = _bump_version(self, op, record)
    node = None
    if record:
        node = _record(op, self, (self,), arrays, kwargs, edges)
        move_retains_grad(self, old)
    meta = self._view_meta
    if meta is not None:  # a view stays one, one view op further from its base
        self._view_meta = ViewMeta(meta, view_op, kwargs, meta.known,
                                   counter.version if record else meta.version,
                                   meta.creation_meta)
    if watchers:
        emit_op(op.name, node, (self,), (self,), kwargs, True)
    return self


# NOTE [meta device: ops]
# A meta tensor (NOTE [meta device] in gradviz/_device.py) takes the ordinary path: the general
# dispatch, the kernels, the node and its saved values are the CPU's, so the shapes, dtypes and
# grad_fn names are too, and no op has code of its own for it. The one test is at the top of the
# general entry points (a row's fast path sends a call with a non-plain array there): until a
# meta tensor was ever made it is one truth test, then a look at the arguments. `_on_meta` checks
# the devices (PyTorch's error when a CPU tensor with dimensions meets a meta one; a 0-dim CPU
# tensor goes with any device, as in PyTorch), lets each meta input show a plain read-only array
# of its shape and dtype (all strides 0: no memory per element; a tensor written in place gets
# zeros it may write), runs the entry point again (the test then finds no meta input), and turns
# the outputs and those inputs back into meta arrays. NumPy warnings are silenced meanwhile:
# quotients of those zeros mean nothing.
def _meta_inputs(args: tuple, kwargs: dict) -> bool:
    for t in _tensor_args(args, kwargs):
        if type(t._data) is _MetaArray:
            return True
    return False


def _tensor_args(args: tuple, kwargs: dict) -> list[Tensor]:
    # the tensors of a call, also inside a list argument (cat's tensors)
    found = []
    for a in (*args, *kwargs.values()):
        if isinstance(a, Tensor):
            found.append(a)
        elif type(a) in (list, tuple):
            found += [x for x in a if isinstance(x, Tensor)]
    return found


# Ops whose result's shape depends on the values: PyTorch has no meta kernel for them.
_NONZERO_ON_META = (
    "The register_meta function for torch.nonzero() raises unimplemented by default, as a "
    "correct data-independent implementation does not exist. This implementation returns a "
    "fake value, assuming all elements of the tensor are non-zero. To enable this "
    "registration, please set 'torch.fx.experimental._config.meta_nonzero_assume_all_nonzero' "
    "to True.")


def no_meta_kernel(aten: str) -> str:
    """PyTorch's text for an operator without a meta kernel (``aten`` such as ``aten::equal``).

    Example:
        >>> no_meta_kernel("aten::equal")[:62]
        'aten::equal: attempted to run this operator with Meta tensors,'
    """
    return (f"{aten}: attempted to run this operator with Meta tensors, but there was no fake "
            "impl or Meta kernel registered. You may have run into this message while using an "
            "operator with PT2 compilation APIs (torch.compile/torch.export); in order to use "
            "this operator with those APIs you'll need to add a fake impl. Please see the "
            "following for next steps:  "
            "https://pytorch.org/tutorials/advanced/custom_ops_landing_page.html")


_NO_META_KERNEL = {"nonzero": _NONZERO_ON_META, "masked_select": _NONZERO_ON_META,
                   "unique": no_meta_kernel("aten::_unique2")}
# Keyword tensors that may stay on the CPU next to meta ones (index_select's index, x[idx]).
_INDEX_KWARGS = ("index", "indices")


def _on_meta(run: Callable[..., Any], op: OpInfo, args: tuple, kwargs: dict,
             inplace: bool) -> Any:
    """Run ``run(op, *args, **kwargs)`` on meta inputs (NOTE [meta device: ops])."""
    if op.name in _NO_META_KERNEL:
        raise NotImplementedError(_NO_META_KERNEL[op.name])
    if op.name == "index" and any(isinstance(i, Tensor) and i._data.dtype.kind == "b"
                                  for i in kwargs.get("indices", ())):
        raise NotImplementedError(_NONZERO_ON_META)  # x[mask]: its size is the mask's count
    if op.name == "copy_":  # copy_ moves values across devices: into meta, or nothing to copy
        if type(args[0]._data) is not _MetaArray:
            raise NotImplementedError(_device.NO_DATA)
        tensors = [args[0]]
    else:
        # In the order PyTorch's checks meet them: keyword tensors (masked_fill's mask,
        # nll_loss's target), then the inputs, addmm's matrices before its bias.
        tensors = _tensor_args(args, {})
        if 0 < len(op.broadcast_idx) < len(op.inputs):
            tensors.sort(key=lambda t: any(t is args[i] for i in op.broadcast_idx
                                           if i < len(args)))
        tensors = _tensor_args((), {k: v for k, v in kwargs.items()
                                    if k not in _INDEX_KWARGS}) + tensors
    expected = None
    for t in tensors:
        on_meta = type(t._data) is _MetaArray
        if not on_meta and not t._data.ndim:
            continue  # a CPU scalar tensor is taken with a tensor of any device, as in PyTorch
        where = "meta" if on_meta else "cpu"
        if expected is None:
            expected = where
        elif where != expected:
            raise RuntimeError(f"Tensor on device {where} is not on the expected device "
                               f"{expected}!")
    shown = {}
    for t in _tensor_args(args, kwargs):
        d = t._data
        if type(d) is _MetaArray and id(t) not in shown:
            writable = inplace and t is args[0]
            t._data = np.zeros(d.shape, d.dtype) if writable else d.view(np.ndarray)
            shown[id(t)] = (t, d, t._data)
    # The op is told to listeners (the tracer) once its tensors are meta again, never while
    # they show the stand-in zeros: the run is not watched, then reported here.
    watching = bool(watchers)
    before = args[0]._grad_fn if inplace or run is not general_dispatch else None
    try:
        with unwatched(), np.errstate(all="ignore"):
            result = run(op, *args, **kwargs)
    finally:
        for t, meta, plain in shown.values():
            now = t._data  # another array if the op wrote it or changed its shape in place
            t._data = meta if now is plain else _device.meta_array(now.shape, now.dtype)
    outputs = result if type(result) is tuple else (result,)
    for r in outputs:
        if isinstance(r, Tensor) and type(r._data) is not _MetaArray:
            r._data = _device.meta_array(r._data.shape, r._data.dtype)
    recorded = args[0]._grad_fn if run is not general_dispatch else next(
        (r._grad_fn for r in outputs if isinstance(r, Tensor) and r._grad_fn is not None), None)
    if recorded is not None and recorded is not before:
        recorded._x().on_meta = True  # its backward sends meta gradients (Node.run)
    if watching:
        node = recorded if recorded is not before else None
        if run is general_dispatch:
            emit_op(op.name, node, args, outputs, kwargs, False)
        else:  # in place: the node is self's new grad_fn, if this op recorded one
            name = op.name + "_" if inplace and not op.name.endswith("_") else op.name
            emit_op(name, node, args, (args[0],), kwargs, True)
    return result


def out_variant(fn: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """``fn`` that also takes PyTorch's ``out=`` (NOTE [out=] in gradviz/_factories.py): the
    result is written into ``out``, which is returned. What passes :func:`check_out` records
    nothing (no argument requires grad, or grad mode is off). Operators and methods call ``fn``
    itself (``_torch_raw``, gradviz/ops/_args.py).

    Example:
        >>> import gradviz
        >>> neg = out_variant(gradviz.neg)
        >>> out = gradviz.empty(2)
        >>> neg(gradviz.ones(2), out=out) is out, out
        (True, tensor([-1., -1.]))
    """
    name = fn.__name__

    @functools.wraps(fn)
    def call(*args: Any, out: Tensor | None = None, **kwargs: Any) -> Tensor:
        if out is None:
            return fn(*args, **kwargs)
        check_out(name, out, *args, *kwargs.values())
        return write_out(out, fn(*args, **kwargs)._data)

    call._torch_raw = getattr(fn, "_torch_raw", fn)  # type: ignore[attr-defined]
    sig = inspect.signature(fn)
    call.__signature__ = sig.replace(parameters=[  # type: ignore[attr-defined]
        *sig.parameters.values(), inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY,
                                                    default=None)])
    return call

_OVERLAP_MESSAGE = (
    "unsupported operation: more than one element of the written-to tensor refers to a single "
    "memory location. Please clone() the tensor before performing the operation.")
# In-place ops PyTorch lets write into an expanded tensor (every copy gets the same value).
_OVERLAP_OK = frozenset({"fill_", "zero_", "fill_tensor_"})


def _has_internal_overlap(t: Tensor) -> bool:
    """PyTorch's ``has_internal_overlap``: some memory location is several elements (a
    dimension of size > 1 with stride 0, as expand makes). An empty tensor has no location
    to share, whatever strides NumPy gave it."""
    arr = t._data
    return arr.size != 0 and any(s == 0 and n > 1 for n, s in zip(arr.shape, arr.strides))


def _inplace_name(op: OpInfo) -> str:
    return op.name if op.name.endswith("_") else op.name + "_"


def _broadcast_message(op: OpInfo, arrays: list) -> str:
    """PyTorch's text for shapes that do not broadcast, plus the op and both shapes."""
    return broadcast_message(op.name, [np.shape(a) for a in arrays])


def broadcast_message(name: str, shapes: list[tuple[int, ...]]) -> str:
    """PyTorch's text for shapes that do not broadcast, then (gradviz's addition) the op and
    the shapes.

    Example:
        >>> broadcast_message("eq", [(2, 3), (4,)])[:89]
        'The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1'
    """
    a, b = shapes[0], shapes[1] if len(shapes) > 1 else ()
    nd = max(len(a), len(b))
    for k in range(1, nd + 1):
        sa = a[-k] if k <= len(a) else 1
        sb = b[-k] if k <= len(b) else 1
        if sa != sb and sa != 1 and sb != 1:
            return (f"The size of tensor a ({sa}) must match the size of tensor b ({sb}) at "
                    f"non-singleton dimension {nd - k} ({name}: input shapes "
                    f"{[list(s) for s in shapes]} do not broadcast; reshape or unsqueeze one "
                    "operand so that each dimension matches or is 1)")
    return f"{name}: input shapes {[list(s) for s in shapes]} do not broadcast"


# ---------------------------------------------------------------------------------------------
# Ops with several outputs, or with a list of inputs
# ---------------------------------------------------------------------------------------------
# NOTE [multi-output and variadic ops]
# Most ops take a fixed number of tensors and return one: `dispatch` above handles them and
# stays lean. A few do not: `split`/`chunk`/`max(dim)`/`nll_loss`/`layer_norm` return a tuple
# (the table entry says `multi=True` and may name the outputs, so that formulas can ask for
# `indices` or `result1`), and `cat`/`stack` take a list (`variadic=True`). Those take
# `_dispatch_general`, which differs in three ways:
#
# * the node's outputs are the *differentiable* outputs (`indices` of `max(dim)` are not one,
#   as in PyTorch): each gets `output_nr` 0..n-1 and an entry in `node._out_meta`;
# * a multi-output op's formulas receive `grads`, one gradient per output, with zeros filled in
#   for outputs that received none (PyTorch materializes them the same way);
# * a variadic op's one formula returns a list: one gradient per tensor of the list, which each
#   got their own edge in `next_functions`.
#
# A multi-output row's node class gets a generated `apply` for the plain backward in which every
# output received a gradient (NOTE [generated fast paths]); the other calls come here.


class _GeneralOpNode(OpNode):
    """Node of a multi-output or variadic op (see NOTE [multi-output and variadic ops])."""

    __slots__ = ()

    def apply(self, grad_outputs: list, create_graph: bool) -> tuple:
        edges = self.next_functions
        op = self._op
        saved = self._store
        if op.multi:
            if any(g is None for g in grad_outputs):
                if all(g is None for g in grad_outputs):
                    return (None,) * len(edges)
                grad: Any = [g if g is not None else _formula.new_zeros(shape, dt, create_graph)
                             for g, (shape, dt) in zip(grad_outputs, self._out_meta,
                                                       strict=True)]
            else:  # NOTE [perf]: every output got a gradient (nll_loss's one output, usually)
                grad = list(grad_outputs)
        else:
            grad = grad_outputs[0]
            if grad is None:
                return (None,) * len(edges)
        if op.variadic:
            args = [_value(self, saved, n, create_graph) for n in op.needs[0]]
            grads = op.grads[op.inputs[0]](grad, *args)
            return tuple(g if e[0] is not None else None for g, e in zip(grads, edges, strict=True))
        out = []
        for i, names in enumerate(op.needs):
            if names is None or edges[i][0] is None:
                out.append(None)
                continue
            args = ([_value(self, saved, n, True) for n in names] if create_graph
                    else _plain_args(self, names))
            out.append(op.grads[op.inputs[i]](grad, *args))
        return tuple(out)


def _dispatch_general(op: OpInfo, args: tuple, kwargs: dict) -> Any:
    arrays, requires = _arrays(op, args)
    try:
        with np.errstate(all="ignore") if op.quiet else _NO_CONTEXT:
            out = op.forward(*arrays, **kwargs)
    except ValueError as e:
        raise RuntimeError(f"{op.name}(): {e}") from None
    make = Tensor._make
    results = tuple([make(o) for o in out]) if op.multi else (make(out),)
    if op.view:
        # The outputs of split/chunk are consecutive pieces of the input along `dim`, those of
        # unbind its slices: each is remembered as that slice or select, so that it can be
        # replayed (NOTE [in-place on views]).
        src, dim, start = args[0], kwargs["dim"], 0
        for i, r in enumerate(results):
            if op.name == "unbind":
                step: tuple = (_library_op("select"), {"dim": dim, "index": i})
            else:
                n = r._data.shape[dim]
                step = (_library_op("slice"), {"dim": dim, "start": start, "end": start + n,
                                               "step": 1})
                start += n
            _make_view(r, src, *step, creation_meta=MULTI_OUTPUT_NODE)
    node = None
    if requires and _state.enabled and op.node is not None:
        nondiff = op.nondiff_outputs
        diff = tuple([r for i, r in enumerate(results)
                      if r._data.dtype.kind == "f" and i not in nondiff])
        if diff:
            node = _record(op, diff, args, arrays, kwargs, collect_next_edges(args), results)
    if watchers:
        emit_op(op.name, node, args, results, kwargs, False)
    return results if op.multi else results[0]


def _save_general(op: OpInfo, name: str, args: tuple, arrays: list, kwargs: dict,
                  results: tuple) -> Any:
    if name in op.outputs:
        k = op.outputs.index(name)
        return SavedVariable(results[k], is_output=k not in op.nondiff_outputs)
    out, sep, k = name.partition("_sym_argsize_")
    if sep and out in op.outputs:  # an output's size (linalg_svd's S_sym_argsize_minus_1)
        dim = -int(k[6:]) if k.startswith("minus_") else int(k)
        return int(results[op.outputs.index(out)]._data.shape[dim])
    return _save(op, name, args, arrays, kwargs, results[0])


class _NoContext:
    __slots__ = ()

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


_NO_CONTEXT = _NoContext()


def _library_op(name: str) -> OpInfo:
    from gradviz.ops.derivatives import OPS

    return OPS[name]


# ---------------------------------------------------------------------------------------------
# In-place writes through views: CopySlices, and the view rebase (AsStridedBackward0)
# ---------------------------------------------------------------------------------------------
# NOTE [in-place on views]
# `v = h[0]; v.mul_(2)` changes `h` too, so `h`'s history must change: as in PyTorch, the base's
# grad_fn becomes a `CopySlices` node wrapping the in-place op's node (`MulBackward0`). Its
# backward takes the gradient of the base, runs the wrapped node on the region the view covers,
# writes the result back into that region and sends the rest on unchanged; the wrapped node's
# other inputs (the `2`, or a tensor) get their gradients directly. Every view remembers how it
# was made (`ViewMeta.chain`: the view ops and their arguments, from the base), which is what
# locates the region — PyTorch uses the view's strides (`as_strided`) instead.
#
# The view rebase: after an in-place op on the base or on any of its views, every view's
# grad_fn is out of date (it leads to the base's old history). As PyTorch, a view remembers the
# version its grad_fn was recorded at (`ViewMeta.version`), and when its grad_fn is read at
# another version it gets a new one: `AsStridedBackward0`, whose next function is the base's
# current grad_fn, with the view's geometry as PyTorch saves it (`_saved_size`, `_saved_stride`,
# `_saved_storage_offset`). Its backward is that of the view ops that made the view, run in
# reverse (the gradient lands in the view's place in a zero gradient of the base). A view's
# `retain_grad` moves to the new grad_fn; hooks registered before stay with the old one
# (PyTorch's `update_tensor_hooks_on_new_gradfn`).
#
# PyTorch refuses the rebase of views whose history could not be right (`CreationMeta`): made
# in no_grad mode, outputs of an op returning several views (split, unbind), or made inside a
# custom Function. Writing into such a view, or reading its grad_fn after its base changed,
# raises PyTorch's error (`handle_view_on_rebase`).

# How a view was created (PyTorch's CreationMeta): what its rebase is allowed to do.
DEFAULT = "DEFAULT"
NO_GRAD_MODE = "NO_GRAD_MODE"
MULTI_OUTPUT_NODE = "MULTI_OUTPUT_NODE"
IN_CUSTOM_FUNCTION = "IN_CUSTOM_FUNCTION"
INFERENCE_MODE = "INFERENCE_MODE"

_CREATION_TEXT = {
    MULTI_OUTPUT_NODE: "This view is the output of a function that returns multiple views. Such "
    "functions do not allow the output views to be modified inplace. You should replace the "
    "inplace operation by an out-of-place one.",
    NO_GRAD_MODE: "Given that this use case is ambiguous and error-prone, it is forbidden. You "
    "can clarify your code by moving both the view and the inplace either both inside the "
    "no_grad block (if you don't want the inplace to be tracked) or both outside (if you want "
    "the inplace to be tracked).",
    INFERENCE_MODE: "Given that this use case is ambiguous and error-prone, it is forbidden. You "
    "can clarify your code by moving both the view and the inplace either both inside the "
    "inference_mode block (if you don't want the inplace to be tracked) or both outside (if you "
    "want the inplace to be tracked).",
    IN_CUSTOM_FUNCTION: "This view was created inside a custom Function (or because an input was "
    "returned as-is) and the autograd logic to handle view+inplace would override the custom "
    "backward associated with the custom Function, leading to incorrect gradients. This "
    "behavior is forbidden. You can fix this by cloning the output of the custom Function.",
}
# A view made with grad mode off, in PyTorch's words: the mode, and the mode of the write.
_MODE_TEXT = {NO_GRAD_MODE: ("no_grad mode", "with grad mode enabled."),
              INFERENCE_MODE: ("inference mode", "in normal mode.")}


class ViewMeta:
    """How a view was made from its base (``Tensor._view_meta``).

    ``op``/``kwargs`` made it from ``parent`` (the meta of the view it was taken from, or None
    when it was taken from the base itself); :attr:`chain` lists the view ops from the base.
    ``version`` is the version its ``grad_fn`` was recorded at; ``creation_meta`` says how it
    was created (PyTorch's ``CreationMeta``: ``DEFAULT``, ``NO_GRAD_MODE``,
    ``MULTI_OUTPUT_NODE``, ``IN_CUSTOM_FUNCTION``).
    """

    __slots__ = ("parent", "op", "kwargs", "known", "version", "creation_meta")

    def __init__(self, parent: ViewMeta | None, op: OpInfo | None, kwargs: dict, known: bool,
                 version: int, creation_meta: str) -> None:
        self.parent = parent  # a link, not a copied list: long view chains stay O(1) per view
        self.op = op
        self.kwargs = kwargs
        self.known = known
        self.version = version
        self.creation_meta = creation_meta

    @property
    def chain(self) -> tuple | None:
        """``((op, kwargs), ...)`` rebuilding the view from its base; None when unknown."""
        if not self.known:
            return None
        steps = []
        meta: ViewMeta | None = self
        while meta is not None:
            if meta.op is not None:  # None: an alias of its parent (an input returned as-is)
                steps.append((meta.op, meta.kwargs))
            meta = meta.parent
        return tuple(reversed(steps))

    def regenerate(self, view: Tensor) -> Node | None:
        """``view``'s grad_fn after its base changed: a new ``AsStridedBackward0`` from the
        base's current history (PyTorch's refusal for views that cannot be rebased)."""
        if self.creation_meta != DEFAULT and view._base._requires_grad:
            raise RuntimeError(rebase_message(view, indirect=True))
        _regenerate(view)
        return view._grad_fn


def _short_name(node: Node) -> str:
    """How PyTorch's view errors name a node: ``UnbindBackward0`` -> ``Unbind``."""
    name = node.name()
    return name[:name.rindex("Backward")] if "Backward" in name else name


def rebase_message(view: Tensor, indirect: bool) -> str:
    """PyTorch's error for a view that may not be rebased (``handle_view_on_rebase``):
    ``indirect`` when its base or another view was written, not the view itself.

    Example:
        >>> import gradviz
        >>> piece = (gradviz.ones(4, requires_grad=True) * 1).split(2)[1]
        >>> rebase_message(piece, indirect=False)[:58]
        'Output 1 of Split is a view and is being modified inplace.'
    """
    creation = view._view_meta.creation_meta
    modified = "its base or another view of its base has been" if indirect else "is being"
    fn = view._grad_fn
    if fn is None:
        # No grad_fn: the view itself was made with grad mode off (whatever else it is).
        mode, write = _MODE_TEXT[INFERENCE_MODE if creation == INFERENCE_MODE else NO_GRAD_MODE]
        head = f"A view was created in {mode} and {modified} modified inplace {write}"
    elif creation in _MODE_TEXT:
        # A grad_fn, yet made with grad mode off: taken with it on from a view made with it off.
        mode, write = _MODE_TEXT[creation]
        head = (f"Output {view._output_nr} of {_short_name(fn)} is a view of a view which was "
                f"created in {mode} and {modified} modified inplace {write}")
    else:
        head = (f"Output {view._output_nr} of {_short_name(fn)} is a view and {modified} "
                "modified inplace.")
    return f"{head} {_CREATION_TEXT[creation]}"


def _make_view(result: Tensor, src: Tensor, op: OpInfo | None, kwargs: dict,
               creation_meta: str = DEFAULT) -> None:
    """Make ``result`` a view of ``src``'s base: shared storage, version, and the recipe.

    A view made with grad mode off requires grad when its source does (a leaf of its own until
    its base changes, as in PyTorch)."""
    parent = src._view_meta
    if not _state.enabled and creation_meta == DEFAULT:
        creation_meta = INFERENCE_MODE if _state.inference else NO_GRAD_MODE
    if src._base is None:
        result._base = src
        parent, known = None, True
    else:
        result._base = src._base
        known = parent is not None and parent.known
        if parent is not None and creation_meta == DEFAULT:
            creation_meta = parent.creation_meta  # PyTorch's propagate_creation_meta
    counter = result._version_counter = src._version_counter
    result._view_meta = ViewMeta(parent, op, kwargs, known, counter.version, creation_meta)
    if src._requires_grad and not _state.enabled and result._data.dtype.kind in "fc":
        result._requires_grad = True


class AsStridedBackward0(Node):
    """A view's grad_fn after its base (or another view of it) was modified in place (NOTE
    [in-place on views]): the view's gradient goes to its place in the base's gradient.

    Example:
        >>> import gradviz
        >>> b = gradviz.ones(2, 3, requires_grad=True) * 1
        >>> v = b[1]
        >>> _ = b.mul_(2)
        >>> v.grad_fn.name(), v.grad_fn._saved_size, v.grad_fn._saved_stride
        ('AsStridedBackward0', (3,), (1,))
    """

    __slots__ = ("_view_nodes", "_geometry")
    __module__ = "gradviz.autograd.nodes"

    def __init__(self, base_edge: Any, view_nodes: list, geometry: tuple,
                 out_meta: tuple) -> None:
        super().__init__((base_edge,), out_meta)
        self._view_nodes = view_nodes  # the view ops' nodes, from the base (their backward)
        self._geometry = geometry  # (size, stride, storage_offset), as PyTorch saves them

    @property
    def _saved_size(self) -> tuple[int, ...]:
        """The view's size."""
        return self._geometry[0]

    @property
    def _saved_stride(self) -> tuple[int, ...]:
        """The view's strides in the base's storage, in elements."""
        return self._geometry[1]

    @property
    def _saved_storage_offset(self) -> int:
        """Where the view starts in the base's storage, in elements."""
        return self._geometry[2]

    def _inspect_saved(self) -> list[tuple[str, Any]]:
        return [("size", self._geometry[0]), ("stride", self._geometry[1]),
                ("storage_offset", self._geometry[2])]

    def apply(self, grad_outputs: list, create_graph: bool) -> tuple:
        grad = grad_outputs[0]
        if grad is None:
            return (None,)
        for node in reversed(self._view_nodes):
            grad = node.apply([grad], create_graph)[0]
        return (grad,)


def _geometry(view: np.ndarray, base: np.ndarray) -> tuple:
    """``(size, stride, storage_offset)`` of ``view`` inside ``base``'s memory, in elements.

    NumPy gives a size-1 dimension any stride; PyTorch's view ops give it the extent of the
    dimension after it (as ``unsqueeze`` does), which is what is reported here."""
    item = view.itemsize
    size = tuple(int(n) for n in view.shape)
    if not np.may_share_memory(view, base):  # a copy (reshape of a non-contiguous view)
        stride = tuple(int(s) // item for s in np.empty(size, view.dtype).strides)
        return size, stride, 0
    strides = [int(s) // item for s in view.strides]
    for d in range(len(size) - 1, -1, -1):
        if size[d] == 1:
            strides[d] = size[d + 1] * strides[d + 1] if d + 1 < len(size) else 1
    offset = (view.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // item
    return size, tuple(strides), int(offset)


def _regenerate(view: Tensor) -> None:
    """Give ``view`` its ``AsStridedBackward0`` over its base's current history."""
    meta = view._view_meta
    base = view._base
    meta.version = view._version_counter.version
    chain = meta.chain
    if chain is None or base is None or not base._requires_grad:
        return
    base_edge = gradient_edge(base)
    prev, edge = base, base_edge
    nodes = []
    for op, kwargs in chain:
        arr = prev._data
        out = Tensor._make(op.forward(arr, **kwargs))
        nodes.append(_record(op, out, (prev,), [arr], kwargs, (edge,)))
        prev, edge = out, (out._grad_fn, 0)
    arr = view._data
    node = AsStridedBackward0(base_edge, nodes, _geometry(arr, base._data),
                              ((arr.shape, arr.dtype),))
    old = view._grad_fn
    view._grad_fn = node
    view._output_nr = 0
    view._requires_grad = True
    move_retains_grad(view, old)


def _check_inplace(t: Tensor) -> None:
    """PyTorch's refusals before recording an in-place op on ``t`` (``check_inplace``)."""
    meta = t._view_meta
    if meta is not None:
        if meta.creation_meta != DEFAULT:
            raise RuntimeError(rebase_message(t, indirect=False))
        base = t._base
        if base._requires_grad and base._grad_fn is None:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                               "in-place operation.")
        if not meta.known:
            raise RuntimeError(
                "in-place operation on a view whose making gradviz did not record; clone the "
                "view first, or write it out of place")
    elif t._requires_grad and t._grad_fn is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")


class CopySlices(Node):
    """The base's node after an in-place op through one of its views (see NOTE [in-place on
    views]): the wrapped node's gradient for the view is written into the view's region of the
    base's gradient.

    Example:
        >>> import gradviz
        >>> h = gradviz.ones(3, requires_grad=True) * 1
        >>> h[0].mul_(5)
        tensor(5., grad_fn=<AsStridedBackward0>)
        >>> h.grad_fn.name()
        'torch::autograd::CopySlices'
    """

    __slots__ = ("_fn", "_chain")
    __module__ = "gradviz.autograd.nodes"

    def __init__(self, base_edge: Any, fn: Node, chain: tuple, out_meta: tuple) -> None:
        super().__init__((base_edge, *fn.next_functions[1:]), out_meta)
        self._fn = fn
        self._chain = chain

    def name(self) -> str:
        return "torch::autograd::CopySlices"  # written by hand in PyTorch's C++

    def _grads_for_fn(self, region: Any) -> list:
        # The region's gradient is the wrapped node's first; a custom Function with several
        # outputs gets None for the others.
        return [region] + [None] * (self._fn.num_outputs - 1)

    def apply(self, grad_outputs: list, create_graph: bool) -> tuple:
        grad = grad_outputs[0]
        if grad is None:
            return (None,) * len(self.next_functions)
        if create_graph:
            result = grad.clone()
            region = result
            for op, kwargs in self._chain:
                region = dispatch(op, region, **kwargs)
            res = self._fn.apply(self._grads_for_fn(region.clone()), True)
            if res[0] is None:
                region.zero_()
            else:
                region.copy_(res[0])
        else:
            result = np.array(grad, copy=True)
            region = result
            for op, kwargs in self._chain:
                region = op.forward(region, **kwargs)
            res = self._fn.apply(self._grads_for_fn(np.array(region, copy=True)), False)
            region[...] = 0 if res[0] is None else res[0]
        return (result, *res[1:])

    def release_variables(self) -> bool:
        return bool(self._fn.release_variables())


def rebase_history(view: Tensor, base: Tensor, fn: Node) -> Node:
    """After an in-place op through ``view`` recorded ``fn`` (its first next function being
    the view's old history): the base's grad_fn becomes ``CopySlices`` wrapping ``fn``, and
    the view gets its ``AsStridedBackward0`` over it (PyTorch's ``rebase_history``).

    Example:
        >>> import gradviz
        >>> h = gradviz.ones(3, requires_grad=True) * 1
        >>> v = h[1:]
        >>> _ = v.mul_(2)  # dispatch_inplace records MulBackward0, then calls rebase_history
        >>> h.grad_fn.name(), v.grad_fn.name()
        ('torch::autograd::CopySlices', 'AsStridedBackward0')
    """
    base_edge = gradient_edge(base) if base._requires_grad else NO_EDGE
    fn.next_functions = (base_edge, *fn.next_functions[1:])
    node = CopySlices(base_edge, fn, view._view_meta.chain,
                      ((base._data.shape, base._data.dtype),))
    old = base._grad_fn
    set_history(node, (base,))
    move_retains_grad(base, old)
    _regenerate(view)
    return node


def _copy_slices(op: OpInfo, view: Tensor, base: Tensor, args: tuple, arrays: list,
                 kwargs: dict, edges: tuple) -> Node:
    """Record an in-place op through ``view``: ``CopySlices`` becomes the base's grad_fn."""
    base_edge = gradient_edge(base) if base._requires_grad else NO_EDGE
    old = view._grad_fn  # current: collecting the edges regenerated it if it was stale
    fn = _record(op, view, args, arrays, kwargs, (base_edge, *edges[1:]))
    move_retains_grad(view, old)  # on to fn; rebase_history moves it on to the view's new node
    return rebase_history(view, base, fn)
