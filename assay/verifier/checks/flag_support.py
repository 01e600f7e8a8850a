"""``flag_support``: a one-clause proposition that states just a cited JSON entry's
true/false field, with its value and no word the record does not write ("Maren
Solvik's fare is not refundable" where ``fare.refundable: false``), is entailed by
that field. Anything more is the model's to read."""

from __future__ import annotations

from assay.verifier._context import PropositionContext
from assay.verifier._flags import flag_support
from assay.verifier._pipeline import CheckSpec, Example, Finding
from assay.verifier.checks._common import no_computation, pointed, quoted
from assay.verifier.checks.flag_conflict import BOOKING


def _find(context: PropositionContext) -> Finding | None:
    for entry, reading in zip(context.cited, context.final_readings, strict=True):
        span = flag_support(reading.text, context.text)
        if span is not None:
            reason = f"stated by the field “{quoted(reading, span)}”"
            return pointed(CHECK.id, "entailment", entry, reading, span, reason)
    return None


CHECK = CheckSpec(
    id="flag_support",
    summary="states just a true/false field, with its value",
    finder=_find,
    condition=no_computation,
    examples=(
        Example(
            proposition="Maren Solvik's fare is not refundable.",
            evidence=(BOOKING,),
            finds="entailment",
        ),
        Example(proposition="The fare can be changed.", evidence=(BOOKING,), finds="entailment"),
        Example(
            proposition="The fare cannot be refunded because it was booked late.",
            evidence=(BOOKING,),
            finds=None,
            why="a reason the record never writes is the model's to read",
        ),
    ),
)
