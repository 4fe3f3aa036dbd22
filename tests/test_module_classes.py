"""Each module scope's class is recorded in the trace, saved, reloaded, and names its box; what
each module took, returned and holds (``Trace.modules``) is recorded as the program had it, and
``depth`` draws modules as boxes that say so (issue #32). The backward graph is grouped by the
module whose forward made each node."""

from __future__ import annotations

import json
import re
from pathlib import Path

import gradviz as torch
import gradviz.nn as nn
from gradviz.render import draw_backward, draw_forward
from gradviz.render.collapse import scope_label
from gradviz.trace import load_trace
from gradviz.trace.model import ModuleSummary, scope_key
from gradviz_cli.runner import write_outputs


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


# -- what each module took, returned and holds -----------------------------------------------------
class _Spy:
    """The shapes each module's forward saw, taken by forward hooks in the test itself."""

    def __init__(self, model: nn.Module) -> None:
        self.seen: dict[str, tuple[list, list]] = {}
        for name, m in model.named_modules():
            m.register_forward_hook(self._hook(name))

    def _hook(self, name: str):  # noqa: ANN202
        def hook(module: nn.Module, args: tuple, output: torch.Tensor) -> None:
            self.seen[name] = ([tuple(a.shape) for a in args], [tuple(output.shape)])
        return hook


def test_each_modules_shapes_and_parameters_are_what_the_program_had() -> None:
    torch.manual_seed(0)
    net = Net()
    spy = _Spy(net)
    with torch.trace() as tr:
        for batch in (5, 2):  # the last call's shapes are kept; every call is counted
            net(torch.rand(batch, 1, 4, 4)).sum().backward()
    path = {"Net": "", "Net/features": "features", "Net/features/features.0": "features.0",
            "Net/features/features.1": "features.1", "Net/fc": "fc"}
    assert tr.modules.keys() == path.keys()
    for key, name in path.items():
        module = net.get_submodule(name) if name else net
        inputs, outputs = spy.seen[name]
        assert tr.modules[key] == ModuleSummary(
            inputs=inputs, outputs=outputs, calls=2,
            parameters=sum(p.numel() for p in module.parameters()))
    assert tr.modules["Net"].parameters == 2 * 1 * 9 + 2 + 32 * 3 + 3


def test_a_tied_weight_counts_once_and_tuples_give_each_tensor() -> None:
    class Tied(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.emb = nn.Embedding(10, 4)
            self.out = nn.Linear(4, 10, bias=False)
            self.out.weight = self.emb.weight
            self.rnn = nn.GRU(4, 4, batch_first=True)

        def forward(self, idx: torch.Tensor) -> torch.Tensor:
            h, _ = self.rnn(self.emb(idx))
            return self.out(h)

    model = Tied()
    with torch.trace() as tr:
        model(torch.tensor([[1, 2, 3]])).sum().backward()
    assert tr.modules["Tied"].parameters == 40 + sum(p.numel() for p in model.rnn.parameters())
    # GRU returns (output, h_n): both shapes, in order
    assert tr.modules["Tied/rnn"].outputs == [(1, 3, 4), (1, 1, 4)]


def test_module_summaries_survive_saving_and_older_files_without_them_load(
        tmp_path: Path) -> None:
    tr = _traced()
    path = tmp_path / "trace.json"
    tr.save(path)
    assert load_trace(path).modules == tr.modules
    doc = json.loads(path.read_text(encoding="utf-8"))
    del doc["modules"]  # as written before the field existed
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert load_trace(path).modules == {}
    assert "parameters" not in draw_forward(load_trace(path), depth=1).source


# -- the module-level view (depth) ----------------------------------------------------------------
def test_depth_draws_each_module_below_it_as_a_box_saying_what_it_did() -> None:
    tr = _traced()
    for draw in (draw_forward, draw_backward):
        boxes = {g.title: g for g in draw(tr, depth=1).plan.groups.values()}
        assert set(boxes) == {"features: Sequential", "fc: Linear"}
        src = draw(tr, depth=1).source
        assert "features: Sequential\\n(2, 1, 4, 4) → (2, 2, 4, 4)\\n20 parameters" in src
        assert "fc: Linear\\n(2, 32) → (2, 3)\\n99 parameters" in src
        assert "a module&#x27;s box" in src  # the legend says what the lines mean
        one = draw(tr, depth=0).plan.groups.values()
        assert [g.title for g in one] == ["Net"]
        deeper = {g.title for g in draw(tr, depth=2).plan.groups.values()}
        assert deeper == {"features.0: Conv2d", "features.1: ReLU"}


def test_the_backward_graph_is_grouped_by_the_module_whose_forward_made_each_node() -> None:
    tr = _traced()
    src = draw_backward(tr).source
    nodes = {n.name: nid for nid, n in tr.nodes.items()}
    assert nodes["ConvolutionBackward0"] in _cluster_nodes(src, "features.0: Conv2d")
    assert nodes["ReluBackward0"] in _cluster_nodes(src, "features.1: ReLU")
    assert nodes["AddmmBackward0"] in _cluster_nodes(src, "fc: Linear")
    # a parameter's AccumulateGrad sits with the module its gradient comes from
    fc_weight = next(n.id for n in tr.nodes.values() if n.variable is not None
                     and tr.tensors[n.variable].name == "fc.weight")
    assert fc_weight in _cluster_nodes(src, "fc: Linear")
    # the loss's own node (made outside every module) is in no cluster
    assert _nesting(src, nodes["SumBackward0"]) == 0
    assert _nesting(src, nodes["AddmmBackward0"]) == 2  # Net, then fc


def _nesting(src: str, name: str) -> int:
    """How many DOT subgraphs the node ``name`` is declared inside."""
    depth = 0
    for line in src.splitlines():
        s = line.strip()
        if s.startswith("subgraph"):
            depth += 1
        elif s == "}":
            depth -= 1
        elif s.startswith(f"{name} ["):
            return depth
    raise AssertionError(f"{name} is not drawn")


def test_the_cli_writes_both_drawings_at_the_depth_asked(tmp_path: Path) -> None:
    tr = _traced()
    write_outputs(tr, tmp_path, ("dot",), depth=1)
    for name in ("forward.dot", "backward.dot"):
        text = (tmp_path / name).read_text(encoding="utf-8")
        assert "fc: Linear\\n(2, 32) → (2, 3)\\n99 parameters" in text, name
