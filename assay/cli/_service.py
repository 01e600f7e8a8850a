"""``assay tokens`` and ``assay serve``: the HTTP service's bearer tokens, and the
service itself on uvicorn.

A token's secret is printed once, when it is made; the database keeps its sha256
only. ``serve`` passes its options to each uvicorn worker through the environment
(``ASSAY_DATABASE_URL``, ``ASSAY_SERVICE_GRAPHS``, ``ASSAY_SERVICE_*``), so that
``--workers 4`` starts four identical processes.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from assay import service
from assay.cli._common import (
    DbOption,
    JsonOption,
    console,
    emit_json,
    err_console,
    handles_errors,
    open_plane,
    shown,
)
from assay.errors import ConfigurationError

if TYPE_CHECKING:
    from assay.service import TokenInfo

#: The roles a token may have, as ``assay tokens create --help`` names them (the
#: service's ``ROLES``; written out so that the help loads no database code).
ROLE_NAMES = "agent, reviewer, auditor, admin"

__all__ = ["serve_command", "tokens_app"]

tokens_app = typer.Typer(
    no_args_is_help=True, rich_markup_mode=None, help="Bearer tokens of the HTTP service."
)


def _token_row(info: TokenInfo) -> dict[str, object]:
    return {
        "id": info.id,
        "name": info.name,
        "role": info.role,
        "created_at": info.created_at,
        "expires_at": info.expires_at,
        "revoked_at": info.revoked_at,
    }


@tokens_app.command("create")
@handles_errors
def tokens_create(
    role: Annotated[str, typer.Option(help=f"One of {ROLE_NAMES}.")],
    name: Annotated[str, typer.Option(help="The principal: recorded as approver or starter.")],
    expires_in: Annotated[
        str | None, typer.Option("--expires-in", help="Lifetime, e.g. 30d, 12h (default: none).")
    ] = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Make a token and print its secret, this once: it is stored as a hash only."""
    lifetime = service.parse_duration(expires_in) if expires_in is not None else None
    with open_plane(db) as cp:
        issued = service.TokenStore(cp.engine).create(name=name, role=role, expires_in=lifetime)
    if as_json:
        emit_json({**_token_row(issued.info), "secret": issued.secret})
        return
    info = issued.info
    expiry = f", expires {info.expires_at.isoformat()}" if info.expires_at else ""
    err_console().print(
        f"token {info.id} for {shown(info.name)} ({info.role}{expiry}); "
        "its secret, shown this once:"
    )
    typer.echo(issued.secret)


@tokens_app.command("list")
@handles_errors
def tokens_list(db: DbOption = None, as_json: JsonOption = False) -> None:
    """Every token, the newest first, with when it expires or was revoked; never a
    secret."""
    with open_plane(db) as cp:
        found = service.TokenStore(cp.engine).list_all()
    if as_json:
        emit_json([_token_row(info) for info in found])
        return
    table = Table(title="tokens")
    for column in ("id", "name", "role", "created (UTC)", "expires", "revoked"):
        table.add_column(column, no_wrap=True, overflow="ellipsis" if column == "name" else "fold")
    for info in found:
        table.add_row(
            info.id,
            shown(info.name, one_line=True),
            info.role,
            _when(info.created_at),
            _when(info.expires_at),
            _when(info.revoked_at),
        )
    console().print(table)


def _when(value: datetime | None) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M") if value is not None else "-"


@tokens_app.command("revoke")
@handles_errors
def tokens_revoke(
    token_id: Annotated[str, typer.Argument(help="The token's id (tok_...).")],
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Stop a token from opening the service (revoking it again changes nothing)."""
    with open_plane(db) as cp:
        info = service.TokenStore(cp.engine).revoke(token_id)
    if as_json:
        emit_json(_token_row(info))
        return
    revoked = info.revoked_at.isoformat(timespec="seconds") if info.revoked_at else "?"
    console().print(f"token {info.id} ({shown(info.name)}) revoked at {revoked}")


@handles_errors
def serve_command(
    graph: Annotated[
        list[str],
        typer.Option("--graph", help="A graph to serve, as name=module:attr (repeat for several)."),
    ],
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.", min=1, max=65535)] = 8000,
    workers: Annotated[int, typer.Option(help="uvicorn worker processes.", min=1)] = 1,
    proxy_headers: Annotated[
        bool,
        typer.Option(
            "--proxy-headers/--no-proxy-headers",
            help="Trust X-Forwarded-* from --forwarded-allow-ips (behind a reverse proxy).",
        ),
    ] = False,
    forwarded_allow_ips: Annotated[
        str, typer.Option(help="Proxies whose X-Forwarded-* headers are trusted.")
    ] = "127.0.0.1",
    db: DbOption = None,
) -> None:
    """Serve runs, grants, audits and the ledger over HTTP (OpenAPI at /openapi.json);
    needs the serve extra."""
    specs = service.parse_graph_specs(tuple(graph))
    try:
        import uvicorn
    except ImportError:
        raise ConfigurationError(
            "assay serve needs the serve extra: pip install 'assay[serve]'"
        ) from None
    for reference in specs.values():
        service.load_factory(reference)  # one that does not load fails here, once, not per worker
    with open_plane(db):  # the schema at head before any worker starts
        pass
    # What every worker reads (settings_from_env and graphs_from_env).
    os.environ[service.GRAPHS_ENV] = ",".join(f"{name}={ref}" for name, ref in specs.items())
    if db is not None:
        os.environ["ASSAY_DATABASE_URL"] = db
    uvicorn.run(
        "assay.service:app_from_env",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        proxy_headers=proxy_headers,
        forwarded_allow_ips=forwarded_allow_ips,
    )
