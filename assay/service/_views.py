"""Request bodies and the JSON the service answers with.

Results (:class:`~assay.fence.RunResult`, :class:`~assay.fence.ThreadStatus`, the
run's manifest) are answered as their plain JSON form, as ``assay ... --json``
prints them; the audit adds the verifier's verdicts with the exact ledger span each
rests on, read as ``assay audit`` reads them.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, cast

from pydantic import BaseModel, ConfigDict, Field, JsonValue
from pydantic_core import to_jsonable_python

from assay.control_plane import ControlPlane
from assay.fence import ThreadStatus
from assay.service._tokens import Role, RunOwner, TokenInfo
from assay.verifier import audited_verdicts

__all__ = [
    "DecisionBody",
    "RunBody",
    "TokenBody",
    "audit_view",
    "jsonable",
    "thread_view",
    "token_view",
]

_BODY = ConfigDict(extra="forbid", strict=True)


class RunBody(BaseModel):
    """What starts a run: the graph's input (``{"task": ..., "context": {...}}`` or
    what the graph's ``prepare`` takes)."""

    model_config = _BODY

    input: dict[str, JsonValue]


class DecisionBody(BaseModel):
    """A reviewer's decision on every call a paused run waits on. There is no
    approver field: the approver is the authenticated principal."""

    model_config = _BODY

    approve: bool
    reason: Annotated[str, Field(max_length=2_000)] | None = None


class TokenBody(BaseModel):
    """A token to make: the principal's name, its role, and a lifetime (``30d``)."""

    model_config = _BODY

    name: Annotated[str, Field(min_length=1, max_length=200)]
    role: Role
    expires_in: Annotated[str, Field(pattern=r"^\d{1,6}[smhd]$")] | None = None


def jsonable(value: object) -> Any:
    """``value`` (dataclasses, pydantic models, datetimes included) as plain JSON."""
    return to_jsonable_python(value, fallback=repr)


def thread_view(found: ThreadStatus, owner: RunOwner | None) -> dict[str, Any]:
    """A thread as answered: where it stands, its result, and who started it through
    the service (``null`` for a run started elsewhere)."""
    body = cast(dict[str, Any], jsonable(found))
    body["started_by"] = owner.principal if owner is not None else None
    return body


def token_view(info: TokenInfo, now: datetime) -> dict[str, Any]:
    """A token as listed: never its secret or its hash."""
    body = cast(dict[str, Any], jsonable(info))
    body["active"] = info.active(now)
    return body


def audit_view(cp: ControlPlane, run_id: str) -> dict[str, Any]:
    """The run's manifest (phases, artifacts, gate decisions, verdicts, grants, tool
    calls, errors) and its audited claims, as ``assay audit --json`` prints them."""
    manifest = cp.manifest(run_id).model_dump(mode="json")
    return {**manifest, "claims": _audited_claims(cp, run_id)}


def _audited_claims(cp: ControlPlane, run_id: str) -> list[dict[str, Any]]:
    """The verifier's verdicts on the run's propositions, each with the exact span of
    the ledger entry it rests on (``quote``)."""
    return [
        {
            "claim_id": v.record["claim_id"],
            "proposition": v.record["proposition"],
            "label": v.record["label"],
            "score": v.record["score"],
            "ledger_id": v.entry.id if v.entry is not None else None,
            "span": list(v.span) if v.span is not None else None,
            "quote": v.quote,
            "source": v.entry.source if v.entry is not None else None,
            "reason": v.record.get("reason"),
            # What decided it: a deterministic check's id, or ``model`` (with the
            # model's id and score).
            "check": v.record.get("check"),
            "model": v.record.get("model"),
            # Where the proposition points: each citation with what it names.
            **({"cites": v.cites} if v.cites else {}),
        }
        for v in audited_verdicts(cp.ledger, run_id)
    ]
