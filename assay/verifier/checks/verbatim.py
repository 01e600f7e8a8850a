"""``verbatim``: a proposition its cited evidence states word for word (a final full
stop aside), in the stored text or a decoded JSON value, is entailed. A proposition
with ``cites`` is left to ``cited_spans``, which asks its quote to be whole
sentences: "the late fee is waived" cut out of "it is not true that the late fee is
waived" is not said by the entry."""

from __future__ import annotations

from assay.verifier._context import PropositionContext
from assay.verifier._deterministic import verbatim
from assay.verifier._pipeline import CheckSpec, Example, Finding


def _uncited(context: PropositionContext) -> bool:
    """a proposition without ``cites``"""
    return not context.proposition.cites


def _find(context: PropositionContext) -> Finding | None:
    quoted = verbatim(context.text, context.cited)
    if quoted is None:
        return None
    entry, span = quoted
    return Finding(
        label="entailment",
        reason="stated verbatim in the cited evidence",
        check=CHECK.id,
        ledger_id=entry.id,
        span=span,
    )


CHECK = CheckSpec(
    id="verbatim",
    summary="stated word for word in a cited entry",
    finder=_find,
    condition=_uncited,
    examples=(
        Example(
            proposition="The supplier shall deliver the signed form by 30 June 2025.",
            evidence=("Clause 4. The supplier shall deliver the signed form by 30 June 2025.",),
            finds="entailment",
        ),
        Example(
            proposition="The ticket was closed by the on-call engineer.",
            evidence=(
                '{"ticket": "OPS-1", "note": "The ticket was closed by the on-call engineer"}',
            ),
            finds="entailment",
            why="a decoded JSON value counts",
        ),
        Example(
            proposition="The supplier delivered the signed form on 30 June 2025.",
            evidence=("The supplier shall deliver the signed form by 30 June 2025.",),
            finds=None,
        ),
    ),
)
