"""Graph factories for ``--graph`` that fail in the ways the command line must report
in one line: an assay usage error and an unexpected exception, both carrying markup
and control characters."""

from __future__ import annotations

from typing import NoReturn

from assay import ControlPlane, UsageError

HOSTILE = "see [bold]this[/bold] [/oops] \x1b[2J\x1b]0;title\x07 \u202eevil"


def refusing(cp: ControlPlane) -> NoReturn:
    raise UsageError(f"refused: {HOSTILE}")


def broken(cp: ControlPlane) -> NoReturn:
    raise RuntimeError(f"boom: {HOSTILE}")
