"""The shared contract every layer speaks: hand-overs, claims, propositions, verdicts,
abstentions, and the label and code literals.

This module sits at the bottom of the package (beside :mod:`assay.errors`): the
ledger, tool bus, gate, verifier and fence all read these records, and none of them
has to import another component to name a verdict or an ``Unsupported``.

The hand-over models are a validation boundary, so they are strict (no coercion: ``"1"`` is
not a number, ``"true"`` is not a boolean) and closed (``extra="forbid"``: there is
no free ``summary`` field to quote prose through). The JSON Schema derived from
them is versioned and shipped as ``assay/gate/handover.schema.json``.
"""

from assay.contract._records import (
    HANDOVER_SCHEMA_ID,
    HANDOVER_SCHEMA_VERSION,
    NLI_LABELS,
    ActionIntent,
    Citation,
    Claim,
    ClaimType,
    Derivation,
    Handover,
    NLILabel,
    OpenQuestion,
    PointerCitation,
    Proposition,
    PropositionVerdict,
    QuoteCitation,
    Unsupported,
    UnsupportedLabel,
    VerdictLabel,
    handover_author_properties,
    handover_json_schema,
    handover_json_schema_text,
)

__all__ = [
    "HANDOVER_SCHEMA_ID",
    "HANDOVER_SCHEMA_VERSION",
    "NLI_LABELS",
    "ActionIntent",
    "Citation",
    "Claim",
    "ClaimType",
    "Derivation",
    "Handover",
    "NLILabel",
    "OpenQuestion",
    "PointerCitation",
    "Proposition",
    "PropositionVerdict",
    "QuoteCitation",
    "Unsupported",
    "UnsupportedLabel",
    "VerdictLabel",
    "handover_author_properties",
    "handover_json_schema",
    "handover_json_schema_text",
]
