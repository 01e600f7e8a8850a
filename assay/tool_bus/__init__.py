"""The typed tool bus: versioned schema registry, validated calls, structured errors,
grants bound to the exact call, policy rules, payload validators, LangChain tools, and
the settling of calls whose outcome a crash left unknown."""

from assay.tool_bus._bus import DEFAULT_TIMEOUT_S, ToolBus
from assay.tool_bus._diff import (
    DiffCode,
    PreCheck,
    check_unified_diff,
    diff_precheck,
    diff_problems,
)
from assay.tool_bus._effects import EffectHolder
from assay.tool_bus._grants import Grants, approver_problems
from assay.tool_bus._langchain import RUN_ID_KEY, BusTool, bus_tool
from assay.tool_bus._policy import Condition, Policy, Rule, load_policy
from assay.tool_bus._records import (
    ClaimStatus,
    ClaimStatusSource,
    EntailmentLabel,
    ErrorCode,
    ErrorDetail,
    Grant,
    GrantRequest,
    Lookup,
    LookupAnswer,
    SettledOutcome,
    ToolFailure,
    ToolResult,
    args_sha256,
)
from assay.tool_bus._registry import Handler, RegistryView, ToolRegistry
from assay.tool_bus._run import ExceptionInfo, describe_exception
from assay.tool_bus._spec import SIDE_EFFECTS, SideEffect, ToolSpec
from assay.tool_bus._unsettled import Settlement, UnsettledCall
from assay.tool_bus._validation import argument_errors, json_problems, output_errors

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "RUN_ID_KEY",
    "SIDE_EFFECTS",
    "BusTool",
    "ClaimStatus",
    "ClaimStatusSource",
    "Condition",
    "DiffCode",
    "EffectHolder",
    "EntailmentLabel",
    "ErrorCode",
    "ErrorDetail",
    "ExceptionInfo",
    "Grant",
    "GrantRequest",
    "Grants",
    "Handler",
    "Lookup",
    "LookupAnswer",
    "Policy",
    "PreCheck",
    "RegistryView",
    "Rule",
    "SettledOutcome",
    "Settlement",
    "SideEffect",
    "ToolBus",
    "ToolFailure",
    "ToolRegistry",
    "ToolResult",
    "ToolSpec",
    "UnsettledCall",
    "approver_problems",
    "args_sha256",
    "argument_errors",
    "bus_tool",
    "check_unified_diff",
    "describe_exception",
    "diff_precheck",
    "diff_problems",
    "json_problems",
    "load_policy",
    "output_errors",
]
