"""``misplaced_name``: a name the cited entry gives in one field or party's role,
stated in another's ("merged by dvarga" where ``merged_by: lcho`` and ``author:
dvarga``; the lender called the borrower), is not stated; the finding points at the
role's own value."""

from __future__ import annotations

import json

from assay.verifier._context import PropositionContext
from assay.verifier._fields import wrong_field, wrong_party
from assay.verifier._pipeline import CheckSpec, Example, Finding
from assay.verifier.checks._common import pointed, quoted


def _find(context: PropositionContext) -> Finding | None:
    for entry, reading in zip(context.cited, context.readings, strict=True):
        found = wrong_field(reading.text, context.text) or wrong_party(reading.text, context.text)
        if found is not None:
            span, _, given = found
            reason = f"{entry.id} gives “{quoted(reading, span)}”, not {given}"
            return pointed(CHECK.id, "neutral", entry, reading, span, reason)
    return None


_PULL = json.dumps({"number": 4412, "state": "merged", "merged_by": "lcho", "author": "dvarga"})
_LOAN = (
    "Loan agreement LA-3319 between Brightwater Credit Union (lender) and "
    "Kestrel Joinery Ltd (borrower). Principal GBP 80,000."
)

CHECK = CheckSpec(
    id="misplaced_name",
    summary="a name in another field's or party's role",
    finder=_find,
    examples=(
        Example(proposition="PR 4412 was merged by dvarga.", evidence=(_PULL,), finds="neutral"),
        Example(
            proposition="Brightwater Credit Union is the borrower under LA-3319.",
            evidence=(_LOAN,),
            finds="neutral",
        ),
        Example(proposition="PR 4412 was merged by lcho.", evidence=(_PULL,), finds=None),
        Example(
            proposition="Kestrel Joinery is the borrower under LA-3319.",
            evidence=(_LOAN,),
            finds=None,
        ),
    ),
)
