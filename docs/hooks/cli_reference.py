"""The command-line reference, rendered from the ``assay`` command tree itself.

``typer.main.get_command(assay.cli.app)`` is the click command (typer's own copy
of click) that the console script runs; walking it gives every group, command,
argument and option with the help text, default and environment variable that
``--help`` shows, so the page cannot describe a command that does not exist or
miss one that does. Commands and
contexts are typed ``Any``: typer ships click as a private module, so the walk goes
by click's documented attributes rather than its classes.
"""

from __future__ import annotations

import inspect
import re
from typing import Any

import typer
import typer.main

__all__ = ["cli_reference", "rst_to_markdown"]

_LITERAL = re.compile(r"``(.+?)``")
_ROLE = re.compile(r":(?:class|func|meth|attr|mod|exc|data):`~?([^`]+)`")


def rst_to_markdown(text: str) -> str:
    """Docstring markup to Markdown: ````x```` and Sphinx roles become code spans
    (a role keeps only the last dotted name when written with ``~``)."""

    def role(match: re.Match[str]) -> str:
        target = match.group(1)
        shown = target.rsplit(".", 1)[-1] if match.group(0).find("~") >= 0 else target
        return f"`{shown}`"

    return _ROLE.sub(role, _LITERAL.sub(r"`\1`", text))


def _help_text(command: Any) -> str:
    """The command's help as Markdown paragraphs (click's ``\\f`` cuts it short)."""
    raw = (command.help or "").split("\f", 1)[0]
    paragraphs = inspect.cleandoc(raw).split("\n\n")
    joined = [" ".join(line.strip() for line in p.splitlines()) for p in paragraphs]
    return "\n\n".join(rst_to_markdown(p) for p in joined if p)


def _cell(text: str) -> str:
    return rst_to_markdown(text).replace("|", "\\|").replace("\n", " ")


def _params(command: Any, ctx: Any) -> list[str]:
    rows: list[tuple[str, str]] = []
    for param in command.get_params(ctx):
        if getattr(param, "hidden", False):
            continue
        record = param.get_help_record(ctx)
        if record is None or record[0] == "--help":
            continue
        rows.append((f"`{record[0]}`", _cell(record[1])))
    if not rows:
        return []
    lines = ["| argument or option | description |", "|---|---|"]
    lines += [f"| {name} | {help_} |" for name, help_ in rows]
    return lines


def _render(command: Any, ctx: Any, level: int) -> list[str]:
    path = ctx.command_path
    heading = "#" * min(level, 6)
    out = [f"{heading} `{path}`", ""]
    help_text = _help_text(command)
    if help_text:
        out += [help_text, ""]
    usage = command.get_usage(ctx).removeprefix("Usage: ")
    out += ["```text", usage, "```", ""]
    params = _params(command, ctx)
    if params:
        out += [*params, ""]
    if hasattr(command, "list_commands"):  # a group
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is None or sub.hidden:
                continue
            sub_ctx = sub.context_class(sub, info_name=name, parent=ctx)
            out += _render(sub, sub_ctx, level + 1)
    return out


def cli_reference(app: typer.Typer, *, name: str = "assay", level: int = 2) -> str:
    """Every command of ``app`` as Markdown: help, usage, arguments and options."""
    root = typer.main.get_command(app)
    ctx = root.context_class(root, info_name=name)
    return "\n".join(_render(root, ctx, level)).rstrip() + "\n"
