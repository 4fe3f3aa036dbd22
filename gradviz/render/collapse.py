"""Make any graph small enough to lay out: fold scopes and repeated blocks, split long edges.

Graphviz's ``dot`` lays out 1,000 nodes in well under a second but 5,000 in half a minute, and a
handful of *long* edges (a weight shared by every step of a loop, so its ``AccumulateGrad`` is
wired to nodes hundreds of ranks apart) can cost minutes even in a 100-node graph. The renderers
therefore hand their vertices and edges to :func:`plan` first, which decides what is drawn:

NOTE [collapse]
0. Unrolled loops first, whatever the budget (in drawings of more than ``SMALL`` vertices;
   ``max_nodes=math.inf`` turns it off): a run of at least ``MIN_REPEATS`` identical
   blocks in creation order (``Vertex.order``), such as the time steps of an LSTM, keeps its
   last block drawn and folds the others into one ``"19 × [AddmmBackward0 → …]"`` node.
   Twenty copies of one cell teach nothing the first does not, and cost the layout a lot.
   With ``depth=N``, every module scope more than N deep is then folded into one node (its
   outermost scope below depth N: ``--depth 1`` draws the model's box with one box per child
   module), whatever the budget: the module-level view torchview draws.
1. Otherwise, under the node budget (``max_nodes``), everything is drawn as is.
2. Over it, module scopes are folded into one summary node each, deepest scopes first, stopping
   at the first depth that fits (``expand=("fc1",)`` keeps a scope open).
3. Still over it, chains are folded, longest first: a run of nodes where each has one successor
   and the next has one predecessor (ignoring shared hubs such as a weight's ``AccumulateGrad``,
   and carrying along the leaves hanging off it). A chain that repeats a block becomes
   ``"12 × [MulBackward0 → AddBackward0]"``.
4. Still over it, the first ``max_nodes - 1`` nodes (in the caller's order: the roots first) are
   kept and the rest becomes one ``"… N more"`` node, so a layout is always bounded.
5. Many sibling outputs of one op (more than ``MANY_OUTPUTS``, as ``unbind`` makes one tensor
   per time step) that lead to nothing drawn on its own (only into folded nodes, or nowhere)
   become one ``"19 × tensor (16, 16) float32"`` node; those feeding a drawn node stay. A
   folded loop's inputs are otherwise a row of identical boxes as wide as the loop is long.
6. Finally, if the edges would need many of dot's virtual nodes (sum of rank spans), each long
   edge into a shared node is redirected to a *proxy*: a dashed copy of that node drawn next to
   the edge's other end (node splitting). The shortest edge keeps the real node.

Folded scopes are titled with the module's class when the caller knows it
(``classes``): ``features.0: Conv2d``.

NOTE [block slots] Every group says where each of its members sits (:attr:`Group.slots`):
``(repetition, position)``. In a group of ``N × [block]`` the repetition is the block's index in
creation order (0 to N - 1) and the position is the member's place in the block (the block's
k-th node, or the j-th leaf hanging off it, or the j-th vertex a folded scope in the block stood
for), numbered as the first repetition meets them, so members of two repetitions that play the
same part share a position. Any other group is one repetition whose positions are its members'
order. A viewer can then draw one repetition (every repetition has the same structure) and show
any of them in it: the HTML player opens folded blocks this way.

Everything here is iterative and linear (a million-node chain is fine) and deterministic: the
same input gives the same ids, so golden files stay stable.
"""

from __future__ import annotations

import contextlib
import gc
import heapq
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from gradviz.trace.model import scope_key

__all__ = ["DEFAULT_MAX_NODES", "MANY_OUTPUTS", "Vertex", "Group", "Plan", "plan",
           "best_period", "no_gc", "scope_label"]

DEFAULT_MAX_NODES = 300
MIN_CHAIN = 3  # shorter chains are not worth a summary node
MAX_PERIOD = 8  # longest repeated block looked for in a chain (in nodes)
MIN_REPEATS = 8  # identical blocks in a row that are folded even under the budget (step 0) ...
SMALL = 120  # ... in a drawing of more vertices than this: a smaller one reads well as it is
MAX_BLOCK = 64  # longest block (in drawn nodes) step 0 looks for: an LSTM step is ~14 nodes
LONG_EDGE = 3  # rank span above which an edge into a shared node may get a proxy
VIRTUAL_BUDGET = 150  # total virtual nodes (sum of span - 1) dot handles quickly
MANY_OUTPUTS = 8  # an op with more tensor outputs than this may have some drawn as one (step 5)


@dataclass
class Vertex:
    """One thing a renderer wants to draw.

    ``kind`` is what identical blocks are compared by (``"MulBackward0"``); ``attach`` marks
    vertices that may be folded into their only neighbour (leaf tensors, saved values);
    ``named`` says whether ``kind`` is worth naming in a summary label (ops: yes, tensors: no);
    ``summary`` is how a tensor is counted when several are drawn as one
    (``"tensor (16, 16) float32"``).
    """

    id: str
    kind: str
    scope: tuple[str, ...] = ()
    attach: bool = False
    named: bool = True
    order: float | None = None  # creation order (sequence_nr) when it differs from the list's
    summary: str = ""


@dataclass
class Group:
    """A summary node standing for several vertices."""

    id: str
    kind: str  # "repeat", "scope", "chain", "rest" or "outputs"
    title: str
    detail: str
    size: int  # how many vertices it stands for
    scope: tuple[str, ...] = ()  # the scope it is drawn in (clusters)
    key: str = ""  # what identical blocks are compared by
    path: tuple[str, ...] = ()  # the folded scope, for a "scope" group
    #: How many repetitions of one block it holds (``"11 × [...]"``: 11); 1 for any other group.
    repeats: int = 1
    #: Each member's ``(repetition, position)``: which repetition it is in (0-based) and which
    #: place of the block it takes, the same place in every repetition (NOTE [block slots]).
    slots: dict[str, tuple[int, int]] = field(default_factory=dict)


@dataclass
class Plan:
    """What to draw: each vertex's representative, the groups, and the proxied edge ends."""

    rep: dict[str, str] = field(default_factory=dict)  # folded vertex id -> group id
    groups: dict[str, Group] = field(default_factory=dict)
    proxies: dict[int, tuple[str, str]] = field(default_factory=dict)  # edge index -> (end, id)
    proxy_of: dict[str, str] = field(default_factory=dict)  # proxy id -> what it copies
    budget: int = DEFAULT_MAX_NODES

    def drawn(self, vid: str) -> str:
        """The id drawn for vertex ``vid``: itself, or the group it was folded into."""
        return self.rep.get(vid, vid)

    @property
    def collapsed(self) -> bool:
        return bool(self.groups)


def plan(vertices: Sequence[Vertex], edges: Sequence[tuple[str, str]],
         max_nodes: float | None = None, expand: Iterable[str] = (), prefix: str = "g",
         noun: str = "nodes", classes: Mapping[str, str] | None = None,
         depth: int | None = None) -> Plan:
    """Decide how to draw a graph within ``max_nodes`` nodes (see NOTE [collapse]).

    Args:
        vertices: what would be drawn, in the order to keep (roots / creation order first).
        edges: ``(from id, to id)`` pairs; the index of an edge keys :attr:`Plan.proxies`.
        max_nodes: the node budget (default :data:`DEFAULT_MAX_NODES`); ``math.inf`` never
            folds anything.
        expand: scope names (``"fc1"``) or dotted paths (``"encoder.fc1"``) kept unfolded.
        prefix: prefix of the group ids (``g0, g1, ...``) so two plans can share a drawing.
        noun: what a summary counts (``"nodes"``, ``"ops"``).
        classes: module class names by :func:`~gradviz.trace.model.scope_key`
            (``Trace.module_classes``), for the titles of folded scopes.
        depth: fold every module scope deeper than this into one node (0: the outermost
            modules each become one node); None: only as the budget needs.

    Example:
        >>> vs = [Vertex(f"n{i}", "MulBackward0" if i % 2 else "AddBackward0")
        ...       for i in range(10)]
        >>> es = [(f"n{i}", f"n{i + 1}") for i in range(9)]
        >>> p = plan(vs, es, max_nodes=4)
        >>> [g.title for g in p.groups.values()]
        ['5 × [AddBackward0 → MulBackward0]']
    """
    budget = DEFAULT_MAX_NODES if max_nodes is None else max_nodes
    if not budget >= 1:
        raise ValueError(f"max_nodes must be at least 1; got {max_nodes!r}")
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int)
                              or depth < 0):
        raise ValueError(f"depth must be a non-negative integer or None; got {depth!r}")
    with no_gc():
        return _plan(vertices, edges, budget, set(expand), prefix, noun, classes or {}, depth)


def _plan(vertices: Sequence[Vertex], edges: Sequence[tuple[str, str]], budget: float,
          expand: set[str], prefix: str, noun: str, classes: Mapping[str, str],
          depth: int | None) -> Plan:
    expanded = _expanded_scopes(vertices, expand)

    def fresh() -> _State:
        state = _State(vertices, edges, budget, prefix, noun, classes)
        if budget != float("inf") and len(vertices) > SMALL:
            state.fold_repeats(expanded)
        if depth is not None:
            state.fold_scopes(depth, expanded)
        return state

    st = fresh()
    if st.count > budget:
        deepest = max((len(v.scope) for v in vertices), default=0)
        if depth is not None:  # scopes deeper than ``depth`` are folded already
            deepest = min(deepest, depth)
        # Deepest scopes first; at each depth, repeated blocks too. Stop at the first that fits.
        for level in list(range(deepest - 1, -1, -1)) or [None]:
            st = fresh()
            if level is not None:
                st.fold_scopes(level, expanded)
            if st.count > budget:
                st.fold_chains(expanded)
            if st.count <= budget:
                break
        if st.count > budget:
            st.fold_rest()
    if budget != float("inf"):
        st.fold_outputs()
    st.split_long_edges()
    return st.plan


@contextlib.contextmanager
def no_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while building a drawing.

    A drawing of a big trace allocates tens of thousands of small objects next to the trace's
    hundreds of thousands, and every full collection rescans all of them: about a third of the
    time. Nothing built here forms cycles, so reference counting frees it all anyway.
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


# -- internals ------------------------------------------------------------------------------------
def _expanded_scopes(vertices: Sequence[Vertex], expand: set[str]) -> set[tuple[str, ...]]:
    """The scope paths the user asked to keep open."""
    out: set[tuple[str, ...]] = set()
    if not expand:
        return out
    for scope in {v.scope for v in vertices}:
        for k in range(1, len(scope) + 1):
            p = scope[:k]
            if p[-1] in expand or ".".join(p) in expand:
                out.add(p)
    return out


def best_period(codes: Sequence[int], max_period: int = MAX_PERIOD) -> tuple[int, int, int]:
    """The longest stretch of ``codes`` that repeats a block: ``(start, period, repeats)``.

    ``repeats`` is 0 when nothing repeats. Smaller periods win ties.

    Example:
        >>> best_period([9, 1, 2, 1, 2, 1, 2, 7])
        (1, 2, 3)
    """
    m = len(codes)
    best = (0, 0, 0)
    best_len = 0
    for p in range(1, min(max_period, m // 2) + 1):
        run = 0
        for i in range(p, m):
            if codes[i] == codes[i - p]:
                run += 1
                if run + p > best_len and (run + p) // p >= 2:
                    best_len = run + p
                    best = (i - run - p + 1, p, (run + p) // p)
            else:
                run = 0
    return best


def _longest_repeat(codes: Sequence[int], max_period: int) -> tuple[int, int, int]:
    """:func:`best_period` with NumPy: one vectorised comparison per period, so that step 0
    stays cheap on a 40,000-vertex trace. Returns ``(start, period, repeats)``, the blocks
    aligned to the end of the run."""
    a = np.asarray(codes, dtype=np.int64)
    best, best_len = (0, 0, 0), 0
    for p in range(1, min(max_period, len(a) // 2) + 1):
        same = np.concatenate(([False], a[p:] == a[:-p], [False]))
        edges = np.flatnonzero(same[1:] != same[:-1])  # run starts and ends, alternating
        if not len(edges):
            continue
        lengths = edges[1::2] - edges[::2]
        k = int(np.argmax(lengths))
        if lengths[k] + p > best_len:
            best_len = int(lengths[k]) + p
            # Blocks end where the run ends: a loop's last step is the run's end, while its
            # start may take along look-alikes made before the loop (the first of 20 inputs
            # an unbind made, a tensor like each step's last), which belong to none of them.
            best = (int(edges[2 * k]) + best_len % p, p, best_len // p)
    return best


def _scope_title(path: tuple[str, ...]) -> str:
    """A folded scope's name (``fc1``), with the parent's for a bare index (``0`` in a
    ``Sequential`` is ``Sequential.0``)."""
    name = path[-1]
    if name.isdigit() and len(path) > 1:
        return f"{path[-2]}.{name}"
    return name


def scope_label(path: Sequence[str], classes: Mapping[str, str], star: bool = False) -> str:
    """How a module scope is titled: ``features.0: Conv2d``, its name alone when the class is
    unknown or is the name (an outermost module is named by its class). ``star`` writes the
    indices of the name as ``*`` (identical scopes folded together), never the class's digits.

    Example:
        >>> classes = {"LeNet/features/features.0": "Conv2d"}
        >>> scope_label(("LeNet", "features", "features.0"), classes)
        'features.0: Conv2d'
        >>> scope_label(("LeNet",), {"LeNet": "LeNet"})
        'LeNet'
    """
    path = tuple(path)
    name = _scope_title(path)
    cls = classes.get(scope_key(path))
    if star:
        name = _star(name)
    return name if not cls or cls == path[-1] else f"{name}: {cls}"


def _ranges(ix: Sequence[int]) -> str:
    """``[0, 1, 2, 5]`` -> ``"0–2, 5"``."""
    out: list[str] = []
    i = 0
    while i < len(ix):
        j = i
        while j + 1 < len(ix) and ix[j + 1] == ix[j] + 1:
            j += 1
        out.append(str(ix[i]) if i == j else f"{ix[i]}–{ix[j]}")
        i = j + 1
    return ", ".join(out)


def _star(text: str) -> str:
    """``layers.3`` -> ``layers.*``: how a scope is named when identical ones are folded."""
    return re.sub(r"\d+", "*", text)


class _State:
    def __init__(self, vertices: Sequence[Vertex], edges: Sequence[tuple[str, str]],
                 budget: float, prefix: str, noun: str, classes: Mapping[str, str]) -> None:
        self.vertices = vertices
        self.classes = classes
        self.info = {v.id: v for v in vertices}
        self.edges = edges
        self.budget = budget
        self.prefix = prefix
        self.noun = noun
        self.plan = Plan(budget=budget if budget != float("inf") else 10**18)
        self.members: dict[str, list[str]] = {}
        self.count = len(vertices)
        self.made = 0  # groups made so far: ids are never reused, even after a group dissolves

    # groups
    def _new_group(self, kind: str, title: str, members: list[str], scope: tuple[str, ...],
                   key: str = "", path: tuple[str, ...] = (),
                   slots: dict[str, tuple[int, int]] | None = None, repeats: int = 1) -> Group:
        gid = f"{self.prefix}{self.made}"
        self.made += 1
        while gid in self.info or gid in self.members:  # never shadow a real vertex id
            gid += "_"
        named = Counter(self.info[m].kind for m in members if self.info[m].named)
        n = sum(named.values())
        top = ", ".join(k if c == 1 else f"{k} ×{c}" for k, c in named.most_common(3))
        if len(named) > 3:
            top += ", …"
        detail = f"{n} {self.noun if n != 1 else self.noun.rstrip('s')}" + (
            f": {top}" if top else "")
        key = key or "|".join(f"{k}:{c}" for k, c in sorted(named.items()))
        group = Group(id=gid, kind=kind, title=title, detail=detail, size=len(members),
                      scope=scope, key=key, path=path, repeats=repeats,
                      slots=slots if slots is not None else {m: (0, i)
                                                             for i, m in enumerate(members)})
        self.members[gid] = members
        self.plan.groups[gid] = group
        for m in members:
            self.plan.rep[m] = gid
        return group

    def _originals(self, q: str) -> list[str]:
        """The vertices quotient node ``q`` stands for (dissolving its group, if any)."""
        if q in self.plan.groups:
            del self.plan.groups[q]
            return self.members.pop(q)
        return [q]

    # 2. scopes
    def fold_scopes(self, level: int, expanded: set[tuple[str, ...]]) -> None:
        """Fold every scope ``level + 1`` deep (or deeper, under an expanded one) into a node."""
        protected = {p[:k] for p in expanded for k in range(1, len(p) + 1)}
        cache: dict[tuple[str, ...], tuple[str, ...] | None] = {}

        def key(scope: tuple[str, ...]) -> tuple[str, ...] | None:
            if scope not in cache:
                cache[scope] = next((scope[:k] for k in range(level + 1, len(scope) + 1)
                                     if scope[:k] not in protected), None)
            return cache[scope]

        # Work on what is drawn so far: a folded loop moves into its scope's node as a whole.
        order, _, _ = self._quotient()
        groups = self.plan.groups
        by_key: dict[tuple[str, ...], list[str]] = {}
        unfolded = 0
        for q in order:
            k = key(groups[q].scope if q in groups else self.info[q].scope)
            if k is None:
                unfolded += 1
            else:
                by_key.setdefault(k, []).append(q)
        for k, qs in by_key.items():
            members = [m for q in qs for m in self._originals(q)]
            self._new_group("scope", scope_label(k, self.classes), members, k[:-1], path=k)
        self.count = len(by_key) + unfolded

    # 0. unrolled loops
    def fold_repeats(self, expanded: set[tuple[str, ...]]) -> None:
        """Fold runs of ``MIN_REPEATS`` or more identical blocks, all but the last block of each
        run, into one node (NOTE [collapse], step 0).

        The blocks are looked for in creation order, not in the caller's: a backward graph is
        listed breadth-first from its roots, which interleaves the time steps (a ``stack`` of
        all hidden states reaches every step at once), while creation order lists each step's
        nodes together. Shared hubs (a weight used by every step) and leaves hanging off one
        node are left out of the sequence; the leaves travel with the node they hang off.
        """
        order, succ, pred = self._quotient()
        attached = self._peel(order, succ, pred)
        kids: dict[str, list[str]] = {}
        for q, r in attached.items():
            kids.setdefault(r, []).append(q)
        index = {v.id: i for i, v in enumerate(self.vertices)}

        def when(q: str) -> tuple[float, int]:
            o = self.info[q].order
            return (float("inf") if o is None else o, index[q])

        def open_scope(q: str) -> bool:
            s = self.info[q].scope
            return any(s[:k] in expanded for k in range(1, len(s) + 1))

        seq = sorted((q for q in order if q not in attached and not open_scope(q)), key=when)
        fan = {q: len(succ[q]) + len(pred[q]) for q in seq}
        seq = [q for q in seq if fan[q] <= 2 * MIN_REPEATS]  # hubs: a weight used every step
        codes: dict[str, int] = {}
        work = [[codes.setdefault(self.info[q].kind, len(codes)) for q in seq]]
        spans = [(0, len(seq))]
        while spans:
            lo, hi = spans.pop()
            start, p, reps = _longest_repeat(work[0][lo:hi], MAX_BLOCK)
            if reps < MIN_REPEATS:
                continue
            start += lo
            block = seq[start + (reps - 1) * p:start + reps * p]  # the last block stays drawn
            folded = seq[start:start + (reps - 1) * p]
            spans.extend([(lo, start), (start + reps * p, hi)])
            if not any(self.info[q].named for q in block):
                continue  # tensors side by side (an unbind's outputs): step 5 knows which count
            inside = set(folded)
            links = [sum(n in inside for n in succ[q]) for q in folded]
            if len(folded) > 1 and sum(links) >= len(folded) - 1 and all(
                    k <= 1 and sum(n in inside for n in pred[q]) <= 1
                    for k, q in zip(links, folded)):
                continue  # a plain chain: step 3 folds it whole when over the budget
            members, slots = _slotted(folded, p, kids, lambda q: [q])
            names = [self.info[q].kind for q in block if self.info[q].named]
            shown = names if len(names) <= 3 else [names[0], "…", names[-1]]
            title = f"{reps - 1} × [{' → '.join(shown) or '…'}]"
            scope = _common_prefix(self.info[m].scope for m in members)
            group = self._new_group("repeat", title, members, scope, slots=slots,
                                    repeats=reps - 1)
            per = Counter(names)
            top = ", ".join(k if c == 1 else f"{k} ×{c}" for k, c in per.most_common(3))
            group.detail = (f"{reps - 1} more like the {len(block)} {self.noun} next to it"
                            + (f": {top}{', …' if len(per) > 3 else ''}" if top else ""))
            self.count -= len(members) - 1

    # 3. chains
    def _quotient(self) -> tuple[list[str], dict[str, list[str]], dict[str, list[str]]]:
        rep = self.plan.rep
        order: list[str] = []
        seen: set[str] = set()
        for v in self.vertices:
            q = rep.get(v.id, v.id)
            if q not in seen:
                seen.add(q)
                order.append(q)
        succ: dict[str, list[str]] = {q: [] for q in order}
        pred: dict[str, list[str]] = {q: [] for q in order}
        pairs: set[tuple[str, str]] = set()
        for a, b in self.edges:
            qa, qb = rep.get(a, a), rep.get(b, b)
            if qa == qb or (qa, qb) in pairs or qa not in succ or qb not in succ:
                continue
            pairs.add((qa, qb))
            succ[qa].append(qb)
            pred[qb].append(qa)
        return order, succ, pred

    def _peel(self, order: list[str], succ: dict[str, list[str]], pred: dict[str, list[str]]
              ) -> dict[str, str]:
        """Attach leaf-like vertices with one neighbour to it, repeatedly (leaf -> its
        AccumulateGrad -> the node using it)."""
        groups = self.plan.groups

        def attachable(q: str) -> bool:
            return q not in groups and self.info[q].attach

        # The quotient is a DAG with de-duplicated edges: succ and pred never share a node.
        deg = {q: len(succ[q]) + len(pred[q]) for q in order}
        attached: dict[str, str] = {}
        queue = [q for q in order if deg[q] == 1 and attachable(q)]
        while queue:
            q = queue.pop()
            if q in attached or deg[q] != 1:
                continue
            r = next(n for n in (*succ[q], *pred[q]) if n not in attached)
            attached[q] = r
            deg[r] -= 1
            if deg[r] == 1 and attachable(r) and r not in attached:
                queue.append(r)
        return attached

    def fold_chains(self, expanded: set[tuple[str, ...]]) -> None:
        order, succ, pred = self._quotient()
        attached = self._peel(order, succ, pred)
        kids: dict[str, list[str]] = {}
        for q, r in attached.items():
            kids.setdefault(r, []).append(q)
        groups = self.plan.groups

        def pinned(q: str) -> bool:
            if q in groups or not expanded:
                return False
            s = self.info[q].scope
            return any(s[:k] in expanded for k in range(1, len(s) + 1))

        live = [q for q in order if q not in attached]
        live_set = set(live)
        ins = {q: sum(1 for p in pred[q] if p in live_set) for q in live}
        outs = {q: sum(1 for s in succ[q] if s in live_set) for q in live}
        core = {q for q in live if not pinned(q)
                and not (ins[q] >= 2 and outs[q] == 0) and not (outs[q] >= 2 and ins[q] == 0)}
        nxt: dict[str, str] = {}
        for u in core:  # u -> v is a chain link when it is u's only core successor ...
            out_core = [s for s in succ[u] if s in core]
            if len(out_core) == 1:
                v = out_core[0]
                # ... and u is v's only core predecessor
                if sum(1 for p in pred[v] if p in core) == 1:
                    nxt[u] = v
        has_prev = set(nxt.values())
        heap: list[tuple[int, int, list[str]]] = []
        for q in live:
            if q in nxt and q not in has_prev:
                seq = [q]
                while seq[-1] in nxt:
                    seq.append(nxt[seq[-1]])
                if len(seq) >= MIN_CHAIN:
                    heap.append((-len(seq), len(heap), seq))
        heapq.heapify(heap)
        tick = len(heap)

        codes: dict[str, int] = {}

        def kind_key(q: str) -> str:
            return "g:" + groups[q].key if q in groups else "v:" + self.info[q].kind

        def starred(q: str) -> str:
            g = groups[q]
            return scope_label(g.path, self.classes, star=True) if g.path else _star(g.title)

        def shown(q: str, block: list[str]) -> str | None:
            if q not in groups:
                v = self.info[q]
                return v.kind if v.named else None
            name = starred(q)
            if sum(1 for b in block if b in groups and starred(b) == name) < 2:
                return name
            # Identical names (Sequential.0, .1, ...): say what is inside instead.
            named = Counter(self.info[m].kind for m in self.members[q] if self.info[m].named)
            if not named:
                return name
            # the most frequent kind, leaves' AccumulateGrad last, longer names first on ties
            top = max(named, key=lambda k: (k != "AccumulateGrad", named[k], len(k)))
            return top + ("…" if len(named) > 1 else "")

        while self.count > self.budget and heap:
            _, _, seq = heapq.heappop(heap)
            code = [codes.setdefault(kind_key(q), len(codes)) for q in seq]
            start, p, reps = best_period(code)
            period, repeats = len(seq), 1
            if reps >= 2 and reps * p * 2 >= len(seq):
                period, repeats = p, reps
                block_q = seq[start:start + p]
                block = [s for s in (shown(q, block_q) for q in block_q) if s]
                title = f"{reps} × [{' → '.join(block) or '…'}]"
                part = seq[start:start + reps * p]
                for rest in (seq[:start], seq[start + reps * p:]):
                    if len(rest) >= MIN_CHAIN:
                        heapq.heappush(heap, (-len(rest), tick, rest))
                        tick += 1
            else:
                ends = [s for s in (shown(q, [q]) for q in (seq[0], seq[-1])) if s] or ["…"]
                title = f"chain of {len(seq)}: {ends[0]} → … → {ends[-1]}"
                part = seq
            # gather the chain and everything hanging off it
            quot = _gathered(part, kids)
            members, slots = _slotted(part, period, kids, self._originals)
            scope = _common_prefix(self.info[m].scope for m in members)
            self._new_group("chain", title, members, scope, slots=slots, repeats=repeats)
            self.count -= len(quot) - 1

    # 4. the rest
    def fold_rest(self) -> None:
        order, _, _ = self._quotient()
        keep = int(self.budget) - 1
        rest = order[keep:]
        members: list[str] = []
        for q in rest:
            members.extend(self._originals(q))
        g = self._new_group("rest", f"… {len(members)} more", members, ())
        g.detail = f"{len(rest)} nodes not drawn (max_nodes={int(self.budget)})"
        self.count = keep + 1

    # 5. many outputs of one op
    def fold_outputs(self) -> None:
        """Draw as one node the outputs of an op with more than ``MANY_OUTPUTS`` of them that
        feed nothing drawn on its own (NOTE [collapse], step 5)."""
        order, succ, pred = self._quotient()
        groups = self.plan.groups
        info = self.info
        for q in order:
            if q in groups or not info[q].named or len(succ[q]) <= MANY_OUTPUTS:
                continue
            outs = [(i, t) for i, t in enumerate(succ[q])
                    if t not in groups and not info[t].named and pred[t] == [q]]
            if len(outs) <= MANY_OUTPUTS:
                continue
            # An output is needed on its own when something drawn as itself reads it.
            spare = [(i, t) for i, t in outs if not any(n not in groups for n in succ[t])]
            if len(spare) < 2:
                continue
            members = [t for _, t in spare]
            kinds = Counter(info[t].summary or info[t].kind for t in members)
            what = kinds.most_common(1)[0][0] if len(kinds) == 1 else "tensor"
            title = f"{len(members)} × {what}"
            scope = _common_prefix(info[t].scope for t in members)
            group = self._new_group("outputs", title, members, scope)
            group.detail = f"outputs {_ranges([i for i, _ in spare])} of {info[q].kind}"
            self.count -= len(members) - 1

    # 6. long edges
    def split_long_edges(self) -> None:
        rep = self.plan.rep
        order, succ, pred = self._quotient()
        rank = _ranks(order, succ, pred)
        spans: list[tuple[int, int, str, str]] = []  # (span, edge index, from, to)
        virtual = 0
        for i, (a, b) in enumerate(self.edges):
            qa, qb = rep.get(a, a), rep.get(b, b)
            if qa == qb or qa not in rank or qb not in rank:
                continue
            span = abs(rank[qb] - rank[qa])
            virtual += max(0, span - 1)
            spans.append((span, i, qa, qb))
        if virtual <= VIRTUAL_BUDGET:
            return
        # For each shared end, the shortest edge keeps the real node; longer ones get proxies.
        spans.sort()
        kept: set[tuple[str, str]] = set()  # (end, node) that already has its real edge
        counts: Counter[str] = Counter()
        made: dict[tuple[str, str, str], str] = {}  # one proxy per (from, to, end)
        for span, i, qa, qb in spans:
            if len(pred[qb]) >= 2:
                end, node = "head", qb
            elif len(succ[qa]) >= 2:
                end, node = "tail", qa
            else:
                continue
            if span <= LONG_EDGE or (end, node) not in kept:
                kept.add((end, node))
                continue
            pid = made.get((qa, qb, end))
            if pid is None:
                pid = made[qa, qb, end] = f"{node}~{counts[node]}"
                counts[node] += 1
            self.plan.proxies[i] = (end, pid)
            self.plan.proxy_of[pid] = node


def _gathered(seq: Sequence[str], kids: Mapping[str, Sequence[str]]) -> list[str]:
    """``seq`` and, after each of its vertices, what hangs off it (depth first)."""
    out: list[str] = []
    stack = list(reversed(seq))
    while stack:
        q = stack.pop()
        out.append(q)
        stack.extend(reversed(kids.get(q, ())))
    return out


def _slotted(seq: Sequence[str], period: int, kids: Mapping[str, Sequence[str]],
             originals: Callable[[str], list[str]]
             ) -> tuple[list[str], dict[str, tuple[int, int]]]:
    """The members of a run of blocks (``seq``, ``period`` quotient nodes a block) with what
    hangs off them, in :func:`_gathered`'s order, and each one's ``(repetition, position)``
    (NOTE [block slots]). ``originals`` turns a quotient node into the vertices it stands for."""
    members: list[str] = []
    slots: dict[str, tuple[int, int]] = {}
    places: dict[tuple[int, ...], int] = {}  # a part of the block (its path) -> its position
    for i, q in enumerate(seq):
        repetition, at = divmod(i, period)
        stack: list[tuple[str, tuple[int, ...]]] = [(q, (at,))]
        while stack:
            x, path = stack.pop()
            for j, m in enumerate(originals(x)):
                members.append(m)
                slots[m] = (repetition, places.setdefault((*path, -1, j), len(places)))
            stack.extend(reversed([(c, (*path, k)) for k, c in enumerate(kids.get(x, ()))]))
    return members, slots


def _common_prefix(scopes: Iterable[tuple[str, ...]]) -> tuple[str, ...]:
    it = iter(scopes)
    prefix = next(it, ())
    for s in it:
        if not prefix:
            break
        k = 0
        while k < len(prefix) and k < len(s) and prefix[k] == s[k]:
            k += 1
        prefix = prefix[:k]
    return prefix


def _ranks(order: list[str], succ: dict[str, list[str]], pred: dict[str, list[str]]
           ) -> dict[str, int]:
    """Layers as dot would roughly assign them: longest path from the sources, then each
    source pulled down next to its first user. Nodes on a cycle (bad input) are left out."""
    indeg = {q: len(pred[q]) for q in order}
    rank = {q: 0 for q in order}
    stack = [q for q in order if indeg[q] == 0]
    done: list[str] = []
    while stack:
        q = stack.pop()
        done.append(q)
        for s in succ[q]:
            rank[s] = max(rank[s], rank[q] + 1)
            indeg[s] -= 1
            if indeg[s] == 0:
                stack.append(s)
    out = {q: rank[q] for q in done}
    # What hangs from a source through nodes of one input each (an initial state -> unbind ->
    # its result) has nothing holding it up: dot draws it just above where it is used, so it
    # is ranked there, latest first, and its edges are not mistaken for long ones.
    floating = set()
    for q in done:  # topological order: a node's inputs are decided before it
        if not pred[q] or (len(pred[q]) == 1 and pred[q][0] in floating):
            floating.add(q)
    for q in reversed(done):
        if q in floating and succ[q]:
            out[q] = min(out.get(s, 1) for s in succ[q]) - 1
    return out
