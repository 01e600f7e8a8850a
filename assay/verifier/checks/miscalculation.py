"""``miscalculation``: a value the proposition says it computed ("in total", "12 days
later") that its cited evidence computes otherwise is a contradiction; the reason
names the right value, and the verdict records the computation and where its
operands stand."""

from __future__ import annotations

from assay.verifier._context import PropositionContext, computation_record
from assay.verifier._pipeline import CheckSpec, Example, Finding

_CONTAINERS = (
    "YARD   BLOCK  TEU  REEFERS\n"
    "North  A      310  12\n"
    "North  B      264  0\n"
    "South  C      666  40\n"
)


def _find(context: PropositionContext) -> Finding | None:
    grounded = context.grounded
    wrong = grounded.miscalculation
    if wrong is None:
        return None
    record = computation_record(wrong.expected, context.cited)
    first = record["operands"][0] if record["operands"] else None
    return Finding(
        label="contradiction",
        reason=f"“{grounded.gaps[0]}” is not what it says it computes: {record['statement']}",
        check=CHECK.id,
        ledger_id=first["ledger_id"] if first else context.cited[0].id,
        span=(first["span"][0], first["span"][1]) if first else None,
        computations=(record,),
    )


CHECK = CheckSpec(
    id="miscalculation",
    summary="a value it says it computed, which the evidence computes otherwise",
    finder=_find,
    examples=(
        Example(
            proposition="The three blocks hold 1,420 containers in total.",
            evidence=(_CONTAINERS,),
            finds="contradiction",
        ),
        Example(
            proposition="The three blocks hold 1,240 containers in total.",
            evidence=(_CONTAINERS,),
            finds=None,
            why="the sum is right",
        ),
    ),
)
