"""``state_mismatch``: a proposition that puts a record in a state its own state
field rules out ("has completed" where ``status: in_progress``, "has been denied"
where ``status: under_review``, "was accepted" where the call answered ``HTTP/1.1
409 Conflict``, "is expected to land" where ``status: landed``) is contradicted by
that field (:mod:`assay.verifier._states`). Each clause is read on its own, against
the state fields of the records it names (by an identifier or a name; with none,
by its words)."""

from __future__ import annotations

import json
import re

from assay._text import clause_spans
from assay.grounding import extract_identifiers
from assay.verifier._accounted import names_of
from assay.verifier._context import PropositionContext
from assay.verifier._pipeline import CheckSpec, Example, Finding
from assay.verifier._states import codes, contradicting, said_classes, state_lines
from assay.verifier.checks._common import pointed, quoted


def _find(context: PropositionContext) -> Finding | None:
    pieces = [(piece, anchors) for piece, anchors in _pieces(context) if said_classes(piece)]
    if not pieces:
        return None
    readings = context.final_readings
    fields = [(i, line) for i, r in enumerate(readings) for line in state_lines(r.text)]
    for piece, anchors in pieces:
        found = contradicting([line for _, line in fields], piece, anchors)
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


#: Where a clause joins a second verb of its subject: "…, and is awaiting d.ferris".
_AND_VERB = re.compile(r",?\s+and\s+(?=(?:is|are|was|were|has|have|had)\b)", re.IGNORECASE)
#: Identifier kinds that are values, not names of a record.
_VALUES = frozenset({"amount", "date", "quantity"})


def _pieces(context: PropositionContext) -> list[tuple[str, list[str]]]:
    """The proposition's clauses cut where a subordinate clause starts ("…, while
    policy AU-5520817 was still in force") or a second verb joins ("… from k.novak
    and is awaiting d.ferris"), each with its anchors (identifiers, codes, names);
    a piece that names none speaks of what the piece before it named."""
    pieces: list[tuple[str, list[str]]] = []
    for clause in context.clauses or [context.text]:
        named: list[str] = []
        for part in _AND_VERB.split(clause):
            for a, b in clause_spans(part, "subordinate"):
                piece = part[a:b]
                anchors = [i.value for i in extract_identifiers(piece) if i.kind not in _VALUES]
                anchors += [*codes(piece), *names_of(piece)]
                named = anchors or named
                pieces.append((piece, named))
    return pieces


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
