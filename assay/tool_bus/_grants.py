"""Grants: permission for one irreversible call, bound to exactly that call.

A grant binds run, tool, version, the canonical arguments' sha256 and the claim set
the call rests on; it expires, it is recorded in the ledger (kind ``grant``) and in
``tool_grants``, and its single use is a row in ``tool_grant_uses`` whose primary
key the database enforces, so a second use fails even from another process.

Issuing requires every proposition of every claim in ``depends_on`` to be verified
as entailed, as reported by the configured :class:`ClaimStatusSource`; without a
source, or without any supporting claim, an irreversible call gets no grant.
"""

from __future__ import annotations

import json
import math
import re
import secrets
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from assay._db import write_transaction
from assay.ledger import Ledger, canonical_json
from assay.tool_bus import _tables as t
from assay.tool_bus._errors import GrantRefused, UnknownGrant
from assay.tool_bus._policy import Policy, load_policy
from assay.tool_bus._records import ClaimStatusSource, Grant, GrantRequest, args_sha256
from assay.tool_bus._registry import ToolRegistry
from assay.tool_bus._validation import argument_errors, json_problems

__all__ = ["Grants"]

_VIA = re.compile(r"human|policy:[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_MAX_TTL_S = 7 * 86_400


class Grants:
    """Issues, looks up and checks grants; evaluates auto-approval policy rules."""

    def __init__(
        self,
        engine: Engine,
        ledger: Ledger,
        registry: ToolRegistry,
        *,
        claim_status_source: ClaimStatusSource | None = None,
        policy: str | Path | Mapping[str, Any] | Policy | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._engine = engine
        self._ledger = ledger
        self._registry = registry
        self.claim_status_source = claim_status_source
        self.policy = Policy() if policy is None else load_policy(policy)
        self.clock = clock

    def load_policy(self, source: str | Path | Mapping[str, Any] | Policy) -> Policy:
        """Replace the auto-approval rules with those in ``source`` (YAML/JSON path or
        mapping); an invalid document raises ``InvalidPolicy`` and changes nothing."""
        self.policy = load_policy(source)
        return self.policy

    def issue(
        self,
        run_id: str,
        request: GrantRequest,
        *,
        approver: str,
        via: str = "human",
        ttl_s: float = 900,
    ) -> Grant:
        """Grant ``request`` once, for ``ttl_s`` seconds; :class:`GrantRefused` lists
        every reason when it may not be granted (nothing is written then)."""
        reasons = self._request_problems(run_id, request)
        if not isinstance(approver, str) or not approver.strip():
            reasons.append("approver must name who approves")
        if not isinstance(via, str) or not _VIA.fullmatch(via):
            reasons.append(f"via {via!r} must be 'human' or 'policy:<name>'")
        if (
            not isinstance(ttl_s, int | float)
            or not (0 < ttl_s <= _MAX_TTL_S)
            or not (math.isfinite(ttl_s))
        ):
            reasons.append(f"ttl_s must be between 0 and {_MAX_TTL_S} seconds")
        if not reasons:
            reasons = self.claim_problems(run_id, request)
        if reasons:
            raise GrantRefused(reasons)
        return self._record(request, approver=approver, via=via, ttl_s=float(ttl_s))

    def _request_problems(self, run_id: str, request: GrantRequest) -> list[str]:
        if not isinstance(request, GrantRequest):
            return [f"expected a GrantRequest, got {type(request).__name__}"]
        if request.run_id != run_id:
            return [f"the request is for run {request.run_id!r}, not {run_id!r}"]
        if json_problems(dict(request.args)):
            return ["the request's arguments are not JSON data"]
        if args_sha256(dict(request.args)) != request.args_sha256:
            return ["args_sha256 does not match the request's arguments"]
        spec = self._registry.get(request.tool, request.version)
        if argument_errors(spec, dict(request.args)):
            return [f"the arguments are not valid for {spec.ref}"]
        if spec.side_effect == "irreversible" and not request.depends_on:
            return [f"{spec.ref} is irreversible: a grant needs at least one supporting claim"]
        return []

    def claim_problems(self, run_id: str, request: GrantRequest) -> list[str]:
        """Why the claims of ``request`` do not (yet) support a grant; empty when every
        proposition of every claim is entailed."""
        claim_ids = list(request.depends_on)
        if not claim_ids:
            return []
        source = self.claim_status_source
        if source is None:
            return ["no claim-status source is configured, so no claim can be shown entailed"]
        statuses = source.claim_status(run_id, claim_ids)
        problems: list[str] = []
        for claim_id in claim_ids:
            status = statuses.get(claim_id)
            if status is None or not status.known:
                problems.append(f"claim {claim_id!r} is unknown in run {run_id}")
            elif not status.labels:
                problems.append(f"claim {claim_id!r} has no verified proposition")
            else:
                problems += [
                    f"claim {claim_id!r} proposition {i} is {label}, not entailment"
                    for i, label in enumerate(status.labels)
                    if label != "entailment"
                ]
        return problems

    def _record(self, request: GrantRequest, *, approver: str, via: str, ttl_s: float) -> Grant:
        grant_id = "grant_" + secrets.token_hex(16)
        issued = self.clock()
        expires = issued + timedelta(seconds=ttl_s)
        body = {
            "grant_id": grant_id,
            "run_id": request.run_id,
            "tool": request.tool,
            "version": request.version,
            "args": dict(request.args),
            "args_sha256": request.args_sha256,
            "depends_on": list(request.depends_on),
            "approver": approver,
            "via": via,
            "issued_at": issued.isoformat(),
            "expires_at": expires.isoformat(),
        }
        entry = self._ledger.append(
            request.run_id,
            kind="grant",
            source=f"grant:{via}",
            content=canonical_json(body).decode("utf-8"),
            metadata={"grant_id": grant_id, "tool": request.tool, "version": request.version},
        )
        with write_transaction(self._engine) as conn:
            conn.execute(
                t.grants.insert().values(
                    grant_id=grant_id,
                    run_id=request.run_id,
                    tool=request.tool,
                    version=request.version,
                    args_sha256=request.args_sha256,
                    depends_on_json=json.dumps(list(request.depends_on)),
                    approver=approver,
                    via=via,
                    issued_at=issued,
                    expires_at=expires,
                    ledger_id=entry.id,
                )
            )
        return self.get(grant_id)

    def get(self, grant_id: str) -> Grant:
        """The grant with this id; :class:`UnknownGrant` if none was issued."""
        row = None
        if isinstance(grant_id, str):
            with self._engine.connect() as conn:
                row = conn.execute(
                    sa.select(t.grants).where(t.grants.c.grant_id == grant_id)
                ).first()
        if row is None:
            raise UnknownGrant(f"no grant {grant_id!r}")
        return Grant(
            id=row.grant_id,
            run_id=row.run_id,
            tool=row.tool,
            version=row.version,
            args_sha256=row.args_sha256,
            depends_on=tuple(json.loads(row.depends_on_json)),
            approver=row.approver,
            via=row.via,
            issued_at=_utc(row.issued_at),
            expires_at=_utc(row.expires_at),
            ledger_id=row.ledger_id,
        )

    def used_by(self, grant_id: str) -> str | None:
        """The call id that used this grant, if it has been used."""
        with self._engine.connect() as conn:
            return conn.execute(
                sa.select(t.grant_uses.c.call_id).where(t.grant_uses.c.grant_id == grant_id)
            ).scalar()

    def evaluate_policy(self, run_id: str, request: GrantRequest) -> Grant | None:
        """A grant from the first policy rule that matches ``request`` and whose grant
        can be issued (claims entailed), or ``None``."""
        for rule in self.policy.rules:
            if not rule.matches(request.tool, request.version, request.args):
                continue
            try:
                return self.issue(
                    run_id,
                    request,
                    approver=f"policy:{rule.name}",
                    via=f"policy:{rule.name}",
                    ttl_s=rule.ttl_s,
                )
            except GrantRefused:
                continue
        return None

    def invalid_reason(
        self, grant_id: str, request: GrantRequest, *, claims_given: bool
    ) -> str | None:
        """Why ``grant_id`` does not permit ``request`` now, or ``None`` if it does.
        The single use itself is enforced when the call starts (the database's key)."""
        try:
            grant = self.get(grant_id)
        except UnknownGrant:
            return f"no grant {grant_id!r} was issued"
        return _mismatch(grant, request, claims_given=claims_given) or self._state(grant, request)

    def _state(self, grant: Grant, request: GrantRequest) -> str | None:
        if self.clock() >= grant.expires_at:
            return f"the grant expired at {grant.expires_at.isoformat()}"
        used = self.used_by(grant.id)
        if used is not None:
            return f"the grant was already used by call {used!r}"
        if self.claim_status_source is not None:
            bound = replace(request, depends_on=grant.depends_on)
            problems = self.claim_problems(grant.run_id, bound)
            if problems:
                return "its claims are no longer all entailed: " + "; ".join(problems)
        return None


def _mismatch(grant: Grant, request: GrantRequest, *, claims_given: bool) -> str | None:
    if grant.run_id != request.run_id:
        return f"the grant is for run {grant.run_id!r}, not {request.run_id!r}"
    if (grant.tool, grant.version) != (request.tool, request.version):
        wanted = f"{request.tool}@{request.version}"
        return f"the grant is for {grant.tool}@{grant.version}, not {wanted}"
    if grant.args_sha256 != request.args_sha256:
        return (
            f"the grant is for other arguments (sha256 {grant.args_sha256[:12]}…, "
            f"this call {request.args_sha256[:12]}…)"
        )
    if claims_given and sorted(grant.depends_on) != sorted(request.depends_on):
        return f"the grant rests on claims {list(grant.depends_on)}, not {list(request.depends_on)}"
    return None


def _utc(value: datetime) -> datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)
