"""``unbound_slots``: a typed proposition (``pred``/``args``) whose arguments are not
all stated inside one record of one cited entry (a JSON object with its enclosing
objects' scalar fields, a text line, a sentence) is missing evidence; the reason says
which argument stands where. Where one record holds them all, the later checks and
the model read that record in place of its entry."""

from __future__ import annotations

import json

from assay.verifier._context import PropositionContext
from assay.verifier._pipeline import CheckSpec, Example, Finding
from assay.verifier.checks._common import typed


def _find(context: PropositionContext) -> Finding | None:
    binding = context.binding
    if not isinstance(binding, str):
        return None
    return Finding(label="missing_evidence", reason=binding, check=CHECK.id)


_INVOICE = json.dumps(
    {
        "invoice": "INV-4421",
        "lines": [
            {"line": 1, "role": "partner", "rate_eur": 480},
            {"line": 2, "role": "associate", "rate_eur": 260},
        ],
    }
)

CHECK = CheckSpec(
    id="unbound_slots",
    summary="a typed proposition's arguments not stated together in one record",
    finder=_find,
    condition=typed,
    examples=(
        Example(
            proposition="Line 2 bills an associate at EUR 480 per hour.",
            evidence=(_INVOICE,),
            finds="missing_evidence",
            pred="billed_rate",
            args=("line 2", "associate", "EUR 480"),
        ),
        Example(
            proposition="Line 2 bills an associate at EUR 260 per hour.",
            evidence=(_INVOICE,),
            finds=None,
            pred="billed_rate",
            args=("line 2", "associate", "EUR 260"),
        ),
    ),
)
