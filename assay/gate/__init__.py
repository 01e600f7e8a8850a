"""The non-LLM gate: the hand-over contract, identifier provenance, the reply guard
and the run manifest.

Nothing passes from one agent to the next, or to a person, unless plain code here
has checked it: :class:`Gate` for hand-overs between agents, :func:`validate_reply`,
:func:`annotate` and :func:`self_correcting` for replies to people.
"""

from assay.contract import (
    HANDOVER_SCHEMA_ID,
    HANDOVER_SCHEMA_VERSION,
    ActionIntent,
    Citation,
    Claim,
    ClaimType,
    Handover,
    OpenQuestion,
    PointerCitation,
    Proposition,
    PropositionVerdict,
    QuoteCitation,
    VerdictLabel,
    handover_json_schema,
    handover_json_schema_text,
)
from assay.gate._correction import self_correcting
from assay.gate._gate import Gate, ToolLookup
from assay.gate._identifiers import (
    computation_in,
    describe_computation,
    extract_identifiers,
    identifier_in_evidence,
)
from assay.gate._manifest import (
    Artifact,
    DecisionSummary,
    Phase,
    Record,
    RunManifest,
    build_manifest,
)
from assay.gate._records import (
    GATE_ERROR_CODES,
    GateCheck,
    GateDecision,
    GateFinding,
    Identifier,
    IdentifierKind,
    ReplyReport,
)
from assay.gate._reply import annotate, validate_reply

__all__ = [
    "GATE_ERROR_CODES",
    "HANDOVER_SCHEMA_ID",
    "HANDOVER_SCHEMA_VERSION",
    "ActionIntent",
    "Artifact",
    "Citation",
    "Claim",
    "ClaimType",
    "DecisionSummary",
    "Gate",
    "GateCheck",
    "GateDecision",
    "GateFinding",
    "Handover",
    "Identifier",
    "IdentifierKind",
    "OpenQuestion",
    "Phase",
    "PointerCitation",
    "Proposition",
    "PropositionVerdict",
    "QuoteCitation",
    "Record",
    "ReplyReport",
    "RunManifest",
    "ToolLookup",
    "VerdictLabel",
    "annotate",
    "build_manifest",
    "computation_in",
    "describe_computation",
    "extract_identifiers",
    "handover_json_schema",
    "handover_json_schema_text",
    "identifier_in_evidence",
    "self_correcting",
    "validate_reply",
]
