"""Fencing LangGraph graphs: the control plane's nodes, ``fence()``, results, and the
runner that starts, resumes and lists runs of any fenced graph."""

from assay.fence._checkpointer import Checkpointer
from assay.fence._components import FenceComponents
from assay.fence._decisions import DecisionStore, StoredDecision
from assay.fence._fence import FencedGraph, build_result, compose_answer, fence, graph_identity
from assay.fence._nodes import (
    abstain_node,
    act_node,
    gate_node,
    grant_node,
    policy_node,
    verify_node,
)
from assay.fence._react import (
    HANDOVER_PROMPT,
    ReactAgent,
    ToolSelection,
    bus_tools,
    handover_response_schema,
    react_agent,
)
from assay.fence._result import (
    ActionRecord,
    PendingGrant,
    RunResult,
    RunStatus,
    ThreadState,
    ThreadStatus,
)
from assay.fence._review import (
    REVIEW_DECISION_SCHEMA_ID,
    REVIEW_REQUEST_SCHEMA_ID,
    REVIEW_SCHEMA_VERSION,
    EvidenceSpan,
    IntentDecision,
    IntentDecisions,
    PendingCall,
    Refusal,
    ReviewClaim,
    ReviewDecision,
    ReviewProposition,
    ReviewRequest,
    parse_decision,
    review_decision_json_schema,
    review_decision_json_schema_text,
    review_request_json_schema,
    review_request_json_schema_text,
)
from assay.fence._runner import aresume, arun, paused, resume, run, status
from assay.fence._state import FenceState
from assay.fence._threads import GraphIdentity
from assay.fence._tracing import InvocationSpan, invocation_span, traced_node

__all__ = [
    "HANDOVER_PROMPT",
    "REVIEW_DECISION_SCHEMA_ID",
    "REVIEW_REQUEST_SCHEMA_ID",
    "REVIEW_SCHEMA_VERSION",
    "ActionRecord",
    "Checkpointer",
    "DecisionStore",
    "EvidenceSpan",
    "FenceComponents",
    "FenceState",
    "FencedGraph",
    "GraphIdentity",
    "IntentDecision",
    "IntentDecisions",
    "InvocationSpan",
    "PendingCall",
    "PendingGrant",
    "ReactAgent",
    "Refusal",
    "ReviewClaim",
    "ReviewDecision",
    "ReviewProposition",
    "ReviewRequest",
    "RunResult",
    "RunStatus",
    "StoredDecision",
    "ThreadState",
    "ThreadStatus",
    "ToolSelection",
    "abstain_node",
    "act_node",
    "aresume",
    "arun",
    "build_result",
    "bus_tools",
    "compose_answer",
    "fence",
    "gate_node",
    "grant_node",
    "graph_identity",
    "handover_response_schema",
    "invocation_span",
    "parse_decision",
    "paused",
    "policy_node",
    "react_agent",
    "resume",
    "review_decision_json_schema",
    "review_decision_json_schema_text",
    "review_request_json_schema",
    "review_request_json_schema_text",
    "run",
    "status",
    "traced_node",
    "verify_node",
]
