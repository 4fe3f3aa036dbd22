"""The HTML step player in a real headless Chromium (Debian's ``chromium`` + ``chromedriver``).

These tests never skip: without the browser they fail and say how to install it
(``scripts/ensure-chromium.sh``, run by ``make test``, does it in CI).
"""

from __future__ import annotations

import json

import pytest

import gradviz as torch
from gradviz.render.html import player_html
from gradviz.trace.replay import replay

pytestmark = pytest.mark.browser
pytest_plugins = ("_browser",)  # the `driver` fixture: headless Chromium

HOSTILE = "<img src=x onerror=alert(1)>"


def _seed_trace(name: str = HOSTILE):
    with torch.trace() as tr:
        x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        x.name = name
        y = torch.tensor([0.5, 1.0, 1.5], requires_grad=True)
        z = x ** 2 + y ** 3
        z.backward(torch.ones_like(x))
    return tr


def _open(driver, tmp_path, html: str, name: str = "player.html") -> str:
    path = tmp_path / name
    path.write_text(html, encoding="utf-8")
    uri = path.as_uri()
    assert uri.startswith("file://")
    driver.get_log("performance")  # drop entries from earlier pages
    driver.get_log("browser")
    driver.get(uri)
    return uri


def _press(driver, key, times: int = 1) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    for _ in range(times):
        ActionChains(driver).send_keys(key).perform()


# What one player shows right now: its step, and the titles of the highlighted SVG elements.
_STATE_JS = """
const root = arguments[0] || document.querySelector('.gv-player');
const box = root.querySelector('.gv-svg[data-run]:not([hidden])');
const title = (g) => { for (const c of g.children) if (c.localName === 'title')
                         return c.textContent; return null; };
const titles = (sel) => Array.from(box.querySelectorAll(sel)).map(title);
return {step: Number(root.dataset.step), run: Number(root.dataset.run),
        current: titles('g.node.gv-current'), ready: titles('g.node.gv-ready'),
        done: titles('g.node.gv-done'), flow: titles('g.edge.gv-flow'),
        leaves: root.querySelector('[data-role="leaves"]').textContent,
        queue: Array.from(root.querySelectorAll('[data-role="ready"] .gv-id'))
                 .map((e) => e.textContent),
        edges: root.querySelector('[data-role="edges"]').textContent,
        buffers: Array.from(root.querySelectorAll('[data-role="buffers"] .gv-buffer')).map(
                   (b) => [b.querySelector('.gv-id').textContent,
                           b.querySelector('.gv-slot').textContent,
                           b.querySelector('.gv-tensor').textContent,
                           b.classList.contains('gv-changed')]),
        event: root.querySelector('[data-role="event"]').textContent};
"""


def _state(driver, root=None) -> dict:
    return driver.execute_script(_STATE_JS, root)


def _expected_flow(tr, step) -> set[str]:
    if step.kind == "execute":
        return {f"{step.node}->{nxt}" for nxt, _ in tr.nodes[step.node].next_functions
                if nxt is not None}
    if step.kind == "accumulate" and step.source:
        return {f"{step.source}->{step.node}"}
    return set()


def _assert_no_network(driver, uri: str) -> None:
    resources = driver.execute_script("return performance.getEntriesByType('resource').length")
    assert resources == 0, "the page fetched sub-resources"
    # Every request made by our document (Chrome's own pages, e.g. chrome://, are other
    # documents): only the page itself, from file://.
    requested = []
    for entry in driver.get_log("performance"):
        msg = json.loads(entry["message"])["message"]
        if (msg["method"] == "Network.requestWillBeSent"
                and msg["params"].get("documentURL") == uri):
            requested.append(msg["params"]["request"]["url"])
    assert requested, "the performance log recorded nothing (is logging enabled?)"
    others = [u for u in requested if u != uri]
    assert others == [], f"the page requested {others}"


def _assert_no_console_errors(driver) -> None:
    # A CSP violation (e.g. a wrong script hash) or a JS exception shows up here as SEVERE.
    severe = [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert severe == []


def _assert_no_alert(driver) -> None:
    from selenium.common.exceptions import NoAlertPresentException

    try:
        text = driver.switch_to.alert.text
    except NoAlertPresentException:
        return
    pytest.fail(f"an alert fired: {text!r}")


def test_arrow_keys_step_through_the_recorded_run(driver, tmp_path):
    from selenium.webdriver.common.keys import Keys

    tr = _seed_trace()
    steps = tr.run().steps
    uri = _open(driver, tmp_path, tr.to_html())
    _assert_no_alert(driver)

    first = _state(driver)
    assert first["step"] == 0 and first["current"] == []  # compute_dependencies: no node
    assert "None" in first["leaves"]
    for k in range(1, len(steps)):
        _press(driver, Keys.ARROW_RIGHT)
        st = _state(driver)
        step = steps[k]
        assert st["step"] == k
        assert st["current"] == ([step.node] if step.node else []), (k, step.kind)
        assert set(st["flow"]) == _expected_flow(tr, step), (k, step.kind)
        assert step.kind in st["event"]
        want = replay(tr.run(), k).ready
        assert set(st["ready"]) == set(want) and st["queue"] == want, k  # in the queue's order
    # Executed nodes are marked done; the final step shows both leaves' .grad.
    executed = {s.node for s in steps if s.kind == "execute"}
    assert set(st["done"]) == executed
    assert "[2, 4, 6]" in st["leaves"] and "[0.75, 3, 6.75]" in st["leaves"]

    _press(driver, Keys.ARROW_RIGHT)  # past the end: stays on the last step
    assert _state(driver)["step"] == len(steps) - 1
    for k in range(len(steps) - 2, len(steps) - 6, -1):
        _press(driver, Keys.ARROW_LEFT)
        st = _state(driver)
        assert st["step"] == k
        assert st["current"] == ([steps[k].node] if steps[k].node else [])
    _press(driver, Keys.HOME)
    assert _state(driver)["step"] == 0
    _press(driver, Keys.END)
    assert _state(driver)["step"] == len(steps) - 1

    # Leaf .grad is replayed: before x's leaf_grad step the panel still says None for x.
    x_write = next(s.index for s in steps if s.kind == "leaf_grad"
                   and tr.tensors[s.tensor].name == HOSTILE)
    _press(driver, Keys.HOME)
    _press(driver, Keys.ARROW_RIGHT, x_write - 1)
    assert "[2, 4, 6]" not in _state(driver)["leaves"]
    _press(driver, Keys.ARROW_RIGHT)
    assert "[2, 4, 6]" in _state(driver)["leaves"]

    _assert_no_alert(driver)
    _assert_no_network(driver, uri)
    _assert_no_console_errors(driver)


def test_hostile_names_are_text_and_nothing_runs(driver, tmp_path):
    from selenium.webdriver.common.by import By

    tr = _seed_trace()
    _open(driver, tmp_path, player_html(tr, title=f"</title>{HOSTILE}"))
    _assert_no_alert(driver)
    found = driver.execute_script("""
        const name = arguments[0];
        const panel = document.querySelector('.gv-panel').textContent;
        const svgText = Array.from(document.querySelectorAll('svg text'))
            .map((t) => t.textContent).join('\\n');
        const active = Array.from(document.querySelectorAll('*')).filter((e) =>
            Array.from(e.attributes).some((a) => a.name.startsWith('on')));
        return {panel: panel.includes(name), svg: svgText.includes(name),
                title: document.title, h1: document.querySelector('.gv-title').textContent,
                imgs: document.querySelectorAll('img').length,
                imgX: document.querySelectorAll('img[src="x"]').length,
                handlers: active.length};
    """, HOSTILE)
    assert found["panel"], "the hostile name should appear as plain text in the side panel"
    assert found["svg"], "the hostile name should appear as plain text in the graph"
    assert found["imgs"] == 0 and found["imgX"] == 0
    assert found["handlers"] == 0
    assert found["title"] == found["h1"] == f"</title>{HOSTILE}"
    # The step list shows it as text too (AccumulateGrad (<img ...>)).
    texts = [b.text for b in driver.find_elements(By.CSS_SELECTOR, "button.gv-step")]
    assert any(HOSTILE in t for t in texts)
    _assert_no_alert(driver)
    _assert_no_console_errors(driver)


def test_step_list_slider_and_run_selector(driver, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    with torch.trace() as tr:
        w = torch.tensor([1.0, -2.0], requires_grad=True)
        (w * 3).sum().backward()
        (w * w).sum().backward()
    assert len(tr.runs) == 2
    _open(driver, tmp_path, tr.to_html())
    assert _state(driver)["run"] == 1  # the last run is shown first
    pick = driver.find_element(By.CSS_SELECTOR, '[data-role="run-pick"]')
    assert pick.is_displayed()
    Select(driver.find_element(By.CSS_SELECTOR, '[data-role="run"]')).select_by_value("0")
    st = _state(driver)
    assert st["run"] == 0 and st["step"] == 0
    items = driver.find_elements(By.CSS_SELECTOR, "button.gv-step")
    assert len(items) == len(tr.runs[0].steps)
    k = next(s.index for s in tr.runs[0].steps if s.kind == "execute")
    items[k].click()
    st = _state(driver)
    assert st["step"] == k and st["current"] == [tr.runs[0].steps[k].node]
    # Only run 0's backward drawing is visible, and it draws run 0's nodes.
    visible = driver.execute_script(
        "return Array.from(document.querySelectorAll('.gv-svg[data-run]'))"
        ".filter((e) => !e.hidden).map((e) => e.dataset.run)")
    assert visible == ["0"]
    driver.execute_script("""
        const s = document.querySelector('[data-role="slider"]');
        s.value = '2'; s.dispatchEvent(new Event('input'));""")
    assert _state(driver)["step"] == 2
    _assert_no_console_errors(driver)


def test_two_fragments_on_one_page_are_independent(driver, tmp_path):
    from selenium.webdriver.common.keys import Keys

    tr = _seed_trace()
    a, b = player_html(tr, fragment=True), player_html(tr, fragment=True)
    # A notebook-like page: no CSP here, so escaping alone must keep the hostile name inert.
    page = ("<!DOCTYPE html><html><head><meta charset='utf-8'><title>nb</title></head><body>"
            f"<div class='cell'>{a}</div><div class='cell'>{b}</div></body></html>")
    uri = _open(driver, tmp_path, page, "notebook.html")
    _assert_no_alert(driver)
    roots = driver.execute_script("return Array.from(document.querySelectorAll('.gv-player'))")
    assert len(roots) == 2
    ids = driver.execute_script(
        "return Array.from(document.querySelectorAll('[id]')).map((e) => e.id)")
    assert len(ids) == len(set(ids)), "duplicate ids across the two players"
    assert driver.execute_script("return document.querySelectorAll('img').length") == 0

    # Keys go to the focused player only.
    driver.execute_script("arguments[0].focus()", roots[1])
    _press(driver, Keys.ARROW_RIGHT, 3)
    assert _state(driver, roots[1])["step"] == 3
    assert _state(driver, roots[0])["step"] == 0
    steps = tr.run().steps
    assert _state(driver, roots[1])["current"] == ([steps[3].node] if steps[3].node else [])
    roots[0].find_element("css selector", '[data-role="next"]').click()
    assert _state(driver, roots[0])["step"] == 1
    assert _state(driver, roots[1])["step"] == 3
    _assert_no_alert(driver)
    _assert_no_network(driver, uri)
    _assert_no_console_errors(driver)


@pytest.mark.parametrize("shadow", [False, True], ids=["light-dom", "shadow-root"])
def test_fragment_inserted_like_a_notebook_output(driver, tmp_path, shadow):
    from selenium.webdriver.common.keys import Keys

    tr = _seed_trace()
    frag = player_html(tr, fragment=True)
    _open(driver, tmp_path, "<!DOCTYPE html><html><head><meta charset='utf-8'><title>nb</title>"
                            "</head><body><div id='out'></div></body></html>", "empty.html")
    # What notebook front ends do with an HTML output: set innerHTML (scripts stay inert), then
    # replace each <script> by a fresh copy so it runs.
    root = driver.execute_script("""
        const [html, shadow] = arguments;
        let scope = document.getElementById('out');
        if (shadow) scope = scope.attachShadow({mode: 'open'});
        scope.innerHTML = html;
        for (const old of Array.from(scope.querySelectorAll('script'))) {
            const s = document.createElement('script');
            for (const a of old.attributes) s.setAttribute(a.name, a.value);
            s.textContent = old.textContent;
            old.replaceWith(s);
        }
        return scope.querySelector('.gv-player');
    """, frag, shadow)
    assert _state(driver, root)["step"] == 0
    driver.execute_script("arguments[0].focus()", root)
    _press(driver, Keys.ARROW_RIGHT, 2)
    steps = tr.run().steps
    st = _state(driver, root)
    assert st["step"] == 2 and st["current"] == [steps[2].node]
    assert driver.execute_script("return arguments[0].querySelectorAll('img').length", root) == 0
    _assert_no_alert(driver)
    _assert_no_console_errors(driver)


def test_the_three_engines_schedules_play(driver, tmp_path):
    """PyTorch's, SINGA's and MXNet's runs of the seed program each replay step by step."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    def seed(x, y):
        return (x ** 2 + y ** 3).sum()

    x = torch.rand(3, 3, requires_grad=True)
    y = torch.rand(3, 3, requires_grad=True)
    tr = torch.compare_engines(seed, x, y).trace
    assert [r.engine for r in tr.runs] == ["pytorch", "singa", "mxnet"]
    uri = _open(driver, tmp_path, tr.to_html())
    for i, run in enumerate(tr.runs):
        Select(driver.find_element(By.CSS_SELECTOR, '[data-role="run"]')).select_by_value(str(i))
        st = _state(driver)
        assert st["run"] == i and st["step"] == 0
        highlighted = 0
        for k in range(1, len(run.steps)):
            driver.execute_script("""
                const s = document.querySelector('[data-role="slider"]');
                s.value = String(arguments[0]); s.dispatchEvent(new Event('input'));""", k)
            st = _state(driver)
            step = run.steps[k]
            assert st["step"] == k
            assert step.kind in st["event"], (run.engine, k)
            # A step about a node of the drawn graph highlights exactly that node.
            if step.node is not None and step.node in run.nodes:
                assert st["current"] == [step.node], (run.engine, k, step.kind)
                highlighted += 1
        executed = [s for s in run.steps if s.kind == "execute"]
        assert executed and highlighted >= len(executed), run.engine
        # Every run ends with both leaves' gradients shown: 2x and 3y**2, the same in all three.
        gx = f"{2 * x.detach().numpy()[0, 0]:.4g}"
        gy = f"{3 * y.detach().numpy()[0, 0] ** 2:.4g}"
        assert "x.grad" in st["leaves"] and "y.grad" in st["leaves"], run.engine
        assert "None" not in st["leaves"], (run.engine, st["leaves"])
        assert gx[:4] in st["leaves"] and gy[:4] in st["leaves"], (run.engine, gx, gy)
    _assert_no_network(driver, uri)
    _assert_no_console_errors(driver)


def _x_used_twice():
    """``x * w + x * 5``, traced: two gradients meet in x's AccumulateGrad buffer."""
    with torch.trace() as tr:
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        w = torch.tensor([3.0, 4.0], requires_grad=True)
        (x * w + x * 5).sum().backward()
    return tr


def test_accumulate_shows_the_buffer_before_and_after_and_release_names_what_it_freed(
        driver, tmp_path):
    """x used twice: the second gradient into its AccumulateGrad finds the first one there."""
    tr = _x_used_twice()
    run = tr.run()
    _open(driver, tmp_path, tr.to_html())
    from selenium.webdriver.common.keys import Keys

    x_node = next(n.id for n in tr.nodes.values() if n.kind == "accumulate_grad"
                  and tr.tensors[n.variable].name == "x")
    into_x = [s.index for s in run.steps if s.kind == "accumulate" and s.node == x_node]
    assert len(into_x) == 2
    first, second = (replay(run, k) for k in into_x)
    _press(driver, Keys.ARROW_RIGHT, into_x[1])
    st = _state(driver)
    assert st["step"] == into_x[1]
    before = st["edges"].split("input buffer before:")[1].split("input buffer after:")[0]
    after = st["edges"].split("input buffer after:")[1]
    assert first.buffer_after["values"] in ([3.0, 4.0], [5.0, 5.0])
    assert second.buffer_after["values"] == [8.0, 9.0]
    assert ("[3, 4]" if first.buffer_after["values"] == [3.0, 4.0] else "[5, 5]") in before
    assert "[8, 9]" in after and "[8, 9]" not in before
    release = next(s.index for s in run.steps if s.kind == "release_saved"
                   and tr.nodes[s.node].name == "MulBackward0" and replay(run, s.index).freed)
    _press(driver, Keys.HOME)
    _press(driver, Keys.ARROW_RIGHT, release)
    event = _state(driver)["event"]
    assert "_saved_self" in event and "_saved_other" in event, event


def test_the_input_buffers_shown_at_each_step_are_the_trace_layers(driver, tmp_path):
    """Every step: the panel lists exactly the slots replay() says hold a gradient, with its
    value; the slot the step just filled is marked."""
    from selenium.webdriver.common.keys import Keys

    tr = _x_used_twice()
    run = tr.run()
    _open(driver, tmp_path, tr.to_html())
    seen_waiting = False
    for k in range(len(run.steps)):
        if k:
            _press(driver, Keys.ARROW_RIGHT)
        st = _state(driver)
        assert st["step"] == k
        want = replay(run, k)
        rows = [(node, nr) for node, slots in want.buffers.items() for nr in slots]
        assert sorted((node, head.rsplit(" input ", 1)[1].rstrip(":")) for node, head, _, _ in
                      st["buffers"]) == sorted((node, str(nr)) for node, nr in rows), k
        for node, head, text, changed in st["buffers"]:
            nr = int(head.rsplit(" input ", 1)[1].rstrip(":"))
            values = want.buffers[node][nr]["values"]
            assert f"[{values[0]:g}, {values[1]:g}]" in text, (k, text)
            step = run.steps[k]
            assert changed == (step.kind == "accumulate" and step.node == node
                               and step.input_nr == nr)
        seen_waiting = seen_waiting or len(rows) >= 2
    assert seen_waiting  # x's buffer waits while w's does, at some step
    assert _state(driver)["buffers"] == []  # all consumed by the end
