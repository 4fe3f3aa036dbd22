"""PyTorch's ``torch.autograd.graph``: the backward graph's public names, in one import path.

The graph is cut by concept into files a learner opens on purpose; this module only gathers
their names, so that ``gradviz.autograd.graph.X`` works as ``torch.autograd.graph.X`` does (and
as it did when all of it lived here):

* ``node.py``: ``Node``, ``Edge``, ``GraphRoot``, ``GradientEdge``, ``gradient_edge``,
  ``collect_next_edges``, ``set_history`` (NOTE [flat edges]);
* ``accumulate_grad.py``: ``AccumulateGrad`` and its rule for taking a gradient without a copy;
  ``retain_grad``;
* ``saved_variable.py``: ``SavedVariable``, ``SavedTensor``, ``save_value``,
  ``increment_version``;
* ``saved_tensors_hooks.py``: ``saved_tensors_hooks``, ``save_on_cpu``,
  ``disable_saved_tensors_hooks`` (NOTE [saved tensor hooks]);
* ``hooks.py``: ``RemovableHandle`` and what the engine checks of a hook's result;
* ``multi_grad_hook.py``: ``register_multi_grad_hook``, ``will_engine_execute_node``.
"""

from __future__ import annotations

from gradviz.autograd.accumulate_grad import AccumulateGrad, copied_grad, retain_grad
from gradviz.autograd.hooks import (
    HookDict,
    RemovableHandle,
    add_hook,
    checked_hook_result,
    checked_hook_results,
    hook_name,
)
from gradviz.autograd.multi_grad_hook import (
    RUNNING,
    register_multi_grad_hook,
    will_engine_execute_node,
)
from gradviz.autograd.node import (
    NO_EDGE,
    Edge,
    GradientEdge,
    GraphRoot,
    Node,
    NodeHooks,
    collect_next_edges,
    edge_pair,
    get_gradient_edge,
    gradient_edge,
    input_edge,
    meta_gradients,
    move_retains_grad,
    next_sequence_nr,
    set_history,
)
from gradviz.autograd.saved_tensors_hooks import (
    HOOKED_SAVES,
    ON_FIRST_PACK,
    disable_saved_tensors_hooks,
    save_on_cpu,
    saved_tensors_hooks,
)
from gradviz.autograd.saved_variable import (
    DETACHED_MESSAGE,
    FREED_MESSAGE,
    SavedTensor,
    SavedVariable,
    SavedVariableList,
    increment_version,
    save_value,
)

# The names these had when they lived here (gradviz.nn's modules imported them).
_HookDict = HookDict
_add_hook = add_hook

__all__ = ["Node", "AccumulateGrad", "GraphRoot", "Edge", "RemovableHandle", "SavedVariable",
           "gradient_edge", "get_gradient_edge", "collect_next_edges", "edge_pair",
           "next_sequence_nr", "set_history", "move_retains_grad", "SavedVariableList",
           "save_value", "NO_EDGE", "FREED_MESSAGE", "DETACHED_MESSAGE", "GradientEdge",
           "input_edge", "saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks",
           "register_multi_grad_hook", "increment_version", "SavedTensor", "copied_grad",
           # not in the list before, imported from here all the same
           "NodeHooks", "HookDict", "add_hook", "hook_name", "checked_hook_result",
           "checked_hook_results", "retain_grad", "meta_gradients", "will_engine_execute_node",
           "RUNNING", "HOOKED_SAVES", "ON_FIRST_PACK"]
