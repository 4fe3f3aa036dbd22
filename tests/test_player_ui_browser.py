"""The step player's screen in a real headless Chromium: zoom and pan, layouts from 800 to 1400
px, the step in the URL, nodes inside folded groups, long step lists, the node colours.

The layout tests set the viewport with Chrome's device-metrics override, so the sizes are exact
(a window size would include the browser's frame).
"""

from __future__ import annotations

import math
import time

import pytest
from _browser import chain_trace as _chain_trace
from _browser import goto_step as _goto_step
from _browser import load_page as _load
from _browser import no_console_errors as _assert_no_console_errors
from _browser import wait_for as _wait

import gradviz as torch
from gradviz.render.graphviz import draw_backward, draw_forward
from gradviz.render.html import player_html

pytestmark = pytest.mark.browser
pytest_plugins = ("_browser",)  # the `driver` fixture: headless Chromium

MIN_TEXT_PX = 9  # the player never opens a graph with node text smaller than this


# -- traces -----------------------------------------------------------------------------------
def _wide_trace():
    """40 products side by side: both graphs are far wider than any screen, nothing folded."""
    with torch.trace() as tr:
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        torch.stack([x * float(i) for i in range(40)]).sum().backward()
    return tr


def _two_runs_trace():
    with torch.trace() as tr:
        w = torch.tensor([1.0, -2.0], requires_grad=True)
        (w * 3).sum().backward()
        (w * w).sum().backward()
    return tr


@pytest.fixture(scope="module")
def wide(tmp_path_factory):
    tr = _wide_trace()
    path = tmp_path_factory.mktemp("wide") / "steps.html"
    path.write_text(player_html(tr), encoding="utf-8")
    return tr, path


@pytest.fixture(scope="module")
def chain(tmp_path_factory):
    """A run of more than 10,000 steps (5-digit step numbers), folded in both drawings."""
    tr = _chain_trace(2900)
    assert len(tr.run().steps) >= 10_000
    path = tmp_path_factory.mktemp("chain") / "steps.html"
    path.write_text(player_html(tr), encoding="utf-8")
    return tr, path


# -- driving the page -------------------------------------------------------------------------
@pytest.fixture
def viewport(driver):
    """Set the page's viewport to exactly (width, height) CSS pixels; reset afterwards."""
    def set_size(width: int, height: int) -> None:
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})

    yield set_size
    driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def _press(driver, key, times: int = 1) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    for _ in range(times):
        ActionChains(driver).send_keys(key).perform()


# One graph's viewport: its box on screen, the viewBox shown, the zoom (screen px per point),
# the usual node font size, and the rectangles of its node boxes.
_VIEW_JS = """
const box = document.querySelector('[data-role="' + arguments[0] + '"]');
const svgs = Array.from(box.querySelectorAll('svg')).filter((s) => !s.closest('[hidden]'));
const svg = svgs[0];
const vb = svg.getAttribute('viewBox').split(/\\s+/).map(Number);
const r = box.getBoundingClientRect();
const sizes = Array.from(svg.querySelectorAll('g.node text'))
  .map((t) => parseFloat(t.getAttribute('font-size')));
const rect = (e) => { const b = e.getBoundingClientRect();
  return {left: b.left, top: b.top, right: b.right, bottom: b.bottom}; };
const title = (g) => { for (const c of g.children) if (c.localName === 'title')
  return c.textContent; return null; };
const nodes = {};
for (const g of svg.querySelectorAll('g.node')) nodes[title(g)] = rect(g);
return {vb, box: {left: r.left, top: r.top, right: r.right, bottom: r.bottom,
                  width: box.clientWidth, height: box.clientHeight},
        scale: box.clientWidth / vb[2], fontSize: Math.max(...sizes), nodes};
"""


def _view(driver, role: str = "backward") -> dict:
    v = driver.execute_script(_VIEW_JS, role)
    # The viewBox has the box's aspect: one scale for both axes.
    assert math.isclose(v["box"]["height"] / v["vb"][3], v["scale"], rel_tol=1e-3)
    return v


def _inside(r: dict, box: dict, slack: float = 0.5) -> bool:
    return (r["left"] >= box["left"] - slack and r["right"] <= box["right"] + slack
            and r["top"] >= box["top"] - slack and r["bottom"] <= box["bottom"] + slack)


def _mid(box: dict) -> tuple[float, float]:
    return (box["left"] + box["right"]) / 2, (box["top"] + box["bottom"]) / 2


def _point_under(v: dict, x: float, y: float) -> tuple[float, float]:
    """The drawing's point (in points) under the screen point (x, y)."""
    return (v["vb"][0] + (x - v["box"]["left"]) / v["scale"],
            v["vb"][1] + (y - v["box"]["top"]) / v["scale"])


def _state(driver) -> dict:
    return driver.execute_script("""
        const root = document.querySelector('.gv-player');
        return {step: Number(root.dataset.step), run: Number(root.dataset.run),
                hash: location.hash, history: history.length};""")


# -- zoom and pan -----------------------------------------------------------------------------
def test_graphs_open_legible_and_fit_shows_the_whole_drawing(driver, viewport, wide):
    from selenium.webdriver.common.by import By

    tr, path = wide
    viewport(1280, 800)
    _load(driver, path)
    for role in ("backward", "forward"):
        v = _view(driver, role)
        # Far too wide to fit legibly: opened at the smallest legible scale, the learner pans.
        assert v["fontSize"] * v["scale"] == pytest.approx(MIN_TEXT_PX, abs=0.05), role
        assert not all(_inside(r, v["box"]) for r in v["nodes"].values()), role

    # The fit button shows every node of the drawing, however small.
    section = driver.find_element(By.CSS_SELECTOR, '[data-role="backward-box"]')
    section.find_element(By.CSS_SELECTOR, 'button[data-zoom="fit"]').click()
    v = _view(driver)
    assert v["fontSize"] * v["scale"] < MIN_TEXT_PX
    assert all(_inside(r, v["box"]) for r in v["nodes"].values())
    # + and - zoom by a fixed step around the middle of the box.
    mid = _point_under(v, *_mid(v["box"]))
    section.find_element(By.CSS_SELECTOR, 'button[data-zoom="in"]').click()
    zoomed = _view(driver)
    assert zoomed["scale"] == pytest.approx(v["scale"] * 1.25, rel=1e-3)
    assert _point_under(zoomed, *_mid(zoomed["box"])) == pytest.approx(mid, abs=1.0)
    section.find_element(By.CSS_SELECTOR, 'button[data-zoom="out"]').click()
    assert _view(driver)["scale"] == pytest.approx(v["scale"], rel=1e-3)
    _assert_no_console_errors(driver)


def test_wheel_zooms_around_the_pointer_drag_pans_and_keys_zoom(driver, viewport, wide):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.actions.wheel_input import ScrollOrigin
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    tr, path = wide
    viewport(1400, 900)
    _load(driver, path)
    box = driver.find_element(By.CSS_SELECTOR, '[data-role="backward"]')
    v0 = _view(driver)
    # The wheel zooms in (scrolling up) around the pointer: the point under it stays put.
    # From the middle of the box (the drawing is less tall than the box, so it stays centred
    # across: only a sideways offset is free of the rule that keeps it in view).
    dx, dy = 120, 0
    px, py = _mid(v0["box"])[0] + dx, _mid(v0["box"])[1] + dy
    under = _point_under(v0, px, py)
    ActionChains(driver).scroll_from_origin(ScrollOrigin.from_element(box, dx, dy), 0, -300) \
        .perform()
    v1 = _wait(driver, "return Number(arguments[0].dataset.scale) > arguments[1]", box,
               v0["scale"] * 1.01) and _view(driver)
    assert v1, "the wheel did not zoom"
    assert v1["scale"] > v0["scale"] * 1.2
    assert _point_under(v1, px, py) == pytest.approx(under, abs=1.0)
    # ... and out when scrolled down.
    ActionChains(driver).scroll_from_origin(ScrollOrigin.from_element(box, dx, dy), 0, 300) \
        .perform()
    assert _wait(driver, "return Number(arguments[0].dataset.scale) < arguments[1]", box,
                 v1["scale"] * 0.99)

    # Dragging moves the drawing with the pointer.
    v2 = _view(driver)
    ActionChains(driver).move_to_element(box).click_and_hold().move_by_offset(-150, -40) \
        .move_by_offset(-50, -10).release().perform()
    v3 = _view(driver)
    assert v3["scale"] == pytest.approx(v2["scale"])
    assert v3["vb"][0] - v2["vb"][0] == pytest.approx(200 / v2["scale"], abs=0.5)
    assert v3["vb"][1] - v2["vb"][1] == pytest.approx(50 / v2["scale"], abs=0.5)

    # Keys: + and - zoom the graph last pointed at, 0 fits it whole.
    _press(driver, "+")
    assert _view(driver)["scale"] == pytest.approx(v3["scale"] * 1.25, rel=1e-3)
    _press(driver, "-", 2)
    assert _view(driver)["scale"] == pytest.approx(v3["scale"] / 1.25, rel=1e-3)
    _press(driver, "0")
    v4 = _view(driver)
    assert all(_inside(r, v4["box"]) for r in v4["nodes"].values())
    # Arrow keys still step (zoom keys did not take them over).
    before = _state(driver)["step"]
    _press(driver, Keys.ARROW_RIGHT)
    assert _state(driver)["step"] == before + 1
    _assert_no_console_errors(driver)


def test_pinch_zooms_and_the_drawing_is_never_lost(driver, viewport, wide):
    tr, path = wide
    viewport(1024, 768)
    _load(driver, path)
    v0 = _view(driver)
    cx, cy = _mid(v0["box"])

    def touch(kind: str, points: list[tuple[float, float]]) -> None:
        driver.execute_cdp_cmd("Input.dispatchTouchEvent", {
            "type": kind, "touchPoints": [{"x": x, "y": y, "id": i}
                                          for i, (x, y) in enumerate(points)]})

    # Two fingers 100 px apart move to 200 px apart: about twice the zoom.
    touch("touchStart", [(cx - 50, cy), (cx + 50, cy)])
    for step in range(1, 6):
        touch("touchMove", [(cx - 50 - 10 * step, cy), (cx + 50 + 10 * step, cy)])
    touch("touchEnd", [])
    v1 = _view(driver)
    assert v1["scale"] == pytest.approx(v0["scale"] * 2, rel=0.05)

    # A huge drag cannot push the drawing out of its box: some of it always stays in view.
    touch("touchStart", [(cx, cy)])
    for step in range(1, 11):
        touch("touchMove", [(cx + 400 * step, cy + 300 * step)])
    touch("touchEnd", [])
    v2 = _view(driver)
    assert any(r["right"] > v2["box"]["left"] + 20 and r["bottom"] > v2["box"]["top"] + 20
               and r["left"] < v2["box"]["right"] and r["top"] < v2["box"]["bottom"]
               for r in v2["nodes"].values())
    _assert_no_console_errors(driver)


def test_the_current_node_is_panned_into_view(driver, viewport, wide):
    tr, path = wide
    viewport(1024, 768)
    _load(driver, path)
    run = tr.run()
    executes = [s for s in run.steps if s.kind == "execute"
                and tr.nodes[s.node].name == "MulBackward0"]
    # The products are spread far wider than the box: visiting each one pans to it.
    for s in (executes[0], executes[len(executes) // 2], executes[-1]):
        _goto_step(driver, s.index)
        v = _view(driver)
        assert s.node in v["nodes"]
        assert _inside(v["nodes"][s.node], v["box"]), s.node
        # The forward op that made it is shown too.
        f = _view(driver, "forward")
        op = tr.nodes[s.node].forward_op
        assert _inside(f["nodes"][op], f["box"]), op
    _assert_no_console_errors(driver)


def test_folding_the_forward_graph_gives_the_backward_graph_room(driver, viewport, wide):
    from selenium.webdriver.common.by import By

    tr, path = wide
    viewport(1280, 800)
    _load(driver, path)
    fwd = driver.find_element(By.CSS_SELECTOR, '[data-role="forward-box"]')
    fwd.find_element(By.CSS_SELECTOR, 'button[data-zoom="in"]').click()
    zoomed = _view(driver, "forward")["scale"]
    tall = _view(driver)["box"]["height"]
    toggle = driver.find_element(By.CSS_SELECTOR, '[data-role="forward-toggle"]')
    toggle.click()
    assert toggle.get_attribute("aria-expanded") == "false"
    assert not driver.find_element(By.CSS_SELECTOR, '[data-role="forward"]').is_displayed()
    assert _view(driver)["box"]["height"] > 1.4 * tall
    toggle.click()
    # Back as it was, zoom included.
    assert _view(driver)["box"]["height"] == pytest.approx(tall, abs=1)
    assert _view(driver, "forward")["scale"] == pytest.approx(zoomed, rel=1e-3)
    _assert_no_console_errors(driver)


# -- layouts ----------------------------------------------------------------------------------
_LAYOUT_JS = """
const rect = (sel) => { const e = document.querySelector(sel); const b = e.getBoundingClientRect();
  return {left: b.left, top: b.top, right: b.right, bottom: b.bottom, width: b.width,
          height: b.height}; };
return {w: innerWidth, h: innerHeight, scrollW: document.documentElement.scrollWidth,
        graph: rect('[data-role="backward"]'), forward: rect('[data-role="forward"]'),
        event: rect('[data-role="event"]'), steps: rect('[data-role="steps"]'),
        current: rect('.gv-row.gv-cur'), bar: rect('.gv-bar')};
"""


@pytest.mark.parametrize("size", [(1024, 768), (1280, 800), (1400, 900), (800, 900)],
                         ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_graph_stays_in_view(driver, viewport, wide, size):
    tr, path = wide
    viewport(*size)
    k = len(tr.run().steps) // 2
    _load(driver, path, f"#run=1&step={k}")
    lay = driver.execute_script(_LAYOUT_JS)
    w, h = size
    assert lay["scrollW"] <= w, "the page scrolls sideways"
    # Without scrolling the page: the controls, the whole backward graph, the event text, the
    # current row of the step list and a good part of the forward graph are all on screen.
    for name in ("bar", "graph", "current"):
        r = lay[name]
        assert r["top"] >= 0 and r["bottom"] <= h and r["left"] >= 0 and r["right"] <= w, name
    assert lay["graph"]["width"] >= 0.4 * w and lay["graph"]["height"] >= 0.35 * h
    assert lay["event"]["top"] < h - 100 and lay["event"]["right"] <= w
    assert lay["forward"]["top"] < h - 150
    # The graph is not squeezed by the list: at 1024 px the list sits beside it, not above.
    assert lay["graph"]["top"] < 0.3 * h
    _assert_no_console_errors(driver)


def test_a_narrow_page_is_one_column(driver, viewport, wide):
    tr, path = wide
    viewport(600, 800)
    _load(driver, path)
    lay = driver.execute_script(_LAYOUT_JS)
    assert lay["scrollW"] <= 600, "the page scrolls sideways"
    # The graph takes the page's width and starts in the upper part of the screen; the event
    # comes under it and the step list last.
    assert lay["graph"]["width"] >= 0.85 * 600 and lay["graph"]["top"] < 0.4 * 800
    assert lay["graph"]["height"] >= 300
    assert lay["event"]["top"] > lay["graph"]["bottom"]
    assert lay["steps"]["top"] > lay["event"]["top"]
    v = _view(driver)
    assert v["fontSize"] * v["scale"] >= MIN_TEXT_PX - 0.05


# -- the step in the URL ----------------------------------------------------------------------
def test_the_step_is_in_the_url(driver, viewport, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select

    tr = _two_runs_trace()
    path = tmp_path / "steps.html"
    path.write_text(player_html(tr), encoding="utf-8")
    viewport(1280, 800)
    # Opening an address with a place shows that place.
    _load(driver, path, "#run=1&step=5")
    st = _state(driver)
    assert (st["run"], st["step"]) == (0, 5)
    opened = st["history"]
    # Stepping rewrites the address in place: no history entry per step.
    _press(driver, Keys.ARROW_RIGHT, 3)
    assert _wait(driver, "return location.hash === '#run=1&step=8'")
    assert _state(driver)["history"] == opened
    # Choosing another run is one history entry; Back returns to where the learner was.
    Select(driver.find_element(By.CSS_SELECTOR, '[data-role="run"]')).select_by_value("1")
    assert _wait(driver, "return location.hash === '#run=2&step=0'")
    assert _state(driver)["history"] == opened + 1
    driver.execute_script("document.activeElement.blur()")  # the <select> keeps its arrows
    _press(driver, Keys.ARROW_RIGHT, 2)
    assert _wait(driver, "return location.hash === '#run=2&step=2'")
    driver.back()
    assert _wait(driver, "return document.querySelector('.gv-player').dataset.run === '0'")
    st = _state(driver)
    assert (st["run"], st["step"], st["hash"]) == (0, 8, "#run=1&step=8")
    driver.forward()
    assert _wait(driver, "return document.querySelector('.gv-player').dataset.run === '1'")
    assert (_state(driver)["run"], _state(driver)["step"]) == (1, 2)
    # An edited address is followed; a step past the end shows the last step.
    driver.execute_script("location.hash = '#run=1&step=3'")
    assert _wait(driver, "return document.querySelector('.gv-player').dataset.step === '3'")
    assert _state(driver)["run"] == 0
    _load(driver, path, "#run=2&step=99999")
    st = _state(driver)
    assert (st["run"], st["step"]) == (1, len(tr.runs[1].steps) - 1)
    # A run that does not exist falls back to the last run's first step; so does 0, as runs
    # are numbered from 1.
    _load(driver, path, "#run=7&step=2")
    assert _state(driver)["run"] == 1
    _load(driver, path, "#run=0&step=2")
    assert _state(driver)["run"] == 1
    _assert_no_console_errors(driver)


# The visible run as the page names it: the header, the picker's choice, the drawing's title.
_RUN_TEXT_JS = """
const root = document.querySelector('.gv-player');
const box = root.querySelector('.gv-svg[data-run]:not([hidden])');
const title = Array.from(box.querySelectorAll('text')).map((t) => t.textContent)
  .find((t) => t.startsWith('backward run'));
const pick = root.querySelector('[data-role="run"]');
return {header: root.querySelector('[data-role="run-label"]').textContent,
        picker: pick.options[pick.selectedIndex].textContent, title: title || null,
        hash: location.hash, step: Number(root.dataset.step)};"""


def test_header_picker_address_and_title_number_a_run_alike(driver, viewport, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    with torch.trace(keep_runs="all") as tr:  # three backward calls, all kept
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        for k in range(3):
            (x * float(k + 1)).sum().backward()
    path = tmp_path / "steps.html"
    path.write_text(player_html(tr), encoding="utf-8")
    viewport(1280, 800)
    # #run=2 is backward run 2 (the second call), as its drawing's title says.
    _load(driver, path, "#run=2&step=1")
    got = driver.execute_script(_RUN_TEXT_JS)
    assert got["title"].startswith("backward run 2 of 3")
    assert got["header"].startswith("run 2 of 3: backward of ")
    assert got["picker"].startswith("run 2 \u00b7 backward of ")
    assert (got["hash"], got["step"]) == ("#run=2&step=1", 1)
    # Choosing the third run in the picker writes its number in the address.
    Select(driver.find_element(By.CSS_SELECTOR, '[data-role="run"]')).select_by_index(2)
    assert _wait(driver, "return location.hash === '#run=3&step=0'")
    got = driver.execute_script(_RUN_TEXT_JS)
    assert got["title"].startswith("backward run 3 of 3")
    assert got["header"].startswith("run 3 of 3: ") and got["picker"].startswith("run 3 \u00b7")
    assert [o.text.split(" \u00b7 ")[0] for o in Select(driver.find_element(
        By.CSS_SELECTOR, '[data-role="run"]')).options] == ["run 1", "run 2", "run 3"]

    # Runs not kept keep their numbers: of five calls the last two are runs 4 and 5.
    with torch.trace(keep_runs=2) as tr:
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        for _ in range(5):
            (x * 2.0).sum().backward()
    path.write_text(player_html(tr), encoding="utf-8")
    _load(driver, path, "#run=4&step=3")
    got = driver.execute_script(_RUN_TEXT_JS)
    assert got["title"].startswith("backward run 4 of 5")
    assert got["header"].startswith("run 4 of 5: ") and got["picker"].startswith("run 4 \u00b7")
    assert (got["hash"], got["step"]) == ("#run=4&step=3", 3)
    _load(driver, path, "#run=2&step=3")  # not kept: the last run
    got = driver.execute_script(_RUN_TEXT_JS)
    assert got["title"].startswith("backward run 5 of 5") and got["header"].startswith("run 5 ")
    assert _wait(driver, "return location.hash === '#run=5&step=3'")
    _assert_no_console_errors(driver)


def test_a_fragment_leaves_the_notebook_url_alone(driver, tmp_path):
    from selenium.webdriver.common.keys import Keys

    tr = _two_runs_trace()
    page = ("<!DOCTYPE html><html><head><meta charset='utf-8'><title>nb</title></head><body>"
            f"{player_html(tr, fragment=True)}</body></html>")
    path = tmp_path / "nb.html"
    path.write_text(page, encoding="utf-8")
    _load(driver, path, "#run=0&step=4")
    # The notebook's address is not the player's: it opens at the last run, and stepping in it
    # never writes an address.
    assert (_state(driver)["run"], _state(driver)["step"]) == (1, 0)
    root = driver.find_element("css selector", ".gv-player")
    driver.execute_script("arguments[0].focus()", root)
    _press(driver, Keys.ARROW_RIGHT, 2)
    time.sleep(0.4)  # longer than the page's delay before it writes an address
    assert _state(driver)["hash"] == "#run=0&step=4"


# -- folded groups ----------------------------------------------------------------------------
def test_a_node_inside_a_folded_group_highlights_the_group(driver, viewport, chain):
    tr, path = chain
    viewport(1400, 900)
    back = draw_backward(tr).plan
    fwd = draw_forward(tr).plan
    run = tr.run()
    folded = next(s for s in run.steps if s.kind == "execute" and s.node in back.rep
                  and tr.nodes[s.node].forward_op in fwd.rep)
    group = back.groups[back.rep[folded.node]]
    fgroup = fwd.groups[fwd.rep[tr.nodes[folded.node].forward_op]]
    _load(driver, path, f"#run=1&step={folded.index}")
    got = driver.execute_script("""
        const title = (g) => { for (const c of g.children) if (c.localName === 'title')
          return c.textContent; return null; };
        const cur = (role) => Array.from(document.querySelectorAll(
          '[data-role="' + role + '"] g.node.gv-current')).map(title);
        const where = (role) => { const p = document.querySelector('[data-role="' + role + '"]');
          return p.hidden ? null : p.textContent; };
        return {back: cur('backward'), fwd: cur('forward'), where: where('where'),
                fwhere: where('forward-where')};""")
    assert got["back"] == [back.rep[folded.node]]
    assert got["fwd"] == [fwd.rep[tr.nodes[folded.node].forward_op]]
    assert "of the folded group" in got["where"] and group.title in got["where"]
    assert folded.node in got["where"]
    assert fgroup.title in got["fwhere"]
    # The group is on screen (panned to if needed).
    v = _view(driver)
    assert _inside(v["nodes"][back.rep[folded.node]], v["box"])

    # A node drawn on its own: highlighted itself, no note.
    first = next(s for s in run.steps if s.kind == "execute")
    assert first.node not in back.rep
    _goto_step(driver, first.index)
    got = driver.execute_script("""
        const p = document.querySelector('[data-role="where"]');
        const g = document.querySelector('[data-role="backward"] g.node.gv-current');
        return {hidden: p.hidden, id: g.id};""")
    assert got["hidden"] and got["id"].endswith(first.node)
    # At the end every node has run: the group shows as finished.
    _goto_step(driver, len(run.steps) - 1)
    done = driver.execute_script("""
        return Array.from(document.querySelectorAll('[data-role="backward"] g.node.gv-done'))
          .map((g) => g.id);""")
    assert any(i.endswith("-" + back.rep[folded.node]) for i in done)
    _assert_no_console_errors(driver)


# -- long step lists --------------------------------------------------------------------------
def test_a_long_step_list_is_complete_readable_and_follows_the_step(driver, viewport, chain):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    tr, path = chain
    run = tr.run()
    viewport(1024, 768)
    _load(driver, path)
    rows = driver.execute_script(
        "return document.querySelectorAll('[data-role=\"steps\"] button.gv-step').length")
    assert rows == len(run.steps)
    _press(driver, Keys.END)
    last = len(run.steps) - 1
    assert _state(driver)["step"] == last

    # The current row is scrolled into the list's view, shows the node's full name and id, and
    # its 5-digit step number is clear of the kind badge.
    def row_info(k: int) -> dict:
        return driver.execute_script("""
            const list = document.querySelector('[data-role="steps"]');
            const row = list.querySelector('[data-i="' + arguments[0] + '"]');
            const r = (e) => { const b = e.getBoundingClientRect();
              return {left: b.left, top: b.top, right: b.right, bottom: b.bottom}; };
            const n = row.querySelector('.gv-n');
            const name = row.querySelector('.gv-step-node');
            return {list: r(list), row: r(row), n: r(n), kind: r(row.querySelector('.gv-kind')),
                    num: n.textContent, name: name ? name.textContent : null,
                    nFits: n.scrollWidth <= n.clientWidth + 0.5,
                    current: row.classList.contains('gv-cur')};""", k)

    for k in (last, 10_000, 5_000):
        if k != last:
            _goto_step(driver, k)
        _wait(driver, """const l = document.querySelector('[data-role="steps"]');
            const b = l.querySelector('.gv-cur').getBoundingClientRect();
            const o = l.getBoundingClientRect();
            return b.top >= o.top - 0.5 && b.bottom <= o.bottom + 0.5;""")
        info = row_info(k)
        step = run.steps[k]
        assert info["current"] and info["num"] == str(k)
        assert _inside(info["row"], info["list"], slack=1), k
        assert info["n"]["right"] <= info["kind"]["left"] and info["nFits"], info
        if step.node:
            assert info["name"] == tr.nodes[step.node].name + step.node
    # A click on a row far down the list goes there.
    _goto_step(driver, 9_990)
    driver.find_element(By.CSS_SELECTOR, '[data-i="9995"] button').click()
    assert _state(driver)["step"] == 9_995
    _assert_no_console_errors(driver)


# -- colours ----------------------------------------------------------------------------------
def test_finished_and_not_yet_run_nodes_look_different(driver, viewport, tmp_path):
    tr = _wide_trace()
    path = tmp_path / "steps.html"
    path.write_text(player_html(tr), encoding="utf-8")
    viewport(1400, 900)
    run = tr.run()
    k = [s.index for s in run.steps if s.kind == "execute"][3]
    _load(driver, path, f"#run=1&step={k}")
    looks = driver.execute_script("""
        const shape = (g) => g.querySelector('polygon, path, ellipse');
        const look = (g) => {
          const s = getComputedStyle(shape(g));
          const c = g.querySelector('g.gv-check');
          return {fill: s.fill, stroke: s.stroke, dash: s.strokeDasharray,
                  width: parseFloat(s.strokeWidth),
                  check: c ? getComputedStyle(c).display !== 'none' : false}; };
        const box = document.querySelector('[data-role="backward"]');
        return {done: look(box.querySelector('g.node.gv-done:not(.gv-current):not(.gv-ready)')),
                pending: look(box.querySelector('g.node.gv-pending')),
                legend: Array.from(document.querySelectorAll('.gv-legend li'))
                  .map((li) => li.textContent.trim())};""")
    done, pending = looks["done"], looks["pending"]
    assert done["fill"] != pending["fill"] and done["stroke"] != pending["stroke"]
    assert done["dash"] == "none" and pending["dash"] != "none"  # solid against dotted
    assert done["check"] and not pending["check"]
    assert done["width"] > pending["width"]
    assert looks["legend"] == ["this step", "gradient flowing", "ready queue", "\u2713finished",
                               "not yet run", "folded group"]
    _assert_no_console_errors(driver)


# -- memory (NOTE [memory]) -----------------------------------------------------------------------
def test_the_memory_panel_shows_what_the_saved_tensors_hold_at_each_step(driver, tmp_path):
    """The numbers under the memory plot are the bytes of the saved activations the nodes not
    yet freed hold, as the program itself reads them (each node's ``_saved_*`` tensors)."""
    from test_replay import saved_by

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 32), torch.nn.Tanh(), torch.nn.Linear(32, 32),
                                torch.nn.Sigmoid(), torch.nn.Linear(32, 2))
    loss = model(torch.randn(16, 6)).exp().sum()
    live, todo = [], [loss.grad_fn]
    while todo:
        n = todo.pop()
        if n is not None and all(n is not m for m in live):
            live.append(n)
            todo.extend(f for f, _ in n.next_functions)
    saves = [saved_by(n) for n in live]
    with torch.trace() as tr:
        loss.backward()
    ids = [tr.node_id(n) for n in live]
    run = tr.run()
    path = tmp_path / "steps.html"
    path.write_text(player_html(tr), encoding="utf-8")
    _load(driver, path)
    releases = [s.index for s in run.steps if s.kind == "release_saved"]
    checked = 0
    for k in (0, *releases, len(run.steps) - 1):
        freed = {s.node for s in run.steps[:k + 1] if s.kind == "release_saved"}
        held: dict = {}
        for nid, saved in zip(ids, saves):
            if nid not in freed:
                held.update(saved)
        _goto_step(driver, k)
        shown = _wait(driver, "const e = document.querySelector('[data-role=mem-saved]');"
                      "return e && Number(arguments[0]) === Number("
                      "document.querySelector('.gv-player').dataset.step) && e.dataset.bytes", k)
        assert int(shown) == sum(held.values()), k
        checked += 1
    assert checked >= 5 and sum(saves[0].values()) + sum(saves[1].values()) > 0
    _assert_no_console_errors(driver)
