"""Fencing LangGraph graphs: the control plane's nodes, ``fence()`` and results."""

from assay.graph._decision import IntentDecision, InvalidDecision, parse_decision
from assay.graph._fence import build_result, compose_answer, fence
from assay.graph._nodes import (
    abstain_node,
    act_node,
    gate_node,
    grant_node,
    policy_node,
    verify_node,
)
from assay.graph._result import ActionRecord, PendingGrant, RunResult, RunStatus
from assay.graph._state import FenceState

__all__ = [
    "ActionRecord",
    "FenceState",
    "IntentDecision",
    "InvalidDecision",
    "PendingGrant",
    "RunResult",
    "RunStatus",
    "abstain_node",
    "act_node",
    "build_result",
    "compose_answer",
    "fence",
    "gate_node",
    "grant_node",
    "parse_decision",
    "policy_node",
    "verify_node",
]
