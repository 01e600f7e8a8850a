"""The bus's records: structured errors, results, grant requests, grants, claim status,
and what a tool's lookup says of an effect whose outcome is unknown.

Errors are data: a planner reads ``ToolFailure.code`` and ``details`` (JSON pointer,
message) and fixes its proposal; nothing here is prose meant for a person only, and
none of it is raised.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol, runtime_checkable

from assay.contract import VerdictLabel
from assay.ledger import canonical_json, sha256_hex
from assay.tool_bus._spec import loads_canonical

__all__ = [
    "ClaimStatus",
    "ClaimStatusSource",
    "EntailmentLabel",
    "ErrorCode",
    "ErrorDetail",
    "Grant",
    "GrantRequest",
    "Lookup",
    "LookupAnswer",
    "SettledOutcome",
    "ToolFailure",
    "ToolResult",
    "args_sha256",
]

ErrorCode = Literal[
    "unknown_tool",
    "unknown_version",
    "invalid_arguments",
    "no_handler",
    "tool_failed",
    "tool_timeout",
    "invalid_output",
    "grant_required",
    "grant_invalid",
    "call_in_progress",
    "call_id_conflict",
    "stored_result_invalid",
    "empty_diff",
    "malformed_diff",
    "forbidden_path",
    "no_run",
    "duplicate_effect",
    "outcome_unknown",
    "outcome_settled",
]

#: What a call whose outcome was unknown came to, once settled.
SettledOutcome = Literal["performed", "not_performed"]

EntailmentLabel = VerdictLabel


def args_sha256(args: Any) -> str:
    """sha256 of the RFC 8785 canonical JSON of a call's arguments."""
    return sha256_hex(canonical_json(args))


@dataclass(frozen=True, kw_only=True)
class ErrorDetail:
    """One violation: where (a JSON pointer into the arguments or output, ``""`` for
    the whole value) and what."""

    path: str
    message: str


@dataclass(frozen=True, kw_only=True)
class GrantRequest:
    """What a grant must be issued for: exactly this call in this run, resting on
    these claims. ``call_id`` is the bus call id the grant will be used by: a grant
    is honoured for that call only (the bus's ``grant_required`` error carries a
    request with it filled in)."""

    run_id: str
    tool: str
    version: str
    args: Mapping[str, Any]
    args_sha256: str
    depends_on: tuple[str, ...] = ()
    call_id: str | None = None
    #: The ledger ids of earlier calls (their ``tool_call`` entries) whose effect this
    #: call repeats on purpose: a tool with an idempotency key refuses a second call
    #: with the same key unless its grant names the earlier one here.
    supersedes: tuple[str, ...] = ()

    @classmethod
    def for_call(
        cls,
        run_id: str,
        tool: str,
        version: str,
        args: Mapping[str, Any],
        depends_on: Sequence[str] = (),
        *,
        call_id: str | None = None,
        supersedes: Sequence[str] = (),
    ) -> GrantRequest:
        return cls(
            run_id=run_id,
            tool=tool,
            version=version,
            args=args,
            args_sha256=args_sha256(dict(args)),
            depends_on=tuple(depends_on),
            call_id=call_id,
            supersedes=tuple(supersedes),
        )

    def as_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "run_id": self.run_id,
            "tool": self.tool,
            "version": self.version,
            "args": dict(self.args),
            "args_sha256": self.args_sha256,
            "depends_on": list(self.depends_on),
            "call_id": self.call_id,
        }
        if self.supersedes:
            data["supersedes"] = list(self.supersedes)
        return data


@dataclass(frozen=True, kw_only=True)
class ToolFailure:
    """A refused or failed call, as data for the planner."""

    code: ErrorCode
    message: str
    details: list[ErrorDetail] = field(default_factory=list[ErrorDetail])
    request: GrantRequest | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "message": self.message,
            "details": [{"path": d.path, "message": d.message} for d in self.details],
            "request": None if self.request is None else self.request.as_json(),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ToolFailure:
        request = data.get("request")
        return cls(
            code=data["code"],
            message=data["message"],
            details=[ErrorDetail(path=d["path"], message=d["message"]) for d in data["details"]],
            request=None
            if request is None
            else GrantRequest(
                run_id=request["run_id"],
                tool=request["tool"],
                version=request["version"],
                args=request["args"],
                args_sha256=request["args_sha256"],
                depends_on=tuple(request["depends_on"]),
                call_id=request.get("call_id"),
                supersedes=tuple(request.get("supersedes", ())),
            ),
        )


@dataclass(frozen=True, kw_only=True)
class ToolResult:
    """What a call came to. ``ledger_id`` is the ``tool_output`` entry when ``ok`` (the
    id an agent cites), else the ``error`` entry recording the failure."""

    ok: bool
    output: Any = None
    ledger_id: str | None = None
    error: ToolFailure | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "output": self.output,
            "ledger_id": self.ledger_id,
            "error": None if self.error is None else self.error.as_json(),
        }

    def to_json(self) -> str:
        """Canonical JSON text of :meth:`as_json` (what the LangChain adapter returns)."""
        return canonical_json(self.as_json()).decode("utf-8")

    @classmethod
    def from_json(cls, text: str) -> ToolResult:
        data = loads_canonical(text)
        error = data.get("error")
        return cls(
            ok=data["ok"],
            output=data["output"],
            ledger_id=data["ledger_id"],
            error=None if error is None else ToolFailure.from_json(error),
        )


@dataclass(frozen=True, kw_only=True)
class LookupAnswer:
    """What a tool's lookup found of one effect, named by its idempotency key: whether
    it was performed, and what the tool's own system says of it (``detail``, JSON,
    kept in the settlement's ledger entry)."""

    performed: bool
    detail: Any = None


#: A tool's lookup: given an effect's key values (``{pointer: value}``, as the spec's
#: ``idempotency_key`` names them), says whether the effect happened: a
#: :class:`LookupAnswer` (or a plain ``bool``), or ``None`` when it cannot tell. It is
#: how a call cut short by a crash is settled without a person.
Lookup = Callable[[dict[str, Any]], "LookupAnswer | bool | None"]


@dataclass(frozen=True, kw_only=True)
class Grant:
    """Permission for one irreversible call: single-use, expiring, bound to the run,
    the call id, tool, version, the arguments' hash and the claim set."""

    id: str
    run_id: str
    tool: str
    version: str
    args_sha256: str
    depends_on: tuple[str, ...]
    approver: str
    via: str
    issued_at: datetime
    expires_at: datetime
    ledger_id: str
    call_id: str | None = None
    #: The earlier calls (``tool_call`` ledger ids) whose effect this grant repeats.
    supersedes: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class ClaimStatus:
    """A claim as the verifier left it: whether the run has it, and the entailment
    label of each of its propositions, in order."""

    claim_id: str
    known: bool
    labels: tuple[str, ...] = ()
    #: The text of each proposition, as verified: what a policy rule may rely on.
    texts: tuple[str, ...] = ()
    #: The ``(pred, args)`` of each proposition, as verified: what an argument's
    #: declared role (``x-assay-role``) is read from.
    slots: tuple[tuple[str | None, tuple[str, ...]], ...] = ()

    @property
    def entailed(self) -> bool:
        """Known, with at least one proposition, every one of them entailed."""
        return self.known and bool(self.labels) and all(x == "entailment" for x in self.labels)


@runtime_checkable
class ClaimStatusSource(Protocol):
    """Where grants learn whether the claims a call depends on are verified."""

    def claim_status(self, run_id: str, claim_ids: Sequence[str]) -> Mapping[str, ClaimStatus]:
        """The status of each claim id; a missing id counts as unknown."""
        ...
