"""What a fenced run comes to: the records a caller reads from ``RunResult``."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from assay.contract import Claim, Unsupported

RunStatus = Literal["answered", "abstained", "awaiting_grant", "failed"]
#: Where a thread stands: ``running`` while a node runs, else its run's ``RunStatus``.
ThreadState = Literal["running", "awaiting_grant", "answered", "abstained", "failed"]
ActionStatus = Literal["executed", "denied", "failed", "not_run", "unknown"]


@dataclass(frozen=True, kw_only=True)
class ActionRecord:
    """One action intent and what became of it.

    ``executed``: the bus ran it (``ledger_id`` is its ``tool_output``); ``denied``: a
    reviewer refused the grant (``reason`` says why); ``failed``: the bus returned a
    structured error (``error``); ``not_run``: its claims were not all entailed.

    ``unknown``: its handler started and its result was never recorded (the process
    running it was killed), so whether its effect happened is not known; it is never
    run again under its call id, and is not to be retried blindly. ``error`` (code
    ``outcome_unknown``) names the call (tool, run, call id, ``tool_call`` ledger
    entry, the effect's key values) and ``reason`` says how to settle it
    (``bus.settle_call``). Once settled, the call reads as ``executed`` (performed) or
    ``not_run`` (not performed), ``ledger_id`` the ``settlement`` entry and ``reason``
    who settled it and what that releases (nothing: a repeat needs a grant).
    """

    intent_id: str
    tool: str
    version: str | None
    args: dict[str, Any]
    status: ActionStatus
    grant_id: str | None = None
    approver: str | None = None
    ledger_id: str | None = None
    output: Any = None
    error: dict[str, Any] | None = None
    reason: str | None = None


@dataclass(frozen=True, kw_only=True)
class PendingGrant:
    """An irreversible call waiting for a reviewer: the call, and what it rests on."""

    intent_id: str
    tool: str
    version: str
    args: dict[str, Any]
    args_sha256: str
    depends_on: tuple[str, ...]
    claims: tuple[dict[str, Any], ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "depends_on", tuple(self.depends_on))
        object.__setattr__(self, "claims", tuple(self.claims))


@dataclass(frozen=True, kw_only=True)
class RoundReasons:
    """Why one round's hand-over was sent back: the gate's findings (``errors``) and
    the propositions not established (``unsupported``), as the agent was told them."""

    round: int
    errors: tuple[dict[str, Any], ...] = ()
    unsupported: tuple[Unsupported, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "errors", tuple(self.errors))
        object.__setattr__(self, "unsupported", tuple(self.unsupported))


@dataclass(frozen=True, kw_only=True)
class RunResult:
    """The outcome of a fenced run.

    ``status`` is ``answered`` (every asserted proposition entailed, nothing left
    open), ``abstained`` (evidence ran out: see ``unsupported``, ``errors`` and the
    answer's "Not established" part), ``awaiting_grant`` (paused before an
    irreversible call: see ``pending_grants``, then ``cp.resume``) or ``failed``
    (the agent failed or never produced a hand-over the gate accepted; see
    ``errors``). ``claims`` holds only verified claims, each proposition with its
    ``entailment``; ``answer`` is composed from them alone.

    ``errors`` and ``unsupported`` are the last round's; ``round_reasons`` holds
    every refused round's reasons, first to last, so a run answered after a retry
    still says why its first hand-over was sent back.
    """

    run_id: str
    thread_id: str
    status: RunStatus
    answer: str | None
    claims: tuple[Claim, ...] = ()
    unsupported: tuple[Unsupported, ...] = ()
    pending_grants: tuple[PendingGrant, ...] = ()
    actions: tuple[ActionRecord, ...] = ()
    errors: tuple[dict[str, Any], ...] = field(default=())
    rounds: int = 0
    round_reasons: tuple[RoundReasons, ...] = ()

    def __post_init__(self) -> None:
        # Checkpoints store sequences as lists; a result read back is the same value.
        names = ("claims", "unsupported", "pending_grants", "actions", "errors", "round_reasons")
        for name in names:
            object.__setattr__(self, name, tuple(getattr(self, name)))


@dataclass(frozen=True, kw_only=True)
class ThreadStatus:
    """Where a thread stands, read from the database alone (no graph needed).

    ``graph_name`` / ``graph_version`` name the fenced graph that started the thread
    (only that graph may resume it), ``run_id`` its current run, ``status`` its
    state. ``result`` is that run's latest :class:`RunResult` as the thread's last
    checkpoint in the control plane's saver holds it (``None`` while a new run has
    not produced one yet, or when the graph was compiled with a saver of its own).
    """

    thread_id: str
    graph_name: str
    graph_version: str
    run_id: str | None
    status: ThreadState
    created_at: datetime
    updated_at: datetime
    result: RunResult | None = None
