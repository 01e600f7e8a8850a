"""``flag_conflict``: a cited JSON entry's true/false field, or outcome field
(``status: approved``), stated with the other value ("the fare can be refunded"
where ``fare.refundable: false``; "was rejected") is a contradiction. Read before the
sentence checks: a line that only names the record is no sentence to read a
negation against. Not applied where the proposition states a computed value."""

from __future__ import annotations

import json

from assay.verifier._context import PropositionContext
from assay.verifier._flags import flag_conflict, state_conflict
from assay.verifier._pipeline import CheckSpec, Example, Finding
from assay.verifier.checks._common import no_computation, pointed, quoted


def _find(context: PropositionContext) -> Finding | None:
    for entry, reading in zip(context.cited, context.final_readings, strict=True):
        span = flag_conflict(reading.text, context.text) or state_conflict(
            reading.text, context.text
        )
        if span is not None:
            reason = f"{entry.id} says the opposite: “{quoted(reading, span)}”"
            return pointed(CHECK.id, "contradiction", entry, reading, span, reason)
    return None


BOOKING = json.dumps(
    {
        "booking_ref": "QX7-22K",
        "passenger": "Maren Solvik",
        "fare": {"class": "economy light", "refundable": False, "changeable": True},
    }
)
_CLAIM_FILE = json.dumps({"claim_id": "WC-88412", "adjuster": "Rita Okoro", "status": "approved"})

CHECK = CheckSpec(
    id="flag_conflict",
    summary="a true/false or outcome field stated with the other value",
    finder=_find,
    condition=no_computation,
    examples=(
        Example(
            proposition="The QX7-22K fare can be refunded.",
            evidence=(BOOKING,),
            finds="contradiction",
        ),
        Example(
            proposition="Claim WC-88412 was rejected.",
            evidence=(_CLAIM_FILE,),
            finds="contradiction",
        ),
        Example(
            proposition="The QX7-22K fare cannot be refunded.", evidence=(BOOKING,), finds=None
        ),
        Example(proposition="Claim WC-88412 was approved.", evidence=(_CLAIM_FILE,), finds=None),
    ),
)
