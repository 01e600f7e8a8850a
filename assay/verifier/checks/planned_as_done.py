"""``planned_as_done``: a clause that reports an act as done ("has been triaged",
"the board approved a dividend", "repaired it that night") whose evidence clause
gives that act as still to come (``status: awaiting_triage``, "proposed a
dividend, to be voted on", "is booked for Friday") is not stated. A proposition
that keeps it to come ("is awaiting triage", "will be voted on") is left to the
later checks and the model. A date given only as expected is ``expected_not_done``'s."""

from __future__ import annotations

from assay.verifier._context import PropositionContext
from assay.verifier._pipeline import CheckSpec, Example, Finding
from assay.verifier._relations import planned_as_done
from assay.verifier.checks._common import pointed, quoted


def _find(context: PropositionContext) -> Finding | None:
    readings = context.final_readings
    gap = planned_as_done([r.text for r in readings], context.text)
    if gap is None:
        return None
    entry, reading = context.cited[gap.reading], readings[gap.reading]
    line = quoted(reading, gap.span)
    reason = f"{entry.id} gives it as still to come (“{gap.word}”), not as done: “{line}”"
    return pointed(CHECK.id, "neutral", entry, reading, gap.span, reason)


_MINUTES = (
    "The board approved the 2025 budget. Ms Ferreira proposed a dividend of USD 0.40 per "
    "share, to be voted on at the AGM."
)

CHECK = CheckSpec(
    id="planned_as_done",
    summary="an act still to come reported as done",
    finder=_find,
    examples=(
        Example(
            proposition="The board approved a dividend of USD 0.40 per share.",
            evidence=(_MINUTES,),
            finds="neutral",
        ),
        Example(
            proposition="A dividend of USD 0.40 per share will be voted on at the AGM.",
            evidence=(_MINUTES,),
            finds=None,
        ),
        Example(
            proposition="The board approved the 2025 budget.",
            evidence=(_MINUTES,),
            finds=None,
        ),
        Example(
            proposition="Referral RF-2291 has been triaged by cardiology.",
            evidence=('{"referral": "RF-2291", "state": "awaiting_triage"}',),
            finds="neutral",
        ),
    ),
)
