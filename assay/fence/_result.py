"""What a fenced run comes to: the records a caller reads from ``RunResult``.

A result also travels as plain JSON (:func:`result_to_json`, :func:`result_from_json`):
that is how a checkpoint holds it, so any LangGraph saver (a user's ``InMemorySaver``
under ``LANGGRAPH_STRICT_MSGPACK`` included) stores and reads it back without
reviving a class of assay's.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from datetime import datetime
from typing import Any, Literal, cast, get_args

from assay.contract import Claim, Unsupported
from assay.errors import UnreadableCheckpoint

#: How a run ended; the table in ``docs/fence.md`` says what each one means.
RunStatus = Literal["answered", "denied", "incomplete", "abstained", "awaiting_grant", "failed"]
#: Where a thread stands: ``running`` while a node runs, else its run's ``RunStatus``.
ThreadState = Literal[
    "running", "awaiting_grant", "answered", "denied", "incomplete", "abstained", "failed"
]
ActionStatus = Literal["executed", "denied", "duplicate", "failed", "not_run", "unknown"]


@dataclass(frozen=True, kw_only=True)
class ActionRecord:
    """One action intent and what became of it.

    ``executed``: the bus ran it (``ledger_id`` is its ``tool_output``); ``denied``: a
    reviewer refused the grant (``reason`` says why); ``duplicate``: the bus refused it
    because another call already performed its effect (``error``, code
    ``duplicate_effect``, names that call); ``failed``: the bus returned another
    structured error, or its handler failed (``error``); ``not_run``: it never reached
    the bus: the hand-over that proposed it was refused, its claims were not all
    entailed, or no grant could be issued (``reason``).

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
    #: Why no policy rule approved the call, one line per rule (or why none applies).
    policy: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "depends_on", tuple(self.depends_on))
        object.__setattr__(self, "claims", tuple(self.claims))
        object.__setattr__(self, "policy", tuple(self.policy))


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
    open, and every action executed), ``denied`` (verified, and a reviewer denied an
    action; the others executed), ``incomplete`` (verified, and an action did not run
    as proposed: refused as a duplicate, failed, not run, or its outcome unknown; see
    ``actions``), ``abstained`` (evidence ran out, or the gate refused the last
    hand-over: see ``unsupported``, ``errors`` and the answer's "Not established"
    part), ``awaiting_grant`` (paused before an irreversible call: see
    ``pending_grants``, then ``cp.resume``) or ``failed`` (the agent raised, gave no
    hand-over, or handed over ``failed``; see ``errors``). ``claims`` holds only
    verified claims, each proposition with its ``entailment``; ``answer`` is composed
    from them alone, while the run waits for a grant too (``None`` only when failed).

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


def result_to_json(result: RunResult) -> dict[str, Any]:
    """``result`` as plain JSON data: what a checkpoint holds of it."""
    data = asdict(result)
    data["claims"] = [c.model_dump(mode="json") for c in result.claims]
    data["unsupported"] = [_unsupported_json(u) for u in result.unsupported]
    data["round_reasons"] = [
        {
            "round": r.round,
            "errors": list(r.errors),
            "unsupported": [_unsupported_json(u) for u in r.unsupported],
        }
        for r in result.round_reasons
    ]
    return data


def result_from_json(data: dict[str, Any]) -> RunResult:
    """The :class:`RunResult` :func:`result_to_json` wrote, or an earlier version
    wrote (a key it did not write yet takes its default).

    Raises :class:`~assay.errors.UnreadableCheckpoint` for data that is not such a
    result (a key missing or of the wrong type, a key no version wrote).
    """
    try:
        return _result(data)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise UnreadableCheckpoint(
            f"its run's result is in no shape a version wrote ({type(exc).__name__}: {exc})"
        ) from exc


def _result(data: dict[str, Any]) -> RunResult:
    unknown = sorted(set(data) - _RESULT_KEYS)
    if unknown:
        raise KeyError(f"keys no version of RunResult has: {', '.join(map(repr, unknown))}")
    return RunResult(
        run_id=_text(data["run_id"]),
        thread_id=_text(data["thread_id"]),
        status=_status(data["status"]),
        answer=data.get("answer"),
        claims=tuple(Claim.model_validate(c) for c in data.get("claims", [])),
        unsupported=tuple(_unsupported(u) for u in data.get("unsupported", [])),
        pending_grants=tuple(PendingGrant(**p) for p in data.get("pending_grants", [])),
        actions=tuple(ActionRecord(**a) for a in data.get("actions", [])),
        errors=tuple(dict(e) for e in data.get("errors", [])),
        rounds=int(data.get("rounds", 0)),
        round_reasons=tuple(
            RoundReasons(
                round=int(r["round"]),
                errors=tuple(dict(e) for e in r.get("errors", [])),
                unsupported=tuple(_unsupported(u) for u in r.get("unsupported", [])),
            )
            for r in data.get("round_reasons", [])
        ),
    )


_RESULT_KEYS = frozenset(f.name for f in fields(RunResult))


def _unsupported_json(item: Unsupported) -> dict[str, Any]:
    return item.to_dict() | {"ledger_id": item.ledger_id}


def _unsupported(raw: Any) -> Unsupported:
    return Unsupported.from_dict(cast(dict[str, Any], dict(raw)))


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {type(value).__name__}")
    return value


def _status(value: Any) -> RunStatus:
    if value not in get_args(RunStatus):
        raise ValueError(f"{value!r} is not a run status")
    return cast(RunStatus, value)


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
