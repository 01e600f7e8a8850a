"""Testing a fenced agent offline: a chat model that follows a script of tool calls and
hand-overs, and cites the ledger ids of the results it was sent."""

from assay.testing._model import ScriptedChatModel
from assay.testing._script import (
    Call,
    ClaimStep,
    HandOver,
    IntentStep,
    ScriptError,
    Seen,
    call,
    claim,
    hand_over,
    intent,
)

__all__ = [
    "Call",
    "ClaimStep",
    "HandOver",
    "IntentStep",
    "ScriptError",
    "ScriptedChatModel",
    "Seen",
    "call",
    "claim",
    "hand_over",
    "intent",
]
