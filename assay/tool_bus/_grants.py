"""Grants: permission for one irreversible call, bound to exactly that call.

A grant binds run, call id, tool, version, the canonical arguments' sha256 and the
claim set the call rests on; it expires, it is recorded in the ledger (kind
``grant``) and in ``tool_grants`` in one transaction, and its single use is a row in
``tool_grant_uses`` whose primary key the database enforces, so a second use fails
even from another process.

Issuing requires every proposition of every claim in ``depends_on`` to be verified
as entailed, as reported by the configured :class:`ClaimStatusSource`; without a
source, or without any supporting claim, an irreversible call gets no grant. At
most one grant per call may be live (unused and unexpired) or used: a second
approval raises :class:`GrantExists` naming the one that stands.

A row in ``tool_grants`` is honoured only when the run's ledger holds its ``grant``
entry and the two agree field for field, within the limits issuing enforces (at
most seven days; a policy grant only from a rule the current policy still has, for
no longer than that rule's ``ttl_s``). A row written into the table by hand, or a
ledger entry edited after the fact, therefore grants nothing.

A policy rule approves only values that the verified claims themselves state: every
number and boolean of the call, and every argument the rule tests, must be written
in the entailed propositions of the claims it depends on (see ``assay._values``).

A grant may name earlier calls it ``supersedes``: the ``tool_call`` ledger entries
of calls of the same tool whose effect (its idempotency key) this call repeats on
purpose. Only a person's grant supersedes; a policy rule never repeats an effect.
"""

from __future__ import annotations

import json
import math
import re
import secrets
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from assay._canonical import canonical_text
from assay._values import Slots, role_problems, ungrounded_values, unroled_arguments
from assay.errors import GrantExists, GrantRefused, UnknownEntry, UnknownGrant
from assay.ledger import Ledger, LedgerEntry, canonical_json
from assay.tool_bus import _tables as t
from assay.tool_bus._policy import (
    Policy,
    Rule,
    argument_value,  # rules name arguments this way
    load_policy,
)
from assay.tool_bus._records import (
    ClaimStatus,
    ClaimStatusSource,
    Grant,
    GrantRequest,
    args_sha256,
)
from assay.tool_bus._registry import ToolRegistry
from assay.tool_bus._validation import argument_errors, json_problems

__all__ = ["Grants"]

_VIA = re.compile(r"human|policy:[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_MAX_TTL_S = 7 * 86_400
_MAX_APPROVER = 200
_MAX_CALL_ID = 200
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_MAX_SUPERSEDES = 16


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
        reasons += approver_problems(approver)
        if not isinstance(via, str) or not _VIA.fullmatch(via):
            reasons.append(f"via {via!r} must be 'human' or 'policy:<name>'")
        if (
            not isinstance(ttl_s, int | float)
            or not (0 < ttl_s <= _MAX_TTL_S)
            or not (math.isfinite(ttl_s))
        ):
            reasons.append(f"ttl_s must be between 0 and {_MAX_TTL_S} seconds")
        if not reasons and isinstance(request, GrantRequest) and request.supersedes:
            if via != "human":
                reasons.append("only a person's grant may supersede an earlier call's effect")
            reasons += self._supersedes_problems(request)
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
        if not _is_call_id(request.call_id):
            return [
                "the request names no call id: a grant is bound to the one call it permits "
                "(the bus's grant_required error carries a complete request)"
            ]
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

    def _supersedes_problems(self, request: GrantRequest) -> list[str]:
        """Why the calls ``request`` supersedes are not earlier calls of its tool: each
        must be the ``tool_call`` ledger entry of a call of the same tool, in any run."""
        named: object = request.supersedes
        if not isinstance(named, tuple) or not all(isinstance(i, str) for i in named):
            return ["supersedes must be a list of tool_call ledger entry ids"]
        ids: tuple[str, ...] = named
        if len(ids) > _MAX_SUPERSEDES:
            return [f"a grant supersedes at most {_MAX_SUPERSEDES} earlier calls"]
        if len(set(ids)) != len(ids):
            return ["supersedes names a call twice"]
        problems: list[str] = []
        entries = self._ledger.get_many(ids)
        for ledger_id in ids:
            entry = entries.get(ledger_id)
            if entry is None or entry.kind != "tool_call":
                problems.append(f"supersedes {ledger_id!r}: no tool_call entry has this id")
            elif not entry.source.startswith(f"tool:{request.tool}@"):
                other = entry.source.removeprefix("tool:")
                problems.append(
                    f"supersedes {ledger_id!r}: that call is of {other}, not of {request.tool}"
                )
        return problems

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
        """Write the ledger entry and the table row in one transaction, after making
        sure that no other grant for the same call is live or used."""
        assert request.call_id is not None
        grant_id = "grant_" + secrets.token_hex(16)
        issued = self.clock()
        expires = issued + timedelta(seconds=ttl_s)
        body = {
            "grant_id": grant_id,
            "run_id": request.run_id,
            "call_id": request.call_id,
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
        if request.supersedes:  # absent otherwise: older records read the same
            body["supersedes"] = list(request.supersedes)

        def insert_row(conn: sa.Connection, entry: LedgerEntry) -> None:
            standing = self._standing(conn, request.run_id, request.call_id or "", issued)
            if standing is not None:
                raise GrantExists(standing[0], standing[1])
            conn.execute(
                t.grants.insert().values(
                    grant_id=grant_id,
                    run_id=request.run_id,
                    call_id=request.call_id,
                    tool=request.tool,
                    version=request.version,
                    args_sha256=request.args_sha256,
                    depends_on_json=json.dumps(list(request.depends_on)),
                    approver=approver,
                    via=via,
                    issued_at=issued,
                    expires_at=expires,
                    ledger_id=entry.id,
                    supersedes_json=json.dumps(list(request.supersedes))
                    if request.supersedes
                    else None,
                )
            )

        self._ledger.append(
            request.run_id,
            kind="grant",
            source=f"grant:{via}",
            content=canonical_json(body).decode("utf-8"),
            metadata={"grant_id": grant_id, "tool": request.tool, "version": request.version},
            on_append=insert_row,
        )
        return self.get(grant_id)

    def _standing(
        self, conn: sa.Connection, run_id: str, call_id: str, now: datetime
    ) -> tuple[Grant, str] | None:
        """The grant that already stands for this call (used, or live), and why."""
        rows = conn.execute(
            sa.select(t.grants, t.grant_uses.c.call_id.label("used_by"))
            .outerjoin(t.grant_uses, t.grant_uses.c.grant_id == t.grants.c.grant_id)
            .where(t.grants.c.run_id == run_id, t.grants.c.call_id == call_id)
        ).all()
        for row in rows:
            grant = _grant_from_row(row)
            if row.used_by is not None:
                return grant, (
                    f"call {call_id!r} already ran under grant {grant.id} "
                    f"(approved by {grant.approver!r})"
                )
            if now < grant.expires_at:
                return grant, (
                    f"call {call_id!r} already has a live grant {grant.id} approved by "
                    f"{grant.approver!r} at {grant.issued_at.isoformat()}"
                )
        return None

    def get(self, grant_id: str) -> Grant:
        """The grant row with this id; :class:`UnknownGrant` if there is none. Whether
        it may be used is :meth:`invalid_reason`'s question."""
        row = None
        if isinstance(grant_id, str):
            with self._engine.connect() as conn:
                row = conn.execute(
                    sa.select(t.grants).where(t.grants.c.grant_id == grant_id)
                ).first()
        if row is None:
            raise UnknownGrant(f"no grant {grant_id!r}")
        return _grant_from_row(row)

    def used_for(self, run_id: str, call_id: str) -> Grant | None:
        """The grant that the call ``call_id`` of ``run_id`` started under, if any:
        what a result should name, whoever asked for the call."""
        with self._engine.connect() as conn:
            row = conn.execute(
                sa.select(t.grants)
                .join(t.grant_uses, t.grant_uses.c.grant_id == t.grants.c.grant_id)
                .where(t.grant_uses.c.run_id == run_id, t.grant_uses.c.call_id == call_id)
            ).first()
        return None if row is None else _grant_from_row(row)

    def used_by(self, grant_id: str) -> str | None:
        """The call id that used this grant, if it has been used."""
        with self._engine.connect() as conn:
            return conn.execute(
                sa.select(t.grant_uses.c.call_id).where(t.grant_uses.c.grant_id == grant_id)
            ).scalar()

    def evaluate_policy(self, run_id: str, request: GrantRequest) -> Grant | None:
        """A grant from the first policy rule that matches ``request``, whose grant
        can be issued (claims entailed) and whose values the verified claims state;
        or ``None``, and the call waits for a person."""
        for rule in self.policy.rules:
            if not rule.matches(request.tool, request.version, request.args):
                continue
            if self.policy_problems(run_id, request, rule):
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

    def policy_problems(self, run_id: str, request: GrantRequest, rule: Rule) -> list[str]:
        """Why ``rule`` may not approve ``request``. A rule approves facts the fence
        verified, not the agent's say-so, so each of these keeps the call for a person:

        * a claim the call rests on is not entailed;
        * a number, boolean or identifier of the call that the entailed propositions
          do not state (in canonical form; an idempotency key's hash whole);
        * an argument whose declared role (``x-assay-role``) no entailed proposition
          fills, or an argument that declares no role and is not the agent's choice
          (``x-assay-grounding: choice``): a true figure in the wrong place is still
          the wrong call."""
        statuses = self._statuses(run_id, request.depends_on)
        if not statuses or not all(s.entailed for s in statuses):
            return ["the claims the call rests on are not all entailed"]
        texts = [text for s in statuses for text in s.texts]
        spec = self._registry.get(request.tool, request.version)
        args, schema = dict(request.args), spec.input_schema
        found = ungrounded_values(args, schema, texts, exact=spec.idempotency_key)
        slots = [Slots(pred=pred, args=a) for s in statuses for pred, a in s.slots]
        found += role_problems(args, schema, slots)
        found += [
            (pointer, "declares no role (x-assay-role) binding it to a verified proposition")
            for pointer in unroled_arguments(args, schema)
        ]
        first: dict[str, str] = {}
        for pointer, why in found:
            first.setdefault(pointer, why)  # one problem per argument: the first found
        problems = [f"{pointer}: {why}" for pointer, why in first.items()]
        for key in rule.args:
            value = argument_value(request.args, key)
            if isinstance(value, str) and not _stated(value, texts):
                problems.append(f"{key}: {value!r} is not stated by the verified claims")
        return problems

    def _statuses(self, run_id: str, claim_ids: tuple[str, ...]) -> list[ClaimStatus]:
        if self.claim_status_source is None or not claim_ids:
            return []
        found = self.claim_status_source.claim_status(run_id, list(claim_ids))
        return [found[c] for c in claim_ids if c in found]

    def invalid_reason(
        self, grant_id: str, request: GrantRequest, *, claims_given: bool
    ) -> str | None:
        """Why ``grant_id`` does not permit ``request`` now, or ``None`` if it does.
        The single use itself is enforced when the call starts (the database's key)."""
        try:
            grant = self.get(grant_id)
        except UnknownGrant:
            return f"no grant {grant_id!r} was issued"
        return (
            _mismatch(grant, request, claims_given=claims_given)
            or self._record_problem(grant)
            or self._state(grant, request)
        )

    def _record_problem(self, grant: Grant) -> str | None:
        """Why the row is not a grant this control plane issued: its ledger entry is
        missing, of another run or kind, disagrees with it, or it exceeds the limits."""
        try:
            entry = self._ledger.get(grant.ledger_id)
        except UnknownEntry:
            entry = None
        if entry is None or entry.kind != "grant" or entry.run_id != grant.run_id:
            return f"grant {grant.id} has no grant record in run {grant.run_id}'s ledger"
        differs = _record_differs(grant, entry)
        if differs:
            return f"grant {grant.id} disagrees with its ledger record ({differs})"
        lifetime = (grant.expires_at - grant.issued_at).total_seconds()
        if not 0 < lifetime <= _MAX_TTL_S or approver_problems(grant.approver, recorded=True):
            return f"grant {grant.id} is outside the limits a grant is issued within"
        if grant.via.startswith("policy:"):
            rule = next((r for r in self.policy.rules if f"policy:{r.name}" == grant.via), None)
            if rule is None:
                return f"grant {grant.id} names {grant.via}, a rule the policy does not have"
            if lifetime > rule.ttl_s + 1e-3:
                return f"grant {grant.id} outlives its rule's ttl_s ({rule.ttl_s} s)"
        return None

    def _state(self, grant: Grant, request: GrantRequest) -> str | None:
        if self.clock() >= grant.expires_at:
            return f"the grant expired at {grant.expires_at.isoformat()}"
        used = self.used_by(grant.id)
        if used is not None and used != request.call_id:
            # (Used by this very call id: another process is running it; the bus's
            # start then finds the call and answers with its result.)
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
    if grant.call_id is None or grant.call_id != request.call_id:
        return f"the grant was issued for call {grant.call_id!r}, not {request.call_id!r}"
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


def approver_problems(approver: object, *, recorded: bool = False) -> list[str]:
    """Why ``approver`` cannot name who approved: it must be printable text that
    the ledger and a terminal show as it is. A new approver may hold no format
    character either (a zero-width space, a right-to-left override); ``recorded``
    reads a grant already issued by the rule it was issued under."""
    if not isinstance(approver, str) or not approver.strip():
        return ["approver must name who approves"]
    if len(approver) > _MAX_APPROVER:
        return [f"approver is longer than {_MAX_APPROVER} characters"]
    if _CONTROL.search(approver) or any(0xD800 <= ord(c) <= 0xDFFF for c in approver):
        return ["approver must not contain control characters or lone surrogates"]
    if not recorded and any(unicodedata.category(c) == "Cf" for c in approver):
        return ["approver must not contain format characters (zero-width, bidi controls)"]
    return []


def _is_call_id(value: object) -> bool:
    return (
        isinstance(value, str)
        and 0 < len(value) <= _MAX_CALL_ID
        and not _CONTROL.search(value)
        and not any(0xD800 <= ord(c) <= 0xDFFF for c in value)
    )


def _grant_from_row(row: Any) -> Grant:
    return Grant(
        id=row.grant_id,
        run_id=row.run_id,
        call_id=row.call_id,
        tool=row.tool,
        version=row.version,
        args_sha256=row.args_sha256,
        depends_on=tuple(json.loads(row.depends_on_json)),
        approver=row.approver,
        via=row.via,
        issued_at=_utc(row.issued_at),
        expires_at=_utc(row.expires_at),
        ledger_id=row.ledger_id,
        supersedes=tuple(json.loads(row.supersedes_json)) if row.supersedes_json else (),
    )


def _record_differs(grant: Grant, entry: LedgerEntry) -> str | None:
    """The first field on which ``grant`` and its ledger ``entry`` disagree."""
    try:
        body = json.loads(entry.text)
        recorded = {
            "grant_id": body["grant_id"],
            "run_id": body["run_id"],
            "call_id": body.get("call_id"),
            "tool": body["tool"],
            "version": body["version"],
            "args_sha256": body["args_sha256"],
            "depends_on": tuple(body["depends_on"]),
            "approver": body["approver"],
            "via": body["via"],
            "issued_at": _utc(datetime.fromisoformat(body["issued_at"])),
            "expires_at": _utc(datetime.fromisoformat(body["expires_at"])),
            "supersedes": tuple(body.get("supersedes", ())),
        }
        arguments_hash = args_sha256(body["args"])
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        return "the record does not parse"
    if arguments_hash != recorded["args_sha256"]:
        return "the recorded arguments do not hash to the recorded args_sha256"
    if entry.source != f"grant:{recorded['via']}":
        return "source"
    held = {
        "grant_id": grant.id,
        "run_id": grant.run_id,
        "call_id": grant.call_id,
        "tool": grant.tool,
        "version": grant.version,
        "args_sha256": grant.args_sha256,
        "depends_on": grant.depends_on,
        "approver": grant.approver,
        "via": grant.via,
        "issued_at": grant.issued_at,
        "expires_at": grant.expires_at,
        "supersedes": grant.supersedes,
    }
    return next((k for k, v in held.items() if recorded[k] != v), None)


def _stated(value: str, texts: list[str]) -> bool:
    """Whether a verified text writes ``value`` (compared in canonical form)."""
    wanted = " ".join(canonical_text(value).casefold().split())
    return any(wanted in " ".join(canonical_text(t).casefold().split()) for t in texts)
