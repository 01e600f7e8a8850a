"""Building the application: the FastAPI side is imported only here, on first use,
so that the tokens work without the ``serve`` extra."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from assay import _db
from assay.control_plane import ControlPlane, GraphFactory
from assay.errors import ConfigurationError
from assay.service._settings import (
    ServiceSettings,
    graphs_from_env,
    settings_from_env,
)

if TYPE_CHECKING:
    from fastapi import FastAPI

__all__ = ["app_from_env", "create_app"]


def create_app(
    control_plane: str | ControlPlane,
    graphs: Mapping[str, GraphFactory],
    *,
    settings: ServiceSettings | None = None,
) -> FastAPI:
    """The service's FastAPI application (OpenAPI at ``/openapi.json``).

    ``control_plane`` is an open :class:`~assay.ControlPlane` (left open: the caller
    closes it) or a database URL (opened here, closed at the application's
    shutdown). ``graphs`` maps the name a client starts a graph by to a factory
    ``graph(control_plane)`` returning what ``fence()`` returned; each is built once.
    """
    try:
        from assay.service._app import build_app
    except ImportError as exc:
        raise ConfigurationError(
            f"the HTTP service needs the serve extra: pip install 'assay[serve]' ({exc})"
        ) from None
    return build_app(control_plane, graphs, settings=settings)


def app_from_env() -> FastAPI:
    """The application ``assay serve`` runs in each worker: the database from
    ``ASSAY_DATABASE_URL``, the graphs from ``ASSAY_SERVICE_GRAPHS`` and the
    settings from ``ASSAY_SERVICE_*`` (see :func:`settings_from_env`)."""
    return create_app(_db.resolve_url(None), graphs_from_env(), settings=settings_from_env())
