"""The review's audit trail in the ledger: resume values that were not a decision, and
decisions that came after another on the same call.

A refused resume value is recorded under the pause it answered (the round and the
pending calls) and its index among that pause's resume values, so a replay of the
grant node knows it was refused when it arrived, whatever the checkpoint's
serialiser made of it since.
"""

from __future__ import annotations

from collections.abc import Mapping

from assay.errors import AlreadyDecided
from assay.fence._components import FenceComponents
from assay.fence._review import IntentDecision, PendingCall
from assay.ledger import canonical_json, sha256_hex

__all__ = ["pause_key", "record_refused_decision", "record_rival", "refused_resumes"]


def pause_key(pending: list[PendingCall], round_: int) -> str:
    """Names one pause: the round and the pending calls it asks about."""
    calls = [(p.intent_id, p.args_sha256) for p in pending]
    return sha256_hex(canonical_json([round_, calls]))[:16]


def refused_resumes(control_plane: FenceComponents, run_id: str, pause: str) -> dict[int, str]:
    """Which resume values of this pause were refused, by their index, and why."""
    refused: dict[int, str] = {}
    for entry in control_plane.ledger.entries(run_id, kinds=["error"]):
        meta = entry.metadata
        if meta.get("code") == "invalid_decision" and meta.get("pause") == pause:
            refused[int(meta["resume_index"])] = str(meta.get("message", "not a decision"))
    return refused


def record_refused_decision(
    control_plane: FenceComponents, run_id: str, pause: str, index: int, message: str
) -> None:
    """The audit trail of a resume value that was not a decision, and what later
    replays of the node go by."""
    control_plane.ledger.append(
        run_id,
        kind="error",
        source="assay.grant",
        content=canonical_json({"code": "invalid_decision", "message": message}).decode(),
        metadata={
            "code": "invalid_decision",
            "pause": pause,
            "resume_index": index,
            "message": message[:500],
        },
    )


def record_rival(
    control_plane: FenceComponents,
    run_id: str,
    refusal: AlreadyDecided,
    decisions: Mapping[str, IntentDecision],
) -> None:
    """The audit trail of a decision that came after another on the same call: what
    was attempted, and which decision stands."""
    standing = refusal.decision
    attempted = decisions.get(str(standing.get("intent_id")))
    body = {
        "code": "already_decided",
        "message": str(refusal),
        "standing": standing,
        "attempted": attempted.model_dump(mode="json") if attempted is not None else None,
    }
    control_plane.ledger.append(
        run_id,
        kind="error",
        source="assay.grant",
        content=canonical_json(body).decode(),
        metadata={"code": "already_decided", "call_id": str(standing.get("call_id"))},
    )
