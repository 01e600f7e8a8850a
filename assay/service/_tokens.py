"""Bearer tokens of the HTTP service, and who started each run through it.

A token is ``assay.<id>.<secret>``; the database keeps the sha256 of that whole text,
never the text, so a copy of the database lets nobody in. A request's token is found
by its id and its sha256 compared in constant time (:func:`hmac.compare_digest`).
Tokens are rows of an append-only table: revoking one inserts a row into
``service_token_revocations``, and an expired or revoked token stays listed, with
when it stopped working.

The principal of a token is its ``name``: what the service records as the approver
of a decision and as the starter of a run. Several tokens may share a name (a
rotation, or one person with two roles). A name is refused when it holds a character
a terminal does not show as it is, and stored in its written form (NFKC, spaces
folded, trimmed); names whose keys are equal (the same but for case, width or
spacing) are one principal, which separation of duties and an agent's reading of
its own runs both compare by (:mod:`assay.service._principals`). A token may not
spell an existing principal another way: ``Bob`` is refused while tokens of ``bob``
exist, so each principal is written one way in the ledger.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, get_args

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from assay._db import InsertIfAbsent, driver_errors, write_transaction
from assay.errors import UsageError
from assay.service import _tables as t
from assay.service._principals import (
    principal_key,
    principal_problem,
    same_principal,
    written_principal,
)
from assay.tool_bus import approver_problems

__all__ = [
    "ROLES",
    "IssuedToken",
    "Principal",
    "Role",
    "RunOwner",
    "RunOwners",
    "TokenInfo",
    "TokenStore",
    "parse_duration",
    "spelling_conflict",
    "written_name",
]

Role = Literal["agent", "reviewer", "auditor", "admin"]
ROLES: tuple[Role, ...] = get_args(Role)
_PREFIX = "assay"
_TOKEN = re.compile(r"assay\.(tok_[0-9a-f]{16})\.[A-Za-z0-9_-]{43}")
_DURATION = re.compile(r"(\d{1,6})([smhd])")
_UNITS = {"s": 1, "m": 60, "h": 3_600, "d": 86_400}
# Compared against when a token names no stored id, so that a miss costs a compare too.
_NO_HASH = "0" * 64
# Serialises token creation on PostgreSQL, so that two spellings of one principal
# cannot both be checked against the table before either is stored.
_NAMES_LOCK = sa.text("SELECT pg_advisory_xact_lock(hashtext('assay.service_tokens.name'))")


def _utc_now() -> datetime:
    return datetime.now(UTC)


def _aware(value: datetime | None) -> datetime | None:
    """SQLite hands ``DateTime(timezone=True)`` back naive, in UTC."""
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=UTC)


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def parse_duration(text: str) -> timedelta:
    """``30d``, ``12h``, ``45m`` or ``90s`` as a :class:`timedelta`; a
    :class:`UsageError` for anything else."""
    match = _DURATION.fullmatch(text.strip()) if isinstance(text, str) else None
    if match is None or int(match.group(1)) == 0:
        raise UsageError(
            f"a duration is a positive number and s, m, h or d (e.g. 30d), not {text!r}"
        )
    return timedelta(seconds=int(match.group(1)) * _UNITS[match.group(2)])


@dataclass(frozen=True, kw_only=True)
class Principal:
    """Who a request comes from: the token's id, its name and its role."""

    token_id: str
    name: str
    role: Role


@dataclass(frozen=True, kw_only=True)
class TokenInfo:
    """A stored token as listed: never its secret."""

    id: str
    name: str
    role: Role
    created_at: datetime
    expires_at: datetime | None
    revoked_at: datetime | None

    def active(self, now: datetime) -> bool:
        """Whether the token opens the service at ``now``."""
        return self.revoked_at is None and (self.expires_at is None or now < self.expires_at)


@dataclass(frozen=True, kw_only=True)
class IssuedToken:
    """A token just made: ``secret`` is shown this once and stored nowhere."""

    info: TokenInfo
    secret: str


class TokenStore:
    """Makes, lists, revokes and checks the service's bearer tokens."""

    def __init__(self, engine: Engine, *, clock: Callable[[], datetime] = _utc_now) -> None:
        self._engine = engine
        self._clock = clock
        self._revoke = InsertIfAbsent(t.revocations, ["token_id"])

    def create(self, *, name: str, role: str, expires_in: timedelta | None = None) -> IssuedToken:
        """A new token for ``name`` in ``role``; its secret is returned once. The
        name is stored written (:func:`written_principal`); :class:`UsageError` when
        it cannot name a principal or spells an existing one another way."""
        name = written_name(name)
        if role not in ROLES:
            raise UsageError(f"role must be one of {', '.join(ROLES)}, not {role!r}")
        if expires_in is not None and expires_in <= timedelta(0):
            raise UsageError("a token's lifetime must be positive")
        now = self._clock()
        token_id = "tok_" + secrets.token_hex(8)
        secret = f"{_PREFIX}.{token_id}.{secrets.token_urlsafe(32)}"
        row: dict[str, Any] = {
            "id": token_id,
            "name": name,
            "role": role,
            "secret_sha256": _sha256(secret),
            "created_at": now,
            "expires_at": None if expires_in is None else now + expires_in,
        }
        with driver_errors("could not store the token"), write_transaction(self._engine) as conn:
            if conn.dialect.name == "postgresql":
                conn.execute(_NAMES_LOCK)
            other = _other_spelling(conn, name)
            if other is not None:
                raise UsageError(spelling_conflict(name, other))
            conn.execute(t.tokens.insert(), row)
        return IssuedToken(info=self.get(token_id), secret=secret)

    def other_spelling(self, name: str) -> str | None:
        """How the stored tokens spell the principal ``name`` is, when that differs
        from ``name`` written (``None``: a new principal, or the same spelling)."""
        with driver_errors(), self._engine.connect() as conn:
            return _other_spelling(conn, written_principal(name))

    def get(self, token_id: str) -> TokenInfo:
        """The token ``token_id``; :class:`UsageError` when there is none."""
        found = self._select(t.tokens.c.id == token_id) if isinstance(token_id, str) else []
        if not found:
            raise UsageError(f"no token {token_id!r}")
        return found[0]

    def list_all(self) -> list[TokenInfo]:
        """Every token, the newest first, revoked and expired ones included."""
        return self._select(None)

    def revoke(self, token_id: str, *, reason: str | None = None) -> TokenInfo:
        """Stop ``token_id`` from opening the service; revoking it again changes
        nothing and answers when it was revoked first."""
        self.get(token_id)
        row = {"token_id": token_id, "revoked_at": self._clock(), "reason": reason}
        with driver_errors("could not revoke the token"), write_transaction(self._engine) as conn:
            self._revoke(conn, row)
        return self.get(token_id)

    def authenticate(self, secret: str) -> Principal | None:
        """The principal ``secret`` stands for, or ``None`` when it is not a stored,
        live token (unknown, expired or revoked)."""
        match = _TOKEN.fullmatch(secret)
        rows = self._rows(t.tokens.c.id == match.group(1)) if match else []
        expected = str(rows[0]["secret_sha256"]) if rows else _NO_HASH
        same = hmac.compare_digest(_sha256(secret), expected)
        if not rows or not same:
            return None
        stored = _info(rows[0])
        if not stored.active(self._clock()):
            return None
        return Principal(token_id=stored.id, name=stored.name, role=stored.role)

    def _select(self, where: Any) -> list[TokenInfo]:
        return [_info(row) for row in self._rows(where)]

    def _rows(self, where: Any) -> list[sa.RowMapping]:
        query = (
            sa.select(t.tokens, t.revocations.c.revoked_at)
            .select_from(
                t.tokens.outerjoin(t.revocations, t.revocations.c.token_id == t.tokens.c.id)
            )
            .order_by(t.tokens.c.created_at.desc(), t.tokens.c.id)
        )
        if where is not None:
            query = query.where(where)
        with driver_errors(), self._engine.connect() as conn:
            return list(conn.execute(query).mappings().all())


def written_name(name: object) -> str:
    """``name`` as a token stores it; :class:`UsageError` when it cannot name a
    principal (blank, too long, or holding a character a terminal hides)."""
    problem = principal_problem(name, field="token name")
    if problem is not None or not isinstance(name, str):
        raise UsageError(problem or "token name must be a string")
    written = written_principal(name)
    problems = approver_problems(written)  # what a grant's approver must be, too
    if problems:
        raise UsageError(f"token name: {problems[0]}")
    return written


def spelling_conflict(name: str, other: str) -> str:
    """The refusal of a token named ``name`` for a principal stored as ``other``."""
    return (
        f"token name {name!r} is the principal {other!r}, spelled another way (names "
        f"that differ only in case, width or spacing are one principal): name the "
        f"token {other!r}"
    )


def _other_spelling(conn: sa.Connection, written: str) -> str | None:
    """The stored spelling of ``written``'s principal when it is not ``written``.
    Names stored before names were checked count only when they pass the check."""
    key = principal_key(written)
    names = conn.execute(sa.select(t.tokens.c.name).distinct()).scalars()
    spellings = {
        written_principal(stored)
        for stored in names
        if principal_problem(stored) is None and principal_key(stored) == key
    }
    if not spellings or written in spellings:
        return None
    return min(spellings)


def _info(row: sa.RowMapping) -> TokenInfo:
    return TokenInfo(
        id=row["id"],
        name=row["name"],
        role=row["role"],
        created_at=_aware(row["created_at"]) or row["created_at"],
        expires_at=_aware(row["expires_at"]),
        revoked_at=_aware(row["revoked_at"]),
    )


@dataclass(frozen=True, kw_only=True)
class RunOwner:
    """Who started a thread through the service, with which token, and when."""

    thread_id: str
    graph: str
    token_id: str
    principal: str
    started_at: datetime


class RunOwners:
    """The ``service_runs`` table: the starter of each thread the service ran."""

    def __init__(self, engine: Engine, *, clock: Callable[[], datetime] = _utc_now) -> None:
        self._engine = engine
        self._clock = clock

    def record(self, thread_id: str, graph: str, principal: Principal) -> None:
        """Claim ``thread_id`` for ``principal`` before its run starts."""
        row = {
            "thread_id": thread_id,
            "graph": graph,
            "token_id": principal.token_id,
            "principal": principal.name,
            "started_at": self._clock(),
        }
        with driver_errors("could not record the run"), write_transaction(self._engine) as conn:
            conn.execute(t.runs.insert(), row)

    def started_by(self, thread_id: str, principal: str) -> str | None:
        """Why ``principal`` may not decide the calls of ``thread_id`` under separation
        of duties (they started it), or ``None``."""
        owner = self.get(thread_id)
        if owner is None or not same_principal(owner.principal, principal):
            return None
        if owner.principal == principal:
            return f"{principal!r} started this run and may not decide its calls"
        return (
            f"{principal!r} is the principal {owner.principal!r}, who started this run, "
            "and may not decide its calls"
        )

    def get(self, thread_id: str) -> RunOwner | None:
        """Who started ``thread_id`` through the service (``None``: not through it)."""
        query = sa.select(t.runs).where(t.runs.c.thread_id == thread_id)
        with driver_errors(), self._engine.connect() as conn:
            row = conn.execute(query).mappings().first()
        if row is None:
            return None
        return RunOwner(
            thread_id=row["thread_id"],
            graph=row["graph"],
            token_id=row["token_id"],
            principal=row["principal"],
            started_at=_aware(row["started_at"]) or row["started_at"],
        )
