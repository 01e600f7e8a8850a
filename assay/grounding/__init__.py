"""Deterministic grounding: how evidence is read and how values in it are compared.

- :func:`view_of` reads a stored evidence entry the way the gate and the verifier
  do: a JSON tool output through its decoded leaves as ``path: value`` lines, with
  spans that map back to the stored text.
- Numbers, quantities with units, money and dates are found in text and compared
  in any common written form, and only where the equivalence is unambiguous
  (``find_quantities``, ``same``, ``find_dates``, ``same_date``).
- Checked arithmetic: a value that occurs in no evidence is accepted only when it is
  exactly a sum, difference, product, ratio, percentage, count or date difference
  of values in the evidence and the claim says it is one (``compute``,
  ``check_values``); a wrong result names the right one (``Miscalculation``).
"""

from assay.grounding._arithmetic import (
    CUES,
    MAX_DATES,
    MAX_OPERANDS,
    MAX_RECORDS,
    Computation,
    Miscalculation,
    Operand,
    Operation,
    compute,
)
from assay.grounding._check import (
    ClaimValue,
    Occurrence,
    ValueCheck,
    check_indexed,
    check_values,
    claim_values,
    evidence_index,
    occurrence_of,
    occurrences_of,
)
from assay.grounding._dates import (
    DateMention,
    find_dates,
    same_date,
    years_in,
)
from assay.grounding._evidence import (
    EvidenceIndex,
    Table,
    TableRow,
    Value,
    find_tables,
    index_evidence,
)
from assay.grounding._numbers import (
    Convention,
    Number,
    convention_of,
    decimals_of,
    find_numbers,
    readings,
)
from assay.grounding._quantities import (
    Approximation,
    Quantity,
    QuantityKind,
    find_quantities,
    same,
    supports,
)
from assay.grounding._units import (
    CURRENCY_CODES,
    CURRENCY_SIGNS,
    DEFINITIONS,
    TIME_UNITS,
    Measure,
    currency_of,
    dollar_like,
    measure,
    period_of,
    unit_of,
)
from assay.grounding._views import (
    EvidenceView,
    ViewLine,
    view_of,
)

__all__ = [
    "CUES",
    "CURRENCY_CODES",
    "CURRENCY_SIGNS",
    "DEFINITIONS",
    "MAX_DATES",
    "MAX_OPERANDS",
    "MAX_RECORDS",
    "TIME_UNITS",
    "Approximation",
    "ClaimValue",
    "Computation",
    "Convention",
    "DateMention",
    "EvidenceIndex",
    "EvidenceView",
    "Measure",
    "Miscalculation",
    "Number",
    "Occurrence",
    "Operand",
    "Operation",
    "Quantity",
    "QuantityKind",
    "Table",
    "TableRow",
    "Value",
    "ValueCheck",
    "ViewLine",
    "check_indexed",
    "check_values",
    "claim_values",
    "compute",
    "convention_of",
    "currency_of",
    "decimals_of",
    "dollar_like",
    "evidence_index",
    "find_dates",
    "find_numbers",
    "find_quantities",
    "find_tables",
    "index_evidence",
    "measure",
    "occurrence_of",
    "occurrences_of",
    "period_of",
    "readings",
    "same",
    "same_date",
    "supports",
    "unit_of",
    "view_of",
    "years_in",
]
