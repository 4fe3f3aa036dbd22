"""The introductory example ``gradviz demo`` runs: the seed program, walked by hand.

It builds ``z = x ** 2 + y ** 3`` as in the PyTorch walkthrough, calls ``backward``, and prints the
backward graph the way a learner would explore it in PyTorch: from ``z.grad_fn`` along
``next_functions`` down to each ``AccumulateGrad`` and its ``.variable``. Then it does the same for
one step of a tiny two-layer network.

Run it with ``gradviz demo`` or ``python -m gradviz.examples.intro``.
"""

from __future__ import annotations

import gradviz as torch


def backward_graph_lines(t: torch.Tensor) -> list[str]:
    """The backward graph of ``t`` as indented lines, walking ``next_functions`` with a stack.

    A node reached a second time (a shared subexpression) is printed once more but not expanded
    again, and marked ``(seen)``.

    Example:
        >>> x = named("x", torch.ones(2, requires_grad=True))
        >>> print("\\n".join(backward_graph_lines((x * 2).sum())))
        SumBackward0
        └─ 0: MulBackward0
           ├─ 0: AccumulateGrad -> x (2,) requires_grad
           └─ 1: None
    """
    if t.grad_fn is None:
        return [f"{t.name or 'tensor'} is a leaf: no backward graph"]
    lines: list[str] = []
    seen: set[int] = set()
    # (node, input_nr label, prefix for this line, prefix for its children)
    stack: list[tuple[object, str, str, str]] = [(t.grad_fn, "", "", "")]
    while stack:
        node, label, prefix, child_prefix = stack.pop()
        if node is None:
            lines.append(f"{prefix}{label}None")
            continue
        name = type(node).__name__
        if isinstance(node, torch.autograd.graph.AccumulateGrad):
            v = node.variable
            lines.append(f"{prefix}{label}{name} -> {v.name or 'leaf'} {tuple(v.shape)} "
                         "requires_grad")
            continue
        if id(node) in seen:
            lines.append(f"{prefix}{label}{name} (seen)")
            continue
        seen.add(id(node))
        lines.append(f"{prefix}{label}{name}")
        children = list(enumerate(node.next_functions))
        # Push in reverse so that input 0 prints first.
        for k, (i, (nxt, _nr)) in reversed(list(enumerate(children))):
            last = k == len(children) - 1
            branch = "└─ " if last else "├─ "
            extend = "   " if last else "│  "
            stack.append((nxt, f"{i}: ", child_prefix + branch, child_prefix + extend))
    return lines


def named(name: str, t: torch.Tensor) -> torch.Tensor:
    """Give ``t`` the name gradviz shows for it, and return it."""
    t.name = name
    return t


def main() -> None:
    """Run the example and print what autograd built and computed."""
    torch.manual_seed(0)
    print("== The seed program: z = x ** 2 + y ** 3 ==")
    x = named("x", torch.rand(2, 2, requires_grad=True))
    y = named("y", torch.rand(2, 2, requires_grad=True))
    z = x ** 2 + y ** 3
    print(f"z = {z}")
    print("Backward graph (z.grad_fn and its next_functions):")
    print("\n".join("  " + line for line in backward_graph_lines(z)))
    z.backward(torch.ones_like(x))
    print(f"x.grad = 2x   = {x.grad}")
    print(f"y.grad = 3y^2 = {y.grad}")
    x_leaf = z.grad_fn.next_functions[0][0].next_functions[0][0]
    print(f"z.grad_fn.next_functions[0][0].next_functions[0][0].variable is x: "
          f"{x_leaf.variable is x}")

    print()
    print("== One step of a two-layer network ==")
    inp = torch.randn(4, 3)
    w1 = named("w1", torch.randn(3, 5, requires_grad=True))
    b1 = named("b1", torch.zeros(5, requires_grad=True))
    w2 = named("w2", torch.randn(5, 1, requires_grad=True))
    target = torch.randn(4, 1)
    hidden = torch.tanh(inp @ w1 + b1)
    loss = ((hidden @ w2 - target) ** 2).mean()
    print(f"loss = {loss}")
    print("Backward graph:")
    print("\n".join("  " + line for line in backward_graph_lines(loss)))
    loss.backward()
    for p in (w1, b1, w2):
        print(f"{p.name}.grad has shape {tuple(p.grad.shape)}, "
              f"norm {float((p.grad * p.grad).sum()) ** 0.5:.4f}")


if __name__ == "__main__":
    main()
