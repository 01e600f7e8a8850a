"""The tool bus's exceptions.

Exceptions are for the code that wires the bus (registering tools, issuing grants,
loading policies). What a planner does wrong when it proposes a call is never an
exception: it comes back as data, a :class:`~assay.tool_bus.ToolError` inside the
:class:`~assay.tool_bus.ToolResult`. ::

    AssayError
    └── UsageError
        └── (ToolBusError) ─┬─ InvalidToolSpec      a spec that is not a valid ToolSpec
                            ├─ RegistryConflict     name@version already holds another spec
                            ├─ ToolNotFound         unknown tool or version (.code, .suggestions)
                            ├─ InvalidCall          a call id or claim id the bus cannot store
                            ├─ UnknownGrant         a grant id that was never issued
                            ├─ GrantRefused         a grant that may not be issued (.reasons)
                            │  └─ GrantExists       a call's grant is live or used (.grant)
                            └─ InvalidPolicy        a policy document that does not parse
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from assay.errors import AssayError, UsageError

if TYPE_CHECKING:
    from assay.tool_bus._records import Grant

__all__ = [
    "GrantExists",
    "GrantRefused",
    "InvalidCall",
    "InvalidPolicy",
    "InvalidToolSpec",
    "RegistryConflict",
    "ToolBusError",
    "ToolNotFound",
    "UnknownGrant",
]


class ToolBusError(AssayError):
    """Root of the tool bus's exceptions."""


class InvalidToolSpec(ToolBusError, UsageError):
    """A tool spec that cannot be registered; ``problems`` lists every reason."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        super().__init__("invalid tool spec: " + "; ".join(self.problems))


class RegistryConflict(ToolBusError, UsageError):
    """``name@version`` is already registered with a different spec (or handler)."""


class ToolNotFound(ToolBusError, UsageError):
    """No such tool, or no such version of it; ``suggestions`` are close matches."""

    def __init__(
        self,
        message: str,
        *,
        code: Literal["unknown_tool", "unknown_version"],
        suggestions: Sequence[str] = (),
    ) -> None:
        super().__init__(message)
        self.code: Literal["unknown_tool", "unknown_version"] = code
        self.suggestions = list(suggestions)


class InvalidCall(ToolBusError, UsageError):
    """A call id, run id or claim id of a shape the bus cannot record."""


class UnknownGrant(ToolBusError, UsageError):
    """A grant id that this database never issued."""


class GrantRefused(ToolBusError, UsageError):
    """A grant that may not be issued; ``reasons`` says why, one line per reason."""

    def __init__(self, reasons: Sequence[str]) -> None:
        self.reasons = list(reasons)
        super().__init__("grant refused: " + "; ".join(self.reasons))


class GrantExists(GrantRefused):
    """The call already has a grant that is live or was used: at most one may exist
    per pending call, so a second approval (two reviewers, two resuming processes)
    is refused and ``grant`` names the one that stands."""

    def __init__(self, grant: Grant, reason: str) -> None:
        self.grant = grant
        super().__init__([reason])


class InvalidPolicy(ToolBusError, UsageError):
    """A policy document (YAML or JSON) that does not match the policy schema."""
