"""Attributes a package loads on first use (PEP 562): what ``gradviz.autograd`` and
``gradviz.render`` do so that importing them stays cheap and one-way (docs/architecture.md)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

__all__ = ["lazy_attributes"]


def lazy_attributes(package: str, namespace: dict[str, Any], where: dict[str, str]
                    ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's ``__getattr__`` and ``__dir__`` for the names in ``where`` (name -> the
    submodule defining it): each is imported on first access, then kept in ``namespace``.

    Example:
        >>> ns = {"__all__": ["sqrt"]}
        >>> getattr_, dir_ = lazy_attributes("math", ns, {"sqrt": ""})
        >>> "sqrt" in dir_()
        True
    """

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}" if module else package),
                        name)
        namespace[name] = value  # next time, no __getattr__
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(namespace.get("__all__", ())))

    return __getattr__, __dir__
