"""What every ``assay`` sub-command shares: the consoles, the ``--db`` option, the
error handler that turns assay's exceptions into one line and an exit status, and
the loader of ``module:attr`` references (``--graph``)."""

from __future__ import annotations

import functools
import importlib
import os
import re
import sys
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console

from assay.control_plane import ControlPlane
from assay.errors import AssayError, UsageError

__all__ = [
    "DbOption",
    "console",
    "err_console",
    "handles_errors",
    "load_reference",
    "open_plane",
]

console = Console()
err_console = Console(stderr=True)

DbOption = Annotated[
    str | None,
    typer.Option(
        "--db",
        envvar="ASSAY_DATABASE_URL",
        help="Database URL (default sqlite:///./assay.db).",
        show_default=False,
    ),
]

F = TypeVar("F", bound=Callable[..., Any])


def handles_errors(func: F) -> F:
    """Turn assay's exceptions into one red line and an exit status."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except AssayError as exc:
            err_console.print(f"[bold red]error:[/] {exc}", highlight=False)
            raise typer.Exit(2 if isinstance(exc, UsageError) else 3) from None

    return wrapper  # type: ignore[return-value]


def open_plane(db: str | None, *, migrate: bool = True) -> ControlPlane:
    return ControlPlane.open(db, migrate=migrate)


_REFERENCE = re.compile(r"[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*:[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*")


def load_reference(reference: str, what: str = "--graph") -> Any:
    """The object ``module:attr`` names, imported as a program would (the working
    directory first on the path, as ``python -m`` has it); :class:`UsageError` with
    one line for anything that does not resolve."""
    if not _REFERENCE.fullmatch(reference):
        raise UsageError(
            f"{what} must be module:attr (e.g. my_app.graphs:orders), not {reference!r}"
        )
    module_name, attr = reference.split(":", 1)
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        found: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise UsageError(f"{what} {reference}: cannot import {module_name!r} ({exc})") from None
    for part in attr.split("."):
        if not hasattr(found, part):
            raise UsageError(f"{what} {reference}: {module_name!r} has no attribute {attr!r}")
        found = getattr(found, part)
    return found
