"""``no_evidence``: a proposition that cites no evidence entry of its run is missing
evidence, whatever it says (a record kind, another run's entry and an unknown id are
not evidence of this one)."""

from __future__ import annotations

from assay.verifier._context import PropositionContext
from assay.verifier._pipeline import CheckSpec, Example, Finding


def _find(context: PropositionContext) -> Finding | None:
    if context.cited:
        return None
    return Finding(
        label="missing_evidence",
        reason=f"no ledger entry of this run supports “{context.text}”",
        check=CHECK.id,
    )


CHECK = CheckSpec(
    id="no_evidence",
    summary="cites no evidence entry of its run",
    finder=_find,
    examples=(
        Example(proposition="The parcel left Rotterdam.", evidence=(), finds="missing_evidence"),
        Example(
            proposition="The parcel left Rotterdam.",
            evidence=("Parcel PX-7781 left Rotterdam on 2025-02-02.",),
            finds=None,
        ),
    ),
)
