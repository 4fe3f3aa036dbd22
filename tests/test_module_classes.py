"""Each module scope's class is recorded in the trace, saved, reloaded, and names its box."""

from __future__ import annotations

import json
import re
from pathlib import Path

import gradviz as torch
import gradviz.nn as nn
from gradviz.render import draw_backward, draw_forward
from gradviz.render.collapse import scope_label
from gradviz.trace import load_trace
from gradviz.trace.model import scope_key


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 2, 3, padding=1), nn.ReLU())
        self.fc = nn.Linear(2 * 4 * 4, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.features(x).flatten(1))


def _traced() -> torch.Trace:
    torch.manual_seed(0)
    net = Net()
    with torch.trace() as tr:
        net(torch.rand(2, 1, 4, 4)).sum().backward()
    return tr


def test_the_recorder_keeps_each_scopes_class_by_its_whole_path() -> None:
    tr = _traced()
    assert tr.module_classes == {
        "Net": "Net",
        "Net/features": "Sequential",
        "Net/features/features.0": "Conv2d",
        "Net/features/features.1": "ReLU",
        "Net/fc": "Linear",
    }
    # every op's scope has its class
    assert all(scope_key(op.scope) in tr.module_classes for op in tr.ops if op.scope)


def test_module_classes_survive_saving_and_older_files_without_them_load(tmp_path: Path) -> None:
    tr = _traced()
    path = tmp_path / "trace.json"
    tr.save(path)
    assert load_trace(path).module_classes == tr.module_classes
    doc = json.loads(path.read_text(encoding="utf-8"))
    del doc["module_classes"]  # as written before the field existed
    path.write_text(json.dumps(doc), encoding="utf-8")
    old = load_trace(path)
    assert old.module_classes == {}
    clusters = re.findall(r'label="?([^"\]\n]+)"? .*style="rounded,dashed"',
                          draw_forward(old).source)
    assert "features.0" in clusters and not any(":" in c for c in clusters)


def test_clusters_and_folded_scopes_are_labelled_with_the_class() -> None:
    tr = _traced()
    src = draw_forward(tr).source
    for label in ("features.0: Conv2d", "features.1: ReLU", "features: Sequential",
                  "fc: Linear"):
        assert f'label="{label}"' in src
    assert 'label=Net ' in src or 'label="Net"' in src  # the outermost: its class, once
    assert "Net: Net" not in src
    folded = draw_backward(tr, max_nodes=6)
    titles = {g.title for g in folded.plan.groups.values() if g.kind == "scope"}
    assert titles == {"fc: Linear", "features: Sequential"}


def test_scope_label_stars_the_index_not_the_class() -> None:
    classes = {"Net/layers.3": "Conv2d"}
    assert scope_label(("Net", "layers.3"), classes) == "layers.3: Conv2d"
    assert scope_label(("Net", "layers.3"), classes, star=True) == "layers.*: Conv2d"
    assert scope_label(("Net", "layers.3"), {}) == "layers.3"


def _cluster_nodes(src: str, label: str) -> set[str]:
    """The node names drawn directly in the DOT cluster labelled ``label`` (not in nested ones)."""
    lines = src.splitlines()
    start = next(i for i, line in enumerate(lines) if f'label="{label}"' in line)
    depth, names = 1, set()
    for line in lines[start + 1:]:
        s = line.strip()
        if s.startswith("subgraph"):
            depth += 1
        elif s == "}":
            depth -= 1
            if depth == 0:
                break
        elif depth == 1 and "[" in s and "->" not in s and not s.startswith(("graph", "node")):
            names.add(s.split(" ", 1)[0])
    return names


def test_a_result_read_by_the_next_module_is_drawn_outside_the_module_that_made_it() -> None:
    tr = _traced()
    src = draw_forward(tr).source
    conv = next(op for op in tr.ops if op.name == "convolution")
    (out,) = conv.outputs
    assert conv.id in _cluster_nodes(src, "features.0: Conv2d")
    assert out not in _cluster_nodes(src, "features.0: Conv2d")
    # ... in the scope it goes to: ReLU is in the same Sequential
    assert out in _cluster_nodes(src, "features: Sequential")
