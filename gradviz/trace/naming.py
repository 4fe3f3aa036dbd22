"""Where the user's code binds the value an instruction makes: the names tensors are drawn by.

NOTE [tensor names] A tensor takes the name its creator's code binds it to: ``b = a * 3 + 1``
names the ``+`` result ``b``, even if ``b`` is never used. How, cheaply:

1. When an op runs, the user's frame is executing one instruction (``f_lasti``: the ``CALL``
   of ``gradviz.randn(...)``, the ``BINARY_OP`` of ``a * 3``). :func:`store_target` reads the
   instructions right after it, once per code location (cached): a ``STORE_*`` means the value is
   bound to that name; ``UNPACK_SEQUENCE`` then stores, to several names; ``COPY 1`` then stores
   (``p = q = ...``), to the first; ``LOAD obj; STORE_ATTR h`` to ``h`` (``self.h = ...``);
   ``LOAD outs; LOAD_CONST 0; STORE_SUBSCR`` to ``outs[0]``; ``RETURN_VALUE`` (or a tuple of
   it and simple loads, then return) means the caller's instruction decides, so
   :func:`binding` walks up to the next user frame (gradviz's own frames, a module's
   ``__call__``, pass a value through); ``LIST_APPEND`` in a comprehension means the list that
   is stored once the comprehension ends, element by element: by the comprehension's caller
   before Python 3.12, by the same code since (comprehensions run inline, PEP 709).
2. That only says where the value *might* go: ``pred = model(x)`` runs every op of the model at
   that one instruction. So the outputs are only *candidates* of a :class:`Pending` binding, and
   the name is given once the instruction has finished (the next op event finds the frame, the
   op's own or one of its callers, at another instruction, or running the same one again, as a
   loop does) by looking the name up in the frame (:func:`lookup`) and naming the candidate
   found there. When the frame has returned meanwhile (``out = h.relu()`` as a function's last
   op), it cannot be asked: the candidate made last is the one named (what the instruction
   computed last is what it stored).

A pending binding keeps the frame's id and code, never the frame: holding the frame would keep
its locals (the user's tensors and their graph) alive after the function returned. But the id
alone is not the call: a function called twice in a row is often given the frame its first call
left, at the same address, and ``y`` of ``a = make(t); b = make(t)`` would then name only the
second result. So it also keeps :func:`call_site`, which tells two calls from two places apart.
(Two calls from one place, ``make`` called in a loop, still look alike: without holding the
frame, nothing tells them apart.)
"""

from __future__ import annotations

import ast
import bisect
import dis
import inspect
import linecache
import os
import sys
from dataclasses import dataclass, field
from types import CodeType, FrameType
from typing import Any

from gradviz.tensor import Tensor
from gradviz.trace.model import TensorInfo, versioned

__all__ = ["Target", "Pending", "store_target", "binding", "lookup", "call_site",
           "backward_receiver", "is_internal", "user_frame", "Naming"]

_STORES = frozenset({"STORE_NAME", "STORE_FAST", "STORE_GLOBAL", "STORE_DEREF"})
_SIMPLE_LOADS = frozenset({"LOAD_NAME", "LOAD_FAST", "LOAD_GLOBAL", "LOAD_DEREF", "LOAD_CONST",
                           "LOAD_FAST_CHECK", "LOAD_FAST_BORROW"})
_SKIP = frozenset({"NOP", "CACHE", "EXTENDED_ARG"})


# -- the user's frames ---------------------------------------------------------------------------
_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
# Bundled examples are user code: their lines are what a learner wants to see.
_USER_DIRS_INSIDE = (os.path.join(_PKG_DIR, "examples") + os.sep,)

# File name -> whether it is gradviz's own code (bounded: see is_internal).
_INTERNAL: dict[str, bool] = {}


def is_internal(filename: str) -> bool:
    """Whether ``filename`` is gradviz's own code (not the bundled examples: user code)."""
    known = _INTERNAL.get(filename)
    if known is None:
        path = os.path.abspath(filename) if not filename.startswith("<") else filename
        known = path.startswith(_PKG_DIR) and not path.startswith(_USER_DIRS_INSIDE)
        if len(_INTERNAL) < 4096:
            _INTERNAL[filename] = known
    return known


def user_frame(depth: int = 1) -> FrameType | None:
    """The innermost frame outside gradviz's own code (the user's line)."""
    try:
        f: FrameType | None = sys._getframe(depth)
    except ValueError:  # the stack is not that deep: no user frame
        return None
    # NOTE [perf]: a dict lookup per frame, in line (an op's event passes three or four of
    # gradviz's frames before the user's); is_internal only for a file not seen yet.
    internal = _INTERNAL
    while f is not None:
        name = f.f_code.co_filename
        known = internal.get(name)
        if known is None:
            known = is_internal(name)
        if not known:
            return f
        f = f.f_back
    return None


@dataclass(frozen=True)
class Target:
    """Where an instruction's value goes.

    ``kind``: ``"names"`` (``slots`` one per stored value: ``(opname, name)`` for a variable,
    ``("ATTR", obj, attr)``, ``("SUBSCR", container, key)``, or None for a slot not understood),
    ``"return"`` (``index``: its place in a returned tuple, or None for the whole value),
    ``"append"`` (an element of a list comprehension).
    """

    kind: str
    slots: tuple[Any, ...] = ()
    index: int | None = None
    # "list" made inline (Python 3.12+): the offsets of the comprehension's loop, [start, end).
    # While the frame runs there the list is being built: its name is given after it.
    span: tuple[int, int] | None = None
    # How each slot reads (slot_name), worked out once per code location: NOTE [perf].
    names: tuple[str | None, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "names", tuple(None if s is None else slot_name(s)
                                                for s in self.slots))


@dataclass(slots=True)
class Pending:
    """Tensors that one instruction of one frame may bind, waiting for it to finish (one per
    statement that binds a result: slots, as NOTE [perf: op path] in recorder.py)."""

    fid: int  # id(frame): compared with the frames of later events, with the code
    code: CodeType
    lasti: int
    target: Target
    candidates: list[str] = field(default_factory=list)  # tensor ids, in creation order
    element: int | None = None  # the returned tuple's index that reached this frame
    last: tuple[str, ...] = ()  # the outputs of the last op at this instruction
    site: tuple[int, int] | None = None  # call_site(frame): which call of the function it is


# Generators and coroutines are resumed from anywhere: their caller says nothing of the call.
_RESUMABLE = (inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
              | inspect.CO_ITERABLE_COROUTINE)


def call_site(frame: FrameType) -> tuple[int, int] | None:
    """Which call of its function ``frame`` runs, as far as can be told without holding it: the
    caller's frame and instruction (None for a generator's or coroutine's frame, or the
    outermost one).

    Example:
        >>> import sys
        >>> def f():
        ...     return call_site(sys._getframe())
        >>> f() != f()  # two calls from two instructions
        True
    """
    if frame.f_code.co_flags & _RESUMABLE:
        return None
    back = frame.f_back
    return None if back is None else (id(back), back.f_lasti)


# id(code) -> (code, instructions, {offset: index}, {offset: Target | None}); holds the code so
# its id stays its own; bounded like the recorder's source cache.
_CODE: dict[int, tuple[CodeType, list[dis.Instruction], dict[int, int], dict[int, Any]]] = {}


def _code_info(code: CodeType) -> tuple[CodeType, list[dis.Instruction], dict[int, int],
                                        dict[int, Any]]:
    entry = _CODE.get(id(code))
    if entry is None or entry[0] is not code:
        instrs = [i for i in dis.get_instructions(code) if i.opname not in _SKIP]
        entry = (code, instrs, {ins.offset: k for k, ins in enumerate(instrs)}, {})
        if len(_CODE) < 10_000:
            _CODE[id(code)] = entry
    return entry


def _slot(ins: list[dis.Instruction], j: int) -> tuple[Any, int] | None:
    """The one binding starting at instruction ``j``, and the index after it."""
    if j >= len(ins):
        return None
    op = ins[j].opname
    if op in _STORES:
        return (op, ins[j].argval), j + 1
    if op in ("STORE_FAST_STORE_FAST", "STORE_FAST_LOAD_FAST"):  # 3.13 superinstructions
        val = ins[j].argval
        return ("STORE_FAST", val[0] if isinstance(val, tuple) else val), j + 1
    if op in _SIMPLE_LOADS and op != "LOAD_CONST" and j + 1 < len(ins):
        nxt = ins[j + 1]
        if nxt.opname == "STORE_ATTR":
            return ("ATTR", ins[j].argval, nxt.argval), j + 2
        if (j + 2 < len(ins) and ins[j + 2].opname == "STORE_SUBSCR"
                and nxt.opname in _SIMPLE_LOADS):
            key = nxt.argval if nxt.opname == "LOAD_CONST" else ("VAR", nxt.opname, nxt.argval)
            return ("SUBSCR", ins[j].argval, key), j + 3
    return None


def store_target(code: CodeType, lasti: int) -> Target | None:
    """Where the value made by the instruction at ``lasti`` of ``code`` goes, or None.

    Example:
        >>> code = compile("b = a * 3", "<demo>", "exec")
        >>> mul = next(i.offset for i in dis.get_instructions(code)
        ...            if i.opname.startswith("BINARY_"))  # BINARY_MULTIPLY before 3.11
        >>> store_target(code, mul).slots
        (('STORE_NAME', 'b'),)
    """
    _, ins, index, memo = _code_info(code)
    if lasti in memo:
        return memo[lasti]
    k = index.get(lasti)
    if k is None:
        # Python 3.11 may report a calling frame's f_lasti inside the CALL's inline caches
        # (a specialised call of a Python function): the instruction is the last one before.
        k = bisect.bisect_right([i.offset for i in ins], lasti) - 1
        k = k if k >= 0 else None
    memo[lasti] = target = _analyse(ins, k)
    return target


_UNKNOWN = object()


def known_target(code: CodeType, lasti: int) -> Any:
    """What :func:`store_target` found already for this instruction (None: it binds nothing),
    or a sentinel if it was not asked yet: a dict lookup or two, for hot paths."""
    entry = _CODE.get(id(code))
    if entry is None or entry[0] is not code:
        return _UNKNOWN
    return entry[3].get(lasti, _UNKNOWN)


def _analyse(ins: list[dis.Instruction], k: int | None) -> Target | None:
    if k is None or k + 1 >= len(ins):
        return None
    j = k + 1
    op = ins[j].opname
    if op == "COPY" and ins[j].arg == 1 or op == "DUP_TOP":  # p = q = value: the first name
        one = _slot(ins, j + 1)
        return None if one is None else Target("names", (one[0],))
    if op == "UNPACK_SEQUENCE":
        slots = []
        j += 1
        for _ in range(ins[j - 1].arg or 0):
            one = _slot(ins, j)
            if one is None:  # a nested unpacking or a starred target: stop understanding
                return Target("names", tuple(slots)) if slots else None
            slots.append(one[0])
            j = one[1]
        return Target("names", tuple(slots))
    if op in ("RETURN_VALUE",):
        return Target("return")
    if op == "LIST_APPEND":
        return _comprehension_target(ins, j)
    if op in _SIMPLE_LOADS or op == "BUILD_TUPLE":  # return value, x, ...: its place in the tuple
        m = j
        while m < len(ins) and ins[m].opname in _SIMPLE_LOADS:
            m += 1
        if (m + 1 < len(ins) and ins[m].opname == "BUILD_TUPLE"
                and ins[m + 1].opname == "RETURN_VALUE"):
            size = ins[m].arg or 0
            later = m - j
            if later < size:
                return Target("return", index=size - 1 - later)
    one = _slot(ins, j)
    return None if one is None else Target("names", (one[0],))


def _comprehension_target(ins: list[dis.Instruction], j: int) -> Target:
    """Where the list that ``ins[j]`` (a ``LIST_APPEND``) appends to goes once it is built.

    Since Python 3.12 a comprehension runs inline in its code (PEP 709): its loops end in the
    same code, which then stores the list (``Target("list")``: ``ys[0]``, ``ys[1]`` ...). Before,
    it is a function of its own that returns the list to its caller (``Target("append")``, for
    :func:`binding` to follow).
    """
    at = {i.offset: k for k, i in enumerate(ins)}
    k = j + 1
    for _ in range(16):  # out of one loop per `for` of the comprehension
        if k >= len(ins) or ins[k].opname != "JUMP_BACKWARD":
            return Target("append")
        loop = at.get(ins[k].argval)
        if loop is None or ins[loop].opname != "FOR_ITER" or ins[loop].argval not in at:
            return Target("append")
        start = ins[loop].offset
        k = at[ins[loop].argval]
        while k < len(ins) and ins[k].opname in ("END_FOR", "POP_TOP"):
            k += 1
        if k >= len(ins) or ins[k].opname != "JUMP_BACKWARD":
            break
    else:
        return Target("append")
    if k < len(ins) and ins[k].opname == "SWAP":  # SWAP n, then n - 1 loop variables restored
        k += ins[k].arg or 1
    one = _slot(ins, k)
    if one is None or k >= len(ins):
        return Target("append")
    return Target("list", (one[0],), span=(start, ins[k].offset))


def _is_comprehension(code: CodeType) -> bool:
    return code.co_name in ("<listcomp>",)


def binding(frame: FrameType, is_internal: Any) -> tuple[FrameType, int, Target, int | None] | None:
    """The frame, instruction and target that will bind the value ``frame`` is making now.

    Follows returns up the stack (past frames for which ``is_internal(filename)`` is true, which
    pass the value on): ``return x * 2`` in a helper is bound where the helper's caller stores
    its result. The last item is the index of the value inside a returned tuple, if it is one.
    """
    element: int | None = None
    for _ in range(64):  # bounded: a chain of helpers returning each other's values
        code = frame.f_code
        target = store_target(code, frame.f_lasti)
        if target is None:
            return None
        if target.kind == "return" or (target.kind == "append" and _is_comprehension(code)):
            if target.kind == "return" and target.index is not None:
                if element is not None:
                    return None  # a tuple inside a tuple: not followed
                element = target.index
            comp = target.kind == "append"
            caller = frame.f_back
            while caller is not None and is_internal(caller.f_code.co_filename):
                caller = caller.f_back
            if caller is None:
                return None
            frame = caller
            if comp:
                outer = store_target(frame.f_code, frame.f_lasti)
                if outer is None or outer.kind != "names" or len(outer.slots) != 1:
                    return None
                return frame, frame.f_lasti, Target("list", outer.slots), None
            continue
        if target.kind not in ("names", "list"):
            return None
        return frame, frame.f_lasti, target, element
    return None


_MISSING = object()


def lookup(frame: FrameType, slot: Any) -> Any:
    """The value ``slot`` (a :class:`Target` slot) holds in ``frame`` now, or a sentinel."""
    try:
        kind = slot[0]
        if kind == "STORE_GLOBAL":
            return frame.f_globals.get(slot[1], _MISSING)
        if kind in ("STORE_NAME", "STORE_FAST", "STORE_DEREF"):
            local = frame.f_locals
            value = local.get(slot[1], _MISSING)
            if value is _MISSING and kind == "STORE_NAME":
                value = frame.f_globals.get(slot[1], _MISSING)
            return value
        base = _variable(frame, slot[1])
        if base is _MISSING:
            return _MISSING
        if kind == "ATTR":
            return getattr(base, slot[2], _MISSING)
        if kind == "SUBSCR":
            key = slot[2]
            if isinstance(key, tuple) and key and key[0] == "VAR":
                key = _variable(frame, key[2])
                if key is _MISSING:
                    return _MISSING
            return base[key]
    except Exception:  # a property, a mapping that refuses the key: the binding is unknown
        return _MISSING
    return _MISSING


def _variable(frame: FrameType, name: str) -> Any:
    value = frame.f_locals.get(name, _MISSING)
    if value is _MISSING:
        value = frame.f_globals.get(name, _MISSING)
    if value is _MISSING:
        value = frame.f_builtins.get(name, _MISSING)
    return value


def slot_name(slot: Any) -> str:
    """How a slot reads in a drawing: ``b``, ``h`` (for ``self.h``), ``outs[0]``."""
    if slot[0] == "ATTR":
        return str(slot[2])
    if slot[0] == "SUBSCR":
        key = slot[2]
        shown = key[2] if isinstance(key, tuple) and key and key[0] == "VAR" else repr(key)
        return f"{slot[1]}[{shown}]"
    return str(slot[1])



# NOTE [root names] The tensor ``backward()`` starts from is often never bound to a plain
# variable: ``outputs.loss.backward()`` (a Hugging Face model's output), ``out["loss"]``,
# ``losses[0]``. At a backward call (only there: it is cheap, but not free) the user's
# instruction is the CALL of ``.backward()``; its source span (``co_positions``, Python 3.11+)
# is parsed, and if the receiver is a chain of a name, attributes and subscripts by a constant
# or a name, that chain is looked up in the frame again: it names the root only if it holds
# that very tensor now (``torch.autograd.backward(loss)`` is a call on ``torch.autograd``, which
# holds no tensor). The chain is read as the user wrote it.
_CHAINS: dict[tuple[int, int], tuple[CodeType, Any]] = {}  # (id(code), lasti) -> chain or None


def _call_source(code: CodeType, lasti: int, globs: dict[str, Any],
                 lineno: int | None = None) -> str | None:
    """The source text of the instruction at ``lasti`` (its ``co_positions`` span); before
    Python 3.11, which has no positions, the one ``.backward(...)`` call on line ``lineno``."""
    _, ins, index, _ = _code_info(code)
    k = index.get(lasti)
    if k is None:
        k = bisect.bisect_right([i.offset for i in ins], lasti) - 1
        if k < 0:
            return None
    pos = getattr(ins[k], "positions", None)  # Python 3.11+
    if pos is None and lineno is not None:
        return _backward_call_on_line(code, lineno, globs)
    if pos is None or None in (pos.lineno, pos.end_lineno, pos.col_offset, pos.end_col_offset):
        return None
    lines = linecache.getlines(code.co_filename, globs)[pos.lineno - 1:pos.end_lineno]
    if not lines or pos.end_lineno - pos.lineno > 8:
        return None
    # the offsets count UTF-8 bytes
    data = [line.encode("utf-8") for line in lines]
    if len(data) == 1:
        data[0] = data[0][pos.col_offset:pos.end_col_offset]
    else:
        data[0], data[-1] = data[0][pos.col_offset:], data[-1][:pos.end_col_offset]
    return b"".join(data).decode("utf-8", "replace")


def _backward_call_on_line(code: CodeType, lineno: int, globs: dict[str, Any]) -> str | None:
    """The source of the only ``<receiver>.backward(...)`` call of line ``lineno`` (None if
    there is none, or several: which one ran is then unknown)."""
    line = linecache.getline(code.co_filename, lineno, globs).strip()
    try:
        tree = ast.parse(line)
    except SyntaxError:  # a line of a longer statement: not guessed
        return None
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)
             and isinstance(n.func, ast.Attribute) and n.func.attr == "backward"]
    return ast.get_source_segment(line, calls[0]) if len(calls) == 1 else None


def _chain(text: str) -> tuple[str, str, list[tuple[str, Any]]] | None:
    """``(as written, base name, steps)`` for ``<chain>.backward(...)``, or None."""
    try:
        call = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return None
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            and call.func.attr == "backward"):
        return None
    node = call.func.value
    written = ast.get_source_segment(text.strip(), node)
    steps: list[tuple[str, Any]] = []
    while not isinstance(node, ast.Name):  # outermost step first; a loop, not recursion
        if isinstance(node, ast.Attribute):
            steps.append(("attr", node.attr))
        elif isinstance(node, ast.Subscript):
            key = node.slice
            if isinstance(key, ast.Constant) and isinstance(key.value, (str, int)):
                steps.append(("key", key.value))
            elif (isinstance(key, ast.UnaryOp) and isinstance(key.op, ast.USub)
                  and isinstance(key.operand, ast.Constant) and type(key.operand.value) is int):
                steps.append(("key", -key.operand.value))
            elif isinstance(key, ast.Name):
                steps.append(("var", key.id))
            else:
                return None
        else:
            return None
        node = node.value
    if written is None or "\n" in written:
        return None
    return " ".join(written.split()), node.id, steps[::-1]


def backward_receiver(frame: FrameType, root: Any) -> str | None:
    """The expression the user called ``.backward()`` on at ``frame``'s current instruction,
    if it is a chain of names (``outputs.loss``, ``out["loss"]``, ``losses[0]``) holding
    ``root`` now; else None (NOTE [root names]).

    Example:
        >>> import sys
        >>> class Out:
        ...     def backward(self):
        ...         return backward_receiver(sys._getframe(1), self)
        >>> outputs = {"loss": Out()}
        >>> outputs["loss"].backward()
        'outputs["loss"]'
    """
    code, lasti = frame.f_code, frame.f_lasti
    entry = _CHAINS.get((id(code), lasti))
    if entry is None or entry[0] is not code:
        text = _call_source(code, lasti, frame.f_globals, frame.f_lineno)
        entry = (code, None if text is None else _chain(text))
        if len(_CHAINS) < 1000:
            _CHAINS[(id(code), lasti)] = entry
    chain = entry[1]
    if chain is None:
        return None
    written, base, steps = chain
    value = _variable(frame, base)
    try:
        for kind, key in steps:
            if value is _MISSING:
                return None
            if kind == "attr":
                value = getattr(value, key)
            else:
                value = value[key if kind == "key" else _variable(frame, key)]
    except Exception:  # a property or a mapping that refuses: not named
        return None
    return written if value is root else None


# -- the recorder's names and identities ----------------------------------------------------------
class Naming:
    """How the recorder names tensors and keeps one identity across versions: its methods
    (:class:`~gradviz.trace.recorder.Recorder` mixes this class in).

    - Names from the user's code: an op's outputs become candidates of a :class:`Pending`
      binding (``_note_outputs``), named once the instruction has finished (``_settle``,
      ``_bind``, ``_guess``): NOTE [tensor names] above. A tensor first seen as an input takes
      the variable holding it (``_first_sight_name``, ``_outer_name``); when recording ends,
      tensors still named by their ids take the names of the ``with`` block's variables
      (``_name_from_frame``).
    - NOTE [versions] in model.py: a tensor written in place after it was recorded gets a
      new record for each new version, all of one identity (``_add_version``); a rename reaches
      every version (``_rename``).
    """

    # The recorder's state these methods use (set by Recorder.__init__).
    _tids: Any  # live tensor -> id
    _unnamed: set[str]  # tensors still named by their id
    _tensors: dict[str, TensorInfo]
    _tnames: dict[str, str]
    _pend_t: dict[str, int]
    _rec_tensors: dict[str, tuple | None]
    _identity: dict[str, str]
    _versions: dict[str, list[str]]
    _frame: FrameType | None
    _pending: list[Pending]

    def _tensor_name(self, tid: str) -> str | None:
        """A recorded tensor's current name (None if it is not in the trace any more)."""
        if tid in self._pend_t or tid in self._rec_tensors:
            return self._tnames.get(tid, tid)
        info = self._tensors.get(tid)
        return None if info is None else info.name

    def _add_version(self, tid: str, old: str) -> str:
        """File ``tid`` as a later version of the tensor ``old`` is a version of; its first
        version's id (NOTE [versions])."""
        identity = self._identity.get(old, old)
        self._identity[tid] = identity
        self._versions.setdefault(identity, []).append(tid)
        return identity

    def _trim_versions(self) -> None:
        """Forget the versions of tensors the trace dropped (a long run stays bounded)."""
        known = self._tensors.keys() | self._rec_tensors.keys() | self._pend_t.keys()
        self._identity = {k: v for k, v in self._identity.items() if k in known}
        self._versions = {root: kept for root, vs in self._versions.items()
                          if (kept := [v for v in vs if v in known])}

    def _rename(self, tid: str, name: str) -> None:
        if name == tid:
            return
        # A tensor's versions are one tensor: all take the name (NOTE [versions]).
        root = self._identity.get(tid, tid)
        for k in (root, *self._versions.get(root, ())):
            self._unnamed.discard(k)
            info = self._tensors.get(k)
            if info is None:
                self._tnames[k] = name  # a raw version's " (vN)" is added when built
            elif info.identity is not None and info.name.endswith(
                    versioned("", info.version)):
                info.name = versioned(name, info.version)
            else:
                info.name = name

    def _first_sight_name(self, t: Tensor, frame: FrameType) -> str | None:
        """The name of a tensor first seen as an input (made before tracing began, or by a
        factory, which reports no op): the variable holding it in the outermost user frame
        between the one using it and the ``with`` block's, as that is nearest to where it was
        made (``a`` of the script, not ``tensor`` of the Function's forward it is passed to)."""
        found = None
        f: FrameType | None = frame
        for _ in range(64):  # bounded: a deep stack of user frames
            if f is None:
                break
            if not is_internal(f.f_code.co_filename):
                found = self._var_name(t, f) or found
            if f is self._frame:
                return found
            f = f.f_back
        # The with block is not among the callers (another thread's frames): ask it too.
        outer = self._frame
        return (self._var_name(t, outer) if outer is not None else None) or found

    def _outer_name(self, t: Tensor, frame: FrameType) -> str | None:
        """A fallback name for a tensor no creator named (made before tracing began, or by an
        expression no one stored): the variable holding it where ``with gradviz.trace()`` is
        written, else in ``frame`` (the user's line using it). The ``with`` block's name comes
        first: ``data`` passed to ``forward(self, inp)`` is the caller's ``data``."""
        outer = self._frame
        name = self._var_name(t, outer) if outer is not None and outer is not frame else None
        return name or self._var_name(t, frame)

    @staticmethod
    def _var_name(t: Tensor, frame: FrameType) -> str | None:
        for k, v in frame.f_locals.items():
            if v is t and not k.startswith("_"):
                return k
        return None

    def _name_from_frame(self, frame: FrameType) -> None:
        """Give auto-named tensors the names of the user's variables that hold them."""
        torch_tensor = getattr(sys.modules.get("torch"), "Tensor", None)  # torch_source.py
        kinds = (Tensor, torch_tensor) if isinstance(torch_tensor, type) else (Tensor,)
        for k, v in list(frame.f_locals.items()):
            if isinstance(v, kinds) and not k.startswith("_"):
                tid = self._tids.get(v)
                if tid is not None and tid in self._unnamed:
                    self._rename(tid, k)

    def _settle(self, frame: FrameType | None, final: bool = False) -> None:
        """Name what the statements that have finished bound, before ``frame``'s op records
        (``final``: all of them, the trace is ending)."""
        pending = self._pending
        while pending:
            top = pending[-1]
            f, depth = frame, 0
            while f is not None and (id(f) != top.fid or f.f_code is not top.code):
                f, depth = f.f_back, depth + 1
            if f is None:  # its frame has returned: the last value it made is what it bound
                self._guess(pending.pop())
                continue
            span = top.target.span
            if span is not None and span[0] <= f.f_lasti < span[1] and not final:
                return  # an inline comprehension still building its list (Python 3.12+)
            same = f.f_lasti == top.lasti
            # Whether its names can be given without the frame: one op ran at the instruction,
            # so once the instruction has finished, that op's result is what it stored.
            guess = top.target.kind == "names" and len(top.candidates) == len(top.last)
            if (same or not guess) and call_site(f) != top.site:
                # Another call of the function, given the frame the first one left (the same
                # address): the first has returned. Asked only where it matters, before
                # waiting on the frame or looking a name up in it.
                self._guess(pending.pop())
                continue
            if same and not final:
                # The same instruction again (a loop running it anew: its last value is bound
                # now; or the next op of one call, ``pred = model(x)``: nothing bound yet), or
                # a caller still running the instruction the op comes from inside.
                if depth == 0 and top.candidates and self._bind(top, f):
                    top.candidates = []
                return
            done = pending.pop()
            if guess:
                # NOTE [perf]: no lookup (reading a function's f_locals copies all its
                # variables), as in ``y = (y * 2).tanh()`` run in a loop.
                self._guess(done)
            else:
                self._bind(done, f)

    def _guess(self, p: Pending) -> None:
        """Name ``p``'s last candidates without its frame (see NOTE [tensor names])."""
        slots, last = p.target.slots, p.last
        if p.target.kind != "names" or not last or last[-1] not in p.candidates:
            return
        if p.element is not None:
            slots = (slots[p.element],) if len(slots) > 1 and p.element < len(slots) else ()
            names = [f"{slot_name(s)}[{p.element}]" if len(p.target.slots) == 1
                     else slot_name(s) for s in slots]
        else:
            names = p.target.names
        if len(names) == len(last):  # h, c = x.chunk(2): one name per output
            pairs = zip(last, names)
        elif len(names) == 1:
            pairs = zip(last[:1], names)  # a multi-output op: its main result (nll_loss)
        else:
            return
        for tid, name in pairs:
            if tid in self._unnamed:
                self._rename(tid, name)

    def _bind(self, p: Pending, frame: FrameType) -> bool:
        """Name the candidates of ``p`` found where its target now holds them in ``frame``."""
        cands = set(p.candidates)
        if not cands:
            return False
        target, found = p.target, False
        slots = target.slots
        if p.element is not None and len(slots) > 1:  # h, c = cell(...) with return h2, c2
            slots = slots[p.element:p.element + 1] if p.element < len(slots) else ()
            element = None
        else:
            element = p.element
        get = self._tids.get
        for slot in slots:
            value = lookup(frame, slot)
            name = slot_name(slot)
            if element is not None:  # out = cell(...): the element-th of the tuple it returned
                try:
                    value = value[element]
                except Exception:
                    continue
                name = f"{name}[{element}]"
            if target.kind == "list":  # ys = [x * i for i in ...]: ys[0], ys[1], ...
                if isinstance(value, (list, tuple)):
                    for k, v in enumerate(value):
                        tid = get(v) if isinstance(v, Tensor) else None
                        if tid in cands and tid in self._unnamed:
                            self._rename(tid, f"{name}[{k}]")
                            found = True
                continue
            tid = get(value) if isinstance(value, Tensor) else None
            if tid in cands:
                found = True
                if tid in self._unnamed:  # a name given once is kept
                    self._rename(tid, name)
        return found

    def _note_outputs(self, frame: FrameType, outputs: list[str], known: Any = None) -> None:
        """Make the outputs candidates of the binding the user's instruction will make
        (``known``: what names.known_target said of the instruction)."""
        if type(known) is Target and known.kind == "names":
            # NOTE [perf]: the instruction stores the value itself (``y = x.tanh()``): what
            # binding() would say without its walk.
            f, lasti, target, element = frame, frame.f_lasti, known, None
        else:
            where = binding(frame, is_internal)
            if where is None:
                return
            f, lasti, target, element = where
        pending = self._pending
        last = tuple(outputs)
        if pending:
            top = pending[-1]
            if (top.fid == id(f) and top.code is f.f_code and top.lasti == lasti
                    and top.site == call_site(f)):
                top.candidates.extend(outputs)
                top.last = last
                return
        if len(pending) >= 64:  # frames left mid-instruction by exceptions: never finish
            del pending[0]
        pending.append(Pending(id(f), f.f_code, lasti, target, list(outputs), element,
                                      last, call_site(f)))
