"""The typed tool bus: versioned schema registry, validated calls, structured errors,
grants bound to the exact call, policy rules, payload validators, LangChain tools, and
the settling of calls whose outcome a crash left unknown."""

import typing

from assay._lazy import exports as _exports

if typing.TYPE_CHECKING:
    from assay.tool_bus._bus import DEFAULT_TIMEOUT_S, ToolBus
    from assay.tool_bus._context import ToolContext
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
    "ToolContext",
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


# Each name is imported from its home when first used (PEP 562): importing the
# package loads none of them.
__getattr__, __dir__ = _exports(
    __name__,
    {
        "DEFAULT_TIMEOUT_S": "assay.tool_bus._bus",
        "ToolBus": "assay.tool_bus._bus",
        "ToolContext": "assay.tool_bus._context",
        "DiffCode": "assay.tool_bus._diff",
        "PreCheck": "assay.tool_bus._diff",
        "check_unified_diff": "assay.tool_bus._diff",
        "diff_precheck": "assay.tool_bus._diff",
        "diff_problems": "assay.tool_bus._diff",
        "EffectHolder": "assay.tool_bus._effects",
        "Grants": "assay.tool_bus._grants",
        "approver_problems": "assay.tool_bus._grants",
        "RUN_ID_KEY": "assay.tool_bus._langchain",
        "BusTool": "assay.tool_bus._langchain",
        "bus_tool": "assay.tool_bus._langchain",
        "Condition": "assay.tool_bus._policy",
        "Policy": "assay.tool_bus._policy",
        "Rule": "assay.tool_bus._policy",
        "load_policy": "assay.tool_bus._policy",
        "ClaimStatus": "assay.tool_bus._records",
        "ClaimStatusSource": "assay.tool_bus._records",
        "EntailmentLabel": "assay.tool_bus._records",
        "ErrorCode": "assay.tool_bus._records",
        "ErrorDetail": "assay.tool_bus._records",
        "Grant": "assay.tool_bus._records",
        "GrantRequest": "assay.tool_bus._records",
        "Lookup": "assay.tool_bus._records",
        "LookupAnswer": "assay.tool_bus._records",
        "SettledOutcome": "assay.tool_bus._records",
        "ToolFailure": "assay.tool_bus._records",
        "ToolResult": "assay.tool_bus._records",
        "args_sha256": "assay.tool_bus._records",
        "Handler": "assay.tool_bus._registry",
        "RegistryView": "assay.tool_bus._registry",
        "ToolRegistry": "assay.tool_bus._registry",
        "ExceptionInfo": "assay.tool_bus._run",
        "describe_exception": "assay.tool_bus._run",
        "SIDE_EFFECTS": "assay.tool_bus._spec",
        "SideEffect": "assay.tool_bus._spec",
        "ToolSpec": "assay.tool_bus._spec",
        "Settlement": "assay.tool_bus._unsettled",
        "UnsettledCall": "assay.tool_bus._unsettled",
        "argument_errors": "assay.tool_bus._validation",
        "json_problems": "assay.tool_bus._validation",
        "output_errors": "assay.tool_bus._validation",
    },
)
