"""Deterministic grounding: how evidence is read and how values in it are compared.

- :func:`view_of` reads a stored evidence entry the way the gate and the verifier
  do: a JSON tool output through its decoded leaves as ``path: value`` lines, with
  spans that map back to the stored text.
- Numbers, quantities with units, money and dates are found in text and compared
  in any common written form, and only where the equivalence is unambiguous
  (``find_quantities``, ``same``, ``find_dates``, ``same_date``).
- Identifiers (hashes, ids, paths, hosts, e-mail addresses, amounts, quantities,
  dates) found in a statement and matched in evidence, in the matching form of
  text (``normalise``: look-alike and invisible characters made plain), and
  :func:`ground`, the one entry point the gate and the verifier share.
- Checked arithmetic: a value that occurs in no evidence is accepted only when it is
  exactly a sum, difference, product, ratio, percentage, count or date difference
  of values in the evidence and the claim says it is one (``compute``,
  ``check_values``); a wrong result names the right one (``Miscalculation``).
- Derivations: a computation an agent states over its citations
  (``elapsed($0, $1)``, ``sum($0, $1, $2)``, ``count($0, status == "closed")``),
  evaluated by code and compared with its stated result (``derive``).
"""

from assay.grounding._argument_units import NO_UNIT, UNIT_KEYWORD, unit_sources, with_units
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
from assay.grounding._derivation import (
    DERIVATION_FUNCTIONS,
    MAX_DERIVATION_CHARS,
    MAX_DERIVATION_NODES,
    CitedValue,
    Derived,
    derivation_cites,
    derive,
    states_result,
)
from assay.grounding._evidence import (
    EvidenceIndex,
    Table,
    TableRow,
    Value,
    find_tables,
    index_evidence,
)
from assay.grounding._ground import GROUNDING_CACHE, Grounded, Grounding, ground
from assay.grounding._identifiers import (
    computation_in,
    describe_computation,
    expanded_characters,
    extract_identifiers,
    found_in,
    identifier_in_evidence,
    identifiers_of,
)
from assay.grounding._identifiers import evidence as prepared_evidence
from assay.grounding._numbers import (
    Convention,
    Number,
    convention_of,
    decimals_of,
    find_numbers,
    readings,
)
from assay.grounding._patterns import Identifier, IdentifierKind
from assay.grounding._quantities import (
    Approximation,
    Quantity,
    QuantityKind,
    find_quantities,
    same,
    supports,
)
from assay.grounding._spans import marked_excerpt, value_spans
from assay.grounding._unicode import (
    BIDI_CONTROLS,
    VARIATION_SELECTORS,
    Normalised,
    lookalike_of,
    normalise,
    script_of,
    visible,
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
    "BIDI_CONTROLS",
    "CUES",
    "CURRENCY_CODES",
    "CURRENCY_SIGNS",
    "DEFINITIONS",
    "DERIVATION_FUNCTIONS",
    "GROUNDING_CACHE",
    "MAX_DATES",
    "MAX_DERIVATION_CHARS",
    "MAX_DERIVATION_NODES",
    "MAX_OPERANDS",
    "MAX_RECORDS",
    "NO_UNIT",
    "TIME_UNITS",
    "UNIT_KEYWORD",
    "VARIATION_SELECTORS",
    "Approximation",
    "CitedValue",
    "ClaimValue",
    "Computation",
    "Convention",
    "DateMention",
    "Derived",
    "EvidenceIndex",
    "EvidenceView",
    "Grounded",
    "Grounding",
    "Identifier",
    "IdentifierKind",
    "Measure",
    "Miscalculation",
    "Normalised",
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
    "computation_in",
    "compute",
    "convention_of",
    "currency_of",
    "decimals_of",
    "derivation_cites",
    "derive",
    "describe_computation",
    "dollar_like",
    "evidence_index",
    "expanded_characters",
    "extract_identifiers",
    "find_dates",
    "find_numbers",
    "find_quantities",
    "find_tables",
    "found_in",
    "ground",
    "identifier_in_evidence",
    "identifiers_of",
    "index_evidence",
    "lookalike_of",
    "marked_excerpt",
    "measure",
    "normalise",
    "occurrence_of",
    "occurrences_of",
    "period_of",
    "prepared_evidence",
    "readings",
    "same",
    "same_date",
    "script_of",
    "states_result",
    "supports",
    "unit_of",
    "unit_sources",
    "value_spans",
    "view_of",
    "visible",
    "with_units",
    "years_in",
]
