"""The verifier's built-in deterministic checks, in the order they are asked.

Each module holds one check (its finder, when it applies, its examples); this list
is the order: what settles a proposition from its citations alone first, then its
values, then where its values stand, then what the records' fields and sentences
say of it. A proposition none settles goes to the NLI model. Add a check of your
own with :meth:`assay.verifier.LedgerVerifier.add_check`.
"""

from assay.verifier._context import PropositionContext, RunEvidence
from assay.verifier._pipeline import MODEL_CHECK, Check, CheckSpec, Cite, Example, Finding
from assay.verifier.checks import (
    cited_spans,
    derivation,
    expected_not_done,
    flag_conflict,
    flag_support,
    hedged_as_certain,
    miscalculation,
    misplaced_login,
    misplaced_name,
    no_evidence,
    opposite,
    order_in_time,
    planned_as_done,
    state_mismatch,
    too_long,
    unbound_slots,
    unstated_values,
    verbatim,
    wrong_row,
)

#: The built-in checks, in order.
DEFAULT_CHECKS: tuple[Check, ...] = (
    no_evidence.CHECK,
    too_long.CHECK,
    cited_spans.CHECK,
    derivation.CHECK,
    verbatim.CHECK,
    miscalculation.CHECK,
    unstated_values.CHECK,
    wrong_row.CHECK,
    misplaced_name.CHECK,
    misplaced_login.CHECK,
    unbound_slots.CHECK,
    flag_conflict.CHECK,
    state_mismatch.CHECK,
    flag_support.CHECK,
    opposite.CHECK,
    order_in_time.CHECK,
    expected_not_done.CHECK,
    hedged_as_certain.CHECK,
    planned_as_done.CHECK,
)

__all__ = [
    "DEFAULT_CHECKS",
    "MODEL_CHECK",
    "Check",
    "CheckSpec",
    "Cite",
    "Example",
    "Finding",
    "PropositionContext",
    "RunEvidence",
]
