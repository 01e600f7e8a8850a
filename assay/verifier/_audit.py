"""Reading a run's verdicts back for an audit: the verifier's records, and the exact
text of the span each one cites, read from the cited ledger entry.

The ledger accepts records from anyone, so a reader that shows verdicts (the command
line's audit, the service's, the review page) checks their shape here, once.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from assay.ledger import Ledger, LedgerEntry

__all__ = ["AuditedVerdict", "audited_verdicts", "verdict_record"]

_VERDICT_FIELDS = ("claim_id", "proposition", "label", "score")


def verdict_record(entry: LedgerEntry) -> dict[str, Any] | None:
    """The body of a ``verdict`` entry as the verifier writes it, or ``None`` for any
    other content."""
    try:
        body = json.loads(entry.text)
    except ValueError:
        return None
    if not isinstance(body, dict) or any(k not in body for k in _VERDICT_FIELDS):
        return None
    return cast(dict[str, Any], body)


@dataclass(frozen=True, kw_only=True)
class AuditedVerdict:
    """One verdict of a run, with the entry it cites when the ledger holds it."""

    #: The verdict entry's body (:func:`verdict_record`).
    record: dict[str, Any]
    #: The cited entry; ``None`` when the verdict cites none the ledger holds.
    entry: LedgerEntry | None
    #: The cited span ``(start, end)``, when well formed and its entry is held.
    span: tuple[int, int] | None

    @property
    def quote(self) -> str | None:
        """The exact text of the cited span."""
        if self.entry is None or self.span is None:
            return None
        return self.entry.text[self.span[0] : self.span[1]]

    @property
    def cites(self) -> list[dict[str, Any]]:
        """The proposition's citations as the verdict records them (``ledger_id``,
        ``quote`` or ``pointer``, the stored ``span`` and the ``text`` it names, or
        ``None`` where it names nothing); those of another shape are left out."""
        raw = self.record.get("cites")
        if not isinstance(raw, list):
            return []
        return [c for c in map(_cite, cast(list[object], raw)) if c is not None]


def _cite(value: object) -> dict[str, Any] | None:
    if not isinstance(value, dict):
        return None
    cite = cast(dict[str, Any], value)
    keys = ("quote", "pointer")
    if not isinstance(cite.get("ledger_id"), str) or not any(
        isinstance(cite.get(k), str) for k in keys
    ):
        return None
    text = cite.get("text")
    return {
        "ledger_id": cite["ledger_id"],
        **{k: cite[k] if isinstance(cite.get(k), str) else None for k in keys},
        "span": list(span) if (span := _span(cite.get("span"))) is not None else None,
        "text": text if isinstance(text, str) else None,
    }


def audited_verdicts(ledger: Ledger, run_id: str) -> list[AuditedVerdict]:
    """Every verdict the verifier recorded in ``run_id``, in chain order, each with
    its cited entry and span (the cited entries read in one query)."""
    records = [
        r for r in map(verdict_record, ledger.entries(run_id, kinds=["verdict"])) if r is not None
    ]
    cited = ledger.get_many(r["ledger_id"] for r in records if isinstance(r.get("ledger_id"), str))
    audited: list[AuditedVerdict] = []
    for record in records:
        ledger_id = record.get("ledger_id")
        entry = cited.get(ledger_id) if isinstance(ledger_id, str) else None
        span = _span(record.get("span")) if entry is not None else None
        audited.append(AuditedVerdict(record=record, entry=entry, span=span))
    return audited


def _span(value: object) -> tuple[int, int] | None:
    if not isinstance(value, list | tuple):
        return None
    pair = cast(Sequence[object], value)
    if len(pair) != 2 or not all(isinstance(v, int) and not isinstance(v, bool) for v in pair):
        return None
    start, end = cast(Sequence[int], pair)
    return (start, end) if 0 <= start <= end else None
