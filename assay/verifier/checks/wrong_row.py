"""``wrong_row``: a value or word of another row (a table row, a clause, a section)
stated of the row the proposition names is missing evidence, unless another cited
entry states it. Typed propositions are bound record by record instead
(``unbound_slots``)."""

from __future__ import annotations

from assay.verifier._context import PropositionContext
from assay.verifier._pipeline import CheckSpec, Example, Finding
from assay.verifier._rows import row_mismatch
from assay.verifier.checks._common import untyped


def _find(context: PropositionContext) -> Finding | None:
    views = context.views
    for k, entry in enumerate(context.cited):
        wrong = row_mismatch(entry.text, context.text, [*views[:k], *views[k + 1 :]])
        if wrong is not None:
            return Finding(label="missing_evidence", reason=f"{entry.id}: {wrong}", check=CHECK.id)
    return None


_SALES = """analytics=> SELECT region, orders, revenue_aud FROM q1_sales;
 region | orders | revenue_aud
--------+--------+-------------
 NSW    |   1824 |   412,930.50
 VIC    |   1507 |   366,118.00
 QLD    |    992 |   201,447.25
(3 rows)"""

CHECK = CheckSpec(
    id="wrong_row",
    summary="a value of another row, clause or section stated of the one it names",
    finder=_find,
    condition=untyped,
    examples=(
        Example(
            proposition="QLD had 1,507 orders in Q1.", evidence=(_SALES,), finds="missing_evidence"
        ),
        Example(proposition="VIC had 1,507 orders in Q1.", evidence=(_SALES,), finds=None),
        Example(
            proposition="QLD had 1,507 orders in Q1.",
            evidence=(_SALES, "Correction: QLD had 1,507 orders in Q1, not 992."),
            finds=None,
            why="another cited entry states it",
        ),
    ),
)
