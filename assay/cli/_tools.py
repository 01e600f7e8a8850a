"""``assay tools``: what the registry holds in the database.

Handlers live in the processes that register them, so these commands show specs
only: every ``name@version`` stored, and one spec in full.
"""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.table import Table

from assay.cli._common import (
    DbOption,
    JsonOption,
    console,
    emit_json,
    handles_errors,
    open_plane,
    shown,
)

tools_app = typer.Typer(
    no_args_is_help=True, rich_markup_mode=None, help="The versioned tool registry."
)


@tools_app.command("list")
@handles_errors
def tools_list(db: DbOption = None, as_json: JsonOption = False) -> None:
    """List every registered name@version with its side effect and spec hash
    (``tools show`` gives the full spec and when it was registered)."""
    with open_plane(db) as cp:
        specs = cp.registry.list()
    if as_json:
        emit_json([{**spec.as_json(), "sha256": spec.sha256} for spec in specs])
        return
    table = Table(title="tools")
    for column in ("name", "version", "side effect", "sha256", "description"):
        exact = column != "description"
        table.add_column(column, no_wrap=exact, overflow="fold" if exact else "ellipsis")
    for spec in specs:
        table.add_row(
            shown(spec.name),
            shown(spec.version),
            shown(spec.side_effect),
            spec.sha256[:12],
            shown(spec.description, one_line=True),
        )
    console().print(table)


@tools_app.command("show")
@handles_errors
def tools_show(
    ref: Annotated[str, typer.Argument(help="NAME or NAME@VERSION (default: the latest).")],
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Print one spec as JSON, with its hash and registration time."""
    name, _, version = ref.partition("@")
    with open_plane(db) as cp:
        spec = cp.registry.get(name, version or None)
        record = {
            **spec.as_json(),
            "sha256": spec.sha256,
            "registered_at": cp.registry.registered_at(spec.name, spec.version).isoformat(),
            "versions": cp.registry.versions(spec.name),
        }
    if as_json:
        emit_json(record)
        return
    console().print(shown(json.dumps(record, indent=2, ensure_ascii=False)))
