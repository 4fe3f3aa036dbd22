"""The code writer of the fast paths: what :func:`~gradviz.ops.dispatch.dispatch` does for one
row, specialised, written as Python source (scripts/gen_fastpath.py writes it into
gradviz/ops/generated/; nothing here runs when gradviz is imported).

NOTE [fast paths]
``dispatch`` is general: any number of inputs, any mix of tensors and numbers, broadcasting,
type promotion, views. Most calls of most programs are a one- or two-input elementwise op on
float tensors of one shape (``y * 1.01``, ``h + b``, ``x.tanh()``). For each row that can take
such calls, :func:`forward_source` writes a function with the row's constants resolved (its
node class, its forward, its save plans), that handles exactly those calls in a few lines and
hands every other call to the general dispatch unchanged. The result, the node, its
``next_functions``, its saved values and the ``op`` event are the ones the general dispatch
makes (tests/test_fastpath_rows.py compares the two on every sample of every row with generated
code; tests/test_fastpath.py on chosen calls). This is where speed lives (docs/performance.md):
the engine and the derivative table stay plain.

A call of a one- or two-input row takes the fast path when every positional argument is a
``Tensor`` of a floating dtype or a Python ``float``/``int`` (a subclass such as a module's
``Parameter`` is taken as the first argument of a one-input row, as ``weight.t()`` in
``F.linear``; a second operand must be exactly a ``Tensor``), and, for a broadcasting row, all
its tensors and its result have one shape and one dtype (so nothing needs un-broadcasting or
promoting; a result that came out broadcast is computed again by the general path). A view row
of one input (``t``, ``view``, ``select`` ...) makes its result a view as the general path
does (``_make_view``). A call of a three-input row (``addmm``: ``F.linear`` with a bias) takes
it when its three arguments are ``Tensor``s (or subclasses) of one floating dtype; its
broadcast inputs (the bias) may have any shape that broadcasts, and their shapes are kept for
the backward (``node._in_meta``), as the general path keeps them. A tensor whose array is not
a plain ``np.ndarray`` (a meta tensor's, NOTE [meta device] in gradviz/_device.py) sends the
call to the general path, which has the one check for it.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import io
import linecache
import tokenize
from collections.abc import Callable
from typing import Any

import numpy as np

from gradviz.autograd.events import emit_op, watchers
from gradviz.autograd.graph import SavedVariable, edge_pair, next_sequence_nr
from gradviz.ops.opinfo import OPS, OpInfo, saved_for
from gradviz.tensor import Tensor

__all__ = ["eligible", "forward_source", "node_source", "has_node_methods", "module_source",
           "sources"]


def eligible(op: OpInfo) -> bool:
    """Rows with one output, one to three inputs (a view: one input), and saved values that
    are inputs, their shapes, the result or forward keyword arguments (what the fast path can
    save)."""
    if op.general or op.node is None or len(op.inputs) not in (1, 2, 3):
        return False
    if op.view and len(op.inputs) != 1:  # views of one input only (t, view, select ...)
        return False
    return all(n in op.inputs or n == "result" or n in op.attr_names
               or (n.endswith(("_sym_sizes", "_sym_numel")) and n[:-10] in op.inputs)
               or (n.endswith("_sym_strides") and n[:-12] in op.inputs)
               for n in op.saved_names)



# NOTE [generated fast paths]
# Each eligible row's fast path is Python source written from the row (as PyTorch writes its
# C++ from derivatives.yaml) by scripts/gen_fastpath.py into checked-in files, one per file of
# the table (gradviz/ops/generated/<category>.py, or <category>_1.py, _2 ... where one file
# would pass 2,000 lines: a row's fast path sits next to its node's methods), which the op
# layer imports: no code is written or compiled at run time, and tests/test_generated.py fails
# while a file is stale. `GRADVIZ_FAST=0` in the environment
# (read once, when gradviz.ops is imported) leaves them out: every op then takes the plain
# path, `dispatch` and `OpNode.apply`, for a learner to step through. `generated_source("mul")`
# shows one row's code. Everything known when the row is declared is resolved while
# writing it: whether the row broadcasts or runs quietly, how many inputs it has, what to save
# for each set of inputs needing a gradient and where each value comes from (one dict literal
# per set). The result tensor, the gradient edges and the node are built in line; the general
# path's helpers (`Tensor._make`, `collect_next_edges`, `_record`) are what these lines spell out.
# The node's `apply` and `release_variables` are written the same way (`node_source`), with
# the formulas' lambda bodies copied in, and the gradient of a broadcast input summed back to
# its shape in line (`_g_unbroadcast`, the helper `OpNode.apply` uses). Three-input rows
# (`addmm`, which `F.linear` records with a bias) get both too: all three arguments tensors,
# the saved-value plan chosen by `bits` (bit i: input i needs a gradient), the bias's shape
# kept in `node._in_meta` as `_record` keeps it. Multi-output rows (`nll_loss`, `max(dim)`,
# `split`, `layer_norm` ...) get a generated `apply` only (their forward takes the general
# dispatch): the saved values unpacked in line and the row's formula called with one gradient
# per output; a call missing a gradient, or with create_graph, takes `_GeneralOpNode.apply`.
# A/B (one process, interleaved, see the commit message): the closures these replaced cost
# more per op. A formula's body is copied only where every name it reads means in the
# generated file what it means in the table's file (the file imports those names from there);
# else the formula is called (`<op>_f<i>`).


def _edge_lines(arg: str, i: int, known_tensor: bool) -> list[str]:
    # collect_next_edges for one argument, spelled out (a view goes through edge_pair); the
    # first argument (and every argument of a three-input row) is known to be a tensor here.
    # The edge is two names, n{i} and i{i} (its node and input_nr), that go straight into the
    # node's slots (NOTE [flat edges] in autograd/node.py): no pair is built.
    test = f"{arg}._requires_grad" if known_tensor else (
        f"type({arg}) is Tensor and {arg}._requires_grad")
    return [f"if {test}:",
            f"    n{i} = {arg}._grad_fn",
            f"    if n{i} is not None and {arg}._view_meta is None:",
            f"        i{i} = {arg}._output_nr",
            "    else:",
            f"        n{i}, i{i} = edge_pair({arg})",
            "else:",
            f"    n{i}, i{i} = None, 0  # NO_EDGE"]


def _edge_slot_lines(n: int) -> list[str]:
    """``node.next_functions = ((n0, i0), ...)``, stored as the setter stores it (NOTE [flat
    edges] in autograd/node.py): the first two edges in slots; three in ``_rest`` as well."""
    edges = "(" + ", ".join(f"(n{i}, i{i})" for i in range(n)) + (",)" if n == 1 else ")")
    lines = [f"# node.next_functions = {edges}, in its slots",
             "node._n0 = n0",
             "node._i0 = i0"]
    if n > 1:
        lines += ["node._n1 = n1", "node._i1 = i1"]
    if n > 2:
        return lines + ["node._nedges = -1", f"node._rest = {edges}"]
    return lines + [f"node._nedges = {n}"]


def _in_meta_lines(op: OpInfo, arrays: tuple[str, ...]) -> list[str]:
    """``node._in_meta`` (what `_record` computes): for each broadcast input that needs a
    gradient and differs from the result in shape or dtype, its shape and dtype (the backward
    sums its gradient back to them); None when no input needs that."""
    lines = ["in_meta = None"]
    for i in op.broadcast_idx:
        arr = arrays[i]
        lines += [f"if n{i} is not None and ({arr}.shape != out.shape "
                  f"or {arr}.dtype != out.dtype):",
                  "    if in_meta is None:",
                  f"        in_meta = [None] * {len(arrays)}",
                  f"    in_meta[{i}] = ({arr}.shape, {arr}.dtype)"]
    return lines + ["node._in_meta = in_meta"]


def _saved_expr(op: OpInfo, name: str, args: tuple[str, ...], arrays: tuple[str, ...],
                ref: str) -> str:
    """The expression that saves ``name`` (what `_save` in dispatch.py computes, resolved)."""
    inputs = op.inputs
    if name == "result":
        return "SavedVariable(result, True)"
    if name in inputs:
        a = args[inputs.index(name)]
        if len(inputs) == 3:  # known to be a tensor
            return f"SavedVariable({a})"
        return f"SavedVariable({a}) if type({a}) is Tensor else {a}"
    if name.endswith("_sym_sizes"):
        return f"{args[inputs.index(name[:-10])]}._data.shape"
    if name.endswith("_sym_numel"):
        return f"int({args[inputs.index(name[:-10])]}._data.size)"
    if name.endswith("_sym_strides"):
        a = arrays[inputs.index(name[:-12])]
        # (a list comprehension: a generator expression costs more for two strides)
        return f"tuple([_st // {a}.itemsize for _st in {a}.strides])"
    return f"save_kwarg(kwargs, {name!r}, {ref})"  # a forward keyword argument


def _store_literal(op: OpInfo, bits: int, args: tuple[str, ...], arrays: tuple[str, ...],
                   ref: str) -> str:
    items = ", ".join(f"{n!r}: {_saved_expr(op, n, args, arrays, ref)}"
                      for n in saved_for(op, bits))
    return "{" + items + "}"


def forward_source(op: OpInfo, ref: str = "op", node_ref: str | None = None) -> str:
    """The source of ``op``'s fast path (see NOTE [fast paths] and [generated fast paths]):
    ``ref`` names the row in the generated module (``{ref}.forward`` is bound as
    ``{ref}_forward`` there), ``node_ref`` its node class (its PyTorch name by default)."""
    n = len(op.inputs)
    node_ref = node_ref or op.node_cls.__name__
    unary = n == 1
    args = ("a", "b", "c")[:n]
    arrays = ("x", "y", "z")[:n]
    params = ", ".join(args)
    general = f"general({ref}, {params}, **kwargs)"
    lines = [f"def {op.name}_fast({params}, **kwargs):",
             f'    """{op.name}\'s fast path, generated from its row (NOTE [fast paths])."""']
    body: list[str] = []
    if unary:  # (a Tensor subclass too: a module's Parameter, as F.linear's weight.t())
        body += ["if type(a) is not Tensor and not isinstance(a, Tensor):",
                 f"    return {general}",
                 "x = a._data",
                 "if x.dtype.kind != 'f' or type(x) is not ndarray:  # (a meta tensor: general)",
                 f"    return {general}",
                 "requires = a._requires_grad"]
    elif n == 3:  # three tensors of one floating dtype; anything else: the general path
        # (isinstance: a module's Parameters, a Tensor subclass, are what F.linear passes)
        body += ["if not (isinstance(a, Tensor) and isinstance(b, Tensor) "
                 "and isinstance(c, Tensor)):",
                 f"    return {general}",
                 "x, y, z = a._data, b._data, c._data",
                 "if x.dtype.kind != 'f' or y.dtype != x.dtype or z.dtype != x.dtype or (",
                 "        type(x) is not ndarray or type(y) is not ndarray or "
                 "type(z) is not ndarray):",
                 f"    return {general}",
                 "requires = a._requires_grad or b._requires_grad or c._requires_grad"]
    else:
        body += ["if type(a) is not Tensor:",
                 f"    return {general}",
                 "x = a._data",
                 "kind = type(b)",
                 "if kind is Tensor:",
                 "    y = b._data",
                 "    if x.dtype.kind != 'f' or y.dtype.kind != 'f'"
                 + (" or y.shape != x.shape or y.dtype != x.dtype" if op.broadcasts else "")
                 + " or type(x) is not ndarray or type(y) is not ndarray:",
                 f"        return {general}",
                 "    requires = a._requires_grad or b._requires_grad",
                 "elif (kind is float or kind is int) and x.dtype.kind == 'f' "
                 "and type(x) is ndarray:",
                 "    y = b",
                 "    requires = a._requires_grad",
                 "else:",
                 f"    return {general}"]
    call = f"{ref}_forward({', '.join(arrays)}, **kwargs)"
    body += ["try:"]
    if op.quiet:
        body += ["    with np.errstate(all='ignore'):", f"        out = {call}"]
    else:
        body += [f"    out = {call}"]
    body += ["except ValueError:",
             f"    return {general}  # the general path words the error",
             "if type(out) is not np.ndarray:",
             "    out = np.asarray(out)"]
    if n == 3:  # the result's shape is the op's (a product's); its dtype the inputs'
        body += ["if out.dtype != x.dtype:", f"    return {general}"]
    elif op.broadcasts:  # a keyword (where's condition) may have broadcast the result
        body += ["if out.shape != x.shape or out.dtype != x.dtype:", f"    return {general}"]
    body += ["# Tensor._make(out), in line",
             "result = new(Tensor)",
             "result._data = out",
             "result._requires_grad = False",
             "result._grad = None",
             "result._grad_fn = None",
             "result._output_nr = 0",
             "result._vc = InferenceCounter() if _state.inference else None",
             "result._base = None",
             "result._view_meta = None",
             "result._extra = None"]
    if op.view:
        body += ["# a view: shares a's storage and version counter (NOTE [in-place on views])",
                 f"make_view(result, a, {ref}, kwargs)"]
    body += ["node = None",
             "if requires and _state.enabled and out.dtype.kind == 'f':"]
    rec: list[str] = []
    for i, arg in enumerate(args):
        rec += _edge_lines(arg, i, known_tensor=i == 0 or n == 3)
    rec += [f"node = new({node_ref})",
            *_edge_slot_lines(n),
            "node._seq = next_sequence_nr()",
            "key = (out.shape, out.dtype)",
            "node._out_meta = out_metas.get(key) or make_out_meta(key)",
            "node._extra = None",
            *(_in_meta_lines(op, arrays) if n == 3 else ["node._in_meta = None"]),
            "# set_history: the node is the result's grad_fn before anything saves the result",
            "result._grad_fn = node",
            "result._requires_grad = True",
            "# saved values: which ones depends on which inputs need a gradient"]
    if unary:
        rec += [f"node._store = {_store_literal(op, 1, args, arrays, ref)}"]
    elif n == 3:  # bit i of `bits`: input i needs a gradient (see saved_for)
        rec += ["bits = (n0 is not None) | (n1 is not None) << 1 | (n2 is not None) << 2"]
        for bits in range(7, 0, -1):
            test = ("if" if bits == 7 else "elif") + f" bits == {bits}:"
            rec += [test if bits > 1 else "else:  # bits == 1",
                    f"    node._store = {_store_literal(op, bits, args, arrays, ref)}"]
    else:
        rec += ["if n0 is not None:",
                "    if n1 is not None:",
                f"        node._store = {_store_literal(op, 3, args, arrays, ref)}",
                "    else:",
                f"        node._store = {_store_literal(op, 1, args, arrays, ref)}",
                "else:",
                f"    node._store = {_store_literal(op, 2, args, arrays, ref)}"]
    body += ["    " + line for line in rec]
    inputs = f"({params},)" if unary else f"({params})"
    body += ["if watchers:",
             f"    emit_op({op.name!r}, node, {inputs}, (result,), kwargs, False)",
             "return result"]
    return "\n".join(lines + ["    " + line for line in body]) + "\n"


# -- the node's methods ------------------------------------------------------------------------
def _lambda_body(fn: Callable[..., Any]) -> ast.expr | None:
    """The body of ``fn`` if ``fn`` is a plain lambda of a source file (no defaults,
    no closure) found there unambiguously, else None (the formula is then called). Only the
    lambda's own text is parsed (parsing the whole table would cost a few MB, once)."""
    code = getattr(fn, "__code__", None)
    if (code is None or fn.__name__ != "<lambda>" or fn.__defaults__ or fn.__kwdefaults__
            or code.co_freevars or code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)):
        return None
    lines = linecache.getlines(code.co_filename)[code.co_firstlineno - 1:
                                                 code.co_firstlineno + 11]
    if not lines:
        return None
    params = list(code.co_varnames[:code.co_argcount])
    text = "".join(lines)
    found = []
    start = text.find("lambda", 0, len(lines[0]))
    while start != -1:
        node = _parse_lambda(text[start:])
        if node is not None and [a.arg for a in node.args.args] == params \
                and not node.args.kwonlyargs:
            found.append(node)
        start = text.find("lambda", start + 6, len(lines[0]))
    return found[0].body if len(found) == 1 else None


def _parse_lambda(text: str) -> ast.Lambda | None:
    """The lambda expression at the start of ``text``: its body ends at the first ``,`` or
    closing bracket outside brackets (a keyword argument of ``defop``)."""
    depth, body = 0, False  # body: past the parameters' colon
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type != tokenize.OP:
                continue
            if not body:
                body = tok.string == ":"
                continue
            if tok.string in "([{":
                depth += 1
            elif tok.string in ")]}" or (tok.string == "," and depth == 0):
                if depth == 0:
                    end = _offset(text, tok.start)
                    break
                depth -= 1
        else:
            return None
        expr = ast.parse(text[:end].strip(), mode="eval").body
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    return expr if isinstance(expr, ast.Lambda) else None


def _offset(text: str, pos: tuple[int, int]) -> int:
    # (row, col) of a token -> index into text
    row, col = pos
    return sum(len(line) for line in text.splitlines(True)[:row - 1]) + col


_SIZES = ("_sym_sizes", "_sym_strides", "_sym_numel")


def _unpack_lines(name: str) -> list[str]:
    # _plain_args in dispatch.py for one saved value, spelled out.
    return [f"_g_v = _g_saved[{name!r}]",
            "if type(_g_v) is _g_SavedVariable:",
            f"    {name} = _g_v.data",
            f"    if {name} is None or _g_v._counter.version != _g_v.version or (",
            "            _g_v._was_non_leaf and _g_v._tensor._grad_fn is None):",
            f"        {name} = _g_v.unpack_data(_g_node)  # packed, modified or detached",
            "elif _g_v is _g_FREED or type(_g_v) is _g_SavedVariableList:",
            f"    {name} = _g_slow(_g_node, _g_v)",
            "else:",
            f"    {name} = _g_v"]


def node_source(op: OpInfo, prefix: str = "",
                reserved: dict[str, Any] | None = None) -> tuple[str, dict[str, Any], set[str]]:
    """The source of the ``apply`` and ``release_variables`` of ``op``'s node class, and the
    formulas it calls rather than copies. ``apply`` is ``OpNode.apply`` for this row: the
    plain backward (arrays) runs the formulas written in line and sums the gradient of a
    broadcast input back to its shape (``_g_unbroadcast``: ``sum_to``, then the input's
    dtype); anything else (``create_graph``, no gradient) takes the general
    ``OpNode.apply``.

    The methods are named ``{prefix}apply`` and ``{prefix}release_variables``, a formula that
    is called ``{prefix}f<i>`` (returned in ``calls``, name -> formula); ``reserved`` holds the
    names the generated module binds itself (a copied body reading one of those in another
    meaning is called instead). The third value: the global names the copied bodies read,
    which the generated module imports from the formulas' file.
    """
    n = len(op.inputs)
    calls: dict[str, Any] = {}
    imports: set[str] = set()
    reserved = reserved or {}
    general = "_GeneralOpNode.apply" if op.general else "OpNode.apply"
    fglobals = _formula_globals(op)
    local_names = {"grad_outputs", "create_graph"} | {
        name for names in op.needs if names for name in names}
    lines = [f"def {prefix}apply(_g_node, grad_outputs, create_graph):",
             f'    """{op.node}.apply, generated from the {op.name!r} row (NOTE [generated '
             'fast paths])."""']
    if op.multi:
        # A multi-output row's formulas take one gradient per output; a missing one is filled
        # with zeros by the general apply (_GeneralOpNode.apply), which takes those calls.
        lines += ["    for _g_g in grad_outputs:",
                  "        if _g_g is None:",
                  f"            return {general}(_g_node, grad_outputs, create_graph)",
                  "    if create_graph or _g_node._in_meta is not None:",
                  f"        return {general}(_g_node, grad_outputs, create_graph)",
                  "    grad = list(grad_outputs)  # grads: one per differentiable output"]
    else:
        lines.append("    grad = grad_outputs[0]")
    if op.multi:
        pass
    elif op.broadcast_idx:
        lines += ["    if grad is None or create_graph:",
                  f"        return {general}(_g_node, grad_outputs, create_graph)",
                  "    _g_meta = _g_node._in_meta  # the shapes of broadcast inputs, or None"]
    else:
        lines += ["    if grad is None or create_graph or _g_node._in_meta is not None:",
                  f"        return {general}(_g_node, grad_outputs, create_graph)"]
    lines.append("    _g_saved = _g_node._store")
    if n > 2:
        lines.append(f"    {', '.join(f'_g_e{i}' for i in range(n))}, = _g_node.next_functions")
    # Which inputs need a gradient: an edge to a node. The first two edges are read from the
    # node's slots (NOTE [flat edges] in autograd/node.py: no tuples built per call).
    edge_node = [f"_g_node._n{i}" if n <= 2 else f"_g_e{i}[0]" for i in range(n)]
    for i, inp in enumerate(op.inputs):
        formula, names = op.grads.get(inp), op.needs[i]
        if names is None:
            lines.append(f"    _g_{i} = None  # {inp} is not differentiable")
            continue
        lines += [f"    if {edge_node[i]} is None:", f"        _g_{i} = None", "    else:"]
        tree = _lambda_body(formula)
        read = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} if tree else set()
        # Copied in only if every name it reads means there what it meant in the lambda: a
        # name that is another formula's saved value (or apply's own) would be a local here.
        clash = tree is not None and bool(read & (local_names - set(names)))
        free = {x for x in read - set(names) - {"grad"} if fglobals is not None
                and (x in fglobals or not hasattr(builtins, x))}
        # ... or a name the generated module binds to something else, or one the formulas'
        # file does not have (a builtin is read where it is)
        clash = clash or any(x in reserved and (fglobals is None or x not in fglobals
                                                or fglobals[x] is not reserved[x])
                             or (fglobals is not None and x not in fglobals)
                             or x.startswith("_g_") for x in free)
        # (a multi-output row's formulas are called: their first parameter is named `grads`)
        copied = not (tree is None or clash or op.multi
                      or formula.__globals__ is not _formula_globals(op))
        for name in names:
            # A size or stride the copied body does not read (PyTorch's mm formulas take them)
            # is not unpacked: it is never a tensor, never freed, never checked.
            if copied and name not in read and name.endswith(_SIZES):
                continue
            lines += ["        " + line for line in _unpack_lines(name)]
        if not copied:
            fname = f"{prefix or '_g_'}f{i}"
            calls[fname] = formula
            body = f"{fname}(grad{''.join(', ' + x for x in names)})"
        else:
            body = ast.unparse(tree)
            imports |= free
        lines.append(f"        _g_{i} = {body}  # the gradient for {inp}")
        if i in op.broadcast_idx:
            lines += [f"        if _g_meta is not None and _g_meta[{i}] is not None "
                      f"and _g_{i} is not None:",
                      f"            _g_{i} = _g_unbroadcast(_g_{i}, _g_meta[{i}])"]
    lines.append(f"    return ({''.join(f'_g_{i}, ' for i in range(n))})")
    if op.multi:  # its node keeps OpNode.release_variables (it frees whatever the store holds)
        return "\n".join(lines) + "\n", calls, imports
    # release_variables: the saved tensors, and the numbers standing for a tensor operand
    wrapped = set(op.inputs) if op.broadcasts else set()
    lines += ["", "", f"def {prefix}release_variables(_g_node):",
              f'    """{op.node}.release_variables, generated from its row."""',
              "    _g_saved = _g_node._store",
              "    _g_freed = False"]
    for name in op.saved_names:
        if not (name in op.inputs or name == "result" or name in op.attr_names
                or name in op.outputs):
            continue  # sizes, strides: kept, as PyTorch keeps them
        test = "_g_t is _g_SavedVariable or _g_t is _g_SavedVariableList"
        if name in wrapped:
            test += (" or (_g_v is not _g_FREED and (_g_t is float or _g_t is int"
                     " or _g_is_number(_g_v)))")
        lines += [f"    _g_v = _g_saved.get({name!r}, _g_FREED)",
                  "    _g_t = type(_g_v)",
                  f"    if {test}:",
                  f"        _g_saved[{name!r}] = _g_FREED",
                  "        _g_freed = True"]
    lines.append("    return _g_freed")
    return "\n".join(lines) + "\n", calls, imports


def _formula_globals(op: OpInfo) -> dict | None:
    # The module whose names the formulas' bodies use (the table's); None if they differ.
    found = {id(f.__globals__): f.__globals__ for f in op.grads.values()
             if hasattr(f, "__globals__")}
    return next(iter(found.values())) if len(found) == 1 else None


# -- the checked-in modules --------------------------------------------------------------------
HEADER = '''"""Generated by scripts/gen_fastpath.py from the rows in
gradviz/ops/derivatives/{cat}.py{part}; do not edit (change the row, then rerun the script:
tests/test_generated.py fails while this file is stale).

For each row, in the table's order: its fast path ``<op>_fast`` (NOTE [fast paths] in
gradviz/ops/fastpath.py), then its node's ``apply`` and ``release_variables`` (``<op>_apply``,
``<op>_release_variables``: NOTE [generated fast paths]), the row's formulas copied in.
``gradviz.ops.generated.install`` makes them the rows' ``op.fast`` and the node classes'
methods; with ``GRADVIZ_FAST=0`` in the environment it is not called and every op takes the
plain path (``dispatch`` and ``OpNode.apply``).
"""
# ruff: noqa
# fmt: off

import numpy as np
from numpy import ndarray

from gradviz.autograd.events import emit_op, watchers
from gradviz.autograd.grad_mode import state as _state
from gradviz.autograd.graph import SavedVariable, edge_pair, next_sequence_nr
from gradviz.autograd.graph import SavedVariable as _g_SavedVariable
from gradviz.autograd.graph import SavedVariableList as _g_SavedVariableList
from gradviz.ops.dispatch import FREED as _g_FREED
from gradviz.ops.dispatch import OpNode, _GeneralOpNode, save_kwarg
from gradviz.ops.dispatch import _make_view as make_view
from gradviz.ops.dispatch import _node_class as node_class
from gradviz.ops.dispatch import _OUT_META as out_metas
from gradviz.ops.dispatch import _out_meta as make_out_meta
from gradviz.ops.dispatch import _unbroadcast as _g_unbroadcast
from gradviz.ops.dispatch import _unpack_rare as _g_slow
from gradviz.ops.dispatch import general_dispatch as general
from gradviz.ops.opinfo import OPS
from gradviz.tensor import Tensor
from gradviz.tensor import _InferenceCounter as InferenceCounter
from gradviz.tensor import _is_number as _g_is_number
'''

# The names HEADER binds (a copied formula body may read one only if it means the same there).
_HEADER_NAMES = ("np", "ndarray", "emit_op", "watchers", "_state", "SavedVariable", "edge_pair",
                 "next_sequence_nr", "OpNode", "_GeneralOpNode", "save_kwarg", "make_view",
                 "node_class", "out_metas", "make_out_meta", "general", "OPS", "Tensor",
                 "InferenceCounter", "new", "FAST", "NODE_METHODS")


def has_node_methods(op: OpInfo) -> bool:
    """Whether ``op``'s node class gets a generated ``apply``: one-input rows with a formula,
    two-input rows, eligible three-input rows, and multi-output rows (apply only)."""
    if op.node is None or op.variadic:
        return False
    if op.multi:
        return True
    if op.general:
        return False
    n = len(op.inputs)
    return (n == 1 and op.inputs[0] in op.grads) or n == 2 or (n == 3 and eligible(op))


def module_source(category: str, ops: list[OpInfo], part: str = "") -> str:
    """The checked-in module ``gradviz/ops/generated/<category>.py`` for ``ops``, the rows of
    ``gradviz/ops/derivatives/<category>.py`` that have generated code (``part``: which part
    of them, said in the header, when the category is cut in several files)."""
    reserved: dict[str, Any] = {n: object() for n in _HEADER_NAMES}
    reserved.update(np=np, ndarray=np.ndarray, Tensor=Tensor, SavedVariable=SavedVariable,
                    edge_pair=edge_pair, next_sequence_nr=next_sequence_nr,
                    emit_op=emit_op, watchers=watchers)
    node_refs: dict[str, str] = {}
    for op in ops:  # every name a row binds, first: a formula may not read one of them
        for suffix in ("_op", "_op_forward", "_fast", "_apply", "_release_variables",
                       "_f0", "_f1", "_f2"):
            reserved[op.name + suffix] = object()
        if eligible(op):
            ref = op.node if op.node not in reserved else f"{op.name}_node"
            node_refs[op.name] = ref
            reserved[ref] = object()
    blocks, imports, fast, methods = [], set(), [], []
    module = None
    for op in ops:
        ref = f"{op.name}_op"
        lines = [f"# -- {op.name}: {op.node} " + "-" * max(3, 80 - len(op.name) - len(op.node) - 8),
                 f"{ref} = OPS[{op.name!r}]"]
        parts = []
        if eligible(op):
            lines += [f"{ref}_forward = {ref}.forward",
                      f"{node_refs[op.name]} = node_class({ref})"]
            parts.append(forward_source(op, ref, node_refs[op.name]))
            fast.append(op.name)
        if has_node_methods(op):
            source, calls, names = node_source(op, f"{op.name}_", reserved)
            fg = _formula_globals(op)
            if names:
                if module not in (None, fg["__name__"]):
                    raise ValueError(f"{op.name}: its formulas read names of "
                                     f"{fg['__name__']}, not {module}")
                module = fg["__name__"]
                imports |= {n for n in names if n not in reserved}
            for fname in calls:
                inp = op.inputs[int(fname.rsplit("_f", 1)[1])]
                lines.append(f"{fname} = {ref}.grads[{inp!r}]  # called, not copied")
            parts.append(source)
            methods.append(op.name)
        blocks.append("\n".join(lines) + "\n\n\n" + "\n\n".join(parts))
    head = HEADER.replace("{cat}", category).replace("{part}", part)
    if imports:
        head += f"from {module} import (  # the names the formulas read\n"
        head += "".join(f"    {n},\n" for n in sorted(imports)) + ")\n"
    head += "\nnew = object.__new__\n"
    tail = ["FAST = {", *(f"    {n!r}: {n}_fast," for n in fast), "}",
            "NODE_METHODS = {",
            *(f"    {n!r}: ({n}_apply, "
              f"{'None' if OPS[n].multi else n + '_release_variables'})," for n in methods),
            "}"]
    return head + "\n\n" + "\n\n".join(blocks) + "\n\n" + "\n".join(tail) + "\n"


#: A generated file stays under the package's 2,000 lines a file (issue #30): a category whose
#: rows need more is cut, in the table's order, into parts ``<category>_1.py``, ``_2`` ...
MAX_LINES = 1900


def sources() -> dict[str, str]:
    """``{module name: source}`` for every generated module, in the table's order (what
    scripts/gen_fastpath.py writes to gradviz/ops/generated/): one per category file with
    generated code, or its parts (:data:`MAX_LINES`)."""
    by_category: dict[str, list[OpInfo]] = {}
    category = None
    for op in OPS.values():
        fg = _formula_globals(op)
        name = fg["__name__"] if fg is not None else ""
        if name.startswith("gradviz.ops.derivatives."):
            category = name.rpartition(".")[2]
        if category is None or not (eligible(op) or has_node_methods(op)):
            continue
        by_category.setdefault(category, []).append(op)
    out: dict[str, str] = {}
    for cat, ops in by_category.items():
        whole = module_source(cat, ops)
        if whole.count("\n") <= MAX_LINES:
            out[cat] = whole
            continue
        parts = _parts(cat, ops)
        for k, chunk in enumerate(parts, 1):
            text = module_source(cat, chunk, f" (part {k} of {len(parts)})")
            if text.count("\n") > MAX_LINES:
                raise ValueError(f"generated/{cat}_{k}.py would have {text.count(chr(10))} "
                                 f"lines, more than {MAX_LINES}: its row {chunk[0].name!r} "
                                 "alone is too big")
            out[f"{cat}_{k}"] = text
    return out


def parts_source(names: list[str]) -> str:
    """``gradviz/ops/generated/_parts.py``: the generated modules' names, in the table's order
    (what ``gradviz.ops.generated`` imports)."""
    return ('"""The generated modules, in the table\'s order: written by scripts/gen_fastpath.py '
            'with them."""\n\n'
            "PARTS = (\n" + "".join(f"    {n!r},\n" for n in names) + ")\n")


def _parts(category: str, ops: list[OpInfo]) -> list[list[OpInfo]]:
    """``ops`` cut, in order, into the fewest runs whose modules fit :data:`MAX_LINES`: each
    row's share measured once (its own module less the header), the parts filled greedily."""
    header = module_source(category, []).count("\n")
    parts: list[list[OpInfo]] = [[]]
    used = header
    for op in ops:
        size = module_source(category, [op]).count("\n") - header
        if parts[-1] and used + size > MAX_LINES - 10:  # (a margin for the shared imports)
            parts.append([])
            used = header
        parts[-1].append(op)
        used += size
    return parts
