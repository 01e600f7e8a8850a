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

import typing

from assay._lazy import exports as _exports

if typing.TYPE_CHECKING:
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


# Each name is imported from its home when first used (PEP 562): importing the
# package loads none of them.
__getattr__, __dir__ = _exports(
    __name__,
    {
        "Derivation": "assay.contract._records",
        "HANDOVER_SCHEMA_ID": "assay.contract._records",
        "HANDOVER_SCHEMA_VERSION": "assay.contract._records",
        "NLI_LABELS": "assay.contract._records",
        "ActionIntent": "assay.contract._records",
        "Citation": "assay.contract._records",
        "Claim": "assay.contract._records",
        "ClaimType": "assay.contract._records",
        "Handover": "assay.contract._records",
        "NLILabel": "assay.contract._records",
        "OpenQuestion": "assay.contract._records",
        "PointerCitation": "assay.contract._records",
        "Proposition": "assay.contract._records",
        "PropositionVerdict": "assay.contract._records",
        "QuoteCitation": "assay.contract._records",
        "Unsupported": "assay.contract._records",
        "UnsupportedLabel": "assay.contract._records",
        "VerdictLabel": "assay.contract._records",
        "handover_author_properties": "assay.contract._records",
        "handover_json_schema": "assay.contract._records",
        "handover_json_schema_text": "assay.contract._records",
    },
)
