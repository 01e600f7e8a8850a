"""The HTTP service (``assay serve``): runs of fenced graphs, their grants, audits and
the ledger, behind bearer tokens with roles.

:func:`create_app` builds the FastAPI application; it needs the ``serve`` extra
(``pip install 'assay[serve]'``), imported only when an application is built, so
the tokens (:class:`TokenStore`) work without it.
"""

from __future__ import annotations

from assay.service._factory import app_from_env, create_app
from assay.service._settings import (
    GRAPHS_ENV,
    ServiceSettings,
    graphs_from_env,
    load_factory,
    parse_graph_specs,
    settings_from_env,
)
from assay.service._tokens import (
    ROLES,
    IssuedToken,
    Principal,
    Role,
    RunOwner,
    RunOwners,
    TokenInfo,
    TokenStore,
    parse_duration,
)

__all__ = [
    "GRAPHS_ENV",
    "ROLES",
    "IssuedToken",
    "Principal",
    "Role",
    "RunOwner",
    "RunOwners",
    "ServiceSettings",
    "TokenInfo",
    "TokenStore",
    "app_from_env",
    "create_app",
    "graphs_from_env",
    "load_factory",
    "parse_duration",
    "parse_graph_specs",
    "settings_from_env",
]
