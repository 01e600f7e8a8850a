"""The non-LLM gate: the hand-over checks, identifier provenance, the reply guard and
the run manifest (the hand-over contract itself is :mod:`assay.contract`).

Nothing passes from one agent to the next, or to a person, unless plain code here
has checked it: :class:`Gate` for hand-overs between agents, :func:`validate_reply`,
:func:`annotate` and :func:`self_correcting` for replies to people.
"""

from assay.gate._correction import self_correcting
from assay.gate._derivation import cited_value, evaluate_derivation
from assay.gate._gate import Gate, ToolLookup
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
    ReplyReport,
)
from assay.gate._reply import annotate, validate_reply

__all__ = [
    "GATE_ERROR_CODES",
    "Artifact",
    "DecisionSummary",
    "Gate",
    "GateCheck",
    "GateDecision",
    "GateFinding",
    "Phase",
    "Record",
    "ReplyReport",
    "RunManifest",
    "ToolLookup",
    "annotate",
    "build_manifest",
    "cited_value",
    "evaluate_derivation",
    "self_correcting",
    "validate_reply",
]
