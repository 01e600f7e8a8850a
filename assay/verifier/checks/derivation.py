"""``derivation``: a computation the proposition states over its citations
(``{"expr": "elapsed($0, $1)", "result": "37 minutes"}``), evaluated by code.

A derivation that evaluates to a value other than its stated result is a
contradiction, and the reason names the right value ("the time between 06:12 UTC
and 06:49 UTC is 37 minutes, not 47 minutes"); the verdict records the computation
and the cited values it read. One that cannot be evaluated (what the gate refuses as
``bad_derivation``) is missing evidence.

A derivation that holds settles nothing by itself: it makes its result, a value of
the proposition, grounded (the later checks do not look for it in the evidence,
and the model reads the computation beside the evidence), and it is recorded in the
verdict's ``computations``. What the proposition says of that value (that the
outage, and not the maintenance window, lasted 37 minutes) is left to the later
checks and the model, which read only what the citations name: right arithmetic on
the wrong fields must not pass a false claim.
"""

from __future__ import annotations

import json

from assay.verifier._context import PropositionContext
from assay.verifier._pipeline import CheckSpec, Cite, Example, Finding


def _derives(context: PropositionContext) -> bool:
    """a proposition with a ``derivation``"""
    return context.proposition.derivation is not None


def _find(context: PropositionContext) -> Finding | None:
    derived = context.derivation
    if derived is None:
        return None
    if isinstance(derived, str):
        return Finding(
            label="missing_evidence",
            reason=f"its derivation cannot be evaluated: {derived}",
            check=CHECK.id,
        )
    if derived.holds:
        return None
    record = context.derivation_record(derived)
    first = record["operands"][0] if record["operands"] else None
    return Finding(
        label="contradiction",
        reason=f"{derived.statement}, not {derived.result}",
        check=CHECK.id,
        ledger_id=first["ledger_id"] if first else None,
        span=(first["span"][0], first["span"][1]) if first else None,
        computations=(record,),
    )


_INCIDENT = json.dumps(
    {
        "incident": "INC-2291",
        "outage": {"started_at": "2025-04-13T06:12:00Z", "ended_at": "2025-04-13T06:49:00Z"},
    }
)
_STARTED = Cite(entry=0, pointer="/outage/started_at")
_ENDED = Cite(entry=0, pointer="/outage/ended_at")

CHECK = CheckSpec(
    id="derivation",
    summary="a computation it states over its citations, evaluated: a wrong result contradicts it",
    finder=_find,
    condition=_derives,
    examples=(
        Example(
            proposition="The INC-2291 outage lasted 47 minutes.",
            evidence=(_INCIDENT,),
            cites=(_STARTED, _ENDED),
            derivation=("elapsed($0, $1)", "47 minutes"),
            finds="contradiction",
            why="the time between the cited moments is 37 minutes",
        ),
        Example(
            proposition="The INC-2291 outage lasted 37 minutes.",
            evidence=(_INCIDENT,),
            cites=(_STARTED, _ENDED),
            derivation=("elapsed($0, $1)", "37 minutes"),
            finds=None,
            why="the arithmetic holds: its value is grounded, the relation left to the model",
        ),
        Example(
            proposition="The INC-2291 outage lasted 37 minutes.",
            evidence=(_INCIDENT,),
            cites=(_STARTED, _ENDED),
            derivation=("count($0)", "37"),
            finds="missing_evidence",
            why="count() of a date: what the gate refuses as bad_derivation",
        ),
    ),
)
