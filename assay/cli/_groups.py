"""The root command group, whose sub-command groups are imported on first use.

``assay --help`` and ``assay runs`` need none of ``ledger``, ``eval``, ``tools``
or ``verifier``: their modules (and what those import) load only when one
of them is run, or its own help is asked for. The root's help lists them from
:data:`DEFERRED`, the one line each group's own help begins with;
``tests/cli/test_startup.py`` checks that table against the groups themselves.
"""

from __future__ import annotations

import importlib
from difflib import get_close_matches
from typing import Any

import typer
import typer.main

from assay.cli._common import CLICK_USAGE_ERROR, AssayGroup

# The click that typer runs on is its own copy in newer typers and the click package
# in older ones: its classes are used through typer's, typed Any.
Command = Context = HelpFormatter = Any

__all__ = ["DEFERRED", "RootGroup"]

#: Each deferred group: its name, where it is defined (module, attribute), and the
#: line of help the root lists it with (its ``short_help``, or its help's first line).
DEFERRED: dict[str, tuple[str, str, str]] = {
    "ledger": (
        "assay.cli._ledger",
        "ledger_app",
        "Show and verify the ledger; sign checkpoints, export and check audit bundles.",
    ),
    "tools": ("assay.cli._tools", "tools_app", "The versioned tool registry."),
    "verifier": ("assay.cli._verifier", "app", "Train and evaluate the NLI verifier model."),
    "eval": (
        "assay.cli._eval",
        "eval_app",
        "Run an eval suite and gate the deploy on it; the recorded trend.",
    ),
}


def _short_help(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` the way click cuts a command's help."""
    utils = importlib.import_module(typer.BadParameter.__module__.rsplit(".", 1)[0] + ".utils")
    return utils.make_default_short_help(text, limit)


def load_group(name: str) -> Command:
    """The click group of the deferred sub-command ``name``, imported now."""
    module, attribute, _ = DEFERRED[name]
    typer_app: typer.Typer = getattr(importlib.import_module(module), attribute)
    group = typer.main.get_group(typer_app)
    group.name = name
    return group


class RootGroup(AssayGroup):
    """``assay``: its own commands, then the deferred groups, loaded when named."""

    def list_commands(self, ctx: Context) -> list[str]:
        own = super().list_commands(ctx)
        return [*own, *(name for name in DEFERRED if name not in own)]

    def get_command(self, ctx: Context, cmd_name: str) -> Command | None:
        found = super().get_command(ctx, cmd_name)
        if found is None and cmd_name in DEFERRED:
            found = load_group(cmd_name)
            self.add_command(found, cmd_name)
        return found

    def format_commands(self, ctx: Context, formatter: HelpFormatter) -> None:
        """Click's list of commands, the deferred ones from :data:`DEFERRED`."""
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows: list[tuple[str, str]] = []
        for name in names:
            loaded = self.commands.get(name)
            if loaded is None:
                rows.append((name, _short_help(DEFERRED[name][2], limit)))
            elif not loaded.hidden:
                rows.append((name, loaded.get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def resolve_command(self, ctx: Context, args: list[str]) -> Any:
        """Click's, with the deferred groups among the names a typo is matched to."""
        try:
            return super().resolve_command(ctx, args)
        except CLICK_USAGE_ERROR as exc:
            error: Any = exc
            matches = get_close_matches(args[0], list(DEFERRED)) if args else []
            if matches and "Did you mean" not in error.message:
                suggestions = ", ".join(repr(m) for m in matches)
                error.message = f"{error.message.rstrip('.')}. Did you mean {suggestions}?"
            raise
