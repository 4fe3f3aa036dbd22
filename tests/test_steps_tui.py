"""`gradviz steps` as a keyboard-driven view (gradviz.render.tui.StepsApp, on Textual).

Textual's pilot presses keys as a user does; each test then reads the screen that was drawn
(every character of every line) and checks what a learner would see there.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from _render_programs import seed_pow

import gradviz as torch
from gradviz.render.tui import StepsApp
from gradviz.trace.replay import states

SIZE = (140, 45)


def screen_text(app: StepsApp) -> str:
    """The characters on the screen, one line per row (what the terminal shows).

    Read through Textual's compositor, the object that draws the screen; the pilot has no
    public call for the screen's text (only an SVG screenshot).
    """
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def top_line(app: StepsApp) -> str:
    return screen_text(app).splitlines()[0]


def drive(app: StepsApp, script: Callable[[Any], Awaitable[None]]) -> None:
    """Run ``app`` headless and let ``script(pilot)`` press keys and check the screen."""

    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            await script(pilot)

    asyncio.run(main())


def two_runs() -> Any:
    """Two backward runs through one graph with a leaf used twice (x) and a named weight."""
    with torch.trace(keep_runs="all") as tr:  # a loop: by default only its last run is kept
        x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        w = torch.tensor([0.5, 1.0, 1.5], requires_grad=True)
        for _ in range(2):
            z = (x * w) * (x * 3)
            z.sum().backward()
    return tr


def test_runs_are_numbered_as_the_pictures_number_them() -> None:
    # Five backward calls, the last two kept: the screen says "run 4 of 5" and "run 5 of 5",
    # as the drawings' titles do, and no second count of the kept runs ("run 2 of 2").
    with torch.trace(keep_runs=2) as tr:
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        for _ in range(5):
            (x * 2).sum().backward()
    app = StepsApp(tr)

    async def script(pilot: Any) -> None:
        assert top_line(app).startswith(" run 5 of 5: backward of")
        assert "2 of 5 runs kept" in top_line(app) and "run 2 of 2" not in top_line(app)
        await pilot.press("left_square_bracket")
        assert app.run_index == 0 and top_line(app).startswith(" run 4 of 5: backward of")

    drive(app, script)


def test_single_keys_step_and_the_screen_is_redrawn_in_place() -> None:
    tr = seed_pow()
    n = len(tr.run().steps) - 1
    app = StepsApp(tr)

    async def script(pilot: Any) -> None:
        assert f"step 0 of {n} · compute_dependencies" in top_line(app)
        await pilot.press("right", "l", "j", "space", "n", "down")
        assert app.step == 6
        assert f"step 6 of {n} · enqueue" in top_line(app)
        await pilot.press("left", "h", "k")
        assert app.step == 3
        await pilot.press("end")
        assert app.step == n and f"step {n} of {n} · done" in top_line(app)
        await pilot.press("right")  # past the end: stays on the last step
        assert app.step == n
        await pilot.press("home")
        assert app.step == 0
        await pilot.press("left")
        assert app.step == 0
        await pilot.press("pagedown")
        assert app.step == 10
        # Redrawn in place: the screen is exactly SIZE, one top line, one key line.
        lines = screen_text(app).splitlines()
        assert len(lines) == SIZE[1]
        assert sum("step 10 of" in line for line in lines) == 2  # top bar and panel heading
        assert "q: quit" in lines[-1]

    drive(app, script)


def test_the_panel_shows_what_the_player_shows_with_player_names() -> None:
    tr = seed_pow()
    steps = tr.run().steps
    acc = next(s.index for s in steps if s.kind == "accumulate")
    app = StepsApp(tr, step=acc)

    async def script(pilot: Any) -> None:
        text = screen_text(app)
        add = next(n for n in tr.nodes.values() if n.name == "AddBackward0").id
        pow0 = steps[acc].node
        # the step's sentence, with the sender and receiver named "Class id"
        assert f"The gradient from AddBackward0 {add} arrives at PowBackward0 {pow0}" in text
        assert f"arriving now: AddBackward0 {add} → PowBackward0 {pow0} (input 0)" in text
        assert "input buffer before: empty" in text
        assert "input buffer after: (3,) [1, 1, 1]" in text
        for section in ("ready queue", "input buffers", "dependencies", "leaf .grad"):
            assert section in text
        assert f"PowBackward0 {pow0} input 0: (3,) [1, 1, 1]" in text  # waiting in its buffer
        assert "x.grad = None" in text and "y.grad = None" in text
        # AccumulateGrad carries its leaf's name, in the list and in the dependency counts
        assert "AccumulateGrad (x) n" in text and "AccumulateGrad (y) n" in text
        await pilot.press("end")
        text = screen_text(app)
        assert "x.grad = (3,) [2, 4, 6]" in text
        assert "y.grad = (3,) [0.75, 3, 6.75]" in text
        assert "The ready queue is empty: the backward pass is finished." in text
        assert "(none waiting)" in text

    drive(app, script)


def test_the_ready_queue_names_same_class_nodes_apart() -> None:
    tr = seed_pow()
    # the step after which both PowBackward0 nodes wait in the queue
    both, ids = next((st.step.index, list(st.ready)) for st in states(tr.run())
                     if st.step.kind == "enqueue" and len(st.ready) == 2)
    app = StepsApp(tr, step=both)

    async def script(pilot: Any) -> None:
        text = screen_text(app)
        queue = text.splitlines()[text.splitlines().index(
            next(line for line in text.splitlines() if line.rstrip().endswith("ready queue")))
            + 1]
        assert f"PowBackward0 {ids[0]}, PowBackward0 {ids[1]}" in queue

    drive(app, script)


def test_brackets_and_tab_switch_runs() -> None:
    tr = two_runs()
    app = StepsApp(tr)  # starts on the last run

    async def script(pilot: Any) -> None:
        assert app.run_index == 1
        assert top_line(app).startswith(" run 2 of 2: backward of")
        await pilot.press("right", "right")
        await pilot.press("left_square_bracket")
        assert app.run_index == 0 and app.step == 0
        assert top_line(app).startswith(" run 1 of 2: backward of")
        await pilot.press("right_square_bracket")
        assert app.run_index == 1
        await pilot.press("tab")
        assert app.run_index == 0  # wraps around
        await pilot.press("shift+tab")
        assert app.run_index == 1
        # leaf .grad before run 2 writes anything is what run 1 left
        await pilot.press("home")
        assert "x.grad = (3,) [3, 12, 27]" in screen_text(app)
        await pilot.press("end")
        assert "x.grad = (3,) [6, 24, 54]" in screen_text(app)

    drive(app, script)


def test_help_opens_and_any_key_closes_it_then_q_quits() -> None:
    tr = seed_pow()
    app = StepsApp(tr)

    async def script(pilot: Any) -> None:
        await pilot.press("question_mark")
        text = screen_text(app)
        assert "next / previous backward run" in text and "Press any key" in text
        await pilot.press("x")
        assert "Press any key" not in screen_text(app)
        assert app.step == 0  # the key that closed the help did nothing else
        await pilot.press("question_mark", "right")  # a step key also only closes it
        assert "Press any key" not in screen_text(app) and app.step == 0
        await pilot.press("question_mark", "q")
        assert "Press any key" not in screen_text(app) and app.is_running
        await pilot.press("right", "q")

    drive(app, script)
    assert app.return_value == 1


def test_a_click_on_a_row_shows_that_step() -> None:
    tr = seed_pow()
    app = StepsApp(tr)

    async def script(pilot: Any) -> None:
        await pilot.click("#steps", offset=(3, 8))  # row 0 is the header: step 7
        await pilot.pause()
        assert app.step == 7 and "step 7 of" in top_line(app)

    drive(app, script)


def test_names_in_the_step_list_are_never_cut_ambiguously() -> None:
    with torch.trace() as tr:
        weights_of_the_first_layer_in_the_model = torch.ones(2, requires_grad=True)
        b = torch.ones(2, requires_grad=True)
        h = torch.nn.functional.log_softmax(weights_of_the_first_layer_in_the_model * 2, 0)
        (h * b).sum().backward()
    app = StepsApp(tr)
    long_name = "weights_of_the_first_layer_in_the_model"
    leaf = next(n.id for n in tr.nodes.values() if n.variable is not None
                and tr.tensors[n.variable].name == long_name)

    async def script(pilot: Any) -> None:
        steps = tr.run().steps
        for width in (100, 80, 60, 160):
            await pilot.resize_terminal(width, 40)
            await pilot.press("end")
            rows = [row.split("│")[0] for row in screen_text(app).splitlines()[2:-1]
                    if "│" in row and row.split()[0].isdigit()]
            assert len(rows) == len(steps)
            for row in rows:
                number, kind, *rest = row.split()
                step = steps[int(number)]
                assert kind == step.kind
                # the node's id closes the cell, whole: the row names the right node
                assert (rest[-1] == step.node) if step.node else not rest, (width, row)
            cells = " ".join(rows)
            if width >= 100:
                assert "AccumulateGrad (b) n" in cells
                assert "LogSoftmaxBackward0 n" in cells
            if width == 100:  # the long leaf name is shortened, its id kept
                assert "AccumulateGrad (weig" in cells and f"…) {leaf}" in cells
            if width == 160:
                assert f"AccumulateGrad ({long_name}) {leaf}" in cells
        # the panel names the leaf whole
        assert f"{long_name}.grad = " in screen_text(app)

    drive(app, script)


def test_step_through_prints_the_table_without_a_terminal(capsys: pytest.CaptureFixture[str]
                                                          ) -> None:
    from gradviz.render.terminal import step_through

    tr = seed_pow()
    assert step_through(tr) == len(tr.run().steps) - 1  # pytest's stdout is not a terminal
    out = capsys.readouterr().out
    assert "compute_dependencies" in out and "AccumulateGrad (x)" in out
