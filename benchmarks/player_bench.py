"""How fast the HTML step player is in a real browser, at ~200 and at ~20,000 steps.

For each size: a chain ``y = y + 0.5`` / ``y = y * 1.001`` traced with gradviz (about 3.5 engine
steps per op) is written as a player page, opened in headless Chromium (Debian's ``chromium`` and
``chromedriver``, as the browser tests use), and timed:

* load: from navigation start to the end of the ``load`` event (the player builds its page in
  an inline script, so this includes parsing the data and showing the first step);
* per step: the mean time of one ``→`` (next) then of one ``←`` (previous) key, each followed by
  a forced style and layout, over several hundred steps in the middle of the run.

The ratio 20,000 / 200 is what matters: moving one step must cost the same however long the run
is (docs/player.md). Prints only; no test times anything. Run:
``python benchmarks/player_bench.py [--json]`` (``make bench`` runs it when Chromium is there).
"""

from __future__ import annotations

import json
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import gradviz as torch  # noqa: E402
from gradviz.render.html import player_html  # noqa: E402

SIZES = {"200 steps": 57, "20,000 steps": 5_720}  # ops in the chain -> about this many steps
STEPS_TIMED = 300
ROUNDS = 3

# One timed walk: `n` steps forward from `start`, then `n` back, each key followed by a forced
# layout (offsetHeight), as a learner's key press is followed by a frame.
_WALK = """
const [n, start, done] = [arguments[0], arguments[1], arguments[arguments.length - 1]];
const root = document.querySelector('.gv-player');
const key = (k) => document.dispatchEvent(new KeyboardEvent('keydown', {key: k, bubbles: true}));
location.hash = '#run=1&step=' + start;
setTimeout(() => {
  const times = {next: [], prev: []};
  for (const [dir, k] of [['next', 'ArrowRight'], ['prev', 'ArrowLeft']]) {
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      key(k);
      void root.offsetHeight;
      times[dir].push(performance.now() - t0);
    }
  }
  done({times: times, step: Number(root.dataset.step)});
}, 300);
"""


def chain_trace(n_ops: int):
    with torch.trace() as tr:
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = x
        for i in range(n_ops):
            y = y * 1.001 if i % 2 else y + 0.5
        y.sum().backward()
    return tr


def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1400,1000"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")
                                              or "/usr/bin/chromedriver"), options=options)
    driver.set_script_timeout(3600)
    driver.command_executor.client_config.timeout = 3600
    return driver


def measure(driver, path: Path, n_steps: int) -> dict:
    loads, nexts, prevs = [], [], []
    for _ in range(ROUNDS):
        driver.get("about:blank")
        driver.get(path.as_uri())
        loads.append(driver.execute_script(
            "const e = performance.getEntriesByType('navigation')[0];"
            "return e.loadEventEnd - e.startTime;"))
        n = min(STEPS_TIMED, n_steps // 2 - 1)
        out = driver.execute_async_script(_WALK, n, max(0, n_steps // 2 - n // 2))
        nexts.append(statistics.mean(out["times"]["next"]))
        prevs.append(statistics.mean(out["times"]["prev"]))
    return {"steps": n_steps, "load_ms": statistics.median(loads),
            "next_ms": statistics.median(nexts), "prev_ms": statistics.median(prevs)}


def main(argv: list[str]) -> int:
    global STEPS_TIMED, ROUNDS
    if "--steps" in argv:
        STEPS_TIMED = int(argv[argv.index("--steps") + 1])
    if "--rounds" in argv:
        ROUNDS = int(argv[argv.index("--rounds") + 1])
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        pages = {}
        for label, n_ops in SIZES.items():
            tr = chain_trace(n_ops)
            path = Path(tmp) / f"player-{n_ops}.html"
            path.write_text(player_html(tr), encoding="utf-8")
            pages[label] = (path, len(tr.run().steps))
        driver = browser()
        try:
            for label, (path, n_steps) in pages.items():
                print(f"measuring {label} ...", file=sys.stderr, flush=True)
                results[label] = measure(driver, path, n_steps)
        finally:
            driver.quit()
    small, big = results["200 steps"], results["20,000 steps"]
    results["ratio"] = {k: big[k] / small[k] for k in ("load_ms", "next_ms", "prev_ms")}
    if "--json" in argv:
        print(json.dumps(results))
        return 0
    print("| player (headless Chromium) | steps | load | next step | previous step |")
    print("| --- | --- | --- | --- | --- |")
    for label in SIZES:
        r = results[label]
        print(f"| chain, {label} | {r['steps']} | {r['load_ms']:.0f} ms | {r['next_ms']:.2f} ms "
              f"| {r['prev_ms']:.2f} ms |")
    q = results["ratio"]
    print(f"| ratio 20,000 / 200 | | {q['load_ms']:.1f} | {q['next_ms']:.2f} | "
          f"{q['prev_ms']:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
