"""What the built-in checks share: a finding that points into what was read."""

from __future__ import annotations

from assay.contract import VerdictLabel
from assay.ledger import LedgerEntry
from assay.verifier._context import PropositionContext
from assay.verifier._deterministic import clip
from assay.verifier._pipeline import Finding
from assay.verifier._premises import Reading


def pointed(
    check: str,
    label: VerdictLabel,
    entry: LedgerEntry,
    reading: Reading,
    span: tuple[int, int],
    reason: str,
) -> Finding:
    """A finding that points at ``span`` of what was read of ``entry``; the verdict
    records the stored span."""
    return Finding(
        label=label,
        reason=reason,
        check=check,
        ledger_id=entry.id,
        span=reading.to_stored(*span),
    )


def quoted(reading: Reading, span: tuple[int, int]) -> str:
    """The text of ``span`` of a reading, on one line and clipped, for a reason."""
    return clip(reading.text[slice(*span)])


def typed(context: PropositionContext) -> bool:
    """a typed proposition (``pred``/``args``)"""
    return context.typed


def untyped(context: PropositionContext) -> bool:
    """an untyped proposition"""
    return not context.typed


def no_computation(context: PropositionContext) -> bool:
    """no computed value stated (a field settles only what the record states)"""
    return not context.grounded.computations
