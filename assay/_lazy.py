"""Names a package exports, imported from their home when first used (PEP 562).

``import assay`` or ``import assay.fence`` loads nothing but the package itself;
``assay.ControlPlane`` imports :mod:`assay.control_plane` on first access and keeps the
name in the package, so later accesses cost nothing. A command that needs only the
ledger never loads LangGraph, LangChain or the NLI model's libraries.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["exports"]


def exports(
    package: str, homes: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``, whose public names live in
    the modules ``homes`` maps them to (``{"ToolBus": "assay.tool_bus._bus"}``, or
    ``"module:attr"`` for a name exported under another one)."""
    namespace = importlib.import_module(package).__dict__

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, _, attr = home.partition(":")
        value = getattr(importlib.import_module(module), attr or name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *homes})

    return __getattr__, __dir__
