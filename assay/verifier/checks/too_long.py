"""``too_long``: a proposition over :data:`~assay._limits.MAX_PROPOSITION_CHARS` is
not judged: it is several statements, and each should be checked on its own."""

from __future__ import annotations

from assay._limits import MAX_PROPOSITION_CHARS
from assay.verifier._context import PropositionContext
from assay.verifier._pipeline import CheckSpec, Example, Finding


def _find(context: PropositionContext) -> Finding | None:
    size = len(context.text)
    if size <= MAX_PROPOSITION_CHARS:
        return None
    return Finding(
        label="missing_evidence",
        reason=f"the proposition is {size:,} characters, over the limit of "
        f"{MAX_PROPOSITION_CHARS:,}; split it into statements that can be checked",
        check=CHECK.id,
    )


_LONG = "The parcel left Rotterdam on time. " * (MAX_PROPOSITION_CHARS // 30)

CHECK = CheckSpec(
    id="too_long",
    summary=f"longer than {MAX_PROPOSITION_CHARS:,} characters: several statements",
    finder=_find,
    examples=(
        Example(
            proposition=_LONG, evidence=("The parcel left Rotterdam.",), finds="missing_evidence"
        ),
        Example(
            proposition="The parcel left Rotterdam.",
            evidence=("The parcel left Rotterdam.",),
            finds=None,
        ),
    ),
)
