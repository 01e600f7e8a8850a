"""``unstated_values``: every identifier, number, date, amount, quoted span and proper
name of the proposition must occur in its cited evidence, in any written form the
grounding accepts, or be a computation over it that the proposition says it is;
else it is missing evidence, and the reason names each absent value and an uncited
entry of the run that holds it."""

from __future__ import annotations

import json

from assay.verifier._context import PropositionContext
from assay.verifier._deterministic import describe_gaps
from assay.verifier._pipeline import CheckSpec, Example, Finding


def _find(context: PropositionContext) -> Finding | None:
    gaps = context.grounded.gaps
    if not gaps:
        return None
    return Finding(
        label="missing_evidence",
        reason=describe_gaps(gaps, context.cited, context.run_evidence.entries),
        check=CHECK.id,
    )


_LOAN = json.dumps(
    {"loan_id": "LN-2024-08817", "due": "2024-10-31", "fines": {"amount": 1.75, "currency": "EUR"}}
)

CHECK = CheckSpec(
    id="unstated_values",
    summary="a value, identifier, quote or name its cited evidence does not state",
    finder=_find,
    examples=(
        Example(
            proposition="Loan LN-2024-08817 was due back on 30 October 2024.",
            evidence=(_LOAN,),
            finds="missing_evidence",
        ),
        Example(
            proposition="Loan LN-2024-08871 was due back on 31 October 2024.",
            evidence=(_LOAN,),
            finds="missing_evidence",
            why="an identifier with two digits swapped",
        ),
        Example(
            proposition="Loan LN-2024-08817 was due back on 31 October 2024 with €1.75 in fines.",
            evidence=(_LOAN,),
            finds=None,
            why="the date and the amount in other written forms",
        ),
    ),
)
