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
    box.appendChild(el("code", "gv-values",
      "min " + fmtNum(st.min) + "  max " + fmtNum(st.max) + "  mean " + fmtNum(st.mean)));
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
 * each leaf's .grad, and the last `execute` step (whose gradients are on the edges).
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
  state.freed = tl.freed[key] || [];
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
/** One sentence saying what the engine does in this step. */
/** A saved value's name as PyTorch's attribute spells it (self -> _saved_self). */
function savedName(name) {
  return /^(_|saved_tensors)/.test(name) ? name : "_saved_" + name;
}

function describe(step, state) {
  const d = step;
  const engine = step.engine_data || {};
  const who = step.node === null || step.node === undefined ? null : nodeRef(step.node);
  switch (step.kind) {
    case "compute_dependencies":
      return line("gv-say", "The engine walks the graph once and counts, for each node, how "
        + "many edges bring it a gradient. A node runs only when all of them have delivered.");
    case "enqueue":
      return line("gv-say", who, " has all its gradients: it joins the ready queue.");
    case "execute": {
      const n = nodes.get(step.node);
      if (n && n.kind === "accumulate_grad") {
        return line("gv-say", who, " runs: it adds the gradient it received into "
          + tensorName(n.variable) + ".grad.");
      }
      return line("gv-say", who, " runs: from the gradient of its output it computes one "
        + "gradient per input and sends each along its edge.");
    }
    case "accumulate":
      return line("gv-say", "The gradient from ", d.source ? nodeRef(d.source)
        : (engine.gnode ? "gradient-graph node " + engine.gnode : "the root"),
        " arrives at ", who, " (input " + d.input_nr + ") and is added to its input buffer; "
        + d.remaining + " edge(s) still to deliver.");
    case "leaf_grad":
      return line("gv-say", who, " writes " + tensorName(d.tensor) + ".grad.");
    case "hook":
      return line("gv-say", "A " + d.hook + " hook" + (d.fn ? " (" + d.fn + ")" : "")
        + " runs", who ? " on " : "", who || "", ".");
    case "gradient_node":
      // MXNet's engine: a node of its explicit gradient graph that is not a backward formula
      // (head gradient, sum of several gradients, zeros, copy into .grad).
      return line("gv-say", "Gradient-graph node " + d.gnode + " (" + d.op + ") runs",
        who ? " for " : "", who || "", who ? " (input " + d.input_nr + ")." : ".");
    case "release_saved": {
      const freed = state.freed.map(savedName);
      return line("gv-say", who, freed.length
        ? " frees its saved tensors " + freed.join(", ") + " (retain_graph=False)."
        : " releases its saved values; it held no saved tensor (retain_graph=False).");
    }
    case "error":
      return line("gv-say gv-bad", "Backward failed", who ? " in " : "", who || "",
        ": " + d.type + ": " + d.message);
    case "done":
      return line("gv-say", "The ready queue is empty: the backward pass is finished.");
    default:
      return line("gv-say", step.kind + (who ? " " : ""), who || "", ".");
  }
}

function renderEvent(run, step, state) {
  const box = part("event");
  box.replaceChildren();
  const head = el("p", "gv-step-head");
  head.appendChild(el("span", "gv-kind gv-k-" + safeKind(step.kind), step.kind));
  head.appendChild(document.createTextNode(" step " + step.index + " of "
    + (run.steps.length - 1)));
  box.appendChild(head);
  box.appendChild(describe(step, state));
  const n = step.node ? nodes.get(step.node) : null;
  if (n && n.forward_op && ops.has(n.forward_op)) {
    const op = ops.get(n.forward_op);
    box.appendChild(line("gv-meta", "made by the forward op ", el("code", null, op.name),
      op.outputs.length ? " \u2192 " + op.outputs.map(tensorName).join(", ") : ""));
    const src = sourceLine(op.source);
    if (src) box.appendChild(src);
  }
  const d = step;
  if (step.kind === "leaf_grad") {
    box.appendChild(line("gv-kv", "before: ", summaryEl(d.before)));
    box.appendChild(line("gv-kv", "after: ", summaryEl(d.after)));
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

// -- highlighting the graphs ------------------------------------------------------------------
function highlight(run, step, state) {
  clearMarks();
  const drawing = backwardIndex[runIndex];
  if (!drawing) {
    return;
  }
  for (const id of state.done) mark(drawing.byNode.get(id), "gv-done");
  for (const id of state.ready) mark(drawing.byNode.get(id), "gv-ready");
  if (step.node) {
    mark(drawing.byNode.get(step.node), "gv-current");
  }
  // Edges a gradient travels along in this step.
  if (step.kind === "execute") {
    const n = nodes.get(step.node);
    for (const [target] of n ? n.next_functions : []) {
      if (target !== null) mark(drawing.byEdge.get(step.node + "->" + target), "gv-flow");
    }
  } else if (step.kind === "accumulate" && step.source) {
    mark(drawing.byEdge.get(step.source + "->" + step.node), "gv-flow");
  }
  // The forward graph: the op that made this node, or the leaf it writes.
  const n = step.node ? nodes.get(step.node) : null;
  if (n && n.forward_op) mark(forwardIndex.byNode.get(n.forward_op), "gv-current");
  if (n && n.variable) mark(forwardIndex.byNode.get(n.variable), "gv-current");
}

// -- the step list and controls ---------------------------------------------------------------
function safeKind(kind) {
  return /^[a-z_]+$/.test(kind) ? kind : "other";
}

const stepList = part("steps");
const slider = part("slider");

function buildStepList(run) {
  stepList.replaceChildren();
  run.steps.forEach((s, i) => {
    const li = el("li");
    const button = el("button", "gv-step");
    button.type = "button";
    button.appendChild(el("span", "gv-n", String(i)));
    button.appendChild(el("span", "gv-kind gv-k-" + safeKind(s.kind), s.kind));
    if (s.node) button.appendChild(el("span", "gv-step-node", nodeName(s.node)));
    button.addEventListener("click", () => go(i));
    li.appendChild(button);
    stepList.appendChild(li);
  });
}

/** Scroll the step list (only the list, never the page) so item is visible. */
function keepVisible(item) {
  const top = item.offsetTop;
  const bottom = top + item.offsetHeight;
  if (top < stepList.scrollTop) {
    stepList.scrollTop = top;
  } else if (bottom > stepList.scrollTop + stepList.clientHeight) {
    stepList.scrollTop = bottom - stepList.clientHeight;
  }
}

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
  renderEvent(run, step, state);
  renderReady(state);
  renderEdges(step, state);
  renderLeaves(run, step, state);
  renderDeps(step, state);
  slider.value = String(stepIndex);
  part("position").textContent = "step " + stepIndex + " / " + (run.steps.length - 1)
    + " \u00b7 " + step.kind;
  const items = stepList.children;
  for (let i = 0; i < items.length; i++) {
    const current = i === stepIndex;
    items[i].classList.toggle("gv-cur", current);
    if (current) {
      items[i].setAttribute("aria-current", "step");
      keepVisible(items[i]);
    } else {
      items[i].removeAttribute("aria-current");
    }
  }
  root.dataset.step = String(stepIndex); // for tests and for styling
  root.dataset.run = String(runIndex);
}

/** Switch to run r (position in the embedded runs) and show its first step. */
function selectRun(r) {
  runIndex = r;
  backwardBoxes.forEach((box, i) => {
    box.hidden = i !== r;
  });
  const run = runs[r];
  const roots = run.roots.map(tensorName).join(", ");
  part("run-label").textContent = run.id + ": " + run.kind + " of " + (roots || "?")
    + (run.engine !== "pytorch" ? " (" + run.engine + " engine)" : "");
  part("run").value = String(r);
  slider.max = String(Math.max(0, run.steps.length - 1));
  buildStepList(run);
  stepList.scrollTop = 0;
  go(0);
}

function initRuns() {
  const select = part("run");
  runs.forEach((run, i) => {
    const option = el("option", null, run.id + " \u00b7 " + run.kind + " of "
      + run.roots.map(tensorName).join(", ") + " \u00b7 " + run.steps.length + " steps");
    option.value = String(i);
    select.appendChild(option);
  });
  part("run-pick").hidden = runs.length < 2;
  select.addEventListener("change", () => selectRun(Number(select.value)));
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
  if (!(event.key in moves)) {
    return;
  }
  event.preventDefault(); // also stops the slider from moving a second time
  if (!KEYS_ON_DOCUMENT) {
    event.stopPropagation(); // in a notebook, keep the key from the notebook's own shortcuts
  }
  go(moves[event.key]);
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
  // A page has one player: keys work anywhere. In a notebook, only while the player has focus.
  (KEYS_ON_DOCUMENT ? document : root).addEventListener("keydown", onKey);
  if (!runs.length) {
    part("no-runs").hidden = false;
    for (const name of ["first", "prev", "next", "last", "slider"]) part(name).disabled = true;
    part("event").textContent = "Nothing to step through.";
    return;
  }
  initRuns();
  // A page can be opened at a given place: player.html#run=0&step=7 (handy for screenshots).
  const wanted = new URLSearchParams(KEYS_ON_DOCUMENT ? location.hash.slice(1) : "");
  const r = Number(wanted.get("run"));
  selectRun(wanted.has("run") && r >= 0 && r < runs.length ? r : runs.length - 1);
  if (wanted.has("step")) {
    go(Number(wanted.get("step")) || 0);
  }
}

try {
  init();
} catch (err) {
  showError("gradviz player error: " + err);
  throw err;
}
