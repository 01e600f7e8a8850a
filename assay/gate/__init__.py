"""The non-LLM gate: the hand-over checks, identifier provenance, the reply guard and
the run manifest (the hand-over contract itself is :mod:`assay.contract`).

Nothing passes from one agent to the next, or to a person, unless plain code here
has checked it: :class:`Gate` for hand-overs between agents, :func:`validate_reply`,
:func:`annotate` and :func:`self_correcting` for replies to people.
"""

import typing

from assay._lazy import exports as _exports

if typing.TYPE_CHECKING:
    from assay.gate._citations import CitedSpan, nfkc
    from assay.gate._citations import locate as locate_citation
    from assay.gate._correction import self_correcting
    from assay.gate._derivation import cited_value, evaluate_derivation
    from assay.gate._gate import Gate, ToolLookup
    from assay.gate._intent_ids import intent_call_id
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
    "CitedSpan",
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
    "intent_call_id",
    "locate_citation",
    "nfkc",
    "self_correcting",
    "validate_reply",
]


# Each name is imported from its home when first used (PEP 562): importing the
# package loads none of them.
__getattr__, __dir__ = _exports(
    __name__,
    {
        "cited_value": "assay.gate._derivation",
        "evaluate_derivation": "assay.gate._derivation",
        "CitedSpan": "assay.gate._citations",
        "locate_citation": "assay.gate._citations:locate",
        "nfkc": "assay.gate._citations",
        "self_correcting": "assay.gate._correction",
        "Gate": "assay.gate._gate",
        "ToolLookup": "assay.gate._gate",
        "intent_call_id": "assay.gate._intent_ids",
        "Artifact": "assay.gate._manifest",
        "DecisionSummary": "assay.gate._manifest",
        "Phase": "assay.gate._manifest",
        "Record": "assay.gate._manifest",
        "RunManifest": "assay.gate._manifest",
        "build_manifest": "assay.gate._manifest",
        "GATE_ERROR_CODES": "assay.gate._records",
        "GateCheck": "assay.gate._records",
        "GateDecision": "assay.gate._records",
        "GateFinding": "assay.gate._records",
        "ReplyReport": "assay.gate._records",
        "annotate": "assay.gate._reply",
        "validate_reply": "assay.gate._reply",
    },
)
