// gradviz step player: replays one backward pass of a trace, one engine step at a time.
//
// gradviz/render/html.py wraps this file as
//     (function (ROOT_ID, KEYS_ON_DOCUMENT) { ...this file... })("gvp-...", true);
// so every name below is local to one player and several players can share a page (Jupyter).
// Everything is looked up inside the player's own container, never by global id.
//
// NOTE [safety] Trace data (tensor names, op names, file paths, code lines) is only ever put
// on the page with textContent / createElement, never with innerHTML.
//
// NOTE [SVG contract] The graphs are Graphviz SVG: each <g class="node"> has a <title> that is
// the trace id of what it draws (n0, t3, op2, ...), and each <g class="edge"> a title "n4->n0".
// The player highlights elements by adding CSS classes to those <g> elements:
//   gv-current (the node this step is about), gv-ready (in the ready queue),
//   gv-done (already executed), gv-flow (an edge a gradient is travelling along).
"use strict";

/**
 * This player's container. The script sits inside it, so its own place is tried first; then the
 * id; then open shadow roots, where some notebook front ends render outputs (there neither
 * document.currentScript nor document.getElementById can see the player).
 */
function findRoot() {
  const here = document.currentScript;
  const mine = here && here.closest ? here.closest(".gv-player") : null;
  if (mine) {
    return mine;
  }
  const byId = document.getElementById(ROOT_ID);
  if (byId) {
    return byId;
  }
  const scopes = [document];
  while (scopes.length) {
    for (const e of scopes.pop().querySelectorAll("*")) {
      if (e.shadowRoot) {
        const found = e.shadowRoot.getElementById(ROOT_ID);
        if (found) {
          return found;
        }
        scopes.push(e.shadowRoot);
      }
    }
  }
  return null;
}

const root = findRoot();
if (!root) {
  return;
}

// The element with data-role=name inside this player, looked up once: a querySelector walks
// the page, which holds a row per step (20,000 rows in a long run), so a lookup per step would
// make every step as slow as the run is long (NOTE [constant cost per step]).
const parts = new Map();

function part(name) {
  if (!parts.has(name)) parts.set(name, root.querySelector('[data-role="' + name + '"]'));
  return parts.get(name);
}

/** A new element with a class and text (text is always set as text, never parsed). */
function el(tag, className, text) {
  const e = document.createElement(tag);
  if (className) {
    e.className = className;
  }
  if (text !== undefined && text !== null) {
    e.textContent = String(text);
  }
  return e;
}

function showError(message) {
  const box = part("error");
  box.textContent = message;
  box.hidden = false;
}

let payload;
try {
  payload = JSON.parse(part("data").textContent);
} catch (err) {
  showError("gradviz player: cannot read the embedded trace (" + err + ")");
  return;
}
const trace = payload.trace;
const runs = trace.runs;
// One timeline per run (gradviz/trace/replay.py, NOTE [one replay]): when each part of the
// engine's state changed. Showing step k is lookups in it (at <= k); nothing is re-derived here.
const timelines = payload.timelines || [];
const memories = payload.memory || []; // per run: {saved, buffers} as [[step, bytes], ...]
// NOTE [run numbers] (gradviz/trace/model.py): each run's number and name ("run 20 of 20") as
// the drawings' titles give them, from Python; the header, the picker and the address use them.
const runNumbers = payload.runNumbers || [];
const runNames = payload.runNames || [];

// -- lookups ----------------------------------------------------------------------------------
const tensors = new Map(trace.tensors.map((t) => [t.id, t]));
const nodes = new Map(trace.nodes.map((n) => [n.id, n]));
const ops = new Map(trace.ops.map((o) => [o.id, o]));

function tensorName(id) {
  const t = tensors.get(id);
  return t ? t.name : String(id);
}

/** What a node is called on screen: its PyTorch class name (and the leaf it feeds). */
function nodeName(id) {
  const n = nodes.get(id);
  if (!n) {
    return String(id);
  }
  if (n.kind === "accumulate_grad" && n.variable) {
    return n.name + " (" + tensorName(n.variable) + ")";
  }
  return n.name;
}

// -- the SVG drawings -------------------------------------------------------------------------
/** The text of a <g>'s own <title> child (Graphviz puts the DOT name there). */
function titleOf(g) {
  for (const child of g.children) {
    if (child.localName === "title") {
      return child.textContent.trim();
    }
  }
  return null;
}

/** Drop a ":port" suffix from a DOT endpoint ("n0:out1" -> "n0"). */
function endpoint(s) {
  return s.split(":")[0].trim();
}

/** Maps from trace id to the node <g>s, and from "a->b" to the edge <g>s, of one drawing. */
function indexDrawing(box) {
  const byNode = new Map();
  const byEdge = new Map();
  if (!box) {
    return {byNode, byEdge};
  }
  for (const g of box.querySelectorAll("g.node")) {
    const t = titleOf(g);
    if (t !== null) {
      if (!byNode.has(t)) byNode.set(t, []);
      byNode.get(t).push(g);
    }
  }
  for (const g of box.querySelectorAll("g.edge")) {
    const t = titleOf(g);
    const arrow = t === null ? -1 : t.indexOf("->");
    if (arrow >= 0) {
      const key = endpoint(t.slice(0, arrow)) + "->" + endpoint(t.slice(arrow + 2));
      if (!byEdge.has(key)) byEdge.set(key, []);
      byEdge.get(key).push(g);
    }
  }
  return {byNode, byEdge};
}

const backwardBoxes = Array.from(part("backward").querySelectorAll(".gv-svg[data-run]"));
const backwardIndex = backwardBoxes.map(indexDrawing);
const forwardIndex = indexDrawing(part("forward"));

// -- formatting tensor summaries --------------------------------------------------------------
function fmtNum(v) {
  if (typeof v !== "number") {
    return String(v); // "nan", "inf", "-inf", booleans
  }
  if (Number.isInteger(v)) {
    return String(v);
  }
  const a = Math.abs(v);
  if (a !== 0 && (a < 1e-3 || a >= 1e5)) {
    return v.toExponential(3);
  }
  return String(Number(v.toPrecision(4)));
}

/** Nested value lists as text, stopping after `budget` numbers. */
function fmtValues(values, budget) {
  let left = budget;
  function walk(v) {
    if (!Array.isArray(v)) {
      left -= 1;
      return fmtNum(v);
    }
    const parts = [];
    for (const item of v) {
      if (left <= 0) {
        parts.push("\u2026");
        break;
      }
      parts.push(walk(item));
    }
    return "[" + parts.join(", ") + "]";
  }
  return walk(values);
}

/** A tensor summary ({shape, dtype, values | stats+head}) as an element. */
function summaryEl(s) {
  if (s === null || s === undefined) {
    return el("span", "gv-none", "None");
  }
  const box = el("span", "gv-tensor");
  if (Object.prototype.hasOwnProperty.call(s, "const")) {
    box.appendChild(el("code", null, JSON.stringify(s.const)));
    return box;
  }
  const shape = Array.isArray(s.shape) ? "[" + s.shape.join(", ") + "]" : "?";
  box.appendChild(el("span", "gv-meta", "shape " + shape + " " + (s.dtype || "")));
  if (s.values !== undefined) {
    box.appendChild(el("code", "gv-values", fmtValues(s.values, 24)));
  } else if (s.stats) {
    const st = s.stats;
    // Each "name number" is kept on one line: a narrow panel must not break 1.9e-4 at its "-".
    const stats = el("code", "gv-values");
    [["min", st.min], ["max", st.max], ["mean", st.mean]].forEach(([name, v], i) => {
      if (i) stats.appendChild(document.createTextNode("  "));
      stats.appendChild(el("span", "gv-stat", name + " " + fmtNum(v)));
    });
    box.appendChild(stats);
    if (s.head) {
      box.appendChild(el("code", "gv-values", "first " + fmtValues(s.head, 6) + " \u2026"));
    }
  }
  return box;
}

// -- node references in the panel -------------------------------------------------------------
let runIndex = 0; // position in `runs` (and in backwardBoxes)
let stepIndex = 0; // current step of that run

/** A node's name as text; hovering it outlines the node in the backward graph. */
function nodeRef(id) {
  const span = el("span", "gv-ref", nodeName(id));
  // A real space before the id: copied or read as text, it says "MulBackward0 n5", as the
  // terminal does (a margin alone would glue them: "MulBackward0n5").
  span.appendChild(document.createTextNode(" "));
  span.appendChild(el("small", "gv-id", String(id)));
  const targets = () => (backwardIndex[runIndex] || {byNode: new Map()}).byNode.get(id) || [];
  const hover = (on) => () => targets().forEach((g) => g.classList.toggle("gv-hover", on));
  span.addEventListener("mouseenter", hover(true));
  span.addEventListener("mouseleave", hover(false));
  return span;
}

/** A line made of text pieces and elements. */
function line(className, ...pieces) {
  const p = el("p", className);
  for (const piece of pieces) {
    p.appendChild(typeof piece === "string" ? document.createTextNode(piece) : piece);
  }
  return p;
}

function sourceLine(src) {
  if (!src) {
    return null;
  }
  const p = el("p", "gv-source");
  p.appendChild(el("span", "gv-file", src.file + ":" + src.line));
  if (src.code) {
    p.appendChild(el("code", null, src.code));
  }
  return p;
}

// -- the engine's state at a step (from the run's timeline) -----------------------------------
// NOTE [constant cost per step] Showing a step never walks the run. When a run is chosen, its
// timeline (gradviz/trace/replay.py) is turned once into `changes[k]`: what step k changes (a
// node finishes, a ready-queue entry comes or goes, a dependency count, a leaf's .grad, an
// input buffer slot). Moving from step j to step k applies (or undoes) the changes in between
// to one live state, then updates on the page only what they touched: one step costs what it
// changes, at 200 steps as at 20,000 (benchmarks/player_bench.py measures it; the browser
// tests count the DOM changes per step).
const NO_TIMELINE = {executed: [], queue: [], deps: {}, leafGrads: {}, bufferBefore: {},
  buffers: []};

/** A run's changes per step, built once: [kind, ...] records (see apply). */
function prepareRun(r) {
  const run = runs[r];
  const tl = timelines[r] || NO_TIMELINE;
  const n = run.steps.length;
  const changes = Array.from({length: n}, () => []);
  const lastExec = new Int32Array(n).fill(-1); // the last execute step at or before k
  for (const [node, begin] of tl.executed) {
    if (begin + 1 < n) changes[begin + 1].push(["done", node]); // finished once it has run
    if (begin < n) lastExec[begin] = begin;
  }
  for (let k = 1; k < n; k++) {
    if (lastExec[k] < 0) lastExec[k] = lastExec[k - 1];
  }
  tl.queue.forEach(([, enter, leave], i) => {
    if (enter < n) changes[enter].push(["queue", i]);
    if (leave !== null && leave < n) changes[leave].push(["unqueue", i]);
  });
  for (const [node, counts] of Object.entries(tl.deps)) {
    let before;
    for (const [at, count] of counts) {
      changes[at].push(["dep", node, count, before]);
      before = count;
    }
  }
  const initialGrads = new Map();
  for (const [tid, g] of Object.entries(tl.leafGrads)) {
    let before = {value: g.before, step: null};
    initialGrads.set(tid, before);
    for (const [at, value] of g.at) {
      const entry = {value: value, step: at};
      changes[at].push(["leaf", tid, entry, before]);
      before = entry;
    }
  }
  (tl.buffers || []).forEach(([, , enter, leave], i) => {
    if (enter < n) changes[enter].push(["buffer", i]);
    if (leave !== null && leave < n) changes[leave].push(["unbuffer", i]);
  });
  // Which group of the drawing each of the run's nodes is folded into, and how many each holds.
  const drawing = backwardIndex[r] || {byNode: new Map(), byEdge: new Map()};
  const info = (folded.backward || [])[r] || null;
  const groupOf = new Map();
  const groupTotal = new Map();
  for (const id of run.nodes) {
    if (drawing.byNode.has(id)) continue;
    const gid = drawnId(info, id);
    if (gid === id) continue;
    groupOf.set(id, gid);
    groupTotal.set(gid, (groupTotal.get(gid) || 0) + 1);
  }
  return {run, tl, n, changes, lastExec, initialGrads, leaves: runLeaves(run),
    inRun: new Set(run.nodes), drawing, info, groupOf, groupTotal};
}

/** The live engine state of the prepared run R, before its first step. */
function freshState(R) {
  return {at: -1, done: new Map(), ready: new Map(), queue: [], deps: new Map(),
    grads: new Map(R.initialGrads), buffers: [], groupReady: new Map(), groupDone: new Map()};
}

/** Where `x` goes in the sorted array `a` (the first index holding x or more). */
function lowerBound(a, x) {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function sortedHas(a, x) {
  const i = lowerBound(a, x);
  return i < a.length && a[i] === x;
}

function sortedAdd(a, x) {
  a.splice(lowerBound(a, x), 0, x);
}

function sortedRemove(a, x) {
  const i = lowerBound(a, x);
  if (i < a.length && a[i] === x) a.splice(i, 1);
}

/**
 * Count a node in or out of a state set (done / ready); when it crosses zero, note it and
 * count it in or out of its folded group's tally too.
 */
function bump(counts, groupCounts, R, node, by, touched) {
  const before = counts.get(node) || 0;
  const after = before + by;
  if (after) counts.set(node, after);
  else counts.delete(node);
  if (!before === !after) return;
  touched.nodes.add(node);
  const gid = R.groupOf.get(node);
  if (gid !== undefined) groupCounts.set(gid, (groupCounts.get(gid) || 0) + (after ? 1 : -1));
}

/** Apply one change forwards (dir 1) or undo it (dir -1), noting what it touched. */
function apply(S, R, c, dir, touched) {
  const kind = c[0];
  if (kind === "done") {
    bump(S.done, S.groupDone, R, c[1], dir, touched);
  } else if (kind === "queue" || kind === "unqueue") {
    const i = c[1];
    const node = R.tl.queue[i][0];
    const inQueue = (kind === "queue") === (dir > 0);
    if (inQueue) sortedAdd(S.queue, i);
    else sortedRemove(S.queue, i);
    bump(S.ready, S.groupReady, R, node, inQueue ? 1 : -1, touched);
    touched.queue.add(i);
  } else if (kind === "dep") {
    const value = dir > 0 ? c[2] : c[3];
    if (value === undefined) S.deps.delete(c[1]);
    else S.deps.set(c[1], value);
    touched.deps.add(c[1]);
  } else if (kind === "leaf") {
    S.grads.set(c[1], dir > 0 ? c[2] : c[3]);
    touched.leaves.add(c[1]);
  } else if (kind === "buffer" || kind === "unbuffer") {
    if ((kind === "buffer") === (dir > 0)) sortedAdd(S.buffers, c[1]);
    else sortedRemove(S.buffers, c[1]);
    touched.buffers.add(c[1]);
  }
}

/** Move the live state to step k: O(the changes between), and what they touched. */
function moveTo(S, R, k) {
  const touched = {nodes: new Set(), queue: new Set(), deps: new Set(), leaves: new Set(),
    buffers: new Set()};
  while (S.at < k) {
    S.at += 1;
    for (const c of R.changes[S.at]) apply(S, R, c, 1, touched);
  }
  while (S.at > k) {
    const cs = R.changes[S.at];
    for (let i = cs.length - 1; i >= 0; i--) apply(S, R, cs[i], -1, touched);
    S.at -= 1;
  }
  return touched;
}

// Tensors in creation order, to list leaves the way the program made them.
const tensorOrder = new Map(trace.tensors.map((t, i) => [t.id, i]));

/**
 * The tensors whose gradient a run reports: its AccumulateGrad leaves, plus any tensor a
 * leaf_grad step names (other engines report gradients by tensor too), in creation order.
 */
function runLeaves(run) {
  const out = [];
  for (const id of run.nodes) {
    const n = nodes.get(id);
    if (n && n.kind === "accumulate_grad" && n.variable && !out.includes(n.variable)) {
      out.push(n.variable);
    }
  }
  for (const s of run.steps) {
    const tid = s.kind === "leaf_grad" ? s.tensor : null;
    if (tid && !out.includes(tid)) {
      out.push(tid);
    }
  }
  const order = (id) => (tensorOrder.has(id) ? tensorOrder.get(id) : Infinity);
  return out.sort((a, b) => order(a) - order(b));
}

// -- the panel --------------------------------------------------------------------------------
// Each step's sentence, written once in Python (gradviz/render/sentences.py) and handed over as
// pieces: `pieces` lists each distinct one (text, {node: id}, {code: text}); `runs[r][k]` is
// step k of run r as indices into it. The player only displays them.
const sentences = payload.sentences || {pieces: [], runs: []};

/** One sentence saying what the engine does in step k of run r; nodes are hoverable names. */
function describe(r, k, step) {
  const p = el("p", step.kind === "error" ? "gv-say gv-bad" : "gv-say");
  for (const i of (sentences.runs[r] || [])[k] || []) {
    const piece = sentences.pieces[i];
    if (typeof piece === "string") {
      p.appendChild(document.createTextNode(piece));
    } else if (piece && piece.node !== undefined) {
      p.appendChild(nodeRef(piece.node));
    } else if (piece && piece.code !== undefined) {
      p.appendChild(el("code", null, piece.code));
    }
  }
  return p;
}

function renderEvent(run, step) {
  const box = part("event");
  box.replaceChildren();
  const head = el("p", "gv-step-head");
  head.appendChild(el("span", "gv-kind gv-k-" + safeKind(step.kind), step.kind));
  head.appendChild(document.createTextNode(" step " + step.index + " of "
    + (run.steps.length - 1)));
  box.appendChild(head);
  box.appendChild(describe(runIndex, stepIndex, step)); // go() set them to this run and step
  const n = step.node ? nodes.get(step.node) : null;
  if (n && n.forward_op && ops.has(n.forward_op)) {
    const op = ops.get(n.forward_op);
    const call = (payload.calls || {})[op.id] || op.name;
    box.appendChild(line("gv-meta", "made by the forward op ", el("code", null, call),
      op.outputs.length ? " \u2192 " + op.outputs.map(tensorName).join(", ") : ""));
    const src = sourceLine(op.source);
    if (src) box.appendChild(src);
  }
  const d = step;
  if (step.kind === "leaf_grad") {
    box.appendChild(line("gv-kv", "before: ", summaryEl(d.before)));
    box.appendChild(line("gv-kv", "after: ", summaryEl(d.after)));
  } else if (step.kind === "pack_hook" || step.kind === "unpack_hook") {
    const packed = d.packed && Object.prototype.hasOwnProperty.call(d.packed, "repr")
      ? el("code", null, d.packed.type + " " + d.packed.repr) : summaryEl(d.packed);
    const given = line("gv-kv", step.kind === "pack_hook" ? "given: " : "returned: ",
      summaryEl(d.tensor));
    if (step.kind === "pack_hook") box.appendChild(given);
    box.appendChild(line("gv-kv", "packed: ", packed));
    if (step.kind === "unpack_hook") box.appendChild(given);
  } else if (step.kind === "gradient_node") {
    (d.inputs || []).forEach((g, i) => {
      box.appendChild(line("gv-kv", "input " + i + ": ", summaryEl(g)));
    });
    box.appendChild(line("gv-kv", "output: ", summaryEl(d.output)));
  }
}

// The side panel's lists are built once per run and then changed one item at a time: a queue
// entry or buffer slot that comes or goes, a dependency count or a leaf's .grad that changes.
let panel = null; // this run's panel elements (buildPanel)

/** A list item for queue entry / buffer slot i, put in its place among the shown ones. */
function placeItem(list, items, shown, i, make) {
  const at = lowerBound(shown, i);
  const nextItem = at + 1 < shown.length ? items.get(shown[at + 1]) : null;
  let item = items.get(i);
  if (!item) {
    item = make(i);
    items.set(i, item);
  }
  list.insertBefore(item, nextItem || null);
}

/** Show exactly the entries of `shown` that `touched` names (in their order). */
function syncList(list, items, shown, touched, make, empty) {
  const order = Array.from(touched).sort((a, b) => b - a); // later ones first: each finds its
  for (const i of order) { // successor already in place
    if (sortedHas(shown, i)) {
      placeItem(list, items, shown, i, make);
    } else if (items.has(i)) {
      items.get(i).remove();
    }
  }
  empty.hidden = shown.length > 0;
}

function buildPanel(R) {
  const ready = part("ready");
  const readyEmpty = el("li", "gv-none", "(empty)");
  ready.replaceChildren(readyEmpty);
  const buffers = part("buffers");
  const buffersEmpty = el("p", "gv-none", "(none waiting)");
  buffers.replaceChildren(buffersEmpty);

  const leaves = part("leaves");
  const leafRows = new Map();
  if (!R.leaves.length) {
    leaves.replaceChildren(el("p", "gv-none", "This run writes no leaf .grad."));
  } else {
    const table = el("table", "gv-table gv-leaves");
    for (const tid of R.leaves) {
      const tr = el("tr");
      // A dotted name (layer3.0.conv1.weight.grad) may wrap after any dot, never inside a word.
      const th = el("th");
      String(tensorName(tid) + ".grad").split(/(?<=\.)/).forEach((piece, i) => {
        if (i) th.appendChild(document.createElement("wbr"));
        th.appendChild(document.createTextNode(piece));
      });
      tr.appendChild(th);
      const td = el("td");
      tr.appendChild(td);
      table.appendChild(tr);
      leafRows.set(tid, {tr, td});
    }
    leaves.replaceChildren(table);
  }

  // One row per node the run ever counts, hidden until counted; in blocks the browser lays
  // out only when in view (a 20,000-step run counts thousands of nodes).
  const deps = part("deps");
  const depsEmpty = el("p", "gv-none", "Not counted yet.");
  const depRows = new Map();
  const depBox = el("div", "gv-deps");
  let block = null;
  Object.keys(R.tl.deps).forEach((id, i) => {
    if (i % 64 === 0) {
      block = el("div", "gv-block");
      depBox.appendChild(block);
    }
    const row = el("div", "gv-dep");
    row.hidden = true;
    row.appendChild(nodeRef(id));
    const count = el("span", "gv-count");
    row.appendChild(count);
    block.appendChild(row);
    depRows.set(id, {row, count});
  });
  deps.replaceChildren(depsEmpty, depBox);
  panel = {readyItems: new Map(), readyEmpty, bufferItems: new Map(), buffersEmpty, leafRows,
    depRows, depsEmpty, marked: []};
  for (const tid of R.leaves) showLeaf(tid, R.initialGrads.get(tid));
}

// -- memory (NOTE [memory] in gradviz/trace/replay.py) ------------------------------------------
// A run's saved activations and input buffers, step by step, drawn once per run as a small step
// plot; moving to a step moves its marker and rewrites two numbers (the same work at any step).
const MEM_W = 300;
const MEM_H = 60;
let memView = null; // {changes, x, marker, saved, buffers}: the shown run's plot

/** Bytes as people read them: 512 B, 4.0 KiB, 1.5 MiB (as the CLI's summary writes them). */
function bytesText(n) {
  if (n < 1024) return n + " B";
  let v = n;
  let unit = "";
  for (const u of ["KiB", "MiB", "GiB"]) {
    v /= 1024;
    unit = u;
    if (v < 1024) break;
  }
  return v.toFixed(1) + " " + unit;
}

/** The value of a [[step, value], ...] change list at step k (binary search). */
function valueAt(changes, k) {
  let lo = 0;
  let hi = changes.length - 1;
  let at = 0;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (changes[mid][0] <= k) {
      at = changes[mid][1];
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return at;
}

function svgEl(tag, attrs) {
  // The SVG namespace, read off a drawing on the page (the page spells no URL: NOTE [safety]).
  const e = document.createElementNS(root.querySelector("svg").namespaceURI, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
}

function buildMemory(r, nSteps) {
  const box = part("memory");
  const m = memories[r];
  if (!m || !nSteps || !root.querySelector("svg")) {
    box.replaceChildren(el("p", "gv-none", "No steps."));
    memView = null;
    return;
  }
  let peak = 1;
  for (const list of [m.saved, m.buffers]) {
    for (const c of list) peak = Math.max(peak, c[1]);
  }
  const x = (k) => (nSteps > 1 ? (k / (nSteps - 1)) * MEM_W : 0);
  const y = (v) => MEM_H - (v / peak) * (MEM_H - 2);
  const path = (changes) => { // a step function: flat until the next change
    let d = "";
    changes.forEach(([k, v], i) => {
      d += (i ? " H" + x(k).toFixed(1) + " V" : "M" + x(k).toFixed(1) + " ") + y(v).toFixed(1);
    });
    return d + " H" + MEM_W;
  };
  const svg = svgEl("svg", {viewBox: "0 0 " + MEM_W + " " + MEM_H, class: "gv-mem-plot",
    role: "img", "aria-label": "bytes held at each step: saved activations and input buffers"});
  svg.appendChild(svgEl("path", {d: path(m.buffers), class: "gv-mem-buffers"}));
  svg.appendChild(svgEl("path", {d: path(m.saved), class: "gv-mem-saved"}));
  const marker = svgEl("line", {x1: 0, x2: 0, y1: 0, y2: MEM_H, class: "gv-mem-marker"});
  svg.appendChild(marker);
  const saved = el("span", "gv-mem-v");
  const buffers = el("span", "gv-mem-v");
  const now = el("p", "gv-mem-now");
  now.append(el("span", "gv-key gv-mem-saved-key", ""), "saved activations ", saved,
    el("br"), el("span", "gv-key gv-mem-buffers-key", ""), "input buffers ", buffers);
  box.replaceChildren(svg, now, el("p", "gv-sub", "plot from 0 to " + bytesText(peak)));
  saved.dataset.role = "mem-saved";
  buffers.dataset.role = "mem-buffers";
  memView = {m, x, marker, saved, buffers};
}

function updateMemory(k) {
  if (!memView) return;
  const x = memView.x(k).toFixed(1);
  memView.marker.setAttribute("x1", x);
  memView.marker.setAttribute("x2", x);
  for (const [span, changes] of [[memView.saved, memView.m.saved],
    [memView.buffers, memView.m.buffers]]) {
    const v = valueAt(changes, k);
    span.textContent = bytesText(v);
    span.dataset.bytes = String(v);
  }
}

function showLeaf(tid, entry) {
  const row = panel.leafRows.get(tid);
  if (row) row.td.replaceChildren(summaryEl(entry ? entry.value : null));
}

/** Update the panel's lists for what a move touched; rows changed by this step stand out. */
function updatePanel(R, S, touched, step) {
  syncList(part("ready"), panel.readyItems, S.queue, touched.queue, (i) => {
    const li = el("li");
    li.appendChild(nodeRef(R.tl.queue[i][0]));
    return li;
  }, panel.readyEmpty);
  syncList(part("buffers"), panel.bufferItems, S.buffers, touched.buffers, (i) => {
    const [node, inputNr, enter] = R.tl.buffers[i];
    const row = el("div", "gv-buffer");
    row.appendChild(line("gv-kv gv-slot", nodeRef(node), " input " + inputNr + ":"));
    row.appendChild(summaryEl(R.run.steps[enter].buffer));
    return row;
  }, panel.buffersEmpty);
  for (const tid of touched.leaves) showLeaf(tid, S.grads.get(tid));
  for (const id of touched.deps) {
    const row = panel.depRows.get(id);
    if (!row) continue;
    const count = S.deps.get(id);
    row.row.hidden = count === undefined;
    row.count.textContent = count === undefined ? "" : String(count);
    row.count.classList.toggle("gv-zero", count === 0);
  }
  panel.depsEmpty.hidden = S.deps.size > 0;
  // What this very step changed: its buffer slot, its leaf's .grad, its node's count.
  for (const e of panel.marked) e.classList.remove("gv-changed");
  panel.marked = [];
  const changed = (e) => {
    if (e) {
      e.classList.add("gv-changed");
      panel.marked.push(e);
    }
  };
  for (const c of R.changes[S.at] || []) {
    if (c[0] === "buffer") changed(panel.bufferItems.get(c[1]));
    if (c[0] === "leaf") changed((panel.leafRows.get(c[1]) || {}).tr);
  }
  if (step.kind === "accumulate") changed((panel.depRows.get(step.node) || {}).row);
}

function renderEdges(step, state) {
  const box = part("edges");
  box.replaceChildren();
  if (step.kind === "accumulate") {
    const d = step;
    const now = el("div", "gv-arrive");
    now.appendChild(line("gv-kv", "arriving now: ", d.source ? nodeRef(d.source) : "root",
      " \u2192 ", nodeRef(step.node), " input " + d.input_nr));
    now.appendChild(line("gv-kv", "gradient: ", summaryEl(d.grad)));
    now.appendChild(line("gv-kv", "input buffer before: ", summaryEl(state.bufferBefore)));
    now.appendChild(line("gv-kv", "input buffer after: ", summaryEl(d.buffer)));
    box.appendChild(now);
  }
  const ex = state.lastExecute;
  if (!ex) {
    box.appendChild(el("p", "gv-none", "No node has run yet."));
    return;
  }
  const d = ex;
  box.appendChild(line("gv-meta", "sent by ", nodeRef(ex.node), " at step " + ex.index + ":"));
  (d.grad_outputs || []).forEach((g, i) => {
    box.appendChild(line("gv-kv", "received (output " + i + "): ", summaryEl(g)));
  });
  const n = nodes.get(ex.node);
  const next = n ? n.next_functions : [];
  if (!next.length) {
    box.appendChild(el("p", "gv-none", "No outgoing edges (a leaf's AccumulateGrad)."));
  }
  next.forEach(([target, inputNr], i) => {
    const g = (d.grad_inputs || [])[i];
    const row = target === null
      ? line("gv-kv gv-dim", "input " + i + ": no edge (does not require grad)")
      : line("gv-kv", "\u2192 ", nodeRef(target), " (input " + inputNr + "): ", summaryEl(g));
    box.appendChild(row);
  });
}

// -- zoom and pan ---------------------------------------------------------------------------------
// NOTE [zoom and pan] A drawing keeps Graphviz's own coordinates (points); the player only
// changes its svg element's viewBox, so text stays sharp at every zoom and the node lookups above
// are untouched. A view is one drawing in its viewport box:
//   scale  screen pixels per point,
//   x, y   the point shown at the box's top-left corner,
//   x0, y0, w, h  the drawing's own extent (its original viewBox).
// A view is fitted the first time its box has a size (a hidden run's drawing has none): the
// scale that shows it whole, but never so small that node text falls under MIN_TEXT_PX
// pixels (the learner pans instead) nor bigger than Graphviz's natural size. The drawing can
// be dragged but never lost: when smaller than the box it stays inside it, when bigger the
// box stays over it and over some of one of its nodes (a wide drawing's corner may hold only
// the title and the legend, or nothing).
const MIN_TEXT_PX = 9;
const NATURAL = 4 / 3; // CSS pixels per point: Graphviz writes width="...pt"
const MAX_SCALE = 8;
const ZOOM_STEP = 1.25;

/** The usual font size (in points) of the node labels of a drawing. */
function nodeTextSize(svg) {
  const counts = new Map();
  for (const t of svg.querySelectorAll("g.node text")) {
    const size = parseFloat(t.getAttribute("font-size"));
    if (size > 0) counts.set(size, (counts.get(size) || 0) + 1);
  }
  let best = 14; // Graphviz's default
  let most = 0;
  for (const [size, n] of counts) {
    if (n > most) {
      best = size;
      most = n;
    }
  }
  return best;
}

function makeView(svg, box) {
  let ext = (svg.getAttribute("viewBox") || "").trim().split(/[\s,]+/).map(Number);
  if (ext.length !== 4 || !ext.every(Number.isFinite) || ext[2] <= 0 || ext[3] <= 0) {
    ext = [0, 0, parseFloat(svg.getAttribute("width")) || 100,
      parseFloat(svg.getAttribute("height")) || 100];
  }
  // The svg element fills its box; the viewBox (set in applyView) says which part of it shows.
  svg.setAttribute("width", "100%");
  svg.setAttribute("height", "100%");
  svg.setAttribute("preserveAspectRatio", "xMinYMin meet");
  return {svg, box, x0: ext[0], y0: ext[1], w: ext[2], h: ext[3], text: nodeTextSize(svg),
    scale: 1, x: ext[0], y: ext[1], bw: 0, bh: 0, fitted: false, nodes: null};
}

function boxSize(v) {
  return [v.box.clientWidth, v.box.clientHeight];
}

const KEEP_PX = 48; // how much of a node stays in the box after any drag, in pixels

/** Keep one axis of the drawing in the box (see NOTE [zoom and pan]). */
function clampAxis(pos, start, size, shown) {
  return size <= shown
    ? Math.min(Math.max(pos, start + size - shown), start)
    : Math.min(Math.max(pos, start), start + size - shown);
}

/** Where the drawing's nodes are, in its own points (measured once it is laid out). */
function measureNodes(v) {
  const b = v.box.getBoundingClientRect();
  const boxes = [];
  let nodes = 0;
  for (const g of v.svg.querySelectorAll("g.node")) {
    nodes += 1;
    const r = g.getBoundingClientRect();
    if (!r.width && !r.height) continue;
    boxes.push([v.x + (r.left - b.left) / v.scale, v.y + (r.top - b.top) / v.scale,
      v.x + (r.right - b.left) / v.scale, v.y + (r.bottom - b.top) / v.scale]);
  }
  // null again if none is laid out yet (measured on the next view); empty if it has none
  v.nodes = boxes.length || !nodes ? boxes : null;
}

/**
 * If no node is in the view shown (`w` x `h` points), shift it the least that brings `keep`
 * points of the nearest one in: a wide drawing's corner may hold no node at all.
 */
function keepANode(v, w, h, keep) {
  const x0 = v.x + keep;
  const y0 = v.y + keep;
  const x1 = v.x + w - keep;
  const y1 = v.y + h - keep;
  let best = null;
  let bestD = Infinity;
  for (const n of v.nodes || []) {
    const dx = n[2] < x0 ? n[2] - x0 : n[0] > x1 ? n[0] - x1 : 0;
    const dy = n[3] < y0 ? n[3] - y0 : n[1] > y1 ? n[1] - y1 : 0;
    if (!dx && !dy) return;
    const d = dx * dx + dy * dy;
    if (d < bestD) {
      bestD = d;
      best = [dx, dy];
    }
  }
  if (best) {
    v.x += best[0];
    v.y += best[1];
  }
}

function applyView(v) {
  const [bw, bh] = boxSize(v);
  if (!bw || !bh) {
    return false;
  }
  v.x = clampAxis(v.x, v.x0, v.w, bw / v.scale);
  v.y = clampAxis(v.y, v.y0, v.h, bh / v.scale);
  keepANode(v, bw / v.scale, bh / v.scale, Math.min(KEEP_PX / v.scale, bw / v.scale / 4));
  v.bw = bw;
  v.bh = bh;
  const box = [v.x, v.y, bw / v.scale, bh / v.scale].map((n) => Number(n.toFixed(3)));
  v.svg.setAttribute("viewBox", box.join(" "));
  v.box.dataset.scale = v.scale.toFixed(4); // the zoom, for tests and styling
  if (v.nodes === null) measureNodes(v); // once laid out: where its nodes are, for the clamp
  return true;
}

/** The scale at which the whole drawing fits its box. */
function wholeScale(v) {
  const [bw, bh] = boxSize(v);
  return Math.min(bw / v.w, bh / v.h) * 0.98;
}

/**
 * Fit a view: the whole drawing (`whole`, the fit button and the 0 key), or on opening the
 * whole drawing only if its text stays legible. Centred where it fits; otherwise its top
 * (the roots of a backward graph), centred across.
 */
function fitView(v, whole) {
  const [bw, bh] = boxSize(v);
  if (!bw || !bh) {
    return false;
  }
  const fit = wholeScale(v);
  v.scale = Math.min(NATURAL, whole ? fit : Math.max(fit, MIN_TEXT_PX / v.text));
  const sw = bw / v.scale;
  const sh = bh / v.scale;
  v.x = v.x0 + (v.w - sw) / 2;
  v.y = v.h <= sh ? v.y0 + (v.h - sh) / 2 : v.y0;
  v.fitted = true;
  return applyView(v);
}

/** Zoom by `factor` keeping the point under (px, py) (pixels in the box) where it is. */
function zoomAt(v, factor, px, py) {
  if (!v.fitted && !fitView(v, false)) {
    return;
  }
  const low = Math.min(wholeScale(v), MIN_TEXT_PX / v.text) / 2;
  const scale = Math.min(MAX_SCALE, Math.max(low, v.scale * factor));
  const ux = v.x + px / v.scale;
  const uy = v.y + py / v.scale;
  v.scale = scale;
  v.x = ux - px / scale;
  v.y = uy - py / scale;
  applyView(v);
}

function panBy(v, dx, dy) {
  v.x -= dx / v.scale;
  v.y -= dy / v.scale;
  applyView(v);
}

/**
 * Show a view that just became visible: fit it the first time, else re-apply its zoom. A box
 * with no size yet (folded away) does neither; the size watcher does it when the box opens.
 */
function showView(v) {
  if (v) {
    if (v.fitted) applyView(v);
    else fitView(v, false);
  }
}

/** Pan so the elements (highlighted <g>s) are in view, if any of them is out of it. */
function reveal(v, elements) {
  if (!v || !v.fitted || !elements.length) {
    return;
  }
  const b = v.box.getBoundingClientRect();
  if (!b.width || !b.height) {
    return;
  }
  let left = Infinity;
  let top = Infinity;
  let right = -Infinity;
  let bottom = -Infinity;
  for (const e of elements) {
    const r = e.getBoundingClientRect();
    left = Math.min(left, r.left);
    top = Math.min(top, r.top);
    right = Math.max(right, r.right);
    bottom = Math.max(bottom, r.bottom);
  }
  const m = 12; // a margin, so the node is not glued to the edge
  if (left >= b.left + m && right <= b.right - m && top >= b.top + m && bottom <= b.bottom - m) {
    return;
  }
  // Centre it (panBy clamps, so the drawing never leaves the box).
  panBy(v, b.left + b.width / 2 - (left + right) / 2, b.top + b.height / 2 - (top + bottom) / 2);
}

const backwardView = part("backward");
const forwardView = part("forward");
const backwardViews = backwardBoxes.map((box) => {
  const svg = box.querySelector("svg");
  return svg ? makeView(svg, backwardView) : null;
});
const forwardSvg = forwardView.querySelector("svg");
const forwardViewState = forwardSvg ? makeView(forwardSvg, forwardView) : null;
let keyBox = backwardView; // the box the zoom keys act on: the one last pointed at

/** The view shown in a viewport box right now. */
function viewIn(box) {
  return box === forwardView ? forwardViewState : backwardViews[runIndex] || null;
}

function forwardOpen() {
  return part("forward-toggle").getAttribute("aria-expanded") === "true";
}

/** Wheel, drag and pinch on one viewport box. */
function enableZoom(box) {
  const pointers = new Map(); // pointerId -> last {x, y}, for drags and pinches
  const local = (e) => {
    const r = box.getBoundingClientRect();
    return [e.clientX - r.left, e.clientY - r.top];
  };
  box.addEventListener("wheel", (e) => {
    const v = viewIn(box);
    // In a notebook the page scrolls past players: zoom only when asked (ctrl, a pinch on a
    // touchpad) or once the player has focus. A page of its own always zooms.
    const focused = root.contains(root.getRootNode().activeElement); // also in a shadow root
    if (!v || (!KEYS_ON_DOCUMENT && !e.ctrlKey && !focused)) {
      return;
    }
    e.preventDefault();
    const unit = e.deltaMode === 1 ? 16 : e.deltaMode === 2 ? box.clientHeight : 1;
    const [px, py] = local(e);
    // A touchpad pinch arrives as small ctrl+wheel steps: zoom those faster. Clamped, so one
    // notch of a mouse wheel (even with ctrl held) is at most 1.5 times.
    const factor = Math.exp(-e.deltaY * unit * (e.ctrlKey ? 0.01 : 0.002));
    zoomAt(v, Math.min(1.5, Math.max(1 / 1.5, factor)), px, py);
    keyBox = box;
  }, {passive: false});
  box.addEventListener("pointerdown", (e) => {
    if (e.pointerType === "mouse" && e.button !== 0) {
      return;
    }
    box.setPointerCapture(e.pointerId);
    pointers.set(e.pointerId, {x: e.clientX, y: e.clientY});
    // A press that does not move is a click: it opens the folded group under it.
    press = pointers.size === 1 ? {id: e.pointerId, x: e.clientX, y: e.clientY, target: e.target}
      : null;
    box.classList.add("gv-dragging");
    keyBox = box;
  });
  box.addEventListener("pointermove", (e) => {
    const last = pointers.get(e.pointerId);
    const v = viewIn(box);
    if (!last || !v) {
      return;
    }
    if (pointers.size === 1) {
      panBy(v, e.clientX - last.x, e.clientY - last.y);
    } else if (pointers.size === 2) {
      // Pinch: zoom by the change of distance between the two fingers, around their middle,
      // and pan by the middle's move.
      const other = Array.from(pointers.entries()).find(([id]) => id !== e.pointerId)[1];
      const before = Math.hypot(last.x - other.x, last.y - other.y);
      const after = Math.hypot(e.clientX - other.x, e.clientY - other.y);
      const r = box.getBoundingClientRect();
      const mx = (e.clientX + other.x) / 2 - r.left;
      const my = (e.clientY + other.y) / 2 - r.top;
      if (before > 0) zoomAt(v, after / before, mx, my);
      panBy(v, (e.clientX - last.x) / 2, (e.clientY - last.y) / 2);
    }
    pointers.set(e.pointerId, {x: e.clientX, y: e.clientY});
  });
  let press = null;
  const release = (e) => {
    if (press && press.id === e.pointerId && e.type === "pointerup"
        && Math.hypot(e.clientX - press.x, e.clientY - press.y) < 5) {
      openGroupAt(box, press.target);
    }
    if (press && press.id === e.pointerId) press = null;
    pointers.delete(e.pointerId);
    if (!pointers.size) box.classList.remove("gv-dragging");
  };
  box.addEventListener("pointerup", release);
  box.addEventListener("pointercancel", release);
  box.addEventListener("pointerenter", () => {
    keyBox = box;
  });
  // The zoom buttons in this graph's header.
  const section = box.closest(".gv-graph");
  for (const button of section.querySelectorAll("button[data-zoom]")) {
    button.addEventListener("click", () => zoomKey(button.dataset.zoom, box));
  }
}

/** A zoom button or key: "in", "out" (around the middle of the box) or "fit". */
function zoomKey(what, box) {
  const v = viewIn(box);
  if (!v) {
    return;
  }
  keyBox = box;
  if (what === "fit") {
    fitView(v, true);
  } else {
    const [bw, bh] = boxSize(v);
    zoomAt(v, what === "in" ? ZOOM_STEP : 1 / ZOOM_STEP, bw / 2, bh / 2);
  }
}

/** Keep each view's middle in the middle when its box changes size (window, layout). */
function watchSizes() {
  if (typeof ResizeObserver === "undefined") {
    return;
  }
  const observer = new ResizeObserver(() => {
    for (const box of [backwardView, forwardView]) {
      const v = viewIn(box);
      if (!v) continue;
      const [bw, bh] = boxSize(v);
      if (!bw || !bh || (bw === v.bw && bh === v.bh)) continue;
      if (!v.fitted) {
        fitView(v, false);
        revealCurrent();
        continue;
      }
      v.x += (v.bw - bw) / (2 * v.scale);
      v.y += (v.bh - bh) / (2 * v.scale);
      applyView(v);
    }
  });
  observer.observe(backwardView);
  observer.observe(forwardView);
}

// -- folded groups ------------------------------------------------------------------------------
// A big graph is drawn with some nodes folded into one summary node (render/collapse.py). The
// page says, per drawing, which trace id went into which group: {of: {n12: "g0"}, titles:
// {g0: "fc1: Linear"}, blocks: {g0: {reps, grid}}}; the group's <g> has the group id as its
// <title>. blocks[g].grid[r][p] is the id at place p of repetition r (NOTE [block slots] in
// collapse.py), and the page holds one repetition of the block drawn open (its places titled
// p0, p1, ...), which the player shows for whichever repetition it opens.
const folded = payload.folded || {};

function hasOwn(obj, key) {
  return obj && typeof obj === "object" && Object.prototype.hasOwnProperty.call(obj, key);
}

function foldedIn(info, id) {
  const gid = info && id && hasOwn(info.of, id) ? String(info.of[id]) : null;
  return gid ? {id: gid, title: hasOwn(info.titles, gid) ? String(info.titles[gid]) : gid} : null;
}

/** The id a trace id is drawn as in a drawing: itself, or the group holding it. */
function drawnId(info, id) {
  const group = foldedIn(info, id);
  return group ? group.id : id;
}

/** A group's block: {reps, grid}, or null. */
function blockOf(info, gid) {
  return info && hasOwn(info.blocks, gid) ? info.blocks[gid] : null;
}

// Where each folded id sits in its group's block: [repetition, place], built per drawing the
// first time one of its groups is asked about (linear in that group, once).
const slotIndex = new Map();

function slotOf(info, gid, id) {
  const key = info;
  if (!slotIndex.has(key)) slotIndex.set(key, new Map());
  const byGroup = slotIndex.get(key);
  if (!byGroup.has(gid)) {
    const slots = new Map();
    const block = blockOf(info, gid);
    (block ? block.grid : []).forEach((row, r) => row.forEach((vid, p) => {
      if (vid !== null) slots.set(vid, [r, p]);
    }));
    byGroup.set(gid, slots);
  }
  return byGroup.get(gid).get(id) || null;
}

// -- highlighting the graphs ----------------------------------------------------------------------
/** The corners of a node's shapes (polygon points, path coordinates, ellipses), in points. */
function shapeBox(g) {
  const xs = [];
  const ys = [];
  for (const s of g.querySelectorAll("polygon, polyline, path, ellipse")) {
    if (s.localName === "ellipse") {
      const [cx, cy, rx, ry] = ["cx", "cy", "rx", "ry"].map((a) => Number(s.getAttribute(a)));
      xs.push(cx - rx, cx + rx);
      ys.push(cy - ry, cy + ry);
      continue;
    }
    const nums = (s.getAttribute(s.localName === "path" ? "d" : "points") || "")
      .match(/-?\d*\.?\d+(?:e-?\d+)?/gi) || [];
    for (let i = 0; i + 1 < nums.length; i += 2) {
      xs.push(Number(nums[i]));
      ys.push(Number(nums[i + 1]));
    }
  }
  return xs.length ? {right: Math.max(...xs), top: Math.min(...ys)} : null;
}

/** Give a node a check-mark badge on its top-right corner (shown only while it is finished). */
function addCheck(g) {
  if (g.gvChecked) {
    return;
  }
  g.gvChecked = true;
  const corner = shapeBox(g);
  if (!corner) {
    return;
  }
  const ns = g.namespaceURI; // SVG's (spelled out, it would look like a URL in the page)
  const badge = document.createElementNS(ns, "g");
  badge.setAttribute("class", "gv-check");
  badge.setAttribute("aria-hidden", "true");
  const circle = document.createElementNS(ns, "circle");
  circle.setAttribute("cx", String(corner.right - 1));
  circle.setAttribute("cy", String(corner.top + 1));
  circle.setAttribute("r", "5.5");
  const check = document.createElementNS(ns, "text");
  check.setAttribute("x", String(corner.right - 1));
  check.setAttribute("y", String(corner.top + 4));
  check.setAttribute("text-anchor", "middle");
  check.textContent = "\u2713";
  badge.append(circle, check);
  g.appendChild(badge);
}

/**
 * Give node elements their state: this step's node (gv-current), in the ready queue
 * (gv-ready), finished (gv-done) or not yet run (gv-pending). A node can be both current and
 * ready or done (the CSS lets current win). Only classes that change are written.
 */
function paint(elements, current, ready, done) {
  for (const g of elements || []) {
    if (done) addCheck(g);
    const want = [current, ready, done, !current && !ready && !done];
    ["gv-current", "gv-ready", "gv-done", "gv-pending"].forEach((cls, i) => {
      if (g.classList.contains(cls) !== want[i]) g.classList.toggle(cls, want[i]);
    });
  }
}

/** Say where a node is hidden when a folded group stands for it (empty text: it is not). */
function sayWhere(roleName, text) {
  const p = part(roleName);
  if (p.textContent !== text) p.textContent = text;
  p.hidden = !text;
}

// What the backward drawing of the shown run shows (built with the run, updated per step):
// each group's count of the run's nodes in it, ready in it and finished in it.
let view = null;

/** Every node of the run (and every group holding some) as not yet run: once per run. */
function buildGraphState(R) {
  const drawing = R.drawing;
  for (const id of R.run.nodes) paint(drawing.byNode.get(id), false, false, false);
  for (const gid of R.groupTotal.keys()) paint(drawing.byNode.get(gid), false, false, false);
  view = {drawing, info: R.info, current: null, currentEls: [], flow: [], fwdCurrent: [],
    fwdIds: []};
}

/** Repaint one node of the run (or the group it is folded into) from the live state. */
function repaintNode(S, R, id) {
  const own = view.drawing.byNode.get(id);
  if (own) {
    paint(own, id === view.current, S.ready.has(id), S.done.has(id));
    return;
  }
  const gid = R.groupOf.get(id);
  if (gid === undefined) return;
  const ready = (S.groupReady.get(gid) || 0) > 0;
  const done = !ready && (S.groupDone.get(gid) || 0) === R.groupTotal.get(gid);
  const holdsCurrent = view.current !== null && drawnId(view.info, view.current) === gid;
  paint(view.drawing.byNode.get(gid), holdsCurrent, ready, done);
}

/**
 * Colour the graphs for one step, changing only what the move touched: the nodes whose state
 * changed, the previous and the new current node, the edges of this step and the last, and the
 * forward op of this step and the last. A folded group stands for its nodes: current if it
 * holds this step's node, ready if it holds a ready one, finished when all of its nodes are,
 * otherwise not yet run.
 */
function highlight(R, S, step, touched) {
  const info = view.info;
  const old = view.current;
  view.current = step.node || null;
  const repaint = new Set(touched.nodes);
  if (old !== null) repaint.add(old);
  if (view.current !== null) repaint.add(view.current);
  for (const id of repaint) {
    if (R.inRun.has(id)) repaintNode(S, R, id);
  }
  // The current node's own element (or its group's), for revealing and the where-line.
  let group = null;
  if (step.node) {
    const own = view.drawing.byNode.get(step.node);
    group = own ? null : foldedIn(info, step.node);
    view.currentEls = own || (group && view.drawing.byNode.get(group.id)) || [];
    if (!R.inRun.has(step.node)) {
      paint(view.currentEls, true, false, false); // (a node outside the run's list)
    }
  } else {
    view.currentEls = [];
  }
  sayWhere("where", group ? whereText(info, group, step.node, nodeName(step.node)) : "");
  // Edges a gradient travels along in this step (between the groups, if folded).
  for (const e of view.flow) e.classList.remove("gv-flow");
  view.flow = [];
  const flow = (from, to) => {
    const a = drawnId(info, from);
    const b = drawnId(info, to);
    if (a === b) return;
    for (const e of view.drawing.byEdge.get(a + "->" + b) || []) {
      e.classList.add("gv-flow");
      view.flow.push(e);
    }
  };
  if (step.kind === "execute") {
    const n = nodes.get(step.node);
    for (const [target] of n ? n.next_functions : []) {
      if (target !== null) flow(step.node, target);
    }
  } else if (step.kind === "accumulate" && step.source) {
    flow(step.source, step.node);
  }
  // The forward graph: the op that made this node, or the leaf it writes.
  for (const e of view.fwdCurrent) e.classList.remove("gv-current");
  view.fwdCurrent = [];
  view.fwdIds = [];
  const n = step.node ? nodes.get(step.node) : null;
  const fwd = folded.forward || null;
  let where = "";
  for (const id of n ? [n.forward_op, n.variable] : []) {
    if (!id) continue;
    const own = forwardIndex.byNode.get(id);
    const fgroup = own ? null : foldedIn(fwd, id);
    for (const e of own || (fgroup && forwardIndex.byNode.get(fgroup.id)) || []) {
      e.classList.add("gv-current");
      view.fwdCurrent.push(e);
    }
    view.fwdIds.push(id);
    if (fgroup) {
      const what = ops.has(id) ? "the forward op " + ops.get(id).name : tensorName(id);
      where = whereText(fwd, fgroup, id, what);
    }
  }
  sayWhere("forward-where", where);
}

/** "X (n5) is in block 5 of 11 of the folded group “11 × [...]”, opened beside." */
function whereText(info, group, id, what) {
  const block = blockOf(info, group.id);
  const slot = block ? slotOf(info, group.id, id) : null;
  const scope = moduleOf(id);
  const head = what + " (" + id + (scope ? ", in " + scope : "") + ") is ";
  if (slot && block.reps > 1) {
    return head + "in block " + (slot[0] + 1) + " of " + block.reps + " of the folded group \u201c"
      + group.title + "\u201d: that block is drawn open in the corner.";
  }
  return head + "inside the folded group \u201c" + group.title + "\u201d, highlighted in its "
    + "place" + (block ? " and drawn open in the corner." : ".");
}

/** The module a node's (or an op's) forward op ran in, by its path ("6.fc2"), or "". */
function moduleOf(id) {
  const n = nodes.get(id);
  const op = ops.get(n ? n.forward_op : id);
  const scope = op && op.scope && op.scope.length > 1 ? op.scope : null;
  return scope ? String(scope[scope.length - 1]) : "";
}

/** Pan each shown graph so this step's highlighted node is in view. */
function revealCurrent() {
  if (!view) return;
  const back = view.currentEls.length ? view.currentEls : view.lastEls || [];
  reveal(viewIn(backwardView), back);
  if (forwardOpen()) reveal(forwardViewState, view.fwdCurrent);
}

// -- a folded group, opened ---------------------------------------------------------------------
// NOTE [opened blocks] Each graph has an inset that draws one repetition of a folded group
// (drawn once by Python: every repetition has the same structure) with the nodes of the
// repetition shown, coloured as in the main graph. It opens by itself on the repetition that
// holds this step's node (and closes when the step leaves the group, unless the learner opened
// it), or on a click (or Enter) on any folded group; its arrows show the block before / after.
// The main graph keeps the fold, as the static SVG files do.
const blockSvgs = new Map(); // "b0/g3" or "f/g1" -> the hidden <div> holding its drawing
for (const d of root.querySelectorAll(".gv-block-svg[data-drawing][data-group]")) {
  blockSvgs.set(d.dataset.drawing + "/" + d.dataset.group, d);
}
const blockStore = root.querySelector(".gv-blocks");

function makeInset(role, forward) {
  const box = part(role);
  return {box, forward, gid: null, rep: 0, pinned: false, shown: null, index: null,
    title: box.querySelector("[data-inset=title]"),
    body: box.querySelector("[data-inset=body]"),
    prev: box.querySelector("[data-inset=prev]"),
    next: box.querySelector("[data-inset=next]")};
}

const insets = [makeInset("inset", false), makeInset("forward-inset", true)];

function insetInfo(inset) {
  return inset.forward ? folded.forward || null : (folded.backward || [])[runIndex] || null;
}

/** Open group gid of the inset's graph at repetition rep (pinned: the learner opened it). */
function openBlock(inset, gid, rep, pinned) {
  const info = insetInfo(inset);
  const block = blockOf(info, gid);
  if (!block) return;
  const key = (inset.forward ? "f" : "b" + runIndex) + "/" + gid;
  if (inset.shown !== key) {
    if (inset.shown && blockSvgs.has(inset.shown)) blockStore.appendChild(blockSvgs.get(inset.shown));
    inset.body.replaceChildren();
    const drawing = blockSvgs.get(key);
    if (drawing) {
      shrink(drawing.querySelector("svg"));
      inset.body.appendChild(drawing);
      inset.index = indexDrawing(drawing);
    } else {
      inset.index = null;
    }
    inset.shown = key;
    inset.rep = -1;
  }
  const newRep = Math.max(0, Math.min(block.reps - 1, rep));
  const repChanged = newRep !== inset.rep || gid !== inset.gid;
  inset.gid = gid;
  inset.rep = newRep;
  inset.pinned = pinned;
  const title = foldedIn(info, block.grid[newRep].find((v) => v !== null)) || {title: gid};
  inset.title.textContent = (block.reps > 1 ? "block " + (newRep + 1) + " of " + block.reps
    + " \u00b7 " : "opened \u00b7 ") + title.title;
  inset.prev.disabled = newRep === 0;
  inset.next.disabled = newRep >= block.reps - 1;
  inset.prev.hidden = inset.next.hidden = block.reps < 2;
  inset.box.hidden = false;
  inset.box.dataset.group = gid;
  inset.box.dataset.rep = String(newRep);
  if (repChanged) {
    inset.window = null;
    nameInset(inset, block, 0);
  }
  paintInset(inset);
  if (pinned) revealInsets();
}

/** Draw an opened block a little smaller than Graphviz's size: node text stays about 10 px. */
function shrink(svg) {
  if (!svg || svg.dataset.shrunk) return;
  svg.dataset.shrunk = "1";
  for (const side of ["width", "height"]) {
    const pt = parseFloat(svg.getAttribute(side));
    if (pt > 0) svg.style[side] = (pt * NATURAL * 0.72).toFixed(1) + "px";
  }
}

function closeBlock(inset) {
  inset.box.hidden = true;
  inset.gid = null;
  inset.pinned = false;
}

/** The names of the repetition shown: a tensor's name differs from block to block. */
// A block too big to draw is listed, LIST_PLACES places at a time around the current one (so
// a step costs the same in a group of 20,000 nodes).
const LIST_PLACES = 100;

function nameInset(inset, block, around) {
  const row = block.grid[inset.rep];
  if (!inset.index) {
    const lo = Math.max(0, Math.min((around || 0) - LIST_PLACES / 2, row.length - LIST_PLACES));
    const hi = Math.min(row.length, lo + LIST_PLACES);
    const list = el("ol", "gv-inset-list");
    list.start = lo + 1;
    inset.items = new Map();
    for (let p = lo; p < hi; p++) {
      const id = row[p];
      const li = el("li", "gv-inset-item");
      if (id !== null) {
        li.appendChild(tensors.has(id) ? el("span", null, tensorName(id))
          : nodes.has(id) ? nodeRef(id) : el("span", null, ops.has(id) ? ops.get(id).name : id));
      }
      list.appendChild(li);
      inset.items.set(p, [li]);
    }
    const more = row.length - hi + lo;
    inset.body.replaceChildren(list);
    if (more > 0) {
      inset.body.appendChild(el("p", "gv-none", "places " + (lo + 1) + "\u2013" + hi + " of "
        + row.length + " shown"));
    }
    inset.window = [lo, hi];
    return;
  }
  row.forEach((id, p) => {
    if (id === null || !tensors.has(id)) return;
    for (const g of inset.index.byNode.get("p" + p) || []) {
      const text = g.querySelector("text");
      if (text) text.textContent = tensorName(id);
    }
  });
}

/** Colour the inset's places as their nodes are coloured at this step. */
function paintInset(inset) {
  if (inset.gid === null || !live) return;
  const block = blockOf(insetInfo(inset), inset.gid);
  if (!block) return;
  const row = block.grid[inset.rep];
  let lo = 0;
  let hi = row.length;
  if (!inset.index) {
    // A listed block: keep the current node's place among the places listed.
    const info = insetInfo(inset);
    const ids = inset.forward ? view.fwdIds : [view.current];
    const slot = ids.map((id) => (id ? slotOf(info, inset.gid, id) : null)).find(Boolean);
    const at = slot && slot[0] === inset.rep ? slot[1] : null;
    if (!inset.window || (at !== null && (at < inset.window[0] || at >= inset.window[1]))) {
      nameInset(inset, block, at === null ? 0 : at);
    }
    [lo, hi] = inset.window;
  }
  const place = (p) => (inset.index ? inset.index.byNode.get("p" + p) : inset.items.get(p));
  let focus = null;
  for (let p = lo; p < hi; p++) {
    const id = row[p];
    const els = place(p);
    if (id === null || !els) continue;
    if (id === view.current || view.fwdIds.includes(id)) focus = els[0];
    if (inset.forward) {
      const current = view.fwdIds.includes(id);
      for (const g of els) g.classList.toggle("gv-current", current);
    } else if (live.R.inRun.has(id)) {
      paint(els, id === view.current, live.S.ready.has(id), live.S.done.has(id));
    } else {
      for (const g of els) g.classList.toggle("gv-current", id === view.current);
    }
  }
  inset.focus = focus; // scrolled into the inset's view by revealInsets, after every write
}

/** Scroll each open inset to its current place (a read of the layout: after all writes). */
function revealInsets() {
  for (const inset of insets) {
    if (inset.gid !== null && inset.focus) keepInBox(inset.body, inset.focus);
  }
}

/** Scroll box (only box) so that element e is inside it. */
function keepInBox(box, e) {
  const b = box.getBoundingClientRect();
  const r = e.getBoundingClientRect();
  if (r.left < b.left || r.right > b.right) {
    box.scrollLeft += (r.left + r.right) / 2 - (b.left + b.right) / 2;
  }
  if (r.top < b.top || r.bottom > b.bottom) {
    box.scrollTop += (r.top + r.bottom) / 2 - (b.top + b.bottom) / 2;
  }
}

/** After a step: open the block holding the step's node, or repaint / close what is open. */
function updateInsets(step) {
  for (const inset of insets) {
    if (inset.forward && !forwardOpen()) continue; // folded away: nothing to open it in
    const info = insetInfo(inset);
    const ids = inset.forward ? view.fwdIds : step.node ? [step.node] : [];
    let opened = false;
    for (const id of ids) {
      const group = foldedIn(info, id);
      const slot = group ? slotOf(info, group.id, id) : null;
      if (slot) {
        openBlock(inset, group.id, slot[0], false);
        opened = true;
        break;
      }
    }
    if (!opened && inset.gid !== null) {
      if (inset.pinned) paintInset(inset);
      else closeBlock(inset);
    }
  }
}

/** The repetition to open a group at: the one holding this step's node, else the first. */
function repToOpen(inset, gid) {
  const info = insetInfo(inset);
  for (const id of inset.forward ? view.fwdIds : [view.current]) {
    const slot = id ? slotOf(info, gid, id) : null;
    if (slot) return slot[0];
  }
  return 0;
}

/** A click (or Enter) on a folded group in a graph opens it. */
function openGroupAt(box, g) {
  const node = g && g.closest ? g.closest("g.node") : null;
  const gid = node ? titleOf(node) : null;
  const inset = insets[box === forwardView ? 1 : 0];
  if (gid && blockOf(insetInfo(inset), gid)) {
    openBlock(inset, gid, repToOpen(inset, gid), true);
    return true;
  }
  return false;
}

function initInsets() {
  for (const inset of insets) {
    inset.prev.addEventListener("click", () => openBlock(inset, inset.gid, inset.rep - 1, true));
    inset.next.addEventListener("click", () => openBlock(inset, inset.gid, inset.rep + 1, true));
    inset.box.querySelector("[data-inset=close]").addEventListener("click", () => {
      closeBlock(inset);
      (inset.forward ? forwardView : backwardView).focus();
    });
  }
  // Folded groups are buttons for the keyboard too.
  const drawings = [[forwardView, folded.forward || null]];
  backwardBoxes.forEach((b, i) => drawings.push([b, (folded.backward || [])[i] || null]));
  for (const [box, info] of drawings) {
    for (const gid of Object.keys((info && info.blocks) || {})) {
      for (const g of indexOf(box).byNode.get(gid) || []) {
        g.setAttribute("tabindex", "0");
        g.setAttribute("role", "button");
        g.setAttribute("aria-label", "open the folded group " + (info.titles[gid] || gid));
        g.classList.add("gv-openable");
      }
    }
  }
  for (const box of [backwardView, forwardView]) {
    box.addEventListener("keydown", (e) => {
      if ((e.key === "Enter" || e.key === " ") && openGroupAt(box, e.target)) {
        e.preventDefault();
      }
    });
  }
}

function indexOf(box) {
  return box === forwardView ? forwardIndex : backwardIndex[backwardBoxes.indexOf(box)];
}

// -- search -------------------------------------------------------------------------------------
// NOTE [search] The box finds a backward node (by id or name), a tensor or parameter (by name:
// layer3.0.conv1.weight), a module path (0.fc1) or an op (addmm, AddmmBackward0), and lists
// the steps of the shown run that touch it: a node's own steps; a tensor's AccumulateGrad and
// leaf_grad steps and those of the node that made it; a module's or an op's nodes' steps. A
// step in the list jumps there (and pans the graph to its node). Keys: / focuses the box;
// ↓ / ↑ move through the results; Enter jumps to the first; Esc leaves the box.
// Indexes are built the first time the box is used (once; per run for the steps).
const MAX_RESULTS = 20;
const MAX_STEPS_SHOWN = 12;
let searchIndex = null;
const stepsOfNode = new Map(); // run index -> Map node -> [step]

function buildSearchIndex() {
  const entries = [];
  const add = (kind, label, id, nodeIds) => entries.push({kind, label, id, key: label.toLowerCase(),
    idKey: String(id).toLowerCase(), nodes: nodeIds});
  const byName = new Map();
  for (const n of trace.nodes) {
    add("node", n.name, n.id, [n.id]);
    if (!byName.has(n.name)) byName.set(n.name, []);
    byName.get(n.name).push(n.id);
  }
  const producer = new Map(); // tensor -> node of the op that made it
  const byOp = new Map();
  const byModule = new Map();
  for (const op of trace.ops) {
    if (op.node) {
      for (const t of op.outputs) producer.set(t, op.node);
      if (!byOp.has(op.name)) byOp.set(op.name, []);
      byOp.get(op.name).push(op.node);
      for (const scope of op.scope || []) {
        if (!byModule.has(scope)) byModule.set(scope, []);
        byModule.get(scope).push(op.node);
      }
    }
  }
  const writers = new Map(); // tensor -> its AccumulateGrad nodes
  for (const n of trace.nodes) {
    if (n.variable) {
      if (!writers.has(n.variable)) writers.set(n.variable, []);
      writers.get(n.variable).push(n.id);
    }
  }
  for (const t of trace.tensors) {
    const own = (writers.get(t.id) || []).concat(producer.has(t.id) ? [producer.get(t.id)] : []);
    add(t.is_param ? "parameter" : "tensor", t.name || t.id, t.id, own);
  }
  for (const [name, ids] of byName) {
    if (ids.length > 1) add("node name", name, ids.length + " nodes", ids);
  }
  for (const [name, ids] of byOp) add("op", name, ids.length + " ops", ids);
  for (const [name, ids] of byModule) add("module", name, "", ids);
  return entries;
}

function nodeSteps(r) {
  if (!stepsOfNode.has(r)) {
    const map = new Map();
    for (const s of runs[r].steps) {
      for (const id of [s.node, s.kind === "leaf_grad" ? "tensor:" + s.tensor : null]) {
        if (!id) continue;
        if (!map.has(id)) map.set(id, []);
        map.get(id).push(s.index);
      }
    }
    stepsOfNode.set(r, map);
  }
  return stepsOfNode.get(r);
}

/** The steps of the shown run that touch an entry, in order. */
function entrySteps(entry) {
  const map = nodeSteps(runIndex);
  const out = new Set();
  for (const id of entry.nodes) for (const k of map.get(id) || []) out.add(k);
  if (entry.kind === "parameter" || entry.kind === "tensor") {
    for (const k of map.get("tensor:" + entry.id) || []) out.add(k);
  }
  return Array.from(out).sort((a, b) => a - b);
}

/** Entries matching the query, best first: exact id or name, then prefix, then substring. */
function findEntries(query) {
  const q = query.trim().toLowerCase();
  if (!q) return [];
  if (!searchIndex) searchIndex = buildSearchIndex();
  const scored = [];
  for (const e of searchIndex) {
    let score = -1;
    if (e.idKey === q || e.key === q) score = 0;
    else if (e.key.startsWith(q)) score = 1;
    else if (e.key.includes(q)) score = 2;
    if (score >= 0) scored.push([score, e]);
  }
  scored.sort((a, b) => a[0] - b[0]);
  const out = [];
  for (const [, e] of scored) {
    if (out.length >= MAX_RESULTS) break;
    const steps = entrySteps(e);
    if (steps.length || e.kind === "module" || e.kind === "op") out.push({entry: e, steps});
  }
  return out;
}

function showResults(query) {
  const box = part("results");
  box.replaceChildren();
  const found = findEntries(query);
  box.hidden = !query.trim();
  box.dataset.query = query; // what the list answers (tests wait for it)
  if (!found.length) {
    box.appendChild(el("p", "gv-none", "Nothing in this run matches \u201c" + query.trim()
      + "\u201d."));
    return;
  }
  const list = el("ul", "gv-results");
  for (const {entry, steps} of found) {
    const li = el("li", "gv-result");
    const head = el("div", "gv-result-head");
    head.appendChild(el("span", "gv-result-kind", entry.kind));
    head.appendChild(document.createTextNode(" "));
    head.appendChild(el("span", "gv-result-name", entry.label));
    if (entry.id && entry.id !== entry.label) {
      head.appendChild(document.createTextNode(" "));
      head.appendChild(el("small", "gv-id", String(entry.id)));
    }
    li.appendChild(head);
    const row = el("div", "gv-result-steps");
    if (!steps.length) row.appendChild(el("span", "gv-none", "no step of this run"));
    for (const k of steps.slice(0, MAX_STEPS_SHOWN)) {
      const b = el("button", "gv-jump", "step " + k);
      b.type = "button";
      b.dataset.step = String(k);
      b.title = runs[runIndex].steps[k].kind + (runs[runIndex].steps[k].node
        ? " " + nodeName(runs[runIndex].steps[k].node) : "");
      row.appendChild(b);
    }
    if (steps.length > MAX_STEPS_SHOWN) {
      row.appendChild(el("span", "gv-more", "+" + (steps.length - MAX_STEPS_SHOWN) + " more"));
    }
    li.appendChild(row);
    list.appendChild(li);
  }
  box.appendChild(list);
}

function initSearch() {
  const input = part("search");
  const box = part("results");
  let timer = null;
  input.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(() => showResults(input.value), 80);
  });
  const jumps = () => Array.from(box.querySelectorAll("button.gv-jump"));
  input.addEventListener("keydown", (e) => {
    if (e.key === "Enter" || e.key === "ArrowDown") {
      clearTimeout(timer);
      showResults(input.value);
      const first = jumps()[0];
      if (first && e.key === "Enter") first.click();
      else if (first) first.focus();
      e.preventDefault();
    } else if (e.key === "Escape") {
      input.value = "";
      box.hidden = true;
      root.focus();
    }
  });
  box.addEventListener("keydown", (e) => {
    const all = jumps();
    const i = all.indexOf(e.target);
    if (i < 0) return;
    if (e.key === "ArrowDown" || e.key === "ArrowRight") {
      (all[i + 1] || all[i]).focus();
    } else if (e.key === "ArrowUp" || e.key === "ArrowLeft") {
      (i ? all[i - 1] : input).focus();
    } else if (e.key === "Escape") {
      input.focus();
    } else {
      return;
    }
    e.preventDefault();
    e.stopPropagation();
  });
  // The list closes when the learner works elsewhere, and opens again on the box.
  root.addEventListener("pointerdown", (e) => {
    if (!e.target.closest || !e.target.closest(".gv-search")) box.hidden = true;
  });
  input.addEventListener("focus", () => {
    if (input.value.trim()) showResults(input.value);
  });
  box.addEventListener("click", (e) => {
    const b = e.target.closest ? e.target.closest("button.gv-jump") : null;
    if (!b) return;
    for (const other of box.querySelectorAll(".gv-jump.gv-on")) other.classList.remove("gv-on");
    b.classList.add("gv-on");
    go(Number(b.dataset.step));
  });
}

// -- the step list and controls ---------------------------------------------------------------
function safeKind(kind) {
  return /^[a-z_]+$/.test(kind) ? kind : "other";
}

const stepList = part("steps");
const slider = part("slider");
let stepRows = []; // the step list's rows, by step index
let currentItem = null; // the highlighted row

// NOTE [long step lists] A run can have thousands of steps. The list holds one small row per
// step, built once per run, in blocks of STEP_BLOCK rows; each block has
// `content-visibility: auto` (player.css), so the browser styles, lays out and paints only the
// blocks in view. One click listener serves every row, and a step change touches two rows.
const STEP_BLOCK = 64;

/**
 * Put a name into a narrow element so that it wraps between words, not inside them: besides
 * spaces, a line may break between the words of a class name (MaxPool2DWithIndices|Backward0).
 * Only a single word too long for a whole line is cut (overflow-wrap in player.css).
 */
function breakable(box, text) {
  for (const piece of String(text).split(/(?<=[A-Za-z0-9])(?=[A-Z][a-z])/)) {
    if (box.firstChild) box.appendChild(document.createElement("wbr"));
    box.appendChild(document.createTextNode(piece));
  }
  return box;
}

function buildStepList(run) {
  const blocks = document.createDocumentFragment();
  stepRows = [];
  let block = null;
  run.steps.forEach((s, i) => {
    if (i % STEP_BLOCK === 0) {
      block = el("div", "gv-block");
      block.setAttribute("role", "none");
      blocks.appendChild(block);
    }
    const row = el("div", "gv-row");
    row.setAttribute("role", "listitem");
    row.dataset.i = String(i);
    const button = el("button", "gv-step");
    button.type = "button";
    button.appendChild(el("span", "gv-n", String(i)));
    button.appendChild(el("span", "gv-kind gv-k-" + safeKind(s.kind), s.kind));
    if (s.node) {
      const name = breakable(el("span", "gv-step-node"), nodeName(s.node));
      name.appendChild(el("small", "gv-id", String(s.node)));
      button.appendChild(name);
    }
    row.appendChild(button);
    block.appendChild(row);
    stepRows.push(row);
  });
  // Room for the widest step number, so numbers and badges never overlap.
  stepList.style.setProperty("--gv-digits", String(String(run.steps.length - 1).length));
  stepList.replaceChildren(blocks);
  currentItem = null;
  part("step-count").textContent = run.steps.length + " steps";
}

stepList.addEventListener("click", (e) => {
  const row = e.target.closest ? e.target.closest("[data-i]") : null;
  if (row && stepList.contains(row)) go(Number(row.dataset.i));
});

/**
 * Scroll the step list (only the list, never the page) so item is visible. Rows out of view
 * are not laid out (content-visibility), so their heights are estimates until drawn: look
 * again after the next frames and correct.
 */
function keepVisible(item, again = 2) {
  // Measured on screen: offsetTop would count from the row's block (it contains its layout).
  const box = item.getBoundingClientRect();
  const top = box.top - stepList.getBoundingClientRect().top - stepList.clientTop
    + stepList.scrollTop;
  const bottom = top + box.height;
  if (top < stepList.scrollTop) {
    stepList.scrollTop = top;
  } else if (bottom > stepList.scrollTop + stepList.clientHeight) {
    stepList.scrollTop = bottom - stepList.clientHeight;
  }
  if (again > 0) {
    requestAnimationFrame(() => {
      if (item === currentItem) keepVisible(item, again - 1);
    });
  }
}

// -- the step in the URL --------------------------------------------------------------------------
// NOTE [URL] A page of its own keeps its place in the address: steps.html#run=20&step=17 opens
// backward run 20 (the number its drawing's title gives it: runNumbers) at step 17; a number
// no shown run has opens the last run. Moving between steps replaces the address (no history
// entry per step, and at most a few writes a second, as browsers throttle them); choosing
// another run adds one entry, so Back returns to the run before. A fragment in a notebook
// leaves the notebook's URL alone.
let urlTimer = null;

function placeInUrl() {
  return "#run=" + runNumbers[runIndex] + "&step=" + stepIndex;
}

function writeUrl(push) {
  if (!KEYS_ON_DOCUMENT || !runs.length) {
    return;
  }
  clearTimeout(urlTimer);
  urlTimer = null;
  if (push) {
    history.pushState(null, "", placeInUrl());
    return;
  }
  urlTimer = setTimeout(() => {
    urlTimer = null;
    if (location.hash !== placeInUrl()) history.replaceState(null, "", placeInUrl());
  }, 150);
}

/** The run and step an address asks for ({} when it names none). */
function readUrl() {
  const wanted = new URLSearchParams(location.hash.slice(1));
  const out = {};
  // The run by its number; a number no shown run has is no place (the page opens the last run).
  const r = wanted.has("run") ? runNumbers.indexOf(Number(wanted.get("run"))) : -1;
  if (r >= 0) out.run = r;
  const k = Number(wanted.get("step"));
  if (wanted.has("step") && Number.isFinite(k)) out.step = Math.max(0, Math.floor(k));
  return out;
}

/** Follow the address after Back / Forward or an edited hash. */
function followUrl() {
  const want = readUrl();
  if (want.run !== undefined && want.run !== runIndex) selectRun(want.run, false);
  if (want.step !== undefined && want.step !== stepIndex) go(want.step);
}

// -- moving between steps -------------------------------------------------------------------------
/** Show step k of the current run. */
function go(k) {
  const run = runs[runIndex];
  if (!run || !run.steps.length) {
    return;
  }
  stepIndex = Math.max(0, Math.min(run.steps.length - 1, k));
  const step = run.steps[stepIndex];
  const {R, S} = live;
  const touched = moveTo(S, R, stepIndex);
  highlight(R, S, step, touched);
  // The last step (done) is about no node: the graph shows the node that ran last.
  const last = R.lastExec[stepIndex] >= 0 ? run.steps[R.lastExec[stepIndex]] : null;
  view.lastEls = !step.node && last ? R.drawing.byNode.get(drawnId(R.info, last.node)) || [] : [];
  renderEvent(run, step);
  updatePanel(R, S, touched, step);
  updateMemory(stepIndex);
  const bufferBefore = hasOwn(R.tl.bufferBefore, String(stepIndex))
    ? R.tl.bufferBefore[String(stepIndex)] : null;
  renderEdges(step, {lastExecute: last, bufferBefore: bufferBefore});
  updateInsets(step);
  slider.value = String(stepIndex);
  part("position").textContent = "step " + stepIndex + " / " + (run.steps.length - 1)
    + " \u00b7 " + step.kind;
  if (currentItem) {
    currentItem.classList.remove("gv-cur");
    currentItem.removeAttribute("aria-current");
  }
  currentItem = stepRows[stepIndex] || null;
  if (currentItem) {
    currentItem.classList.add("gv-cur");
    currentItem.setAttribute("aria-current", "step");
  }
  root.dataset.step = String(stepIndex); // for tests and for styling
  root.dataset.run = String(runIndex);
  // Only now read the layout (once): every write of this step is done.
  if (currentItem) keepVisible(currentItem);
  revealCurrent();
  revealInsets();
  writeUrl(false);
}

/** Switch to run r (position in the embedded runs) and show its first step. */
let live = null; // {R, S}: the shown run, prepared, and its live state (NOTE [constant cost])

function selectRun(r, push) {
  runIndex = r;
  const R = prepareRun(r);
  live = {R, S: freshState(R)};
  buildGraphState(R);
  buildPanel(R);
  buildMemory(r, runs[r].steps.length);
  for (const inset of insets) {
    if (!inset.forward) closeBlock(inset);
  }
  backwardBoxes.forEach((box, i) => {
    box.hidden = i !== r;
  });
  const run = runs[r];
  const roots = run.roots.map(tensorName).join(", ");
  part("run-label").textContent = runNames[r] + ": " + run.kind + " of " + (roots || "?")
    + (run.engine !== "pytorch" ? " (" + run.engine + " engine)" : "");
  part("run").value = String(r);
  slider.max = String(Math.max(0, run.steps.length - 1));
  buildStepList(run);
  stepList.scrollTop = 0;
  showView(backwardViews[r]);
  go(0);
  if (push) writeUrl(true);
}

function initRuns() {
  const select = part("run");
  runs.forEach((run, i) => {
    const option = el("option", null, "run " + runNumbers[i] + " \u00b7 " + run.kind + " of "
      + run.roots.map(tensorName).join(", ") + " \u00b7 " + run.steps.length + " steps");
    option.value = String(i);
    select.appendChild(option);
  });
  part("run-pick").hidden = runs.length < 2;
  select.addEventListener("change", () => selectRun(Number(select.value), true));
}

function onKey(event) {
  if (event.altKey || event.ctrlKey || event.metaKey) {
    return;
  }
  const t = event.target;
  const tag = t && t.tagName ? t.tagName.toLowerCase() : "";
  // Let form fields keep their own keys (the run <select>, any text input), except our slider.
  if (tag === "select" || tag === "textarea" || (tag === "input" && t !== slider)
      || (t && t.isContentEditable)) {
    return;
  }
  if (event.key === "/") {
    event.preventDefault();
    part("search").focus();
    return;
  }
  if (event.key === "Escape") {
    for (const inset of insets) closeBlock(inset);
    return;
  }
  const moves = {ArrowRight: stepIndex + 1, ArrowLeft: stepIndex - 1, Home: 0, End: Infinity};
  const zooms = {"+": "in", "=": "in", "-": "out", "_": "out", "0": "fit"};
  if (!(event.key in moves) && !(event.key in zooms)) {
    return;
  }
  event.preventDefault(); // also stops the slider from moving a second time
  if (!KEYS_ON_DOCUMENT) {
    event.stopPropagation(); // in a notebook, keep the key from the notebook's own shortcuts
  }
  if (event.key in zooms) {
    zoomKey(zooms[event.key], keyBox === forwardView && forwardOpen() ? forwardView
      : backwardView);
  } else {
    go(moves[event.key]);
  }
}

/** The forward graph's header button folds the panel away (more room for the backward one). */
function toggleForward() {
  const open = !forwardOpen();
  part("forward-toggle").setAttribute("aria-expanded", String(open));
  part("forward-box").classList.toggle("gv-collapsed", !open);
  forwardView.hidden = !open;
  forwardView.parentElement.hidden = !open; // its stage, with the opened-block inset
  if (!open) closeBlock(insets[1]);
  if (open) {
    showView(forwardViewState);
    revealCurrent();
  }
  if (!open && keyBox === forwardView) keyBox = backwardView;
}

function init() {
  if (payload.notes && payload.notes.length) {
    const notes = part("notes");
    notes.textContent = payload.notes.join(" ");
    notes.hidden = false;
  }
  if (!payload.hasForward) {
    part("forward-box").hidden = true;
  }
  part("first").addEventListener("click", () => go(0));
  part("prev").addEventListener("click", () => go(stepIndex - 1));
  part("next").addEventListener("click", () => go(stepIndex + 1));
  part("last").addEventListener("click", () => go(Infinity));
  slider.addEventListener("input", () => go(Number(slider.value)));
  part("forward-toggle").addEventListener("click", toggleForward);
  initInsets();
  initSearch();
  enableZoom(backwardView);
  enableZoom(forwardView);
  // A page has one player: keys work anywhere. In a notebook, only while the player has focus.
  (KEYS_ON_DOCUMENT ? document : root).addEventListener("keydown", onKey);
  showView(forwardViewState);
  watchSizes();
  if (!runs.length) {
    part("no-runs").hidden = false;
    for (const name of ["first", "prev", "next", "last", "slider"]) part(name).disabled = true;
    part("event").textContent = "Nothing to step through.";
    return;
  }
  initRuns();
  // A page opens at the place its address names (steps.html#run=1&step=7), else at the last
  // run's first step. A notebook fragment ignores the notebook's address.
  const want = KEYS_ON_DOCUMENT ? readUrl() : {};
  selectRun(want.run !== undefined ? want.run : runs.length - 1, false);
  if (want.step !== undefined) {
    go(want.step);
  }
  if (KEYS_ON_DOCUMENT) {
    window.addEventListener("popstate", followUrl);
    window.addEventListener("hashchange", followUrl);
  }
}

try {
  init();
} catch (err) {
  showError("gradviz player error: " + err);
  throw err;
}
