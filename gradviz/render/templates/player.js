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

/** The element with data-role=name inside this player. */
function part(name) {
  return root.querySelector('[data-role="' + name + '"]');
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

// Elements currently carrying a highlight class, so the next step can clear exactly those.
let marked = [];

function mark(elements, cls) {
  for (const e of elements || []) {
    e.classList.add(cls);
    marked.push([e, cls]);
  }
}

function clearMarks() {
  for (const [e, cls] of marked) {
    e.classList.remove(cls);
  }
  marked = [];
}

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

// -- the engine's state at a step (looked up in the run's timeline) ---------------------------
/** The last value of [[step, value], ...] at or before step k, or undefined. */
function valueAt(changes, k) {
  let out;
  for (const [at, v] of changes) {
    if (at > k) break;
    out = v;
  }
  return out;
}

/**
 * The engine's state after steps 0..k of a run: dependency counts, ready queue, executed nodes,
 * the input buffers waiting, each leaf's .grad, and the last `execute` step (whose gradients
 * are on the edges).
 */
function replay(run, k) {
  const tl = timelines[runs.indexOf(run)];
  const state = {deps: {}, ready: [], done: new Set(), grads: new Map(), lastExecute: null};
  if (!tl) {
    return state;
  }
  for (const [node, begin] of tl.executed) {
    if (begin > k) break;
    if (begin < k) state.done.add(node);
    state.lastExecute = run.steps[begin];
  }
  for (const [node, enter, leave] of tl.queue) {
    if (enter <= k && (leave === null || k < leave)) state.ready.push(node);
  }
  for (const [node, changes] of Object.entries(tl.deps)) {
    const count = valueAt(changes, k);
    if (count !== undefined) state.deps[node] = count;
  }
  for (const [tid, g] of Object.entries(tl.leafGrads)) {
    let entry = {value: g.before, step: null};
    for (const [at, value] of g.at) {
      if (at > k) break;
      entry = {value: value, step: at};
    }
    state.grads.set(tid, entry);
  }
  const key = String(k);
  state.bufferBefore = Object.prototype.hasOwnProperty.call(tl.bufferBefore, key)
    ? tl.bufferBefore[key] : null;
  // The input buffers waiting: each slot holds the buffer its last accumulate step left there.
  state.buffers = [];
  for (const [node, inputNr, enter, leave] of tl.buffers || []) {
    if (enter > k) break;
    if (leave === null || k < leave) {
      state.buffers.push({node: node, inputNr: inputNr, value: run.steps[enter].buffer,
                          changed: enter === k});
    }
  }
  return state;
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

function renderReady(state) {
  const list = part("ready");
  list.replaceChildren();
  if (!state.ready.length) {
    list.appendChild(el("li", "gv-none", "(empty)"));
  }
  for (const id of state.ready) {
    const li = el("li");
    li.appendChild(nodeRef(id));
    list.appendChild(li);
  }
}

function renderBuffers(state) {
  const box = part("buffers");
  box.replaceChildren();
  if (!state.buffers.length) {
    box.appendChild(el("p", "gv-none", "(none waiting)"));
    return;
  }
  for (const b of state.buffers) {
    const row = el("div", b.changed ? "gv-buffer gv-changed" : "gv-buffer");
    row.appendChild(line("gv-kv gv-slot", nodeRef(b.node), " input " + b.inputNr + ":"));
    row.appendChild(summaryEl(b.value));
    box.appendChild(row);
  }
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

function renderLeaves(run, step, state) {
  const box = part("leaves");
  box.replaceChildren();
  const leaves = runLeaves(run);
  if (!leaves.length) {
    box.appendChild(el("p", "gv-none", "This run writes no leaf .grad."));
    return;
  }
  const table = el("table", "gv-table gv-leaves");
  for (const tid of leaves) {
    const entry = state.grads.get(tid);
    const tr = el("tr", entry && entry.step === step.index ? "gv-changed" : null);
    tr.appendChild(el("th", null, tensorName(tid) + ".grad"));
    const td = el("td");
    td.appendChild(summaryEl(entry ? entry.value : null));
    tr.appendChild(td);
    table.appendChild(tr);
  }
  box.appendChild(table);
}

function renderDeps(step, state) {
  const box = part("deps");
  box.replaceChildren();
  const ids = Object.keys(state.deps);
  if (!ids.length) {
    box.appendChild(el("p", "gv-none", "Not counted yet."));
    return;
  }
  const table = el("table", "gv-table");
  for (const id of ids) {
    const changed = step.kind === "accumulate" && step.node === id;
    const tr = el("tr", changed ? "gv-changed" : null);
    const th = el("th");
    th.appendChild(nodeRef(id));
    tr.appendChild(th);
    tr.appendChild(el("td", state.deps[id] === 0 ? "gv-zero" : null, state.deps[id]));
    table.appendChild(tr);
  }
  box.appendChild(table);
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
  const release = (e) => {
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
// {g0: "fc1: Linear"}}; the group's <g> has the group id as its <title>.
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

// Each backward drawing's groups -> the ids folded into them (built when first needed).
const groupMembers = new Map();

function membersOf(info) {
  if (!groupMembers.has(info)) {
    const members = new Map();
    for (const [id, gid] of Object.entries((info && info.of) || {})) {
      if (!members.has(gid)) members.set(gid, []);
      members.get(gid).push(id);
    }
    groupMembers.set(info, members);
  }
  return groupMembers.get(info);
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
  if (g.querySelector(":scope > g.gv-check")) {
    return;
  }
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

function markDone(elements) {
  for (const g of elements || []) addCheck(g);
  mark(elements, "gv-done");
}

/** Say where a node is hidden when a folded group stands for it (empty text: it is not). */
function sayWhere(roleName, text) {
  const p = part(roleName);
  p.textContent = text;
  p.hidden = !text;
}

/**
 * Colour the graphs for one step. Every node of the run is, in the backward graph: this step's
 * node (gv-current), in the ready queue (gv-ready), finished (gv-done) or not yet run
 * (gv-pending); a node can be both current and ready or done (the CSS lets current win). A
 * folded group stands for its nodes: current if it holds this step's node, ready if it holds a
 * ready one, finished when all of its nodes are, otherwise not yet run.
 */
function highlight(run, step, state) {
  clearMarks();
  sayWhere("where", "");
  sayWhere("forward-where", "");
  const drawing = backwardIndex[runIndex];
  if (!drawing) {
    return;
  }
  const info = (folded.backward || [])[runIndex] || null;
  const done = new Set(state.done);
  const ready = new Set(state.ready);
  for (const id of run.nodes) {
    const own = drawing.byNode.get(id);
    if (!own) continue;
    if (done.has(id)) markDone(own);
    if (ready.has(id)) mark(own, "gv-ready");
    if (!done.has(id) && !ready.has(id) && id !== step.node) mark(own, "gv-pending");
  }
  const inRun = new Set(run.nodes);
  for (const [gid, ids] of membersOf(info)) {
    const mine = ids.filter((id) => inRun.has(id));
    const els = drawing.byNode.get(gid);
    if (!mine.length || !els) continue;
    if (mine.some((id) => ready.has(id))) mark(els, "gv-ready");
    else if (mine.every((id) => done.has(id))) markDone(els);
    else if (!mine.includes(step.node)) mark(els, "gv-pending");
  }
  if (step.node) {
    const own = drawing.byNode.get(step.node);
    const group = own ? null : foldedIn(info, step.node);
    mark(own || (group && drawing.byNode.get(group.id)), "gv-current");
    if (group) {
      sayWhere("where", nodeName(step.node) + " (" + step.node + ") is inside the folded "
        + "group \u201c" + group.title + "\u201d, highlighted in its place.");
    }
  }
  // Edges a gradient travels along in this step (between the groups, if folded).
  const flow = (from, to) => {
    const a = drawnId(info, from);
    const b = drawnId(info, to);
    if (a !== b) mark(drawing.byEdge.get(a + "->" + b), "gv-flow");
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
  const n = step.node ? nodes.get(step.node) : null;
  const fwd = folded.forward || null;
  for (const id of n ? [n.forward_op, n.variable] : []) {
    if (!id) continue;
    const own = forwardIndex.byNode.get(id);
    const group = own ? null : foldedIn(fwd, id);
    mark(own || (group && forwardIndex.byNode.get(group.id)), "gv-current");
    if (group) {
      const what = ops.has(id) ? "the forward op " + ops.get(id).name : tensorName(id);
      sayWhere("forward-where", what + " (" + id + ") is inside the folded group \u201c"
        + group.title + "\u201d, highlighted in its place.");
    }
  }
}

/** Pan each shown graph so this step's highlighted node is in view. */
function revealCurrent() {
  const current = (box) => Array.from(box.querySelectorAll("g.node.gv-current"))
    .filter((g) => !g.closest("[hidden]"));
  reveal(viewIn(backwardView), current(backwardView));
  if (forwardOpen()) reveal(forwardViewState, current(forwardView));
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
  const state = replay(run, stepIndex);
  highlight(run, step, state);
  renderEvent(run, step);
  renderReady(state);
  renderBuffers(state);
  renderEdges(step, state);
  renderLeaves(run, step, state);
  renderDeps(step, state);
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
    keepVisible(currentItem);
  }
  revealCurrent();
  root.dataset.step = String(stepIndex); // for tests and for styling
  root.dataset.run = String(runIndex);
  writeUrl(false);
}

/** Switch to run r (position in the embedded runs) and show its first step. */
function selectRun(r, push) {
  runIndex = r;
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
