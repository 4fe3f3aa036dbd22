"""LBFGS, Rprop, ASGD and the schedulers PolynomialLR, CyclicLR and CosineAnnealingWarmRestarts:
torch 2.13's numbers, defaults, state layout, warnings and error texts.

The expectations below were produced by torch 2.13.0 and are hard-coded so that this file runs
without torch; tests/parity/test_optim_extra_parity.py derives them again from torch and runs
both libraries side by side (the optimizers for 20 steps, the schedulers for 50).

``TORCH_RUNS``: the fixed float64 problem of tests/test_optim_more.py (``W`` 2x3, ``b`` 2, loss
``0.5 * ||W x + b - y||^2 + 0.25 * sum(W^4)``), stepped with a closure; each row is (optimizer,
hyperparameters, steps, the losses step() returned, W after, b after, the state of ``b``, or of
``W`` for LBFGS, which keeps its global state with the first parameter). The LBFGS rows stop
short of the minimum: there its history holds differences of nearly equal vectors, which
round differently in any two libraries.
"""

from __future__ import annotations

import copy
import pickle
import warnings

import numpy as np
import pytest

import gradviz
from gradviz import optim
from gradviz.optim import lr_scheduler as S

W0 = [[0.3, -0.2, 0.1], [0.05, 0.4, -0.3]]
B0 = [0.1, -0.1]
X = [0.5, -1.5, 2.0]
Y = [1.0, -2.0]
NAMES = ["LBFGS", "Rprop", "ASGD"]


def _train(name: str, kwargs: dict, steps: int, dtype: str = "float64", lib=gradviz):  # noqa: ANN001, ANN202
    """``steps`` closure steps of ``lib.optim.<name>`` on the fixed problem; returns the
    losses step() returned, W, b and the optimizer."""
    W = lib.tensor(W0, dtype=getattr(lib, dtype), requires_grad=True)
    b = lib.tensor(B0, dtype=getattr(lib, dtype), requires_grad=True)
    x, y = lib.tensor(X, dtype=getattr(lib, dtype)), lib.tensor(Y, dtype=getattr(lib, dtype))
    opt = getattr(lib.optim, name)([W, b], **kwargs)

    def closure():  # noqa: ANN202
        opt.zero_grad()
        r = W @ x + b - y
        loss = (r * r).sum() * 0.5 + (W**4).sum() * 0.25
        loss.backward()
        return loss

    losses = [opt.step(closure).item() for _ in range(steps)]
    return losses, W, b, opt


def plain(value: object) -> object:
    """A state value as plain Python data: a tensor as its list (a 0-dim one as a number),
    lists and dicts entry by entry (an explicit stack: no recursion)."""
    out: list[object] = [None]
    stack: list[tuple[object, object, object]] = [(value, out, 0)]
    while stack:
        item, into, key = stack.pop()
        if hasattr(item, "tolist"):
            into[key] = item.tolist()  # type: ignore[index]
        elif isinstance(item, dict):
            into[key] = fields = dict.fromkeys(item)  # type: ignore[index]
            stack.extend((v, fields, k) for k, v in item.items())
        elif isinstance(item, list):
            into[key] = parts = [None] * len(item)  # type: ignore[index]
            stack.extend((v, parts, i) for i, v in enumerate(item))
        else:
            into[key] = item  # type: ignore[index]
    return out[0]


def run_row(lib, row: tuple) -> tuple:  # noqa: ANN001
    """A TORCH_RUNS row recomputed in ``lib``."""
    name, kwargs, steps = row[:3]
    losses, W, b, opt = _train(name, kwargs, steps, lib=lib)
    state = opt.state[W if name == "LBFGS" else b]
    return name, kwargs, steps, losses, W.tolist(), b.tolist(), plain(state)


def assert_close_tree(got: object, want: object, rtol: float = 1e-12, atol: float = 1e-14) -> None:
    """The same nested structure (dict keys in the same order, list lengths, None/int/float
    kinds) with floats equal to ``rtol``, or ``atol`` apart: LBFGS's history holds differences
    of close gradients, whose last bits differ with the order of summation."""
    stack = [(got, want, "")]
    while stack:
        g, w, where = stack.pop()
        if isinstance(w, dict):
            assert isinstance(g, dict) and list(g) == list(w), where
            stack.extend((g[k], w[k], f"{where}.{k}") for k in w)
        elif isinstance(w, list):
            assert isinstance(g, list) and len(g) == len(w), where
            stack.extend((gi, wi, f"{where}[{i}]") for i, (gi, wi) in enumerate(zip(g, w)))
        elif isinstance(w, float):
            assert type(g) is float, where
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=where)
        else:
            assert type(g) is type(w) and g == w, where


# torch 2.13.0
TORCH_RUNS = [('Rprop', {'lr': 0.05}, 4,
               [0.3049390624999999, 0.13167031250000003, 0.044147832500000005, 0.06785641420075],
               [[0.32499999999999996, -0.225, 0.12500000000000003], [-0.132, 0.582, -0.482]],
               [0.2, -0.28200000000000003],
               {'step': 4.0, 'prev': [-0.09999999999999998, 0.0], 'step_size': [0.05, 0.036]}),
              ('Rprop',
               {'lr': 0.1, 'etas': (0.3, 1.5), 'step_sizes': (0.01, 0.12), 'maximize': True}, 4,
               [0.3049390624999999, 1.0345390625000002, 2.5782259025000003, 4.848276102499999],
               [[-0.16, 0.26, -0.36], [0.51, -0.05999999999999994, 0.16]], [-0.36, 0.36],
               {'step': 4.0, 'prev': [1.95, -2.425], 'step_size': [0.12, 0.12]}),
              ('ASGD', {'lr': 0.05}, 3,
               [0.3049390624999999, 0.13640530732330042, 0.0738035369677098],
               [[0.30847142061830873, -0.2365582578273798, 0.15049504602356803],
                [0.012853074548995733, 0.4980472005838529, -0.44107608639691853]],
               [0.12539004755946043, -0.17427427164803963],
               {'step': 3.0,
                'eta': 0.04999943822622299,
                'mu': 1.0,
                'ax': [0.12539004755946043, -0.17427427164803963]}),
              ('ASGD', {'lr': 0.05, 'lambd': 0.1, 'alpha': 0.5, 't0': 1, 'weight_decay': 0.1}, 4,
               [0.3049390624999999, 0.14294631315223985, 0.08105815602097335,
                0.056604380754244246],
               [[0.2977930251290116, -0.23483649662840658, 0.15531314648286018],
                [0.005101009667932873, 0.4946081800946806, -0.4487555143466849]],
               [0.12591250633270565, -0.18193005678581764],
               {'step': 4.0,
                'eta': 0.04950737580657005,
                'mu': 0.3333333432674408,
                'ax': [0.12449672854434958, -0.17697639357602113]}),
              ('LBFGS', {'lr': 0.1, 'max_iter': 3, 'history_size': 4}, 2,
               [0.3049390624999999, 0.18813140344946727],
               [[0.3031120209386865, -0.21843659954519232, 0.12617716987292674],
                [0.030072406416695164, 0.44720230596464267, -0.3721797842857043]],
               [0.1132352800905599, -0.13986358948854732],
               {'func_evals': 6,
                'n_iter': 4,
                'al': [-0.012351343248291893, -0.026389854978561892, 9.003275661456795, None],
                'd': [-0.0002930079563930558, -0.031364218823946154, 0.048018953301807187,
                      -0.04006683227866538, 0.0695614337867485, -0.12738745225209336,
                      0.024660702008000666, -0.08020398356395421],
                't': 0.1,
                'old_dirs': [[0.02001616343005884, -0.05932897580210367, 0.07816976958981586,
                              -0.05572950735468951, 0.17795601956106588, -0.23164923718486663,
                              0.03891009609056195, -0.11136106357772801],
                             [0.010486677212249232, -0.03137669280031713, 0.041346904439660326,
                              -0.028377227747073352, 0.09065238341291804, -0.11871254320791347,
                              0.02056443376605821, -0.05671360843290563],
                             [0.009374571504535967, -0.028335421185708337, 0.03735279400198416,
                              -0.02550617013173373, 0.0813011007223261, -0.1071871694712434,
                              0.018566156479991047, -0.05098029629917877]],
                'old_stps': [[0.0020639726207713565, -0.007729366855337632, 0.01050941160984599,
                              -0.007637225220481769, 0.021555877319994737, -0.029969724891404505,
                              0.005265236277477951, -0.015269185204686063],
                             [0.0007451077803531251, -0.004016277255158537, 0.005656776964234892,
                              -0.004195254084713835, 0.010220432480957446, -0.015446523718230982,
                              0.0028539100646739306, -0.008392285232650676],
                             [0.0003322413332013364, -0.0035545335523015317, 0.005209085968665139,
                              -0.004088431050242693, 0.00846985278501559, -0.014024790450859519,
                              0.002650063547607944, -0.008181720694815145]],
                'ro': [69.29646326588272, 264.4369623450386, 326.70322425090336],
                'H_diag': 0.12764723870129202,
                'prev_flat_grad': [-0.05812258785315591, 0.2479589102118707, -0.34213053196853943,
                                   0.2530120947665033, -0.6735904963036898, 0.9654510501359763,
                                   -0.17195931366338868, 0.5059450316901875],
                'prev_loss': 0.15904236804465427}),
              ('LBFGS', {'lr': 0.3, 'max_iter': 5, 'history_size': 2}, 2,
               [0.3049390624999999, 0.03915981635958048],
               [[0.27006636658855077, -0.2399019468984013, 0.18135467498942526],
                [-0.046974559381921674, 0.45370274143166833, -0.4862868298420967]],
               [0.14504267911558924, -0.293973264886837],
               {'func_evals': 10,
                'n_iter': 10,
                'al': [-1.4472140467028258, 3.8035982892900377],
                'd': [-0.05056653200129311, 0.009386070708106844, 0.020237214885341373,
                      -0.06421550520391549, -0.08045966489858605, -0.005780138611213274,
                      0.01573114071142119, -0.12849057386208657],
                't': 0.3,
                'old_dirs': [[0.0022433281249022927, -0.010531675752218033, 0.014301406039519723,
                              -0.009363957959632654, 0.02372422669746717, -0.04077581205814429,
                              0.007002038122838616, -0.01872011101106219],
                             [0.0011831277145848487, -0.00940844147422044, 0.013102606460394274,
                              -0.008782363795412255, 0.018138881919573968, -0.03782424577272041,
                              0.006360632308237135, -0.017531802089944648]],
                'old_stps': [[-0.004797917373768919, -0.00016104235736286767,
                              0.0034570510837719113, -0.007189038676281124, -0.005987061071900598,
                              -0.004862762279318292, 0.0022453311061347483,
                              -0.014380658722135804],
                             [-0.00795842522510167, 0.000747442308565481, 0.004238928292327054,
                              -0.010824873587877619, -0.01162563428947223, -0.003951417914904813,
                              0.0029831517989821416, -0.021654980900404453]],
                'ro': [2227.8393555464363, 2121.4763631528535],
                'H_diag': 0.19269149359799015,
                'prev_flat_grad': [0.021999346154360232, -0.010676728329218444,
                                   0.0005558111717842333, 0.02240493099836805, 0.0418275321617593,
                                   -0.024063998778459036, -0.0024148267894720243,
                                   0.04485241549208374],
                'prev_loss': 0.030583024333296953}),
              ('LBFGS', {'max_iter': 3, 'history_size': 3, 'line_search_fn': 'strong_wolfe'}, 2,
               [0.3049390624999999, 0.03694021693410587],
               [[0.25922982660046695, -0.23827430307517425, 0.184701762496787],
                [-0.060200224224469, 0.43054687026344474, -0.501403843616631]],
               [0.14741637563543925, -0.32035749218908555],
               {'func_evals': 6,
                'n_iter': 4,
                'al': [0.0015528515929666877, 0.1393288983624182, 8.415116567369534],
                'd': [-0.04724499191211583, 0.008734636524278043, 0.016957049627279286,
                      -0.05664957728272357, -0.0843837735908031, -0.02126378538575884,
                      0.012854571322439955, -0.11329763715008138],
                't': 1,
                'old_dirs': [[0.20051539748526356, -0.5969730447335063, 0.7858289179467597,
                              -0.556948659676288, 1.8396589308807525, -2.4158944653387757,
                              0.3891009609056205, -1.1136106357772804],
                             [-0.07625076589443278, 0.2250913862060271, -0.29593037877850553,
                              0.22816381299865562, -0.7772384166783409, 1.0197054521055566,
                              -0.14596405505423315, 0.45629094208294196],
                             [-0.0005774038458018112, -0.0008922737810351834,
                              0.0014256074046098766, -0.004595828462202668, 0.009882074407347646,
                              -0.0205223447721765, 0.0006651428560970896, -0.009191567058654426]],
                'old_stps': [[0.020639726207713562, -0.07729366855337631, 0.1050941160984599,
                              -0.07637225220481769, 0.21555877319994735, -0.29969724891404503,
                              0.052652362774779506, -0.1526918520468606],
                             [-0.010968973918230847, 0.0297100162511493, -0.03848629617678716,
                              0.026925714382984196, -0.09576475510192613, 0.12267045113311485,
                              -0.018941951364819378, 0.05384004997233073],
                             [-0.003195933776899866, 0.0005747127027747411, 0.0011368929478349848,
                              -0.004104109119911943, -0.004863374243773349, -0.003113260449942073,
                              0.0008513929030391751, -0.008208052964474251]],
                'ro': [0.6727120422468291, 3.9697040934650016, 8798.368674682033],
                'H_diag': 0.18097369497735652,
                'prev_flat_grad': [0.025687227745029028, -0.005773932308514598,
                                   -0.007675853427135791, 0.02924432486016481, 0.04880258860975925,
                                   0.006288641994604216, -0.006197951292515436,
                                   0.05848873924700704],
                'prev_loss': 0.03592697508099793}),
              ('LBFGS', {'lr': 0.3, 'max_iter': 6, 'max_eval': 4, 'history_size': 3}, 2,
               [0.3049390624999999, 0.05296276377252099],
               [[0.30147153055257025, -0.24256140178867275, 0.1641534264381432],
                [-0.003802708836973097, 0.49873595248070707, -0.46971852735800407]],
               [0.13300394790310072, -0.20760153766453487],
               {'func_evals': 8,
                'n_iter': 6,
                'al': [-0.061203228782319256, -0.1190735844588751, 2.4899152390175177],
                'd': [-0.008021553872695989, -0.004676161466355411, 0.01239631977018879,
                      -0.01718143906817992, -0.0016629674134037555, -0.025576600078272105,
                      0.007105209393496342, -0.03436911511250061],
                't': 0.3,
                'old_dirs': [[0.013454177337255329, -0.04142368936842154, 0.054643152894472,
                              -0.035552607898699726, 0.1137995066979205, -0.15301367239294694,
                              0.02707107747875004, -0.071095169703842],
                             [0.009326549472993786, -0.029549892817078427, 0.03905654611637359,
                              -0.02529279355220551, 0.07967090274659472, -0.10956835844091467,
                              0.019321994249255403, -0.05058231108837408],
                             [0.00649819664866904, -0.02141842389497238, 0.028391398255901132,
                              -0.018354899361455, 0.056452234286900785, -0.0798792504929709,
                              0.014024474816253796, -0.036709212046047046]],
                'old_stps': [[-0.00028765156067237207, -0.005012845131671004, 0.007824015823120227,
                              -0.006631265005608759, 0.010051000846533873, -0.019718750586050243,
                              0.004047603915339264, -0.01326553475913623],
                             [-0.0011881350234674156, -0.0033564856871798436, 0.005879167129164895,
                              -0.005795667301273015, 0.005170480436239914, -0.014167287330899014,
                              0.0031229989718894505, -0.011594182121579913],
                             [-0.0018443551582111926, -0.0022079597545375043, 0.004563416909863316,
                              -0.005311281336974897, 0.0018638504250665395, -0.010316446912205493,
                              0.002507878943826659, -0.010624901915548747]],
                'ro': [164.45221058176136, 325.1675601251283, 618.4873715732688],
                'H_diag': 0.12675442702925868,
                'prev_flat_grad': [0.010769789645973134, 0.03784742228990373, -0.06503398838383628,
                                   0.06522085226221627, -0.0712355395981256, 0.16224310287839394,
                                   -0.03458172552043637, 0.13044169958481877],
                'prev_loss': 0.03917207144799381})]

# torch 2.13.0's defaults, foreach/capturable/differentiable included as torch writes them.
TORCH_DEFAULTS = {'LBFGS': {'lr': 1,
                            'max_iter': 20,
                            'max_eval': 25,
                            'tolerance_grad': 1e-07,
                            'tolerance_change': 1e-09,
                            'history_size': 100,
                            'line_search_fn': None},
                  'Rprop': {'lr': 0.01,
                            'etas': (0.5, 1.2),
                            'step_sizes': (1e-06, 50),
                            'foreach': None,
                            'maximize': False,
                            'differentiable': False,
                            'capturable': False},
                  'ASGD': {'lr': 0.01,
                           'lambd': 0.0001,
                           'alpha': 0.75,
                           't0': 1000000.0,
                           'weight_decay': 0,
                           'foreach': None,
                           'maximize': False,
                           'differentiable': False,
                           'capturable': False}}
STATE_KEYS = {
    "LBFGS": [["func_evals", "n_iter", "al", "d", "t", "old_dirs", "old_stps", "ro", "H_diag",
               "prev_flat_grad", "prev_loss"]],
    "Rprop": [["step", "prev", "step_size"], ["step", "prev", "step_size"]],
    "ASGD": [["step", "eta", "mu", "ax"], ["step", "eta", "mu", "ax"]]}


@pytest.mark.parametrize("row", TORCH_RUNS, ids=[f"{r[0]}{r[1]}" for r in TORCH_RUNS])
def test_losses_parameters_and_state_are_torchs(row: tuple) -> None:
    assert_close_tree(list(run_row(gradviz, row)), list(row))


@pytest.mark.parametrize("name", NAMES)
def test_defaults_and_state_keys(name: str) -> None:
    W = gradviz.zeros(2, 3, requires_grad=True)
    b = gradviz.zeros(2, requires_grad=True)
    opt = getattr(optim, name)([W, b])
    assert opt.defaults == TORCH_DEFAULTS[name]
    assert list(opt.defaults) == list(TORCH_DEFAULTS[name])
    assert opt.param_groups[0] == {"params": [W, b], **TORCH_DEFAULTS[name]}

    def closure():  # noqa: ANN202
        opt.zero_grad()
        loss = ((W - 1) ** 2).sum() + ((b + 1) ** 2).sum()
        loss.backward()
        return loss

    opt.step(closure)
    opt.step(closure)
    sd = opt.state_dict()
    assert [list(s) for s in sd["state"].values()] == STATE_KEYS[name]
    assert repr(opt).startswith(f"{name} (\nParameter Group 0\n")


def kinds(state: dict) -> dict:
    """Each state entry's kind: "Tensor", or its Python type's name (list entries each)."""
    def kind(v: object) -> str:
        return "Tensor" if hasattr(v, "tolist") else type(v).__name__

    return {k: [kind(x) for x in v] if isinstance(v, list) else kind(v) for k, v in state.items()}


def lbfgs_state_kinds(lib) -> tuple[dict, int, int, int]:  # noqa: ANN001
    """LBFGS with the strong-Wolfe search after one step on a quartic: the kinds of its state
    entries, func_evals, n_iter and the parameter's version (one bump per in-place write)."""
    W = lib.tensor(W0, dtype=lib.float64, requires_grad=True)
    opt = lib.optim.LBFGS([W], line_search_fn="strong_wolfe", history_size=3)

    def closure():  # noqa: ANN202
        opt.zero_grad()
        loss = ((W - 1) ** 2).sum() + (W**4).sum()
        loss.backward()
        return loss

    version = W._version
    opt.step(closure)
    state = opt.state[W]
    return kinds(state), state["func_evals"], state["n_iter"], W._version - version


LBFGS_QUADRATIC = (45.25, 45.25, 13, [3.0000066959297023, -0.9999979721725106, 0.500001221084567],
                   13, 13, 2.314036729080812e-10, 14)  # torch 2.13.0


# torch 2.13.0: PyTorch's 0-dim tensors stay tensors, the lr (an int 1 here) stays a number.
LBFGS_STATE_KINDS = (
    {"func_evals": "int", "n_iter": "int", "al": ["Tensor", "Tensor", "Tensor"], "d": "Tensor",
     "t": "int", "old_dirs": ["Tensor", "Tensor", "Tensor"],
     "old_stps": ["Tensor", "Tensor", "Tensor"], "ro": ["Tensor", "Tensor", "Tensor"],
     "H_diag": "Tensor", "prev_flat_grad": "Tensor", "prev_loss": "float"}, 9, 8, 23)


def test_lbfgs_state_holds_torchs_kinds_of_values() -> None:
    assert lbfgs_state_kinds(gradviz) == LBFGS_STATE_KINDS


def lbfgs_quadratic(lib) -> tuple:  # noqa: ANN001
    """LBFGS with the strong-Wolfe search on a badly scaled quadratic: the loss step() returns,
    the closure's calls, w after one step, func_evals and n_iter; then a second step's loss."""
    target = lib.tensor([3.0, -1.0, 0.5], dtype=lib.float64)
    scale = lib.tensor([1.0, 4.0, 9.0], dtype=lib.float64)
    w = lib.zeros(3, dtype=lib.float64, requires_grad=True)
    opt = lib.optim.LBFGS([w], line_search_fn="strong_wolfe")
    calls = []

    def closure():  # noqa: ANN202
        opt.zero_grad()
        loss = (((w - target) * scale) ** 2).sum()
        loss.backward()
        calls.append(loss.item())
        return loss

    first = opt.step(closure).item()
    after = (len(calls), w.tolist(), opt.state[w]["func_evals"], opt.state[w]["n_iter"])
    return first, calls[0], *after, opt.step(closure).item(), opt.state[w]["func_evals"]


def test_lbfgs_minimizes_a_quadratic_with_the_line_search() -> None:
    got = lbfgs_quadratic(gradviz)
    first, first_call, n_calls, w, func_evals, n_iter, second, evals_after = got
    assert first == first_call == 9.0 + 16.0 + 20.25  # step() returns the first loss
    np.testing.assert_allclose(w, [3.0, -1.0, 0.5], atol=1e-4)
    assert func_evals == n_calls  # every closure call counts
    # torch 2.13.0's counts and numbers (a second step: one evaluation, then one iteration)
    want = LBFGS_QUADRATIC
    assert (got[:3], got[4:6], got[7]) == (want[:3], want[4:6], want[7])
    np.testing.assert_allclose(w, want[3], rtol=1e-12)
    np.testing.assert_allclose(second, want[6], rtol=1e-6)


def lbfgs_limits(lib) -> tuple:  # noqa: ANN001
    """func_evals, n_iter and the history's lengths under max_iter/history_size, and under
    max_eval (which caps the evaluations of one step)."""
    _, W, _, opt = _train("LBFGS", {"lr": 0.1, "max_iter": 3, "history_size": 2}, 4, lib=lib)
    s = opt.state[W]
    out = [s["n_iter"], s["func_evals"], len(s["old_dirs"]), len(s["ro"]), len(s["al"])]
    _, W, _, opt = _train("LBFGS", {"lr": 0.1, "max_iter": 10, "max_eval": 4}, 1, lib=lib)
    s = opt.state[W]
    out += [s["n_iter"], s["func_evals"], opt.defaults["max_eval"]]
    return tuple(out), lib.optim.LBFGS([W], max_iter=7).defaults["max_eval"]


LBFGS_LIMITS = ((8, 12, 2, 2, 2, 3, 4, 4), 8)  # torch 2.13.0


def test_lbfgs_respects_max_iter_max_eval_and_history_size() -> None:
    assert lbfgs_limits(gradviz) == LBFGS_LIMITS


def test_lbfgs_state_dict_round_trip_continues_the_same_run() -> None:
    kwargs = {"lr": 0.2, "max_iter": 3, "history_size": 3}
    _, W_ref, b_ref, _ = _train("LBFGS", kwargs, 4)
    _, W, b, opt = _train("LBFGS", kwargs, 2)
    saved = opt.state_dict()
    assert list(saved["state"]) == [0]  # the global state sits with the first parameter
    fresh = optim.LBFGS([W, b], **kwargs)
    fresh.load_state_dict(saved)
    assert fresh.state[W]["old_dirs"][0] is not opt.state[W]["old_dirs"][0]  # copies
    x, y = gradviz.tensor(X, dtype=gradviz.float64), gradviz.tensor(Y, dtype=gradviz.float64)

    def closure():  # noqa: ANN202
        fresh.zero_grad()
        r = W @ x + b - y
        loss = (r * r).sum() * 0.5 + (W**4).sum() * 0.25
        loss.backward()
        return loss

    for _ in range(2):
        fresh.step(closure)
    np.testing.assert_array_equal(W.detach().numpy(), W_ref.detach().numpy())
    np.testing.assert_array_equal(b.detach().numpy(), b_ref.detach().numpy())
    again = pickle.loads(pickle.dumps(fresh))
    assert again.state_dict()["param_groups"] == fresh.state_dict()["param_groups"]
    assert copy.deepcopy(fresh).defaults == fresh.defaults


def test_lbfgs_errors_are_torchs() -> None:
    w = gradviz.ones(2, requires_grad=True)
    with pytest.raises(ValueError, match=r"^LBFGS doesn't support per-parameter options "
                                         r"\(parameter groups\)$"):
        optim.LBFGS([{"params": [w]}, {"params": [gradviz.ones(1, requires_grad=True)]}])
    opt = optim.LBFGS([w])
    with pytest.raises(TypeError, match=r"^LBFGS.step\(\) missing 1 required positional "
                                        r"argument: 'closure'$"):
        opt.step()  # type: ignore[call-arg]
    opt = optim.LBFGS([w], line_search_fn="armijo")  # checked at the first iteration, as torch

    def closure():  # noqa: ANN202
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    with pytest.raises(RuntimeError, match=r"^only 'strong_wolfe' is supported$"):
        opt.step(closure)


def test_lbfgs_drives_a_model_as_the_style_transfer_tutorial_does() -> None:
    """PyTorch's neural style transfer tutorial: LBFGS over an *input* image, clamped inside
    the closure, with the closure's loss built from a module."""
    import gradviz as torch
    from gradviz import nn

    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(6, 4), nn.Tanh())
    for p in net.parameters():
        p.requires_grad_(False)
    target = net(torch.rand(1, 6)).detach()
    image = torch.rand(1, 6).requires_grad_(True)
    optimizer = optim.LBFGS([image])
    losses = []
    for _ in range(5):
        def closure():  # noqa: ANN202
            with torch.no_grad():
                image.clamp_(0, 1)
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(net(image), target)
            loss.backward()
            losses.append(loss.item())
            return loss

        optimizer.step(closure)
    assert losses[-1] < 1e-6 < losses[0]
    assert image.requires_grad and image.is_leaf


def rprop_by_sign(lib) -> list:  # noqa: ANN001
    """Rprop on given gradients: w, step_size and prev after each step (the second entry's
    gradient flips sign at step 2, is zero at step 4)."""
    w = lib.tensor([1.0, 1.0], dtype=lib.float64, requires_grad=True)
    opt = lib.optim.Rprop([w], lr=0.5, etas=(0.5, 2.0), step_sizes=(0.1, 0.8))
    seen = []
    for g in [[1.0, 1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 0.0], [1.0, 1.0]]:
        w.grad = lib.tensor(g, dtype=lib.float64)
        opt.step()
        s = opt.state[w]
        seen.append((w.tolist(), s["step_size"].tolist(), s["prev"].tolist()))
    return seen


RPROP_BY_SIGN = [  # torch 2.13.0
    ([0.5, 0.5], [0.5, 0.5], [1.0, 1.0]), ([-0.30000000000000004, 0.5], [0.8, 0.25], [1.0, 0.0]),
    ([-1.1, 0.25], [0.8, 0.25], [1.0, 1.0]), ([-1.1, 0.25], [0.4, 0.25], [0.0, 0.0]),
    ([-1.5, 0.0], [0.4, 0.25], [1.0, 1.0])]


def test_rprop_grows_and_shrinks_step_sizes_by_sign() -> None:
    # torch 2.13.0: the same sign doubles the size (capped at 0.8); a flip halves it, pauses
    # the entry for one step (prev = 0, so the next step is no flip); zero keeps the size
    assert rprop_by_sign(gradviz) == RPROP_BY_SIGN


def asgd_average(lib) -> tuple:  # noqa: ANN001
    """ASGD with t0=2 on a constant gradient: p, ax and mu after each step, and the dtypes."""
    w = lib.tensor([2.0], dtype=lib.float64, requires_grad=True)
    opt = lib.optim.ASGD([w], lr=0.25, lambd=0.0, t0=2)
    seen = []
    for _ in range(5):
        w.grad = lib.ones(1, dtype=lib.float64)
        opt.step()
        s = opt.state[w]
        seen.append((w.item(), s["ax"].item(), s["mu"].item(), s["eta"].item()))
    return seen, [str(s[k].dtype).split(".")[-1] for k in ("step", "eta", "mu", "ax")]


ASGD_AVERAGE = (  # torch 2.13.0
    [(1.75, 1.75, 1.0, 0.25), (1.5, 1.5, 1.0, 0.25), (1.25, 1.25, 1.0, 0.25),
     (1.0, 1.0, 0.5, 0.25), (0.75, 0.875, 0.3333333432674408, 0.25)],
    ["float32", "float32", "float32", "float64"])


def test_asgd_averages_from_t0() -> None:
    # torch 2.13.0: mu = 1 / max(1, t - t0), a float32 tensor; ax follows p while mu is 1
    assert asgd_average(gradviz) == ASGD_AVERAGE


@pytest.mark.parametrize("name", NAMES)
def test_float32_parameters_keep_their_dtype(name: str) -> None:
    kwargs = {"lr": 0.05, "max_iter": 3} if name == "LBFGS" else {"lr": 0.05}
    _, W, b, opt = _train(name, kwargs, 3, dtype="float32")
    assert W.dtype == b.dtype == gradviz.float32
    _, W64, _, _ = _train(name, kwargs, 3)
    np.testing.assert_allclose(W.detach().numpy(), W64.detach().numpy(), rtol=1e-5, atol=1e-6)
    tensors = [v for v in opt.state[W].values() if isinstance(v, gradviz.Tensor)]
    assert tensors and all(v.dtype == gradviz.float32 for v in tensors)


@pytest.mark.parametrize("name", ["Rprop", "ASGD"])
def test_state_dict_round_trip_and_copies(name: str) -> None:
    _, W, b, opt = _train(name, {"lr": 0.05}, 3)
    fresh = getattr(optim, name)([W, b], lr=0.7)
    fresh.load_state_dict(opt.state_dict())
    assert fresh.param_groups[0]["lr"] == 0.05
    for key in STATE_KEYS[name][0]:
        np.testing.assert_array_equal(fresh.state[b][key].numpy(), opt.state[b][key].numpy())
    assert fresh.state[b]["step"] is not opt.state[b]["step"]
    again = pickle.loads(pickle.dumps(opt))
    assert again.param_groups[0]["lr"] == 0.05


BAD_OPTIMIZERS = [
    (lambda lib, p: lib.optim.Rprop([p], lr=-0.1), ValueError, "Invalid learning rate: -0.1"),
    (lambda lib, p: lib.optim.Rprop([p], etas=(1.5, 2.0)), ValueError,
     "Invalid eta values: 1.5, 2.0"),
    (lambda lib, p: lib.optim.Rprop([p], etas=(0.5, 0.9)), ValueError,
     "Invalid eta values: 0.5, 0.9"),
    (lambda lib, p: lib.optim.ASGD([p], lr=-0.1), ValueError, "Invalid learning rate: -0.1"),
    (lambda lib, p: lib.optim.ASGD([p], weight_decay=-0.1), ValueError,
     "Invalid weight_decay value: -0.1"),
    (lambda lib, p: lib.optim.LBFGS([p], lr=-1.0), ValueError, "Invalid learning rate: -1.0"),
    (lambda lib, p: lib.optim.LBFGS([p], lr=lib.tensor([0.1, 0.2])), ValueError,
     "Tensor lr must be 1-element"),
    (lambda lib, p: lib.optim.Rprop([]), ValueError, "optimizer got an empty parameter list"),
    (lambda lib, p: lib.optim.ASGD([p * 2]), ValueError, "can't optimize a non-leaf Tensor"),
]


@pytest.mark.parametrize("make,error,text", BAD_OPTIMIZERS)
def test_bad_hyperparameters_raise_torchs_errors(make, error: type, text: str) -> None:  # noqa: ANN001
    with pytest.raises(error) as info:
        make(gradviz, gradviz.ones(2, requires_grad=True))
    assert str(info.value) == text


@pytest.mark.parametrize("name", ["Rprop", "ASGD"])
def test_differentiable_is_refused_plainly(name: str) -> None:
    with pytest.raises(NotImplementedError, match="neither differentiable nor capturable"):
        getattr(optim, name)([gradviz.ones(1, requires_grad=True)], differentiable=True)


def test_the_new_optimizers_are_exported_like_torchs() -> None:
    import gradviz as torch

    for name in NAMES:
        assert name in torch.optim.__all__
        assert issubclass(getattr(torch.optim, name), torch.optim.Optimizer)
    for name in ("PolynomialLR", "CyclicLR", "CosineAnnealingWarmRestarts"):
        assert name in torch.optim.lr_scheduler.__all__
        assert issubclass(getattr(torch.optim.lr_scheduler, name),
                          torch.optim.lr_scheduler.LRScheduler)


# -- schedulers ------------------------------------------------------------------------------------
def _opt(kind: str = "sgd", lib=gradviz):  # noqa: ANN001, ANN202
    """Two groups (lr 0.1 and 0.02) of SGD with momentum, or of Adam, in ``lib``."""
    a = lib.zeros(2, requires_grad=True)
    b = lib.zeros(1, requires_grad=True)
    groups = [{"params": [a]}, {"params": [b], "lr": 0.02}]
    if kind == "sgd":
        return lib.optim.SGD(groups, lr=0.1, momentum=0.9)
    return lib.optim.Adam(groups, lr=0.1)


class Shrink:
    """A callable scale_fn object: CyclicLR's state_dict saves its __dict__."""

    def __init__(self) -> None:
        self.base = 0.5

    def __call__(self, x: float) -> float:
        return self.base ** (x - 1)


# (optimizer kind, scheduler factory); the expected sequences are in TORCH_SCHEDULES.
SCHEDULES = {
    "PolynomialLR": ("sgd", lambda s, o: s.PolynomialLR(o, total_iters=6, power=2.0)),
    "PolynomialLR-defaults": ("adam", lambda s, o: s.PolynomialLR(o)),
    "CyclicLR": ("sgd", lambda s, o: s.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=3)),
    "CyclicLR-triangular2": ("sgd", lambda s, o: s.CyclicLR(
        o, base_lr=[0.01, 0.002], max_lr=[0.1, 0.05], step_size_up=2, step_size_down=3,
        mode="triangular2", base_momentum=0.7, max_momentum=[0.95, 0.9])),
    "CyclicLR-exp_range-adam": ("adam", lambda s, o: s.CyclicLR(
        o, base_lr=0.001, max_lr=0.1, step_size_up=2, mode="exp_range", gamma=0.9)),
    "CyclicLR-scale_fn": ("sgd", lambda s, o: s.CyclicLR(
        o, base_lr=0.01, max_lr=0.1, step_size_up=2, scale_fn=Shrink(), cycle_momentum=False)),
    "CosineAnnealingWarmRestarts": ("sgd", lambda s, o: s.CosineAnnealingWarmRestarts(
        o, T_0=3, eta_min=0.01)),
    "CosineAnnealingWarmRestarts-T_mult": ("adam", lambda s, o: s.CosineAnnealingWarmRestarts(
        o, T_0=2, T_mult=2)),
}


def schedule(lib, name: str) -> list:  # noqa: ANN001
    """SCHEDULES[name] in ``lib`` for 12 steps: get_last_lr() and group 0's momentum (SGD) or
    beta1 (Adam) after construction and after each step; no warning may be raised."""
    kind, make = SCHEDULES[name]
    opt = _opt(kind, lib=lib)
    key = "momentum" if kind == "sgd" else "betas"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sched = make(lib.optim.lr_scheduler, opt)
        seen = [(sched.get_last_lr(), opt.param_groups[0][key])]
        for _ in range(12):
            opt.step()
            sched.step()
            seen.append((sched.get_last_lr(), opt.param_groups[0][key]))
    return seen


# torch 2.13.0
TORCH_SCHEDULES = {'PolynomialLR': [([0.1, 0.02], 0.9),
                                    ([0.06944444444444446, 0.013888888888888892], 0.9),
                                    ([0.04444444444444447, 0.008888888888888892], 0.9),
                                    ([0.02500000000000001, 0.005000000000000001], 0.9),
                                    ([0.011111111111111117, 0.002222222222222223], 0.9),
                                    ([0.0027777777777777775, 0.0005555555555555554], 0.9),
                                    ([0.0, 0.0], 0.9), ([0.0, 0.0], 0.9), ([0.0, 0.0], 0.9),
                                    ([0.0, 0.0], 0.9), ([0.0, 0.0], 0.9), ([0.0, 0.0], 0.9),
                                    ([0.0, 0.0], 0.9)],
                   'PolynomialLR-defaults': [([0.1, 0.02], (0.9, 0.999)),
                                             ([0.08000000000000002, 0.016], (0.9, 0.999)),
                                             ([0.060000000000000005, 0.011999999999999999],
                                              (0.9, 0.999)),
                                             ([0.04000000000000001, 0.008], (0.9, 0.999)),
                                             ([0.02, 0.003999999999999999], (0.9, 0.999)),
                                             ([0.0, 0.0], (0.9, 0.999)),
                                             ([0.0, 0.0], (0.9, 0.999)),
                                             ([0.0, 0.0], (0.9, 0.999)),
                                             ([0.0, 0.0], (0.9, 0.999)),
                                             ([0.0, 0.0], (0.9, 0.999)),
                                             ([0.0, 0.0], (0.9, 0.999)),
                                             ([0.0, 0.0], (0.9, 0.999)),
                                             ([0.0, 0.0], (0.9, 0.999))],
                   'CyclicLR': [([0.01, 0.01], 0.9),
                                ([0.040000000000000015, 0.040000000000000015], 0.8666666666666667),
                                ([0.06999999999999999, 0.06999999999999999], 0.8333333333333334),
                                ([0.1, 0.1], 0.8),
                                ([0.07000000000000003, 0.07000000000000003], 0.8333333333333334),
                                ([0.03999999999999998, 0.03999999999999998], 0.8666666666666667),
                                ([0.01, 0.01], 0.9),
                                ([0.040000000000000056, 0.040000000000000056], 0.8666666666666666),
                                ([0.06999999999999995, 0.06999999999999995], 0.8333333333333335),
                                ([0.1, 0.1], 0.8),
                                ([0.06999999999999995, 0.06999999999999995], 0.8333333333333335),
                                ([0.040000000000000056, 0.040000000000000056], 0.8666666666666666),
                                ([0.01, 0.01], 0.9)],
                   'CyclicLR-triangular2': [([0.01, 0.002], 0.95),
                                            ([0.055, 0.025999999999999995], 0.825),
                                            ([0.09999999999999999, 0.04999999999999999], 0.7),
                                            ([0.06999999999999999, 0.033999999999999996],
                                             0.7833333333333333),
                                            ([0.039999999999999994, 0.017999999999999995],
                                             0.8666666666666667),
                                            ([0.01, 0.002], 0.95),
                                            ([0.03250000000000002, 0.01400000000000001], 0.8875),
                                            ([0.055, 0.025999999999999995], 0.825),
                                            ([0.039999999999999994, 0.017999999999999995],
                                             0.8666666666666667),
                                            ([0.025000000000000015, 0.010000000000000007],
                                             0.9083333333333332),
                                            ([0.01, 0.002], 0.95),
                                            ([0.021250000000000012, 0.008000000000000005],
                                             0.91875),
                                            ([0.0325, 0.013999999999999997], 0.8875)],
                   'CyclicLR-exp_range-adam': [([0.001, 0.001], (0.9, 0.999)),
                                               ([0.04555000000000001, 0.04555000000000001],
                                                (0.855, 0.999)),
                                               ([0.08119000000000001, 0.08119000000000001],
                                                (0.8190000000000001, 0.999)),
                                               ([0.03708550000000001, 0.03708550000000001],
                                                (0.86355, 0.999)),
                                               ([0.001, 0.001], (0.9, 0.999)),
                                               ([0.030229255000000007, 0.030229255000000007],
                                                (0.8704755000000001, 0.999)),
                                               ([0.05361265900000001, 0.05361265900000001],
                                                (0.8468559, 0.999)),
                                               ([0.024675696550000004, 0.024675696550000004],
                                                (0.8760851550000001, 0.999)),
                                               ([0.001, 0.001], (0.9, 0.999)),
                                               ([0.020177314205500008, 0.020177314205500008],
                                                (0.88062897555, 0.999)),
                                               ([0.035519165569900014, 0.035519165569900014],
                                                (0.86513215599, 0.999)),
                                               ([0.016533624506455003, 0.016533624506455003],
                                                (0.8843094701955, 0.999)),
                                               ([0.001, 0.001], (0.9, 0.999))],
                   'CyclicLR-scale_fn': [([0.01, 0.01], 0.9),
                                         ([0.05500000000000001, 0.05500000000000001], 0.9),
                                         ([0.1, 0.1], 0.9),
                                         ([0.05500000000000001, 0.05500000000000001], 0.9),
                                         ([0.01, 0.01], 0.9), ([0.0325, 0.0325], 0.9),
                                         ([0.05500000000000001, 0.05500000000000001], 0.9),
                                         ([0.0325, 0.0325], 0.9), ([0.01, 0.01], 0.9),
                                         ([0.02125, 0.02125], 0.9), ([0.0325, 0.0325], 0.9),
                                         ([0.02125, 0.02125], 0.9), ([0.01, 0.01], 0.9)],
                   'CosineAnnealingWarmRestarts': [([0.1, 0.02], 0.9), ([0.0775, 0.0175], 0.9),
                                                   ([0.032500000000000015, 0.0125], 0.9),
                                                   ([0.1, 0.02], 0.9), ([0.0775, 0.0175], 0.9),
                                                   ([0.032500000000000015, 0.0125], 0.9),
                                                   ([0.1, 0.02], 0.9), ([0.0775, 0.0175], 0.9),
                                                   ([0.032500000000000015, 0.0125], 0.9),
                                                   ([0.1, 0.02], 0.9), ([0.0775, 0.0175], 0.9),
                                                   ([0.032500000000000015, 0.0125], 0.9),
                                                   ([0.1, 0.02], 0.9)],
                   'CosineAnnealingWarmRestarts-T_mult': [([0.1, 0.02], (0.9, 0.999)),
                                                          ([0.05, 0.01], (0.9, 0.999)),
                                                          ([0.1, 0.02], (0.9, 0.999)),
                                                          ([0.08535533905932738,
                                                            0.017071067811865476],
                                                           (0.9, 0.999)),
                                                          ([0.05, 0.01], (0.9, 0.999)),
                                                          ([0.014644660940672627,
                                                            0.0029289321881345253],
                                                           (0.9, 0.999)),
                                                          ([0.1, 0.02], (0.9, 0.999)),
                                                          ([0.09619397662556434,
                                                            0.019238795325112867],
                                                           (0.9, 0.999)),
                                                          ([0.08535533905932738,
                                                            0.017071067811865476],
                                                           (0.9, 0.999)),
                                                          ([0.0691341716182545,
                                                            0.0138268343236509],
                                                           (0.9, 0.999)),
                                                          ([0.05, 0.01], (0.9, 0.999)),
                                                          ([0.030865828381745515,
                                                            0.006173165676349103],
                                                           (0.9, 0.999)),
                                                          ([0.014644660940672627,
                                                            0.0029289321881345253],
                                                           (0.9, 0.999))]}


@pytest.mark.parametrize("name", list(SCHEDULES))
def test_schedules_are_torchs(name: str) -> None:
    assert schedule(gradviz, name) == TORCH_SCHEDULES[name]  # == : the same floats


def warm_restarts_by_batch(lib) -> list:  # noqa: ANN001
    """CosineAnnealingWarmRestarts stepped per batch with a fractional epoch (3 batches an
    epoch, T_0=2, T_mult=2), then jumping to given epochs; (lr, T_cur, T_i, last_epoch) after
    each step, and the warnings (none)."""
    opt = _opt(lib=lib)
    sched = lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=2,
                                                               eta_min=0.001)
    seen = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for epoch in range(4):
            for i in range(3):
                opt.step()
                sched.step(epoch + i / 3)
                seen.append((sched.get_last_lr()[0], sched.T_cur, sched.T_i, sched.last_epoch))
        for epoch in (13.25, 0.5, 6, 2, None):
            sched.step(epoch)
            seen.append((sched.get_last_lr()[0], sched.T_cur, sched.T_i, sched.last_epoch))
    return seen + [[str(w.message) for w in caught], sched._step_count]


# torch 2.13.0
TORCH_WARM_RESTARTS = [(0.1, 0.0, 2, 0), (0.09336825748732973, 0.3333333333333333, 2, 0),
                       (0.07525000000000001, 0.6666666666666666, 2, 0), (0.0505, 1.0, 2, 1),
                       (0.025750000000000012, 1.3333333333333333, 2, 1),
                       (0.0076317425126702955, 1.6666666666666665, 2, 1), (0.1, 0.0, 4, 2),
                       (0.09831332840130888, 0.3333333333333335, 4, 2),
                       (0.09336825748732973, 0.6666666666666665, 4, 2),
                       (0.0855017856687341, 1.0, 4, 3),
                       (0.07525000000000001, 1.3333333333333335, 4, 3),
                       (0.06331154273257479, 1.6666666666666665, 4, 3),
                       (0.0031314533812556635, 7.25, 8, 13), (0.0855017856687341, 0.5, 2, 0),
                       (0.1, 0.0, 8, 6), (0.1, 0.0, 4, 2), (0.0855017856687341, 1.0, 4, 3), [], 0]


def test_warm_restarts_take_fractional_epochs_like_torch() -> None:
    assert warm_restarts_by_batch(gradviz) == TORCH_WARM_RESTARTS


def closed_forms_and_warnings(lib) -> list:  # noqa: ANN001
    """PolynomialLR.step(epoch) (the closed form, with the deprecation warning), CyclicLR's
    get_lr() outside step() (a warning), and the order warning of the first step."""
    seen = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        opt = _opt(lib=lib)
        sched = lib.optim.lr_scheduler.PolynomialLR(opt, total_iters=4, power=3.0)
        for epoch in (2, 9, 1):
            sched.step(epoch)
            seen.append(sched.get_last_lr())
        cyclic = lib.optim.lr_scheduler.CyclicLR(_opt(lib=lib), 0.01, 0.1, step_size_up=2)
        seen.append(cyclic.get_lr())
    return seen + [[(w.category.__name__, str(w.message)) for w in caught]]


# torch 2.13.0
TORCH_CLOSED_FORMS = [[0.0125, 0.0025], [0.0, 0.0], [0.0421875, 0.0084375], [0.01, 0.01],
                      [('UserWarning',
                        'Detected call of `lr_scheduler.step()` before `optimizer.step()`. In '
                        'PyTorch 1.1.0 and later, you should call them in the opposite order: '
                        '`optimizer.step()` before `lr_scheduler.step()`.  Failure to do this '
                        'will result in PyTorch skipping the first value of the learning rate '
                        'schedule. See more details at '
                        'https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate'),
                       ('UserWarning',
                        'The epoch parameter in `scheduler.step()` was not necessary and is being '
                        'deprecated where possible. Please use `scheduler.step()` to step the '
                        'scheduler. During the deprecation, if epoch is different from None, the '
                        'closed form is used instead of the new chainable form, where available. '
                        'Please open an issue if you are unable to replicate your use case: '
                        'https://github.com/pytorch/pytorch/issues/new/choose.'),
                       ('UserWarning',
                        'The epoch parameter in `scheduler.step()` was not necessary and is being '
                        'deprecated where possible. Please use `scheduler.step()` to step the '
                        'scheduler. During the deprecation, if epoch is different from None, the '
                        'closed form is used instead of the new chainable form, where available. '
                        'Please open an issue if you are unable to replicate your use case: '
                        'https://github.com/pytorch/pytorch/issues/new/choose.'),
                       ('UserWarning',
                        'The epoch parameter in `scheduler.step()` was not necessary and is being '
                        'deprecated where possible. Please use `scheduler.step()` to step the '
                        'scheduler. During the deprecation, if epoch is different from None, the '
                        'closed form is used instead of the new chainable form, where available. '
                        'Please open an issue if you are unable to replicate your use case: '
                        'https://github.com/pytorch/pytorch/issues/new/choose.'),
                       ('UserWarning',
                        'To get the last learning rate computed by the scheduler, please use '
                        '`get_last_lr()`.')]]


def test_closed_forms_and_warnings_are_torchs() -> None:
    assert closed_forms_and_warnings(gradviz) == TORCH_CLOSED_FORMS


def cyclic_state(lib) -> list:  # noqa: ANN001
    """CyclicLR's state_dict: its keys, a callable object's saved __dict__ (a lambda: None),
    and a fresh scheduler resumed from it."""
    s = lib.optim.lr_scheduler
    out = []
    for scale_fn in (None, lambda x: 0.9**x, Shrink()):
        opt = _opt(lib=lib)
        sched = s.CyclicLR(opt, 0.01, 0.1, step_size_up=2, scale_fn=scale_fn,
                           mode="exp_range", gamma=0.8)
        for _ in range(3):
            opt.step()
            sched.step()
        state = sched.state_dict()
        out.append((sorted(state), state["_scale_fn_custom"], state["scale_mode"]))
        if isinstance(scale_fn, Shrink):
            state["_scale_fn_custom"]["base"] = 0.25
        opt2 = _opt(lib=lib)
        fresh = s.CyclicLR(opt2, 0.01, 0.1, step_size_up=2,
                           scale_fn=Shrink() if isinstance(scale_fn, Shrink) else scale_fn,
                           mode="exp_range", gamma=0.8)
        fresh.load_state_dict(state)
        lrs = []
        for _ in range(3):
            opt2.step()
            fresh.step()
            lrs.append(fresh.get_last_lr())
        out.append((lrs, "_scale_fn_custom" in state))
    return out


# torch 2.13.0
TORCH_CYCLIC_STATE = [(['_get_lr_called_within_step', '_is_initial', '_last_lr',
                        '_scale_fn_custom', '_step_count', 'base_lrs', 'base_momentums',
                        'cycle_momentum', 'gamma', 'last_epoch', 'max_lrs', 'max_momentums',
                        'mode', 'scale_mode', 'step_ratio', 'total_size', 'use_beta1'],
                       None, 'iterations'),
                      ([[0.01, 0.01], [0.024745600000000006, 0.024745600000000006],
                        [0.03359296000000001, 0.03359296000000001]],
                       False),
                      (['_get_lr_called_within_step', '_is_initial', '_last_lr',
                        '_scale_fn_custom', '_step_count', 'base_lrs', 'base_momentums',
                        'cycle_momentum', 'gamma', 'last_epoch', 'max_lrs', 'max_momentums',
                        'mode', 'scale_mode', 'step_ratio', 'total_size', 'use_beta1'],
                       None, 'cycle'),
                      ([[0.01, 0.01], [0.046450000000000005, 0.046450000000000005],
                        [0.0829, 0.0829]],
                       False),
                      (['_get_lr_called_within_step', '_is_initial', '_last_lr',
                        '_scale_fn_custom', '_step_count', 'base_lrs', 'base_momentums',
                        'cycle_momentum', 'gamma', 'last_epoch', 'max_lrs', 'max_momentums',
                        'mode', 'scale_mode', 'step_ratio', 'total_size', 'use_beta1'],
                       {'base': 0.25}, 'cycle'),
                      ([[0.01, 0.01], [0.02125, 0.02125], [0.0325, 0.0325]], False)]


def test_cyclic_lr_state_dict_is_torchs() -> None:
    assert cyclic_state(gradviz) == TORCH_CYCLIC_STATE


BAD_SCHEDULERS = [
    (lambda s, o: s.PolynomialLR(object()), TypeError, "object is not an Optimizer"),
    (lambda s, o: s.CyclicLR(object(), 0.1, 1.0), TypeError, "object is not an Optimizer"),
    (lambda s, o: s.CyclicLR(o, 0.1, 1.0, mode="cosine"), ValueError,
     "mode is invalid and scale_fn is None"),
    (lambda s, o: s.CyclicLR(o, [0.1], 1.0), ValueError,
     "base_lr must have the same length as optimizer.param_groups. base_lr has 1 values, "
     "param_groups has 2."),
    (lambda s, o: s.CyclicLR(o, 0.1, [1.0, 2.0, 3.0]), ValueError,
     "max_lr must have the same length as optimizer.param_groups. max_lr has 3 values, "
     "param_groups has 2."),
    (lambda s, o: s.CyclicLR(o, 0.1, 1.0, max_momentum=(0.9,)), ValueError,
     "max_momentum must have the same length as optimizer.param_groups. max_momentum has 1 "
     "values, param_groups has 2."),
    (lambda s, o: s.CyclicLR(_adagrad(o), 0.1, 1.0), ValueError,
     "optimizer must support momentum or beta1 with `cycle_momentum` option enabled"),
    (lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=0), ValueError,
     "Expected positive integer T_0, but got 0"),
    (lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=2.5), ValueError,
     "Expected positive integer T_0, but got 2.5"),
    (lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=0), ValueError,
     "Expected integer T_mult >= 1, but got 0"),
    (lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=1.5), ValueError,
     "Expected integer T_mult >= 1, but got 1.5"),
    (lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=2, eta_min="0"), ValueError,
     "Expected float or int eta_min, but got 0 of type <class 'str'>"),
    (lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=2).step(-1), ValueError,
     "Expected non-negative epoch, but got -1"),
    (lambda s, o: s.PolynomialLR(o, last_epoch=3), KeyError,
     "\"param 'initial_lr' is not specified in param_groups[0] when resuming scheduler with "
     "last_epoch >= 0.\\nThis typically happens when:\\n1. You're trying to resume training "
     "from a checkpoint but haven't properly loaded the optimizer state\\n2. You're using "
     "last_epoch >= 0 for a fresh training run (not recommended)\""),
]


def _adagrad(opt):  # noqa: ANN001, ANN202
    """An optimizer of the same library with neither momentum nor betas."""
    lib = __import__(type(opt).__module__.split(".")[0])
    return lib.optim.Adagrad(opt.param_groups[0]["params"])


@pytest.mark.parametrize("make,error,text", BAD_SCHEDULERS)
def test_bad_scheduler_arguments_raise_torchs_errors(make, error: type, text: str) -> None:  # noqa: ANN001
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(error) as info:
            make(S, _opt())
    assert str(info.value) == text


def test_cyclic_lr_sets_the_groups_and_base_lrs_like_torch() -> None:
    opt = _opt("adam")
    sched = S.CyclicLR(opt, base_lr=[0.01, 0.002], max_lr=0.1, step_size_up=4,
                       base_momentum=0.8, max_momentum=0.9)
    group = opt.param_groups[0]
    # the constructor writes base_lr into the groups before initial_lr is recorded
    assert (group["lr"], group["initial_lr"], group["betas"]) == (0.01, 0.01, (0.9, 0.999))
    assert (group["max_momentum"], group["base_momentum"]) == (0.9, 0.8)
    assert sched.base_lrs == [0.01, 0.002] and sched.max_lrs == [0.1, 0.1]
    assert (sched.total_size, sched.step_ratio, sched.scale_mode) == (8.0, 0.5, "cycle")
    assert sched.scale_fn(3) == 1.0
    plain = S.CyclicLR(_opt(), 0.01, 0.1, cycle_momentum=False)
    assert not hasattr(plain, "base_momentums") and "max_momentum" not in \
        plain.optimizer.param_groups[0]
