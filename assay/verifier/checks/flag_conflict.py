"""``flag_conflict``: a cited JSON entry's true/false field, or outcome field
(``status: approved``), stated with the other value ("the fare can be refunded"
where ``fare.refundable: false``; "was rejected") is a contradiction. Read before the
sentence checks: a line that only names the record is no sentence to read a
negation against. Where the proposition states a computed value, only its clauses
that state none are read ("The flat is furnished, and needs a two-month deposit of
EUR 3,600" against ``furnished: false``): a field settles only what its record
states."""

from __future__ import annotations

import json

from assay.verifier._context import PropositionContext
from assay.verifier._deterministic import deterministic_gaps
from assay.verifier._flags import flag_conflict, state_conflict
from assay.verifier._pipeline import CheckSpec, Example, Finding
from assay.verifier.checks._common import pointed, quoted


def _find(context: PropositionContext) -> Finding | None:
    texts = [context.text]
    if context.grounded.computations:
        texts = [
            c for c in context.clauses if not deterministic_gaps(c, context.views).computations
        ]
    for text in texts:
        for entry, reading in zip(context.cited, context.final_readings, strict=True):
            span = flag_conflict(reading.text, text) or state_conflict(reading.text, text)
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

_RENTAL = json.dumps({"flat": "Flat 3", "furnished": False, "rent": 1800, "currency": "EUR"})

CHECK = CheckSpec(
    id="flag_conflict",
    summary="a true/false or outcome field stated with the other value",
    finder=_find,
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
        Example(
            proposition="Flat 3 is furnished, and its deposit of two months' rent is EUR 3,600.",
            evidence=(_RENTAL,),
            finds="contradiction",
            why="the clause that states no computed value is read against the field",
        ),
        Example(
            proposition="Flat 3 is unfurnished, and its deposit of two months' rent is EUR 3,600.",
            evidence=(_RENTAL,),
            finds=None,
        ),
    ),
)
