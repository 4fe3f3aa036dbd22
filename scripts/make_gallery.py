"""Make docs/gallery.md and its pictures (docs/images/gallery/*.png).

Usage: ``.venv/bin/python scripts/make_gallery.py [--only NAME ...] [--no-programs]``
(needs Debian's chromium and chromedriver, as the browser tests do, selenium from the test
extras, and Pillow from the dev extras).

What it makes, for every bundled example (``gradviz examples``), each traced as
``gradviz trace --keep-runs 1 --example NAME`` would trace it:

- the backward graph at each detail level (``bare``, ``values``, ``saved``) and the forward
  graph at the level ``--detail auto`` picks: each SVG opened in headless Chromium and the
  drawing screenshot at full scale; a drawing wider than ``WIDTH`` is shrunk to fit if that
  keeps its text legible (down to ``MIN_SCALE``), else a ``WIDTH``-wide window of it is taken
  at full scale around the output node at the top; at most ``MAX_HEIGHT`` px of it, from the
  top;
- the training programs (``PROGRAMS``: the demo, a learner's manual SGD, and on real PyTorch a
  ResNet-18-sized CNN and a small Transformer language model, each built, then trained with
  clipping and an optimizer), traced as ``gradviz trace SCRIPT`` traces them (a loop keeps
  its last iteration): the forward and backward graphs at the level ``--detail auto`` picks
  (on real PyTorch, the backward graph at ``--depth 1`` too), and the step player at 1,024 and
  1,400 px wide, at a step in the middle of the last run.

Pictures are stored as palette PNGs (256 colours: a drawing has few) to keep the gallery small;
the script prints each file's size and the total. It writes docs/gallery.md from the pictures
it made, with each drawing's real size, so text and pictures never disagree.

Robust by design (the player is rebuilt on another branch): every picture is taken on its own,
a failure is reported and the rest are still made, and the exit code says whether all worked.
"""

from __future__ import annotations

import argparse
import io
import os
import re
import runpy
import shutil
import sys
import tempfile
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from unittest import mock

from _chromium import svg_size  # scripts/ is on sys.path when this file runs

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "images" / "gallery"
DOC = ROOT / "docs" / "gallery.md"
WIDTH = 1400  # the widest picture, in CSS px: a laptop browser window
MIN_SCALE = 0.78  # below this, 11 pt labels drop under ~11 px: take a full-scale window instead
MAX_HEIGHT = 1100  # px kept from the top of a drawing (the title, the legend, the loss end)
LEVELS = ("bare", "values", "saved")
PLAYER_WIDTHS = (1024, 1400)
PROGRAM_DIR = ROOT / "docs" / "programs"
# name -> (script, engine, what it is). The demo is the bundled example `gradviz demo` traces.
PROGRAMS = {
    "demo": (ROOT / "gradviz" / "examples" / "mlp_moons.py", "gradviz",
             "`gradviz demo`: an MLP trained on two moons with SGD, 20 steps."),
    "manual_sgd": (PROGRAM_DIR / "manual_sgd.py", "gradviz",
                   "A learner's linear regression with hand-written SGD under `no_grad`, "
                   "`.grad` reset to None after each of 20 steps."),
    "resnet_cnn": (PROGRAM_DIR / "resnet_cnn.py", "torch",
                   "On real PyTorch: a ResNet-18-sized CNN (11 million parameters) built, "
                   "then one training step with `clip_grad_norm_` and SGD with momentum."),
    "transformer_lm": (PROGRAM_DIR / "transformer_lm.py", "torch",
                       "On real PyTorch: a small Transformer language model (two causal "
                       "attention blocks, tied embeddings) built, then one training step with "
                       "`clip_grad_norm_` and AdamW."),
}


@dataclass
class Shot:
    """One picture made: where it is and what it shows."""

    path: Path
    what: str
    drawing: tuple[float, float] = (0.0, 0.0)  # the drawing's own size in px
    scale: float = 1.0
    window: bool = False  # a full-scale window of a drawing too wide to shrink
    cropped: bool = False  # only its top part
    size: tuple[int, int] = (0, 0)  # the picture's size in px


@dataclass
class Example:
    name: str
    summary: str
    shots: dict[str, Shot] = field(default_factory=dict)
    detail: str = ""  # the level --detail auto picks for its backward graph
    nodes: int = 0
    tried: int = 0  # pictures attempted (a program's count depends on its drawings' sizes)


def output_x(svg: str, cls: str = "gv-output") -> float | None:
    """The x (in px, full scale) of the first ``cls`` node's label: where a backward graph
    starts."""
    name = cls.replace("-", "(?:-|&#45;)")  # Graphviz's SVG may write "-" as "&#45;"
    m = re.search(rf'class="node {name}">.*?<text[^>]* x="([-\d.]+)"', svg, re.S)
    if m is None:
        return None
    return (float(m.group(1)) + 4) * 4 / 3  # Graphviz translates the drawing by 4 pt


def start_browser(profile: Path):  # noqa: ANN201 - a selenium WebDriver
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    chromedriver = shutil.which("chromedriver") or "/usr/bin/chromedriver"
    options = Options()
    options.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--hide-scrollbars", "--disable-background-networking", "--no-first-run",
                "--disable-component-update", "--disable-sync", "--force-device-scale-factor=1",
                f"--user-data-dir={profile}", f"--window-size={WIDTH},1000"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(chromedriver), options=options)
    driver.set_page_load_timeout(120)
    return driver


def viewport(driver, width: int, height: int) -> None:  # noqa: ANN001
    """Make the page's viewport exactly ``width`` x ``height`` CSS px."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})


def save_png(png: bytes, out: Path, box: tuple[int, int, int, int] | None = None
             ) -> tuple[int, int]:
    """Crop (``box``), reduce to a 256-colour palette and write ``out``; returns its size."""
    from PIL import Image

    img = Image.open(io.BytesIO(png)).convert("RGB")
    if box is not None:
        img = img.crop(box)
    # Graph drawings have few colours: a palette PNG is a third of the size, looks the same.
    img = img.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    out.parent.mkdir(parents=True, exist_ok=True)
    img.save(out, optimize=True)
    return img.size


def shoot_svg(driver, svg_path: Path, out: Path, what: str, tmp: Path,  # noqa: ANN001
              anchor: str | None = "gv-output", whole: bool = False) -> Shot:
    """Screenshot a drawing as the module docstring says (full scale, shrunk, or a window
    around its first ``anchor`` node, or at its left edge if None); ``whole``: shrunk to fit
    however small its text."""
    svg = svg_path.read_text(encoding="utf-8")
    w, h = svg_size(svg)
    shot = Shot(out, what, (w, h))
    scale = 1.0 if w <= WIDTH else WIDTH / w
    left = 0
    if scale < MIN_SCALE and not whole:  # too small to read: a full-scale window
        scale = 1.0
        x = output_x(svg, anchor) if anchor is not None else WIDTH / 2
        centre = x if x is not None else w / 2
        left = int(min(max(0.0, centre - WIDTH / 2), w - WIDTH))
        shot.window = True
    shot.scale = scale
    page_w, page_h = round(w * scale), round(h * scale)
    page = tmp / f"{out.stem}.html"
    page.write_text('<!doctype html><html><body style="margin:0;background:white">'
                    f'<img src="{svg_path.as_uri()}" width="{page_w}" height="{page_h}" '
                    'style="display:block"></body></html>', encoding="utf-8")
    keep_h = min(page_h, MAX_HEIGHT)
    viewport(driver, max(page_w, 200), keep_h)
    driver.get(page.as_uri())
    png = driver.get_screenshot_as_png()
    right = min(page_w, left + WIDTH)
    shot.cropped = keep_h < page_h
    shot.size = save_png(png, out, (left, 0, right, keep_h))
    return shot


def trace_example(name: str):  # noqa: ANN201 - a gradviz Trace
    """Run a bundled example under the tracer, as ``gradviz trace --keep-runs 1`` does."""
    return trace_script(ROOT / "gradviz" / "examples" / f"{name}.py", keep_runs=1)


def trace_script(path: Path, keep_runs: int | None = None, torch: bool = False):  # noqa: ANN201
    """Run a script under the tracer (on real PyTorch with ``torch``), as ``gradviz trace``
    does with ``--keep-runs`` (None: the default policy, a loop keeps its last iteration)."""
    import gradviz

    devnull = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - the scripts print
    with mock.patch.object(sys, "argv", [str(path)]), mock.patch.object(sys, "stdout", devnull), \
            gradviz.trace(keep_runs=keep_runs, name=path.name, torch=torch) as tr:
        try:
            runpy.run_path(str(path), run_name="__main__")
        except Exception:  # noqa: BLE001 - inplace_error fails on purpose; the trace is kept
            pass
    devnull.close()
    return tr


def examples_list() -> list[tuple[str, str]]:
    from gradviz_cli.commands.examples import _summary, example_names, example_path

    out = []
    for name in example_names():
        path = example_path(name)
        if path is not None:
            out.append((name, _summary(path)))
    return out


def make_example(driver, name: str, summary: str, tmp: Path) -> Example:  # noqa: ANN001
    from gradviz import render
    from gradviz.render.graphviz import resolve_detail

    ex = Example(name, summary)
    tr = trace_example(name)
    drawings = {}
    if tr.runs or tr.nodes:
        ex.nodes = len(tr.backward_graph(-1).nodes) if tr.runs else len(tr.nodes)
        ex.detail = resolve_detail("auto", ex.nodes)
        for level in LEVELS:
            drawings[f"backward_{level}"] = (render.draw_backward(tr, detail=level),
                                             f"backward graph, detail {level}")
    fwd = render.draw_forward(tr)
    drawings["forward"] = (fwd, f"forward graph, detail {fwd.detail} (auto)")
    for key, (dot, what) in drawings.items():
        out = OUT / f"{name}_{key}.png"
        try:
            svg = tmp / f"{name}_{key}.svg"
            render.render(dot, svg, "svg")
            ex.shots[key] = shoot_svg(driver, svg, out, what, tmp)
            print(f"  {out.relative_to(ROOT)}: {ex.shots[key].size[0]} x "
                  f"{ex.shots[key].size[1]} px, {out.stat().st_size // 1024} KB", flush=True)
        except Exception:  # noqa: BLE001 - report it and make the rest
            print(f"  FAILED {out.name}:\n{traceback.format_exc()}", file=sys.stderr)
    return ex


def make_program(driver, name: str, tmp: Path) -> Example:  # noqa: ANN001
    """A training program's forward and backward graphs and its step player."""
    from gradviz import render
    from gradviz.render.graphviz import resolve_detail

    path, engine, summary = PROGRAMS[name]
    ex = Example(name, summary)
    tr = trace_script(path, torch=engine == "torch")
    ex.nodes = len(tr.backward_graph(-1).nodes)
    ex.detail = resolve_detail("auto", ex.nodes)
    fwd, bwd = render.draw_forward(tr), render.draw_backward(tr)
    drawings = [("forward", fwd, f"forward graph, detail {fwd.detail} (auto)", None),
                ("backward", bwd, f"backward graph, detail {bwd.detail} (auto), grouped by "
                 "module", "gv-output")]
    if engine == "torch":  # a real model: its module-level view too (`--depth 1`)
        deep = render.draw_backward(tr, depth=1)
        drawings.append(("backward_depth1", deep, "backward graph at `--depth 1`: one box per "
                         "child module, with its shapes and parameters", "gv-output"))
    # A drawing too wide to read shrunk is shown twice: whole (its shape), and a full-scale
    # window at its start (a forward graph's inputs, top left; a backward graph's output).
    for key, dot, what, anchor in drawings:
        out = OUT / f"program_{name}_{key}.png"
        ex.tried += 1
        try:
            svg = tmp / f"{name}_{key}.svg"
            render.render(dot, svg, "svg")
            w, _ = svg_size(svg.read_text(encoding="utf-8"))
            if w * MIN_SCALE > WIDTH:
                ex.tried += 1
                whole = OUT / f"program_{name}_{key}_whole.png"
                ex.shots[f"{key}_whole"] = shoot_svg(driver, svg, whole, f"{what}, whole", tmp,
                                                     whole=True)
            ex.shots[key] = shoot_svg(driver, svg, out, what, tmp, anchor)
            print(f"  {out.relative_to(ROOT)}: {ex.shots[key].size[0]} x "
                  f"{ex.shots[key].size[1]} px, {out.stat().st_size // 1024} KB", flush=True)
        except Exception:  # noqa: BLE001 - report it and make the rest
            print(f"  FAILED {out.name}:\n{traceback.format_exc()}", file=sys.stderr)
    ex.tried += len(PLAYER_WIDTHS)
    for shot in make_player(driver, tr, name, tmp):
        ex.shots[f"player_{shot.drawing[0]:.0f}"] = shot
    return ex


def make_player(driver, tr, name: str, tmp: Path) -> list[Shot]:  # noqa: ANN001
    """The step player of trace ``tr`` at each width in ``PLAYER_WIDTHS``."""
    from gradviz.trace import run_numbers

    html = tmp / f"{name}_steps.html"
    tr.to_html(html)
    run = tr.run(-1)
    number = run_numbers(tr)[-1]  # the address numbers runs as the titles do
    # a step in the middle of the run: gradients have flowed, some nodes wait in the queue
    step = next((s.index for s in run.steps[len(run.steps) // 2:] if s.kind == "accumulate"),
                len(run.steps) // 2)
    shots = []
    for width in PLAYER_WIDTHS:
        out = OUT / f"program_{name}_player_{width}.png"
        try:
            height = 900 if width > 1200 else 768
            viewport(driver, width, height)
            driver.get(f"{html.as_uri()}#run={number}&step={step}")
            driver.execute_script("return document.readyState")
            shot = Shot(out, f"the step player at {width} px, step {step} of "
                        f"{len(run.steps) - 1}", (width, height))
            shot.size = save_png(driver.get_screenshot_as_png(), out)
            shots.append(shot)
            print(f"  {out.relative_to(ROOT)}: {shot.size[0]} x {shot.size[1]} px, "
                  f"{out.stat().st_size // 1024} KB", flush=True)
        except Exception:  # noqa: BLE001 - report it and make the rest
            print(f"  FAILED {out.name}:\n{traceback.format_exc()}", file=sys.stderr)
    return shots


def how_drawn(shot: Shot) -> str:
    w, h = shot.drawing
    text = f"drawing {w:,.0f} × {h:,.0f} px"
    if shot.scale < 1:
        text += f", shown at {shot.scale:.2f}"
    if shot.window:
        text += f"; a {shot.size[0]:,} px wide window of it at full scale, around the output"
    if shot.cropped:
        text += f"; its top {shot.size[1]:,} px"
    return text


def write_doc(examples: list[Example], programs: list[Example]) -> None:
    lines = [
        "# Gallery: every bundled example at every detail level",
        "",
        "<!-- Written by scripts/make_gallery.py: edit the script, not this file. -->",
        "",
        "Each bundled example (`gradviz examples`) traced as "
        "`gradviz trace --keep-runs 1 --example NAME` traces it, and its pictures as "
        "`gradviz trace --detail LEVEL` draws them. The three detail levels "
        "(NOTE [detail levels] in `gradviz/render/graphviz.py`):",
        "",
        "| level | what each box says | for |",
        "| --- | --- | --- |",
        "| `bare` | names only: PyTorch's class names, tensor names and shapes "
        "(an id where two nodes share a name) | the shape of a big graph |",
        "| `values` | its id, the code it came from, its `data` and the `grad` it received "
        "(leaves: `data` and `.grad`), as micrograd draws | following the chain rule "
        "through a small graph |",
        "| `saved` | its id and code, PyTorch's saved attributes (`_saved_exponent = 2`), "
        "the saved tensors as orange boxes linked to what they hold, as torchviz draws | "
        "what backward keeps in memory |",
        "",
        "`--detail auto` (the default, in Python `detail=None`) is `values` for a graph of at "
        "most 40 nodes (backward nodes; for the forward graph, ops and tensors) and `bare` "
        "beyond. Every picture carries a legend of what it uses, and only that: the colours of "
        "its boxes, its kinds of line (the blue line from an `AccumulateGrad` to its leaf, the "
        "orange lines to saved tensors, solid to the node that saved one and dashed to the "
        "tensor it is) and its notations (`input k`, `output j`, a value's range "
        "`min a max b`, `…` for what was left out, a gradient written on an edge). An op's "
        "call names an enum argument (`nll_loss(..., reduction='mean')`, though the aten op "
        "is given the int 1). Its title says which backward run it is (`backward run 3 of 3, "
        "last 1 kept`; `--run N` draws another). An edge is labelled `input k` only where the "
        "node it feeds has several inputs (`UnsafeSplitBackward0`, the two outputs of "
        "`max_pool2d`).",
        "",
        "The forward graph is the forward pass: the ops that built what the backward run "
        "differentiated. Model construction, the updates between backward runs (an "
        "optimizer's step, a `no_grad` write, clipping) and what ran mid-forward outside the "
        "graph (BatchNorm's counters) are one grey box each, saying what ran and when "
        "(NOTE [phases] in `gradviz/trace/phases.py`; `--all-ops` draws them op by op). Each "
        "parameter shows the value that forward read, under its module path.",
        "",
        f"Pictures are at most {WIDTH:,} px wide, at full scale where the drawing fits; a wider "
        f"one is shrunk to fit down to {MIN_SCALE} (text still legible), and beyond that the "
        f"picture is a full-scale {WIDTH:,} px window around the graph's output. At most "
        f"{MAX_HEIGHT:,} px from the top are kept: the title, the legend and the output end. "
        "Open the SVG that `gradviz trace` writes to see the whole drawing.",
        "",
        "Regenerate with `.venv/bin/python scripts/make_gallery.py` (headless Chromium through "
        "selenium; Pillow from the `dev` extras).",
        "",
    ]
    for ex in examples:
        lines += [f"## {ex.name}", "", ex.summary, ""]
        if ex.detail:
            lines += [f"Its backward graph has {ex.nodes} nodes: `--detail auto` draws it "
                      f"`{ex.detail}`.", ""]
        for shot in ex.shots.values():
            rel = shot.path.relative_to(DOC.parent).as_posix()
            lines += [f"**{shot.what}** ({how_drawn(shot)})", "",
                      f"![{ex.name}: {shot.what}]({rel})", ""]
    if programs:
        lines += ["## Training programs", "",
                  "Whole programs, traced as `gradviz trace SCRIPT` traces them (a training "
                  "loop keeps its last iteration): model construction, training steps, "
                  "clipping and an optimizer. Their scripts are in `docs/programs/`. The step "
                  f"player is shown in windows {PLAYER_WIDTHS[0]:,} and {PLAYER_WIDTHS[-1]:,} "
                  "px wide.", ""]
    for ex in programs:
        script = PROGRAMS[ex.name][0].relative_to(ROOT).as_posix()
        lines += [f"### {ex.name}", "", f"{ex.summary} Script: `{script}`.", "",
                  f"Its backward graph has {ex.nodes} nodes: `--detail auto` draws it "
                  f"`{ex.detail}`.", ""]
        for shot in ex.shots.values():
            rel = shot.path.relative_to(DOC.parent).as_posix()
            size = "" if shot.what.startswith("the step player") else f" ({how_drawn(shot)})"
            lines += [f"**{shot.what}**{size}", "", f"![{ex.name}: {shot.what}]({rel})", ""]
    DOC.write_text("\n".join(lines), encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="only these examples (docs/gallery.md is "
                        "then not rewritten)")
    parser.add_argument("--no-programs", action="store_true",
                        help="skip the training programs (their graphs and players)")
    args = parser.parse_args()
    try:
        import PIL  # noqa: F401
        import selenium  # noqa: F401
    except ImportError as e:
        print(f"make_gallery needs {e.name}: pip install -e '.[dev]' (selenium, pillow)",
              file=sys.stderr)
        return 2
    OUT.mkdir(parents=True, exist_ok=True)
    examples = []
    programs: list[Example] = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        driver = start_browser(tmp / "profile")
        try:
            for name, summary in examples_list():
                if args.only and name not in args.only:
                    continue
                print(name, flush=True)
                examples.append(make_example(driver, name, summary, tmp))
            for name in () if args.no_programs else PROGRAMS:
                if args.only and name not in args.only:
                    continue
                print(name, flush=True)
                try:
                    programs.append(make_program(driver, name, tmp))
                except Exception:  # noqa: BLE001 - report it and make the rest
                    print(f"  FAILED {name}:\n{traceback.format_exc()}", file=sys.stderr)
        finally:
            driver.quit()
    made = [s for ex in examples + programs for s in ex.shots.values()]
    expected = sum(len(LEVELS) * bool(ex.detail) + 1 for ex in examples) + sum(
        ex.tried for ex in programs)
    expected += sum(1 for name in PROGRAMS if not args.no_programs
                    and (not args.only or name in args.only)
                    and name not in {ex.name for ex in programs})  # a program that failed
    total = sum(p.stat().st_size for p in OUT.glob("*.png"))
    print(f"{len(made)} of {expected} pictures made; docs/images/gallery/ holds "
          f"{total / 1e6:.2f} MB")
    if not args.only:
        write_doc(examples, programs)
        print(f"wrote {DOC.relative_to(ROOT)}")
    return 0 if len(made) == expected else 1


if __name__ == "__main__":
    sys.exit(main())
