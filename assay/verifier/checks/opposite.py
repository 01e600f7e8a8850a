"""``opposite``: a cited sentence that says the opposite of the proposition, or of
one of its clauses, is a contradiction: the same statement with the other polarity
("is not" against "is"), a change the other way ("fell" against "rose", "brought
forward" against "moved later") or the opposite action ("dropped" against
"added"). A clause is read on its own because a proposition that joins two facts
shares too few words with the one sentence that denies one of them for the whole to
be read against it."""

from __future__ import annotations

from collections.abc import Sequence

from assay.verifier._antonyms import action_conflict
from assay.verifier._context import PropositionContext
from assay.verifier._direction import direction_conflict
from assay.verifier._pipeline import CheckSpec, Example, Finding
from assay.verifier._polarity import polarity_conflict
from assay.verifier.checks._common import pointed, quoted


def says_the_opposite(
    text: str, proposition: str, clauses: Sequence[str]
) -> tuple[int, int] | None:
    """The span of ``text`` that says the opposite of ``proposition`` or of one of
    its ``clauses``, or None."""
    found = (
        polarity_conflict(text, proposition)
        or direction_conflict(text, proposition)
        or action_conflict(text, proposition)
    )
    for clause in clauses:
        if found is not None:
            break
        found = (
            polarity_conflict(text, clause, shared_negation=True)
            or direction_conflict(text, clause)
            or action_conflict(text, clause)
        )
    return found


def _find(context: PropositionContext) -> Finding | None:
    for entry, reading in zip(context.cited, context.final_readings, strict=True):
        span = says_the_opposite(reading.text, context.text, context.clauses)
        if span is not None:
            reason = f"{entry.id} says the opposite: “{quoted(reading, span)}”"
            return pointed(CHECK.id, "contradiction", entry, reading, span, reason)
    return None


_REPORT = (
    "Quarterly report Q3 2025 (Halden Foods plc)\n"
    "Revenue rose 8.4% to EUR 1.26 billion. Operating margin was 11.2%, down from 12.0% "
    "a year earlier."
)
_RELEASE = (
    "## 5.0.0 (2025-01-20)\n- Dropped support for Node 16.\n- Fixed a memory leak in the watcher.\n"
)
_CI = "Pipeline 8812: unit tests passed; integration tests failed on db-migrate."

CHECK = CheckSpec(
    id="opposite",
    summary="a cited sentence with the other polarity, direction or action",
    finder=_find,
    examples=(
        Example(
            proposition="Revenue fell 8.4% in the third quarter.",
            evidence=(_REPORT,),
            finds="contradiction",
        ),
        Example(
            proposition="Release 5.0.0 added support for Node 16.",
            evidence=(_RELEASE,),
            finds="contradiction",
        ),
        Example(
            proposition="The integration tests passed on db-migrate.",
            evidence=(_CI,),
            finds="contradiction",
        ),
        Example(
            proposition="Revenue rose 8.4% to EUR 1.26 billion.", evidence=(_REPORT,), finds=None
        ),
        Example(
            proposition="Release 5.0.0 dropped support for Node 16.",
            evidence=(_RELEASE,),
            finds=None,
        ),
    ),
)
