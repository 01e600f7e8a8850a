"""``state_mismatch``: a proposition that puts a record in a state its own state
field rules out ("has completed" where ``status: in_progress``, "has been denied"
where ``status: under_review``, "was accepted" where the call answered ``HTTP/1.1
409 Conflict``, "is expected to land" where ``status: landed``) is contradicted by
that field (:mod:`assay.verifier._states`). Each clause is read on its own, against
the state fields of the records it names (by an identifier or a name; with none,
by its words)."""

from __future__ import annotations

import json

from assay.grounding import extract_identifiers
from assay.verifier._accounted import names_of
from assay.verifier._context import PropositionContext
from assay.verifier._pipeline import CheckSpec, Example, Finding
from assay.verifier._states import codes, contradicting, state_lines
from assay.verifier.checks._common import pointed, quoted

#: Identifier kinds that are values, not names of a record.
_VALUES = frozenset({"amount", "date", "quantity"})


def _find(context: PropositionContext) -> Finding | None:
    readings = context.final_readings
    fields = [(i, line) for i, r in enumerate(readings) for line in state_lines(r.text)]
    if not fields:
        return None
    for clause in context.clauses or [context.text]:
        anchors = [i.value for i in extract_identifiers(clause) if i.kind not in _VALUES]
        found = contradicting(
            [line for _, line in fields], clause, [*anchors, *codes(clause), *names_of(clause)]
        )
        if found is None:
            continue
        index = next(i for i, line in fields if line is found)
        entry, reading = context.cited[index], readings[index]
        reason = (
            f"{entry.id} gives it as {found.state.replace('_', ' ')}: "
            f"“{quoted(reading, found.span)}”"
        )
        return pointed(CHECK.id, "contradiction", entry, reading, found.span, reason)
    return None


_AUDIT = json.dumps(
    {
        "student": "Oskar Lindqvist",
        "capstone": [
            {"course": "CS 4900", "status": "complete"},
            {"course": "CS 4910", "status": "in_progress"},
        ],
    }
)
_CLAIM_FILE = json.dumps({"claim": "CLM-2024-1177", "status": "under_review"})
_HTTP = 'HTTP/1.1 409 Conflict\n{"error": "duplicate_request", "request": "ILL-77310"}'

CHECK = CheckSpec(
    id="state_mismatch",
    summary="a record put in a state its own state field rules out",
    finder=_find,
    examples=(
        Example(
            proposition="Oskar has completed CS 4910.", evidence=(_AUDIT,), finds="contradiction"
        ),
        Example(
            proposition="Claim CLM-2024-1177 has been denied.",
            evidence=(_CLAIM_FILE,),
            finds="contradiction",
        ),
        Example(
            proposition="The interlibrary loan request ILL-77310 was accepted.",
            evidence=(_HTTP,),
            finds="contradiction",
        ),
        Example(proposition="Oskar has completed CS 4900.", evidence=(_AUDIT,), finds=None),
        Example(
            proposition="Oskar has not completed CS 4910 yet.",
            evidence=(_AUDIT,),
            finds=None,
            why="a negated state says nothing here",
        ),
        Example(
            proposition="Claim CLM-2024-1177 is under review.", evidence=(_CLAIM_FILE,), finds=None
        ),
        Example(
            proposition="The request for ILL-77310 failed with a 409 conflict.",
            evidence=(_HTTP,),
            finds=None,
        ),
    ),
)
