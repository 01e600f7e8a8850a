"""``hedged_as_certain``: a clause stated as certain ("will raise the rate", "has
agreed to move") whose evidence clause gives it only as possible ("may raise",
"would consider moving", "if the curfew is reached") is not stated: the evidence
says less than the proposition. A proposition that keeps the hedge ("may raise")
is left to the later checks and the model."""

from __future__ import annotations

from assay.verifier._context import PropositionContext
from assay.verifier._pipeline import CheckSpec, Example, Finding
from assay.verifier._relations import hedged_as_certain
from assay.verifier.checks._common import pointed, quoted


def _find(context: PropositionContext) -> Finding | None:
    readings = context.final_readings
    gap = hedged_as_certain([r.text for r in readings], context.text)
    if gap is None:
        return None
    entry, reading = context.cited[gap.reading], readings[gap.reading]
    line = quoted(reading, gap.span)
    reason = (
        f"{entry.id} gives it only as possible (“{gap.word}”), not as certain: “{line}”; "
        "state it as the evidence does"
    )
    return pointed(CHECK.id, "neutral", entry, reading, gap.span, reason)


_RATES = (
    "We may raise the pallet storage rate to EUR 14.50 from 1 April 2025 if fuel costs stay high."
)

CHECK = CheckSpec(
    id="hedged_as_certain",
    summary="a possibility or a proposal stated as certain",
    finder=_find,
    examples=(
        Example(
            proposition="Orrin will raise the pallet storage rate to EUR 14.50 from 1 April 2025.",
            evidence=(_RATES,),
            finds="neutral",
        ),
        Example(
            proposition="Orrin may raise the pallet storage rate to EUR 14.50 from 1 April 2025.",
            evidence=(_RATES,),
            finds=None,
        ),
        Example(
            proposition="The client has signed the NDA.",
            evidence=("She said they would consider the offer, and she has signed the NDA.",),
            finds=None,
        ),
    ),
)
