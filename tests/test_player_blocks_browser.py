"""The step player's folded blocks, search and per-step cost, in a real headless Chromium.

A folded ``N × [block]`` group opens on the repetition that holds the step's node ("block k of
N"), with that node highlighted at its place of the block (collapse.py's ``Group.slots``); any
folded group opens on a click or Enter; the search box finds nodes, parameters, modules and ops
and jumps to the steps that touch them; and one step changes as many DOM nodes in a long run as
in a short one (counted with a MutationObserver, never timed).
"""

from __future__ import annotations

import time

import pytest
from _browser import chain_trace as _chain_trace
from _browser import goto_step as _goto_step
from _browser import load_page as _load
from _browser import no_console_errors as _no_console_errors
from _browser import wait_for as _wait

import gradviz as torch
from gradviz import nn
from gradviz.render.graphviz import draw_backward, draw_forward
from gradviz.render.html import player_html

pytestmark = pytest.mark.browser
pytest_plugins = ("_browser",)  # the `driver` fixture: headless Chromium

BLOCKS = 12


class _Block(nn.Module):
    """A residual block: every repetition draws the same 14 backward nodes."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.fc2 = nn.Linear(4, 3)

    def forward(self, x):
        return x + self.fc2(torch.relu(self.fc1(x)))


@pytest.fixture(scope="module")
def blocks(tmp_path_factory):
    torch.manual_seed(0)
    model = nn.Sequential(*[_Block() for _ in range(BLOCKS)])
    with torch.trace() as tr:
        model(torch.randn(2, 3)).sum().backward()
    path = tmp_path_factory.mktemp("blocks") / "steps.html"
    path.write_text(player_html(tr), encoding="utf-8")
    return tr, path


# What an inset shows: open or not, its title, the group and repetition, the places that are
# this step (their <title>: p0, p1, ...), and the names drawn in it.
_INSET_JS = """
const box = document.querySelector('[data-role="' + arguments[0] + '"]');
const title = (g) => { for (const c of g.children) if (c.localName === 'title')
  return c.textContent; return null; };
return {hidden: box.hidden, title: box.querySelector('[data-inset=title]').textContent,
        group: box.dataset.group, rep: Number(box.dataset.rep),
        current: Array.from(box.querySelectorAll('g.node.gv-current')).map(title),
        done: Array.from(box.querySelectorAll('g.node.gv-done')).map(title),
        texts: Array.from(box.querySelectorAll('g.node text')).map((t) => t.textContent),
        where: document.querySelector('[data-role="where"]').textContent};
"""


def _inset(driver, role: str = "inset") -> dict:
    return driver.execute_script(_INSET_JS, role)


# -- folded blocks --------------------------------------------------------------------------------
def test_the_block_of_the_step_is_named_and_drawn_open_with_its_node_highlighted(driver, blocks):
    tr, path = blocks
    plan = draw_backward(tr, detail="bare").plan
    group = next(g for g in plan.groups.values() if g.kind == "repeat")
    assert group.repeats == BLOCKS - 1
    run = tr.run()
    executed = [s for s in run.steps if s.kind == "execute" and s.node in group.slots]
    by_rep = {}
    for s in executed:
        by_rep.setdefault(group.slots[s.node][0], s)
    for rep in (0, 4):  # block 1, and block 5
        step = by_rep[rep]
        rep_got, place = group.slots[step.node]
        _load(driver, path, f"#run=1&step={step.index}")
        got = _inset(driver)
        assert not got["hidden"]
        assert got["group"] == group.id and got["rep"] == rep
        assert got["title"].startswith(f"block {rep + 1} of {BLOCKS - 1}")
        assert f"block {rep + 1} of {BLOCKS - 1}" in got["where"] and step.node in got["where"]
        assert got["current"] == [f"p{place}"]
        # the tensors drawn are those of this repetition (its module's parameters)
        names = {tr.tensors[v].name for v, (r, _) in group.slots.items()
                 if r == rep and v in tr.tensors}
        assert names and names <= set(got["texts"])
        # nodes of this repetition that already ran are finished in the inset too
        ran = {group.slots[s.node][1] for s in executed
               if s.index < step.index and group.slots[s.node][0] == rep}
        assert {f"p{p}" for p in ran} <= set(got["done"])
    # A step whose node is drawn on its own closes the block the player opened by itself.
    first = next(s for s in run.steps if s.kind == "execute")
    assert first.node not in plan.rep
    _goto_step(driver, first.index)
    assert _inset(driver)["hidden"]
    # The main graph keeps the fold: the group is still one node, highlighted.
    _goto_step(driver, by_rep[4].index)
    cur = driver.execute_script("""
        return Array.from(document.querySelectorAll('[data-role="backward"] g.node.gv-current'))
          .map((g) => g.id);""")
    assert len(cur) == 1 and cur[0].endswith("-" + group.id)
    _no_console_errors(driver)


def test_any_folded_group_opens_on_click_and_on_enter(driver, blocks):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    tr, path = blocks
    back = draw_backward(tr, detail="bare").plan
    fwd = draw_forward(tr, detail="bare").plan
    gid = next(iter(back.groups))
    fgid = next(iter(fwd.groups))
    _load(driver, path, "#run=1&step=0")
    assert _inset(driver)["hidden"]
    # The whole drawing in view first (the group may sit beyond the view's edge), as a learner
    # would see it before clicking it.
    driver.find_element(By.CSS_SELECTOR, '[data-role="backward-box"] [data-zoom="fit"]').click()
    node = driver.find_element(By.ID, f"gvp-b0-{gid}")
    ActionChains(driver).move_to_element(node).click().perform()
    got = _inset(driver)
    assert not got["hidden"] and got["group"] == gid and got["rep"] == 0
    assert got["title"].startswith(f"block 1 of {back.groups[gid].repeats}")
    # its arrows show the next block; a step elsewhere leaves a block the learner opened open
    driver.find_element(By.CSS_SELECTOR, '[data-role="inset"] [data-inset=next]').click()
    assert _inset(driver)["rep"] == 1
    _goto_step(driver, 1)
    assert not _inset(driver)["hidden"]
    driver.find_element(By.CSS_SELECTOR, '[data-role="inset"] [data-inset=close]').click()
    assert _inset(driver)["hidden"]
    # the forward graph's groups open too, from the keyboard
    fnode = driver.find_element(By.ID, f"gvp-f-{fgid}")
    driver.execute_script("arguments[0].focus()", fnode)
    ActionChains(driver).send_keys(Keys.ENTER).perform()
    got = _inset(driver, "forward-inset")
    assert not got["hidden"] and got["group"] == fgid
    assert got["title"].startswith(f"block 1 of {fwd.groups[fgid].repeats}")
    # the static drawings keep the fold: the file's SVG has the group, not its members
    assert f"<title>{gid}</title>" in path.read_text(encoding="utf-8")
    _no_console_errors(driver)


# -- search ---------------------------------------------------------------------------------------
def _search(driver, text: str) -> list[dict]:
    from selenium.webdriver.common.by import By

    box = driver.find_element(By.CSS_SELECTOR, '[data-role="search"]')
    box.clear()
    box.send_keys(text)
    return _wait(driver, """
        const r = document.querySelector('[data-role="results"]');
        if (r.hidden || r.dataset.query !== arguments[0]) return null;
        return Array.from(r.querySelectorAll('.gv-result')).map((li) => ({
          kind: li.querySelector('.gv-result-kind').textContent,
          name: li.querySelector('.gv-result-name').textContent,
          steps: Array.from(li.querySelectorAll('button.gv-jump')).map(
            (b) => Number(b.dataset.step))}));""", text)


def test_search_finds_parameters_modules_ops_and_nodes_and_jumps(driver, blocks):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    tr, path = blocks
    run = tr.run()
    _load(driver, path, "#run=1&step=0")
    # a parameter: the steps of its AccumulateGrad (and its leaf_grad)
    weight = next(t for t in tr.tensors.values() if t.name == "3.fc1.weight")
    acc = next(n.id for n in tr.nodes.values() if n.variable == weight.id)
    want = sorted({s.index for s in run.steps if s.node == acc
                   or (s.kind == "leaf_grad" and s.tensor == weight.id)})
    results = _search(driver, "3.fc1.weight")
    assert results[0]["kind"] == "parameter" and results[0]["name"] == "3.fc1.weight"
    assert results[0]["steps"] == want[:12]
    # click a step: the player jumps there and the node is in view
    target = want[0]
    driver.find_element(By.CSS_SELECTOR, f'[data-role="results"] button[data-step="{target}"]'
                        ).click()
    assert _wait(driver, "return document.querySelector('.gv-player').dataset.step === "
                         "arguments[0]", str(target))
    # a module path, an op name, a node id
    assert any(r["kind"] == "module" and r["name"] == "3.fc1" and r["steps"]
               for r in _search(driver, "3.fc1"))
    assert any(r["kind"] == "op" and r["name"] == "relu" for r in _search(driver, "relu"))
    node = next(s.node for s in run.steps if s.kind == "execute")
    found = _search(driver, node)
    assert found[0]["kind"] == "node"
    assert found[0]["steps"] == [s.index for s in run.steps if s.node == node][:12]
    assert _search(driver, "no-such-thing-anywhere") == []
    assert "Nothing" in driver.execute_script(
        "return document.querySelector('[data-role=\"results\"]').textContent")
    # keyboard: "/" focuses the box, Enter jumps to the first step of the first result
    driver.find_element(By.CSS_SELECTOR, '[data-role="search"]').clear()
    driver.execute_script("document.querySelector('.gv-player').focus()")
    ActionChains(driver).send_keys("/").perform()
    assert driver.execute_script(
        "return document.activeElement.dataset.role") == "search"
    ActionChains(driver).send_keys("3.fc1.weight").perform()
    time.sleep(0.2)
    ActionChains(driver).send_keys(Keys.ENTER).perform()
    assert _wait(driver, "return document.querySelector('.gv-player').dataset.step === "
                         "arguments[0]", str(want[0]))
    # ↓ from the box goes into the results, where arrows move and do not step the player
    driver.find_element(By.CSS_SELECTOR, '[data-role="search"]').click()
    ActionChains(driver).send_keys(Keys.ARROW_DOWN).perform()
    assert driver.execute_script("return document.activeElement.dataset.step") == str(want[0])
    ActionChains(driver).send_keys(Keys.ARROW_RIGHT).perform()
    assert driver.execute_script("return document.activeElement.dataset.step") == str(want[1])
    assert driver.execute_script(
        "return document.querySelector('.gv-player').dataset.step") == str(want[0])
    _no_console_errors(driver)


# -- the cost of one step -------------------------------------------------------------------------
# Counts the DOM changes (attributes, text, added or removed nodes) of each of `n` steps
# forwards from the current one, then `n` back.
_COUNT_JS = """
const n = arguments[0];
const root = document.querySelector('.gv-player');
const counts = [];
const key = (k) => document.dispatchEvent(new KeyboardEvent('keydown', {key: k, bubbles: true}));
const observer = new MutationObserver(() => {});
observer.observe(root, {subtree: true, childList: true, attributes: true, characterData: true});
for (const k of [...Array(n).fill('ArrowRight'), ...Array(n).fill('ArrowLeft')]) {
  key(k);
  let touched = 0;
  for (const m of observer.takeRecords()) {
    touched += m.type === 'childList' ? m.addedNodes.length + m.removedNodes.length : 1;
  }
  counts.push(touched);
}
observer.disconnect();
return counts;
"""


def test_one_step_changes_as_much_of_the_page_in_a_long_run_as_in_a_short_one(driver, tmp_path):
    window = 40
    counts, kinds = [], []
    for n_ops in (400, 1600):  # about 1,400 and 5,600 steps, both drawn folded
        tr = _chain_trace(n_ops)
        run = tr.run()
        path = tmp_path / f"chain{n_ops}.html"
        path.write_text(player_html(tr), encoding="utf-8")
        # the same stretch of the run's pattern: from the middle, at the same phase
        seq = [s.kind for s in run.steps]
        start = len(seq) // 2
        want = kinds[0] if kinds else seq[start:start + window + 1]
        start = next(i for i in range(start, len(seq)) if seq[i:i + window + 1] == want)
        kinds.append(seq[start:start + window + 1])
        _load(driver, path, f"#run=1&step={start}")
        assert not _inset(driver)["hidden"]  # inside the folded chain, in both
        counts.append(driver.execute_script(_COUNT_JS, window))
        _no_console_errors(driver)
    assert kinds[0] == kinds[1]
    assert counts[0] == counts[1]
    assert max(counts[1]) < 150  # a step touches tens of elements, not the run's thousands


def test_the_end_step_shows_the_node_that_ran_last(driver, blocks):
    tr, path = blocks
    run = tr.run()
    plan = draw_backward(tr, detail="bare").plan
    last = [s for s in run.steps if s.kind == "execute"][-1]
    _load(driver, path, "#run=1&step=0")
    driver.execute_script("document.querySelector('.gv-player').focus()")
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    ActionChains(driver).send_keys(Keys.END).perform()
    got = _wait(driver, """
        const root = document.querySelector('.gv-player');
        if (root.dataset.step !== String(arguments[1])) return null;
        const g = document.getElementById('gvp-b0-' + arguments[0]);
        const b = document.querySelector('[data-role="backward"]').getBoundingClientRect();
        const r = g.getBoundingClientRect();
        return {inside: r.left >= b.left && r.right <= b.right && r.top >= b.top
                && r.bottom <= b.bottom};""", plan.drawn(last.node), len(run.steps) - 1)
    assert got and got["inside"]
