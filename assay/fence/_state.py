"""The state a fenced graph carries between its nodes, each key with its type.

Everything a checkpoint holds is plain JSON, so a checkpoint written by one process
reads back identically in another (the durable-resume guarantee rests on that), and any
LangGraph saver stores it without reviving a class of assay's (a user's own saver under
``LANGGRAPH_STRICT_MSGPACK`` included). ``result`` holds a :class:`RunResult` in a
channel of its own (:class:`ResultChannel`) that a checkpoint holds as its JSON, and
reads back as the record. The round's hand-over is validated once, by the gate: the parsed models
travel between the round's nodes in two keys that are never checkpointed
(``accepted_handover``, ``verified_handover``); a node that finds one missing (a run
resumed from its checkpoint has none) reads it back from its JSON, once, and carries
it on.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, NotRequired, Self, TypedDict, cast

from langgraph.channels import LastValue, UntrackedValue

from assay.contract import Handover, UnsupportedLabel
from assay.errors import UnreadableCheckpoint
from assay.fence._result import ActionStatus, RunResult, result_from_json, result_to_json

__all__ = [
    "ActionItem",
    "DeniedItem",
    "Feedback",
    "FenceState",
    "GateErrorFeedback",
    "GateErrorItem",
    "GrantedItem",
    "GraphKey",
    "PendingItem",
    "ResultChannel",
    "UnsupportedFeedback",
    "UnsupportedItem",
    "accepted_handover",
    "verified_handover",
]

#: A :class:`~assay.contract.Handover` as its JSON-mode dump.
HandoverJSON = dict[str, Any]


class ResultChannel(LastValue[Any]):
    """The ``result`` key's channel: a :class:`RunResult` in the graph, its JSON
    (:func:`~assay.fence._result.result_to_json`) in a checkpoint. A result that an
    earlier version checkpointed as the record itself reads back as it is; one that
    is no result at all raises :class:`~assay.errors.UnreadableCheckpoint`."""

    __slots__ = ()

    def checkpoint(self) -> Any:
        value = super().checkpoint()
        return result_to_json(value) if isinstance(value, RunResult) else value

    def from_checkpoint(self, checkpoint: Any) -> Self:
        if isinstance(checkpoint, dict):
            checkpoint = result_from_json(cast(dict[str, Any], checkpoint))
        elif isinstance(checkpoint, str | bytes | int | float | list | tuple):
            raise UnreadableCheckpoint(
                f"its run's result is a {type(checkpoint).__name__}, not a result"
            )
        return super().from_checkpoint(checkpoint)


class GraphKey(TypedDict):
    """The ``name`` and ``version`` given to ``fence()`` by the graph that started the run."""

    name: str
    version: str


class GateErrorItem(TypedDict):
    """One :class:`~assay.gate.GateFinding` of the round's hand-over."""

    code: str
    path: str
    message: str


class RoundItem(TypedDict):
    """One refused round's reasons: its gate findings and ``Unsupported`` items."""

    round: int
    errors: list[dict[str, Any]]
    unsupported: list[dict[str, Any]]


class UnsupportedItem(TypedDict):
    """One ``Unsupported`` proposition (:meth:`~assay.contract.Unsupported.to_dict`) and
    the ledger entry that records it."""

    proposition: str
    missing_evidence: str
    claim_id: str
    proposition_id: str
    label: UnsupportedLabel
    ledger_ids: list[str]
    contradicting_ledger_id: str | None
    contradicting_span: list[int] | None
    ledger_id: str | None


class GateErrorFeedback(GateErrorItem):
    """A gate error, as the next round's agent reads it."""

    kind: Literal["gate_error"]


class UnsupportedFeedback(UnsupportedItem):
    """An ``Unsupported`` proposition, as the next round's agent reads it."""

    kind: Literal["unsupported"]


Feedback = GateErrorFeedback | UnsupportedFeedback


class GrantedItem(TypedDict):
    """The grant an intent's call runs under, or why none could be issued."""

    grant_id: str | None
    approver: str
    via: NotRequired[str]
    refused: NotRequired[str]


class DeniedItem(TypedDict):
    """A reviewer's denial of an intent's call, as its ``grant`` ledger record says."""

    decision: Literal["denied"]
    intent_id: str
    call_id: str
    tool: str
    version: str
    args_sha256: str
    approver: str
    reason: str
    decided_at: str
    ledger_id: str


class PendingItem(TypedDict):
    """An irreversible call waiting for a reviewer: a
    :class:`~assay.fence.PendingCall` as its JSON-mode dump."""

    intent_id: str
    tool: str
    version: str
    args: dict[str, Any]
    args_sha256: str
    call_id: str
    depends_on: list[str]
    claims: list[dict[str, Any]]
    policy: NotRequired[list[str]]


class ActionItem(TypedDict):
    """One action intent and what became of it (read as an
    :class:`~assay.fence.ActionRecord`)."""

    intent_id: str
    tool: str
    version: str | None
    args: dict[str, Any]
    status: ActionStatus
    grant_id: NotRequired[str | None]
    approver: NotRequired[str | None]
    ledger_id: NotRequired[str | None]
    output: NotRequired[Any]
    error: NotRequired[dict[str, Any] | None]
    reason: NotRequired[str | None]


class FenceState(TypedDict, total=False):
    """Keys an agent reads: ``task``, ``context`` (what the caller passed for the agent,
    such as a corpus id), ``run_id``, ``round`` and ``feedback`` (the gate errors and
    ``Unsupported`` items of the previous round, each with a ``kind`` of
    ``gate_error`` or ``unsupported``). An agent returns ``{"handover": ...}``: a
    :class:`~assay.contract.Handover` or its dict (kept as the dict).

    ``graph`` is the ``name`` and ``version`` given to ``fence()`` by the graph that
    started the run; ``thread_id`` the LangGraph thread it runs on.

    An agent may also return ``continuation`` (plain JSON): what it wants handed back
    once the actions of its hand-over are decided and run. The fence then calls it
    again, in the same round, with ``continuation``, ``returned`` (the ids of the
    intents whose outcomes are being handed back) and ``actions`` (their outcomes).
    Its ``awaits`` lists those intents: one never decided (its hand-over was refused)
    is still reported, as an action ``not_run``. A ReAct agent does this with the
    irreversible calls its model made itself."""

    task: str
    context: dict[str, Any]
    run_id: str
    thread_id: str
    graph: GraphKey
    round: int
    feedback: list[Feedback]
    #: Every refused round's reasons, first to last (``RunResult.round_reasons``).
    round_reasons: list[RoundItem]
    #: The agent's hand-over as it gave it (a model as its dict): the gate decides
    #: what it is.
    handover: Any
    failure: str | None
    accepted: HandoverJSON | None
    verified: HandoverJSON | None
    gate_errors: list[GateErrorItem]
    unsupported: list[UnsupportedItem]
    granted: dict[str, GrantedItem]
    denied: dict[str, DeniedItem]
    pending: list[PendingItem]
    actions: list[ActionItem]
    continuation: dict[str, Any] | None
    returned: list[str]
    result: Annotated[RunResult, ResultChannel]
    accepted_handover: Annotated[Handover | None, UntrackedValue]
    verified_handover: Annotated[Handover | None, UntrackedValue]


def accepted_handover(state: FenceState) -> Handover | None:
    """The hand-over the gate accepted this round: the model it carried, else (a run
    read back from its checkpoint) its JSON, validated now."""
    return _carried(state.get("accepted_handover"), state.get("accepted"))


def verified_handover(state: FenceState) -> Handover | None:
    """The hand-over the verifier filled this round: the model it carried, else (a
    run read back from its checkpoint) its JSON, validated now."""
    return _carried(state.get("verified_handover"), state.get("verified"))


def _carried(model: Handover | None, raw: HandoverJSON | None) -> Handover | None:
    if raw is None:
        return None
    return model if model is not None else Handover.model_validate(raw)
