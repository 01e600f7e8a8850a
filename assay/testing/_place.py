"""Where a scripted chat model stands in its script, read from the conversation it is
sent rather than kept in memory, so a run resumed in another process (``assay
resume``, the HTTP service after a grant decision) goes on where it paused.

A conversation holds what the model already did in it: each message it wrote names
the step it played (``response_metadata["assay_script_step"]``; a message without
that mark, from an older checkpoint, is the step after the one before it). A turn of
tool calls is a :func:`~assay.testing.call` step; saying it is done announces a
:func:`~assay.testing.hand_over` step, which the structured turn then writes. A held
call's outcome, handed back in the call's place (its artifact holds
``assay_outcome``), means the conversation had ended there with a hand-over: the
step after the call, written without being announced. A round the control plane
refused starts a new conversation with the refusal and the hand-over it refused,
and goes on after that hand-over's step (the one this process wrote with those
claims, or else the first hand-over step whose claims fit).
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from assay.testing._script import ClaimStep, HandOver, ScriptError, Step

__all__ = ["CALL_ID", "DONE", "STEP", "Place", "claims_key", "place"]

#: What the model says when its next step is a hand-over (the structured turn follows).
DONE = "I have what the task needs; I hand over what the tool results say."
#: The prefix of the ids of the tool calls the model makes.
CALL_ID = "scripted-"
#: The key of ``response_metadata`` that names the step a message played.
STEP = "assay_script_step"
#: How the fence's message after a refused round begins, and where the refused
#: hand-over is quoted in it, and the artifact key of a held call's outcome
#: (``assay.fence`` writes both).
_REFUSED = "The control plane refused your previous hand-over."
_PREVIOUS = "Your previous hand-over:\n"
_OUTCOME = "assay_outcome"


@dataclass(frozen=True, kw_only=True)
class Place:
    """Where a conversation stands: ``done`` is the index of the last step played in
    it (-1 before the first), ``announced`` whether it ends with the model saying it
    hands over (the hand-over of step ``done``, not written yet), and ``last_call``
    the highest number among its tool calls' ids."""

    done: int
    announced: bool
    last_call: int

    def step(self, *, writing: bool) -> int:
        """The index of the step to play: for the structured turn, the hand-over the
        model just announced; otherwise the one after the last played."""
        return self.done if writing and self.announced else self.done + 1


def place(
    messages: Sequence[BaseMessage], steps: Sequence[Step], written: Mapping[str, int]
) -> Place:
    """Where ``messages`` stand in ``steps``; ``written`` maps the claims of each
    hand-over this process wrote (:func:`claims_key`) to its step."""
    done, since = -1, 0
    for index, message in enumerate(messages):
        refused = _refused(message)
        if refused is not None:
            done, since = _step_of(refused, steps, written), index + 1
    last_call, calls, joined = 0, False, False
    for message in messages[since:]:
        if isinstance(message, ToolMessage) and calls and _is_outcome(message):
            done, calls, joined = done + 1, False, True  # the hand-over the call joined
        if not isinstance(message, AIMessage) or not _ours(message):
            continue
        marked: Any = message.response_metadata.get(STEP)
        if isinstance(marked, int):
            done = marked
        elif not (joined and not message.tool_calls):  # unmarked: it announced that one
            done += 1
        calls, joined = bool(message.tool_calls), False
        numbers = (_number(str(c.get("id") or "")) for c in message.tool_calls)
        last_call = max([last_call, *numbers])
    last = messages[-1] if messages else None
    announced = isinstance(last, AIMessage) and not last.tool_calls and last.content == DONE
    return Place(done=done, announced=announced, last_call=last_call)


def claims_key(handover: Mapping[str, Any]) -> str:
    """What identifies a hand-over the model wrote: its claims' ids, types and texts
    and its open questions (the fence adds intents for held calls, so not those)."""
    claims = _dicts(handover.get("claims"))
    questions = _dicts(handover.get("open_questions"))
    return json.dumps(
        [
            [[c.get("id"), c.get("type"), c.get("text")] for c in claims],
            [q.get("text") for q in questions],
        ],
        sort_keys=True,
        default=str,
    )


def _refused(message: BaseMessage) -> Mapping[str, Any] | None:
    """The hand-over a refused round's message quotes, or ``None`` for any other."""
    content = message.content
    if not isinstance(message, HumanMessage) or not isinstance(content, str):
        return None
    if not content.startswith(_REFUSED) or _PREVIOUS not in content:
        return None
    try:
        quoted: Any = json.loads(content.rsplit(_PREVIOUS, 1)[1])
    except ValueError:
        return None
    return cast(Mapping[str, Any], quoted) if isinstance(quoted, dict) else {}


def _step_of(refused: Mapping[str, Any], steps: Sequence[Step], written: Mapping[str, int]) -> int:
    """The step the hand-over ``refused`` came from."""
    known = written.get(claims_key(refused))
    if known is not None:
        return known
    for index, step in enumerate(steps):
        if isinstance(step, HandOver) and _fits(step, refused):
            return index
    raise ScriptError(
        "a round was refused, but its hand-over fits no hand_over(...) step of the script: "
        f"{json.dumps(_dicts(refused.get('claims')), default=str)[:500]}"
    )


def _fits(step: HandOver, handover: Mapping[str, Any]) -> bool:
    """Whether ``step`` could have written ``handover``: its claims (ids, types, texts
    as its templates allow) and its open questions."""
    questions = [q.get("text") for q in _dicts(handover.get("open_questions"))]
    if questions != list(step.open_questions):
        return False
    claims = {c.get("id"): c for c in _dicts(handover.get("claims"))}
    scripted = {c.id or f"c{i}": c for i, c in enumerate(step.claims, 1)}
    if not set(claims) <= set(scripted):
        return False
    for claim_id, claim in scripted.items():
        if claim_id not in claims:
            if not claim.optional:
                return False
        elif not _claim_fits(claim, claims[claim_id]):
            return False
    return True


def _claim_fits(step: ClaimStep, written: Mapping[str, Any]) -> bool:
    if written.get("type") != step.type:
        return False
    if callable(step.text):
        return True
    try:
        pattern = "".join(
            re.escape(literal) + ("" if field is None else ".*?")
            for literal, field, _, _ in string.Formatter().parse(step.text)
        )
    except ValueError:  # not a template: the text itself
        pattern = re.escape(step.text)
    return re.fullmatch(pattern, str(written.get("text")), re.DOTALL) is not None


def _ours(message: AIMessage) -> bool:
    """Whether the model wrote ``message``: a turn of its tool calls, or its word that
    it hands over (not, say, LangGraph's note that the steps ran out)."""
    if message.tool_calls:
        return all(str(c.get("id") or "").startswith(CALL_ID) for c in message.tool_calls)
    return message.content == DONE


def _is_outcome(message: ToolMessage) -> bool:
    artifact: Any = message.artifact
    return isinstance(artifact, dict) and _OUTCOME in artifact


def _number(call_id: str) -> int:
    tail = call_id.removeprefix(CALL_ID)
    return int(tail) if call_id.startswith(CALL_ID) and tail.isdigit() else 0


def _dicts(value: Any) -> list[Mapping[str, Any]]:
    items: list[Any] = list(value) if isinstance(value, list) else []
    return [cast(Mapping[str, Any], v) for v in items if isinstance(v, dict)]
