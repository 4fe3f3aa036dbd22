"""diff_traces on two gradviz traces: one program twice agrees; a program changed on purpose
gives one specific difference (which run, which node or step, both values). No torch needed."""

from __future__ import annotations

from collections.abc import Callable

import gradviz
from gradviz.trace import Trace
from gradviz.trace.diff import diff_traces, values_equal


def record(program: Callable[[], None]) -> Trace:
    with gradviz.trace() as tr:
        try:
            program()
        except RuntimeError:
            pass  # the error is in the trace's run
    return tr


def tutorial(hook: bool = False, k: float = 3.0, square_by_mul: bool = False,
             twice: bool = False) -> Callable[[], None]:
    """The autograd tutorial's Q = 3a^3 - b^2 with an external gradient, and its variants."""
    def program() -> None:
        a = gradviz.tensor([2.0, 3.0], requires_grad=True)
        b = gradviz.tensor([6.0, 4.0], requires_grad=True)
        Q = k * a ** 3 - (b * b if square_by_mul else b ** 2)
        if hook:  # doubles the gradient flowing into 3*a**3, as a wrong formula would
            Q.grad_fn.next_functions[0][0].register_prehook(lambda g: (g[0] * 2,))
        Q.backward(gradient=gradviz.tensor([1.0, 1.0]), retain_graph=twice)
        if twice:
            Q.backward(gradient=gradviz.tensor([1.0, 1.0]))
    return program


def test_one_program_twice_has_no_difference() -> None:
    d = diff_traces(record(tutorial()), record(tutorial()), labels=("torch", "gradviz"))
    assert d.same and d.differences == []
    (run,) = d.runs
    assert run.graph_same and run.values_compared
    assert run.order[0] == run.order[1] == [
        "SubBackward0", "PowBackward0#2", "AccumulateGrad#2", "MulBackward0", "PowBackward0#1",
        "AccumulateGrad#1"]
    assert [(g[0], g[1], g[3]) for g in run.grads] == [("a", "[36., 81.]", True),
                                                       ("b", "[-12.,  -8.]", True)]
    assert "no difference" in str(d)


def test_a_changed_gradient_is_reported_with_its_run_node_and_both_values() -> None:
    d = diff_traces(record(tutorial(hook=True)), record(tutorial()), labels=("torch", "gradviz"))
    assert not d.same
    first = d.differences[0]
    assert (first.what, first.run) == ("gradient", 0)
    assert first.where.startswith("MulBackward0 (step ")
    assert first.where.endswith("gradient to next_functions[0]")
    assert (first.a, first.b) == ("[6., 6.]", "[3., 3.]")
    leaf = [x for x in d.differences if x.what == "leaf_grad"]
    assert [(x.where, x.a, x.b) for x in leaf] == [
        ("a.grad (via AccumulateGrad#1)", "[ 72., 162.]", "[36., 81.]")]
    assert ("run 1: gradient differs at MulBackward0" in first.describe(d.labels)
            and "torch: [6., 6.]; gradviz: [3., 3.]" in first.describe(d.labels))


def test_a_changed_graph_is_reported_where_it_changes() -> None:
    d = diff_traces(record(tutorial()), record(tutorial(square_by_mul=True)))
    (diff,) = d.differences
    assert (diff.what, diff.run) == ("graph", 0)
    assert diff.where == "root 0 → SubBackward0.next_functions[1]"
    assert diff.a == "PowBackward0 with next_functions ((AccumulateGrad#2, 0))"
    assert diff.b.startswith("MulBackward0 with next_functions ((AccumulateGrad#2, 0), (")
    assert not d.runs[0].values_compared and d.runs[0].values_note == "the graphs differ"


def test_different_inputs_compare_structure_only_and_say_why() -> None:
    # 4a^3 instead of 3a^3: same graph, but MulBackward0 saved another number, so its
    # gradients must differ and are not compared.
    d = diff_traces(record(tutorial()), record(tutorial(k=4.0)))
    assert d.same
    run = d.runs[0]
    assert not run.values_compared
    assert run.values_note == ("inputs differ: MulBackward0._saved_other differs, so gradients "
                               "were not compared")
    assert all(g[3] is None for g in run.grads)
    # Nothing compared differs, but that is not "no difference": the verdict says what was not
    # compared, and the page marks it apart from an agreement.
    assert d.not_compared == ["run 1: inputs differ: MulBackward0._saved_other differs, so "
                              "gradients were not compared"]
    assert d.verdict() == ("a and b: the structure agrees, values not compared (run 1: inputs "
                           "differ: MulBackward0._saved_other differs, so gradients were not "
                           "compared)")
    assert str(d).splitlines()[0] == d.verdict() and "no difference" not in str(d)
    assert '<p class="verdict unchecked">The structure agrees; values not compared' in d.to_html()


def test_a_missing_run_and_a_different_error_are_differences() -> None:
    d = diff_traces(record(tutorial(twice=True)), record(tutorial()))
    assert [(x.what, x.a, x.b) for x in d.differences] == [
        ("runs", "2", "1")]

    def fails() -> None:
        x = gradviz.tensor([1.0, 2.0], requires_grad=True)
        y = x.exp()
        y.mul_(2)
        y.sum().backward()
    d = diff_traces(record(fails), record(fails), errors=("RuntimeError: x", "ValueError: y"))
    assert [(x.what, x.run, x.a, x.b) for x in d.differences] == [
        ("error", None, "RuntimeError: x", "ValueError: y")]
    assert d.runs[0].errors[0].startswith("RuntimeError: one of the variables needed")


def test_runs_are_named_by_the_numbers_their_pictures_give_them() -> None:
    # Five backward calls, the last two kept: compare's text and page say "run 4" and "run 5",
    # as the drawings' titles do ("backward run 5 of 5"), never their places 0 and 1.
    from gradviz.render.diff_page import diff_page
    from gradviz.render.graphviz import run_label

    def loop(k: float) -> Callable[[], None]:
        def program() -> None:
            a = gradviz.tensor([2.0, 3.0], requires_grad=True)
            for i in range(5):
                (a * (k if i == 4 else 3.0)).sum().backward()
        return program

    def kept(program: Callable[[], None]) -> Trace:
        with gradviz.trace(keep_runs=2) as tr:
            program()
        return tr

    a, b = kept(loop(3.0)), kept(loop(4.0))  # the last run multiplies by another number
    assert run_label(a, -1) == "backward run 5 of 5, last 2 kept"
    d = diff_traces(a, b)
    assert [r.name for r in d.runs] == ["run 4", "run 5"]
    assert d.not_compared == ["run 5: inputs differ: MulBackward0._saved_other differs, so "
                              "gradients were not compared"]
    lines = str(d).splitlines()
    assert lines[1].startswith("run 4: graph same; values compared")
    assert [x for x in lines if x.startswith("run ")] == [lines[1], lines[4]]
    assert lines[4].startswith("run 5: graph same; values not compared")
    page = diff_page(d, "loop.py")
    assert "<h3>run 4</h3>" in page and "<h3>run 5</h3>" in page and "run 0" not in page
    # A difference is named by its run's number too.
    c = diff_traces(kept(loop(3.0)), kept(tutorial(twice=True)))
    assert [(x.what, x.run_name) for x in c.differences if x.run is not None] == [
        ("graph", "run 4 (a) / 1 (b)"), ("graph", "run 5 (a) / 2 (b)")]
    assert c.differences[-1].describe(c.labels).startswith("run 5 (a) / 2 (b): graph differs")


def test_error_texts_compare_with_gradviz_read_as_torch() -> None:
    d = diff_traces(record(tutorial()), record(tutorial()),
                    errors=("RuntimeError: [torch.FloatTensor [2]]",
                            "RuntimeError:  [gradviz.FloatTensor [2]]"))
    assert d.same


def test_values_equal_tolerance_and_summaries() -> None:
    assert values_equal({"shape": [2], "values": [1.0, "nan"]},
                        {"shape": [2], "values": [1.00001, "nan"]})
    assert values_equal({"shape": [2], "values": [1.0, 2.0]},
                        {"shape": [2], "values": [1.0, 2.1]}) is False
    assert values_equal({"shape": [2], "values": [1.0, 2.0]},
                        {"shape": [3], "values": [1.0, 2.0, 3.0]}) is False
    assert values_equal({"shape": [2]}, {"shape": [2], "values": [1.0, 2.0]}) is None
    assert values_equal({"const": 3}, {"shape": [], "values": 3}) is True  # a wrapped number
    stats = {"shape": [100], "stats": {"min": 0.0, "max": 1.0, "mean": 0.5}, "head": [0.0]}
    assert values_equal(stats, dict(stats)) is True


def test_the_html_fragment_escapes_and_marks_differences() -> None:
    from gradviz.render.diff_page import diff_page

    d = diff_traces(record(tutorial(hook=True)), record(tutorial()), labels=("<torch>", "gv"))
    page = diff_page(d, "<s>.py", graphs=("<?xml?><svg id='g1'></svg>", None),
                     links=("torch/steps.html", None))
    assert "&lt;torch&gt;" in page and "<torch>" not in page
    assert "&lt;s&gt;.py" in page
    assert "class=\"differ\"" in page and "3 difference(s)." in page
    assert "<svg id='g1'></svg>" in page and "<?xml" not in page
    assert "href='torch/steps.html'" in page


def test_a_failing_node_ends_the_order_however_its_source_recorded_it() -> None:
    from gradviz.trace.model import ExecuteStep

    def fails() -> None:
        x = gradviz.tensor([1.0, 2.0], requires_grad=True)
        y = x.exp()
        y.mul_(2)
        y.sum().backward()
    a, b = record(fails), record(fails)
    run = b.runs[0]
    error = next(s for s in run.steps if s.kind == "error")
    # As hooks on real PyTorch record it: an execute step for the failing node, then the error.
    run.steps.insert(run.steps.index(error), ExecuteStep(index=error.index, node=error.node))
    d = diff_traces(a, b)
    assert d.same, str(d)
    assert d.runs[0].order[0] == d.runs[0].order[1] == ["SumBackward0", "MulBackward0",
                                                         "ExpBackward0"]
