"""The run manifest: what happened in a run, derived from its ledger alone.

No other table and no in-memory state is consulted, so a manifest can be rebuilt
from a copy of the database at any later time and will say the same thing.

A *phase* ends at each gate decision: it holds every entry appended since the
previous decision (the evidence gathered, the tool calls made, the hand-over) and
is named after the agent whose hand-over the decision judged. Entries after the
last decision form a final, ``open`` phase.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, JsonValue

from assay._limits import MAX_JSON_DEPTH, json_depth_ok
from assay.ledger import EVIDENCE_KINDS, Ledger, LedgerEntry

_PREVIEW = 2000


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Artifact(_Frozen):
    """An evidence entry of the run: what may be cited."""

    ledger_id: str
    seq: int
    kind: str
    source: str
    sha256: str
    size: int


class Record(_Frozen):
    """An audit-trail entry (tool call, verdict, grant, error…) with its content."""

    ledger_id: str
    seq: int
    kind: str
    source: str
    metadata: dict[str, JsonValue]
    content: JsonValue


class DecisionSummary(_Frozen):
    """One gate decision: which hand-over, accepted or not, and the error codes."""

    ledger_id: str
    seq: int
    handover_id: str | None
    from_agent: str | None
    accepted: bool
    codes: list[str]


class Phase(_Frozen):
    """Entries from one gate decision (exclusive) to the next (inclusive)."""

    index: int
    agent: str | None
    status: Literal["accepted", "rejected", "open"]
    first_seq: int
    last_seq: int
    kinds: dict[str, int]
    handover_id: str | None
    decision_id: str | None


class RunManifest(_Frozen):
    """A run as JSON: phases, artifacts, gate decisions, verdicts, grants, calls, errors."""

    run_id: str
    created_at: str
    head_hash: str
    entries: int
    chain_ok: bool
    chain_problem: str | None
    phases: list[Phase]
    artifacts: list[Artifact]
    handovers: list[Record]
    gate_decisions: list[DecisionSummary]
    verdicts: list[Record]
    unsupported: list[Record]
    grants: list[Record]
    tool_calls: list[Record]
    errors: list[Record]

    def to_json(self, *, indent: int | None = 2) -> str:
        """The manifest as JSON text."""
        return self.model_dump_json(indent=indent)


_RECORD_LISTS = {
    "handover": "handovers",
    "verdict": "verdicts",
    "unsupported": "unsupported",
    "grant": "grants",
    "tool_call": "tool_calls",
    "error": "errors",
}


def build_manifest(ledger: Ledger, run_id: str) -> RunManifest:
    """Derive the manifest of ``run_id`` (:class:`~assay.UnknownRun` if there is none)."""
    info = ledger.run(run_id)
    entries = ledger.entries(run_id)
    report = ledger.verify(run_id)
    lists: dict[str, list[Record]] = {name: [] for name in _RECORD_LISTS.values()}
    artifacts: list[Artifact] = []
    for entry in entries:
        if entry.kind in EVIDENCE_KINDS:
            artifacts.append(
                Artifact(
                    ledger_id=entry.id,
                    seq=entry.seq,
                    kind=entry.kind,
                    source=entry.source,
                    sha256=entry.sha256,
                    size=len(entry.content_bytes),
                )
            )
        elif entry.kind in _RECORD_LISTS:
            lists[_RECORD_LISTS[entry.kind]].append(_record(entry))
    by_id = {e.id: e for e in entries}
    decisions = [_decision(e, by_id) for e in entries if e.kind == "gate_decision"]
    return RunManifest(
        run_id=run_id,
        created_at=info.created_at.isoformat(),
        head_hash=info.head_hash,
        entries=len(entries),
        chain_ok=report.ok,
        chain_problem=report.reason,
        phases=_phases(entries, decisions),
        artifacts=artifacts,
        gate_decisions=decisions,
        **lists,
    )


def _record(entry: LedgerEntry) -> Record:
    return Record(
        ledger_id=entry.id,
        seq=entry.seq,
        kind=entry.kind,
        source=entry.source,
        metadata=entry.metadata,
        content=_content(entry),
    )


def _content(entry: LedgerEntry) -> JsonValue:
    """Parsed JSON when the content is JSON, else the text (long text cut, marked)."""
    if isinstance(entry.content, bytes):
        return f"<{len(entry.content)} bytes>"
    try:
        parsed: Any = json.loads(entry.content)
        if not json_depth_ok(parsed, MAX_JSON_DEPTH):
            raise ValueError("nested too deep to show as JSON")
    except (ValueError, RecursionError):
        text = entry.content
        return text if len(text) <= _PREVIEW else text[:_PREVIEW] + "…"
    return parsed


def _decision(entry: LedgerEntry, by_id: dict[str, LedgerEntry]) -> DecisionSummary:
    meta = entry.metadata
    handover_id = meta.get("handover_id")
    handover = by_id.get(handover_id) if isinstance(handover_id, str) else None
    codes = meta.get("codes")
    return DecisionSummary(
        ledger_id=entry.id,
        seq=entry.seq,
        handover_id=handover_id if isinstance(handover_id, str) else None,
        from_agent=handover.source if handover is not None else None,
        accepted=meta.get("accepted") is True,
        codes=[c for c in codes if isinstance(c, str)] if isinstance(codes, list) else [],
    )


def _phases(entries: list[LedgerEntry], decisions: list[DecisionSummary]) -> list[Phase]:
    by_seq = {d.seq: d for d in decisions}
    phases: list[Phase] = []
    current: list[LedgerEntry] = []
    for entry in entries:
        current.append(entry)
        decision = by_seq.get(entry.seq) if entry.kind == "gate_decision" else None
        if decision is not None:
            phases.append(_phase(len(phases), current, decision))
            current = []
    if current:
        phases.append(_phase(len(phases), current, None))
    return phases


def _phase(index: int, entries: list[LedgerEntry], decision: DecisionSummary | None) -> Phase:
    kinds: dict[str, int] = {}
    for entry in entries:
        kinds[entry.kind] = kinds.get(entry.kind, 0) + 1
    if decision is None:
        status: Literal["accepted", "rejected", "open"] = "open"
    else:
        status = "accepted" if decision.accepted else "rejected"
    return Phase(
        index=index,
        agent=decision.from_agent if decision is not None else None,
        status=status,
        first_seq=entries[0].seq,
        last_seq=entries[-1].seq,
        kinds=kinds,
        handover_id=decision.handover_id if decision is not None else None,
        decision_id=decision.ledger_id if decision is not None else None,
    )
