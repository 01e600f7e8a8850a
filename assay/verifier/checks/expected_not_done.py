"""``expected_not_done``: a date the cited evidence gives only as expected (due,
scheduled, ETA, "by"), reported as the date something was done, is not stated."""

from __future__ import annotations

from assay.verifier._context import PropositionContext
from assay.verifier._expected import expected_as_done
from assay.verifier._pipeline import CheckSpec, Example, Finding
from assay.verifier.checks._common import pointed, quoted


def _find(context: PropositionContext) -> Finding | None:
    for entry, reading in zip(context.cited, context.final_readings, strict=True):
        span = expected_as_done(reading.text, context.text)
        if span is not None:
            line = quoted(reading, span)
            reason = f"{entry.id} gives the date only as expected, not as done: “{line}”"
            return pointed(CHECK.id, "neutral", entry, reading, span, reason)
    return None


_SHIPMENT = "Shipment SH-88120 left Rotterdam on 2025-02-02. ETA Felixstowe 2025-02-04."

CHECK = CheckSpec(
    id="expected_not_done",
    summary="a date given only as expected, reported as done",
    finder=_find,
    examples=(
        Example(
            proposition="SH-88120 arrived in Felixstowe on 4 February 2025.",
            evidence=(_SHIPMENT,),
            finds="neutral",
        ),
        Example(
            proposition="SH-88120 is expected in Felixstowe on 4 February 2025.",
            evidence=(_SHIPMENT,),
            finds=None,
        ),
        Example(
            proposition="SH-88120 left Rotterdam on 2 February 2025.",
            evidence=(_SHIPMENT,),
            finds=None,
        ),
    ),
)
