"""Idempotent effects: an irreversible tool's effect happens once across all runs.

A tool that declares an ``idempotency_key`` (JSON pointers into its arguments) names
its effect by the values at those pointers: flagging line 3 of invoice INV-7731 is
one effect however many runs, threads or processes propose it. The first call with a
key that starts its handler holds the key (a row in ``tool_effects``, written in the
same transaction as the call's start). Any later call with the same key, in any run,
is refused as ``duplicate_effect``, naming the call that holds it and its ledger
entry, unless the grant of the new call names that earlier call as superseded; the
new call then holds the key, one generation on.

Key values are read in canonical form (:mod:`assay._canonical`), the form the gate
grounds arguments with: ``OPS-1234`` and the same in fullwidth digits, ``INV-4421`` with a
trailing space or a zero-width character inside, ``3F9A2C1D7E8B`` and
``3f9a2c1d7e8b``, ``129`` and ``129.0`` are one effect. The stored ``key_json``
holds the canonical values; a tool's handler still receives the arguments as given.

Which call holds a key is decided by the database: generation ``n + 1`` of a key is
one primary-key row, so of two calls racing for the same key (or superseding the
same holder) exactly one insert succeeds, on SQLite and PostgreSQL alike. A call
whose handler failed or timed out still holds its key: whether the effect happened
is not known, so repeating it takes a person's explicit ``supersedes``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from jsonpointer import JsonPointerException, resolve_pointer
from sqlalchemy.engine import Connection, Engine

from assay._canonical import canonical_value
from assay.ledger import canonical_json
from assay.tool_bus import _tables as t
from assay.tool_bus._records import ErrorDetail, GrantRequest, ToolFailure
from assay.tool_bus._spec import ToolSpec

__all__ = ["EffectHolder", "EffectKey", "claim_effect", "duplicate_failure", "effect_key", "holder"]

_MISSING: Any = object()


@dataclass(frozen=True, kw_only=True)
class EffectKey:
    """The effect a call would perform: its tool and the values its key names."""

    tool: str
    #: ``{pointer: canonical value}`` in the order the spec declares the pointers.
    values: Mapping[str, Any]
    #: sha256 of the canonical JSON of ``{"tool": ..., "key": values}``.
    sha256: str

    @property
    def key_json(self) -> str:
        return canonical_json(dict(self.values)).decode("utf-8")


@dataclass(frozen=True, kw_only=True)
class EffectHolder:
    """The call that performed an effect last: the one a repeat must supersede."""

    tool: str
    key_sha256: str
    key_values: Mapping[str, Any]
    generation: int
    run_id: str
    call_id: str
    #: The ``tool_call`` ledger entry of the holding call: what a grant's
    #: ``supersedes`` names.
    call_ledger_id: str
    started_at: datetime


def effect_key(
    spec: ToolSpec, args: Mapping[str, Any], *, scope: str | None = None
) -> EffectKey | ToolFailure | None:
    """The key of a call of ``spec`` with ``args``; ``None`` when the tool declares no
    key, an ``invalid_arguments`` failure when a pointer of the key finds no value (a
    call whose effect cannot be named cannot be told apart from another). A ``scope``
    (a bus's ``effect_scope``) names effects apart from every other scope's: an
    evaluation's refunds are its own, not repeats of another evaluation's."""
    if not spec.idempotency_key:
        return None
    values: dict[str, Any] = {}
    missing: list[ErrorDetail] = []
    for pointer in spec.idempotency_key:
        try:
            value = resolve_pointer(dict(args), pointer, _MISSING)
        except JsonPointerException:
            value = _MISSING
        if value is _MISSING:
            missing.append(
                ErrorDetail(
                    path=pointer,
                    message=f"{pointer} is part of {spec.name}'s idempotency key and has no value",
                )
            )
        else:
            values[pointer] = canonical_value(value)
    if missing:
        return ToolFailure(
            code="invalid_arguments",
            message=(
                f"{spec.ref} names its effect by {list(spec.idempotency_key)}; "
                f"{len(missing)} of them missing; nothing ran"
            ),
            details=missing,
        )
    named: dict[str, Any] = {"tool": spec.name, "key": values}
    if scope is not None:
        named["scope"] = scope
    digest = hashlib.sha256(canonical_json(named)).hexdigest()
    return EffectKey(tool=spec.name, values=values, sha256=digest)


def holder(conn: Connection | Engine, key: EffectKey) -> EffectHolder | None:
    """The call holding ``key`` now (its latest generation), if any call has."""
    query = (
        sa.select(t.effects)
        .where(t.effects.c.tool == key.tool, t.effects.c.key_sha256 == key.sha256)
        .order_by(t.effects.c.generation.desc())
        .limit(1)
    )
    if isinstance(conn, Engine):
        with conn.connect() as connection:
            row = connection.execute(query).first()
    else:
        row = conn.execute(query).first()
    if row is None:
        return None
    return EffectHolder(
        tool=row.tool,
        key_sha256=row.key_sha256,
        key_values=key.values,
        generation=row.generation,
        run_id=row.run_id,
        call_id=row.call_id,
        call_ledger_id=row.call_ledger_id,
        started_at=row.started_at,
    )


def claim_effect(
    conn: Connection, key: EffectKey, *, after: EffectHolder | None, start: Mapping[str, Any]
) -> None:
    """Hold ``key`` for the call whose start row is ``start`` (its ``run_id``,
    ``call_id``, ``call_ledger_id`` and ``started_at``), one generation after ``after``
    (the holder the call was checked against). Raises ``IntegrityError`` when another
    call took that generation first; the caller's savepoint then undoes the whole
    start."""
    conn.execute(
        t.effects.insert(),
        {
            "tool": key.tool,
            "key_sha256": key.sha256,
            "generation": 0 if after is None else after.generation + 1,
            "key_json": key.key_json,
            **{k: start[k] for k in ("run_id", "call_id", "call_ledger_id", "started_at")},
            "supersedes": None if after is None else after.call_ledger_id,
        },
    )


def duplicate_failure(
    spec: ToolSpec, earlier: EffectHolder, request: GrantRequest | None
) -> ToolFailure:
    """``duplicate_effect``: the effect was performed by ``earlier``. The failure
    carries the request a superseding grant would be issued for, so a person can
    decide to repeat it on purpose."""
    named = ", ".join(f"{p}={v!r}" for p, v in earlier.key_values.items())
    message = (
        f"{spec.name} already performed this effect ({named}) in run {earlier.run_id}, "
        f"call {earlier.call_id!r} (ledger entry {earlier.call_ledger_id}); a repeat needs "
        "a grant that supersedes that call"
    )
    details = [
        ErrorDetail(path="/run_id", message=earlier.run_id),
        ErrorDetail(path="/call_id", message=earlier.call_id),
        ErrorDetail(path="/call_ledger_id", message=earlier.call_ledger_id),
    ]
    return ToolFailure(code="duplicate_effect", message=message, details=details, request=request)
