"""Each step kind's sentence is written once (gradviz/render/sentences.py): the terminal prints it
and the HTML player (a page, or a notebook's fragment) displays the very same words."""

from __future__ import annotations

import json
import re
from importlib import resources

import pytest

import gradviz
from gradviz.autograd.graph import saved_tensors_hooks
from gradviz.engines import mxnet
from gradviz.render.html import player_html
from gradviz.render.sentences import (
    SENTENCES,
    Code,
    NodeRef,
    player_sentences,
    sentence_text,
    step_sentence,
)
from gradviz.render.terminal import describe, node_label
from gradviz.trace.model import STEP_KINDS, make_step

pytest_plugins = ("_browser",)  # the `driver` fixture (headless Chromium) for the browser tests

NAME = "<b>x</b> & 'y'"  # shown as typed, in both


def _every_kind() -> gradviz.Trace:
    """One trace whose runs hold every kind of engine step."""
    with gradviz.trace(name="every step kind") as tr:
        x = gradviz.tensor([1.0, 2.0, 3.0], requires_grad=True)
        x.name = NAME
        # tensor hook, retain_grad, a node's pre-hook and post-hook; release_saved (exp's result)
        y = x * 2
        y.retain_grad()
        y.register_hook(lambda g: g * 3)
        z = y.exp()
        z.grad_fn.register_prehook(lambda gs: None)
        z.grad_fn.register_hook(lambda gi, go: None)
        z.sum().backward()
        # pack hooks while a create_graph pass's formulas save tensors; the next pass unpacks
        cube = (x ** 3).sum()
        with saved_tensors_hooks(lambda t: t, lambda p: p):
            (g,) = gradviz.autograd.grad(cube, x, create_graph=True)
        g.sum().backward()
        # an in-place change of a saved value: the pass fails
        a = gradviz.tensor([1.0, 2.0], requires_grad=True)
        b = a.exp()
        b.mul_(2)
        with pytest.raises(RuntimeError):
            b.sum().backward()
        # MXNet's engine runs gradient-graph nodes (head gradient, sums, copies into .grad)
        m = mxnet.attach_grad(gradviz.tensor([1.0, 2.0]))
        with mxnet.record():
            h = m * m + m
        mxnet.backward(h)
    assert {s.kind for r in tr.runs for s in r.steps} == set(STEP_KINDS)
    return tr


@pytest.fixture(scope="module")
def every_kind() -> gradviz.Trace:
    return _every_kind()


def _steps(tr):
    return [(r, k, s) for r, run in enumerate(tr.runs) for k, s in enumerate(run.steps)]


# -- one sentence for each kind ----------------------------------------------------------------
def test_every_step_kind_has_its_own_sentence(every_kind):
    assert set(SENTENCES) == set(STEP_KINDS)
    nid = next(iter(every_kind.nodes))
    for kind in STEP_KINDS:
        pieces = step_sentence(every_kind, make_step(kind, 0, nid))
        text = describe(every_kind, make_step(kind, 0, nid))
        assert pieces and text.endswith(".") or kind == "error", (kind, text)
        assert not text.startswith(kind), f"{kind} fell back to the kind's name: {text!r}"
        assert len(text.split()) >= 4, (kind, text)


def test_the_sentences_of_a_run(every_kind):
    tr = every_kind
    seen = {}
    for _, _, s in _steps(tr):
        seen.setdefault(s.kind, describe(tr, s))
    assert seen["enqueue"].endswith(" has all its gradients: it joins the ready queue.")
    assert re.fullmatch(r"A (tensor|retain_grad|prehook|posthook) hook( \(.+\))? runs on "
                        r"\S+ n\d+\.", seen["hook"]), seen["hook"]
    assert seen["pack_hook"].startswith("pack hook _every_kind.<locals>.<lambda> "
                                        "stores a tensor (3,) saved while PowBackward0 n")
    assert re.fullmatch(r"unpack hook _every_kind\.<locals>\.<lambda> returns _saved_\w+ of "
                        r"\w+ n\d+ \(3,\), from a tensor \(3,\): the node reads it as it runs, so "
                        r"this comes before its execute step\.", seen["unpack_hook"])
    assert re.fullmatch(r"Gradient-graph node g\d+ \(\w+\) runs( for \S+ n\d+ \(input \d\))?\.",
                        seen["gradient_node"]), seen["gradient_node"]
    assert seen["error"].startswith("Backward failed in ExpBackward0 n")
    assert "RuntimeError: one of the variables needed for gradient computation" in seen["error"]
    assert seen["done"] == "The ready queue is empty: the backward pass is finished."
    # the leaf's name as typed, inside the sentence
    leaf = next(s for _, _, s in _steps(tr) if s.kind == "leaf_grad")
    assert describe(tr, leaf).endswith(f" writes {NAME}.grad.")


def test_release_saved_names_what_it_frees():
    with gradviz.trace() as tr:
        x = gradviz.tensor([1.0, 2.0], requires_grad=True)
        w = gradviz.tensor([3.0, 4.0], requires_grad=True)
        (x * w).sum().backward()
    step = next(s for s in tr.run().steps if s.kind == "release_saved")
    mul = next(n for n in tr.nodes.values() if n.name == "MulBackward0")
    assert describe(tr, step) == (f"MulBackward0 {mul.id} frees its saved tensors _saved_other, "
                                  "_saved_self (retain_graph=False).")
    # a node the trace names nothing of still frees its saved values (SINGA, MXNet)
    bare = make_step("release_saved", 9, mul.id, saved=[])
    assert describe(tr, bare) == (f"MulBackward0 {mul.id} frees its saved values "
                                  "(retain_graph=False).")


def test_counts_and_outputs_are_said_in_good_english():
    with gradviz.trace() as tr:
        x = gradviz.arange(6.0).reshape(2, 3).requires_grad_()
        p, q = x.unbind(0)
        (p * q + p).sum().backward()
    steps = tr.run().steps
    unbind = next(s for s in steps if s.kind == "execute"
                  and tr.nodes[s.node].name == "UnbindBackward0")
    assert "runs: from the gradients of its outputs it computes" in describe(tr, unbind)
    texts = [describe(tr, s) for s in steps if s.kind == "accumulate"]
    assert any(t.endswith("; 1 edge still to deliver.") for t in texts), texts
    assert any(t.endswith("; 0 edges still to deliver.") for t in texts), texts
    assert not any("edge(s)" in t for t in texts)


def test_the_terminal_escapes_control_characters_of_names():
    with gradviz.trace() as tr:
        x = gradviz.ones(2, requires_grad=True)
        x.name = "x\x1b[2J"
        (x * 2).sum().backward()
    leaf = next(s for s in tr.run().steps if s.kind == "leaf_grad")
    assert describe(tr, leaf).endswith(" writes x\\x1b[2J.grad.")


# -- handed to the player --------------------------------------------------------------------------
def test_the_player_gets_the_sentences_the_terminal_prints(every_kind):
    tr = every_kind
    page = player_html(tr)
    data = re.search(r'<script type="application/json"[^>]*>(.*?)</script>', page, re.S)
    payload = json.loads(data.group(1))
    sent = payload["sentences"]
    assert len(sent["runs"]) == len(tr.runs)
    for r, k, s in _steps(tr):
        pieces = [sent["pieces"][i] for i in sent["runs"][r][k]]
        text = "".join(node_label(tr, p["node"]) if isinstance(p, dict) and "node" in p else
                       p["code"] if isinstance(p, dict) else p for p in pieces)
        assert text == describe(tr, s), (r, k, s.kind)
    # hook functions of pack/unpack steps are set in code type, nodes are references
    assert any(isinstance(p, dict) and "code" in p for p in sent["pieces"])
    assert sentence_text([NodeRef("n1"), " and ", Code("f")], str.upper) == "N1 and f"


def test_player_js_writes_no_sentence_of_its_own():
    js = (resources.files("gradviz.render") / "templates" / "player.js").read_text("utf-8")
    for words in ("joins the ready queue", "frees its saved", "Backward failed",
                  "The ready queue is empty", "still to deliver", "unpack hook"):
        assert words not in js, words
    assert 'case "release_saved"' not in js


def test_sentences_stay_small_for_a_long_loop():
    """A training loop says the same few things of many nodes: a step costs a few indices."""
    w = gradviz.ones(4, requires_grad=True)
    with gradviz.trace(keep_runs="all") as tr:
        for _ in range(20):
            h = w
            for _ in range(20):
                h = (h * 1.01).tanh()
            h.sum().backward()
    sent = player_sentences(tr, tr.runs)
    steps = sum(len(r.steps) for r in tr.runs)
    assert steps > 3000
    size = len(json.dumps(sent, separators=(",", ":")))
    full = sum(len(describe(tr, s)) for r in tr.runs for s in r.steps)
    assert size < 20 * steps and size < full / 4, (size, full, steps)


# -- in a browser: what the player displays -----------------------------------------------------
_SENTENCES_JS = """
const [root, lengths] = arguments;
const select = root.querySelector('[data-role="run"]');
const slider = root.querySelector('[data-role="slider"]');
const out = [];
lengths.forEach((n, r) => {
  select.value = String(r);
  select.dispatchEvent(new Event('change'));
  const texts = [];
  for (let k = 0; k < n; k++) {
    slider.value = String(k);
    slider.dispatchEvent(new Event('input'));
    const say = root.querySelectorAll('[data-role="event"] .gv-say');
    texts.push([Number(root.dataset.run), Number(root.dataset.step), say.length,
                say.length ? say[0].textContent : null,
                say.length ? say[0].querySelectorAll('.gv-ref').length : 0]);
  }
  out.push(texts);
});
return out;
"""


def _displayed(driver, root, tr):
    return driver.execute_script(_SENTENCES_JS, root, [len(r.steps) for r in tr.runs])


def _assert_same_words(shown, tr):
    for r, k, s in _steps(tr):
        run, step, count, text, refs = shown[r][k]
        assert (run, step, count) == (r, k, 1)
        assert text == describe(tr, s), (r, k, s.kind)
        assert refs == sum(isinstance(p, NodeRef) for p in step_sentence(tr, s)), (r, k)


@pytest.mark.browser
def test_the_page_displays_the_terminals_sentence_at_every_step(driver, tmp_path, every_kind):
    page = tmp_path / "steps.html"
    page.write_text(every_kind.to_html(), encoding="utf-8")
    driver.get_log("browser")
    driver.get(page.as_uri())
    root = driver.find_element("css selector", ".gv-player")
    _assert_same_words(_displayed(driver, root, every_kind), every_kind)
    assert driver.execute_script("return document.querySelectorAll('b').length") == 0
    assert [e for e in driver.get_log("browser") if e["level"] == "SEVERE"] == []


@pytest.mark.browser
def test_a_notebooks_player_displays_the_same_sentences(driver, tmp_path, every_kind):
    from gradviz.render.jupyter import Player

    frag = Player(every_kind)._repr_html_()
    page = tmp_path / "notebook.html"
    page.write_text("<!DOCTYPE html><html><head><meta charset='utf-8'><title>nb</title></head>"
                    f"<body><div class='cell'>{frag}</div></body></html>", encoding="utf-8")
    driver.get(page.as_uri())
    root = driver.find_element("css selector", ".gv-player")
    _assert_same_words(_displayed(driver, root, every_kind), every_kind)
