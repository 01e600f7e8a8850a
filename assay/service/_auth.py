"""Who may do what: bearer tokens, roles and the permission table.

Every route names one :data:`Permission`; :data:`PERMISSIONS` says which roles hold
it. A request is authenticated first (401 without a live token), then charged to its
token's rate bucket (429), then checked against the table (403). An ``agent`` reads
only the runs it started; that ownership check is the route's, on top of this one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from fastapi import Depends
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from assay.service._guards import TokenBuckets
from assay.service._problems import Problem
from assay.service._tokens import Principal, Role, TokenStore

__all__ = ["PERMISSIONS", "Authenticator", "Permission"]

Permission = Literal[
    "graphs:list",
    "runs:start",
    "runs:read",
    "grants:read",
    "grants:decide",
    "audit:read",
    "ledger:read",
    "tokens:manage",
]

#: Which roles hold each permission. ``runs:read`` for an agent covers its own runs.
PERMISSIONS: dict[Permission, frozenset[Role]] = {
    "graphs:list": frozenset({"agent", "reviewer", "auditor", "admin"}),
    "runs:start": frozenset({"agent"}),
    "runs:read": frozenset({"agent", "reviewer", "auditor"}),
    "grants:read": frozenset({"reviewer", "auditor"}),
    "grants:decide": frozenset({"reviewer"}),
    "audit:read": frozenset({"reviewer", "auditor"}),
    "ledger:read": frozenset({"auditor"}),
    "tokens:manage": frozenset({"admin"}),
}

_CHALLENGE = {"WWW-Authenticate": 'Bearer realm="assay"'}
_bearer = HTTPBearer(auto_error=False, description="A token from `assay tokens create`.")


class Authenticator:
    """Turns a request's ``Authorization: Bearer`` header into a :class:`Principal`."""

    def __init__(self, tokens: TokenStore, buckets: TokenBuckets) -> None:
        self.tokens = tokens
        self.buckets = buckets

    def require(self, permission: Permission) -> Callable[..., Principal]:
        """A FastAPI dependency: the request's principal, holding ``permission``."""
        allowed = PERMISSIONS[permission]

        def dependency(
            credentials: HTTPAuthorizationCredentials | None = Depends(_bearer),  # noqa: B008
        ) -> Principal:
            principal = self._authenticate(credentials)
            wait = self.buckets.take(principal.token_id)
            if wait is not None:
                raise Problem(
                    429,
                    "rate_limited",
                    f"too many requests for this token; retry in {wait} s",
                    headers={"Retry-After": str(wait)},
                )
            if principal.role not in allowed:
                raise Problem(403, "forbidden", f"the role {principal.role!r} may not {permission}")
            return principal

        return dependency

    def _authenticate(self, credentials: HTTPAuthorizationCredentials | None) -> Principal:
        if credentials is None or credentials.scheme.lower() != "bearer":
            raise Problem(
                401, "unauthenticated", "send Authorization: Bearer <token>", headers=_CHALLENGE
            )
        principal = self.tokens.authenticate(credentials.credentials)
        if principal is None:
            raise Problem(
                401,
                "invalid_token",
                "the token is unknown, expired or revoked",
                headers={"WWW-Authenticate": 'Bearer realm="assay", error="invalid_token"'},
            )
        return principal
