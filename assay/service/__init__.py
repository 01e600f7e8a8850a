"""The HTTP service (``assay serve``): runs of fenced graphs, their grants, audits and
the ledger, behind bearer tokens with roles.

:func:`create_app` builds the FastAPI application; it needs the ``serve`` extra
(``pip install 'assay[serve]'``), imported only when an application is built, so
the tokens (:class:`TokenStore`) work without it.
"""

import typing

from assay._lazy import exports as _exports

if typing.TYPE_CHECKING:
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


# Each name is imported from its home when first used (PEP 562): importing the
# package loads none of them.
__getattr__, __dir__ = _exports(
    __name__,
    {
        "app_from_env": "assay.service._factory",
        "create_app": "assay.service._factory",
        "GRAPHS_ENV": "assay.service._settings",
        "ServiceSettings": "assay.service._settings",
        "graphs_from_env": "assay.service._settings",
        "load_factory": "assay.service._settings",
        "parse_graph_specs": "assay.service._settings",
        "settings_from_env": "assay.service._settings",
        "ROLES": "assay.service._tokens",
        "IssuedToken": "assay.service._tokens",
        "Principal": "assay.service._tokens",
        "Role": "assay.service._tokens",
        "RunOwner": "assay.service._tokens",
        "RunOwners": "assay.service._tokens",
        "TokenInfo": "assay.service._tokens",
        "TokenStore": "assay.service._tokens",
        "parse_duration": "assay.service._tokens",
    },
)
