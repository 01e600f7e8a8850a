"""The reply guard: where each identifier of a reply to a person came from.

A reply is checked against what the agent actually saw. Tool results come first: an
identifier that occurs in one is ``found``. Otherwise, if it occurs in the
conversation's own user or assistant messages it is an echo (``user_origin``): not
invented, but not verified either. Anything else is ``unverified``. Messages that
assay itself added to correct an earlier reply, and the flagged reply they answer,
are left out, so a correction can never vouch for the identifier it questioned.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from langchain_core.messages import BaseMessage

from assay.gate._lookalikes import reordered_identifiers, suspicious_identifiers
from assay.gate._records import Identifier, ReplyReport
from assay.grounding import extract_identifiers, found_in, identifiers_of, normalise, visible
from assay.grounding import prepared_evidence as evidence

Message = BaseMessage | Mapping[str, Any]
Conversation = Sequence[Message]
Role = Literal["user", "assistant", "tool", "system", "other"]

#: ``additional_kwargs`` key (or dict key) that marks the messages assay adds.
MARKER_KEY = "assay"
CORRECTION = "correction"
FLAGGED_REPLY = "flagged_reply"

_ROLES: dict[str, Role] = {
    "human": "user",
    "user": "user",
    "ai": "assistant",
    "assistant": "assistant",
    "tool": "tool",
    "function": "tool",
    "system": "system",
    "developer": "system",
}


def validate_reply(
    reply: str | BaseMessage,
    *,
    tool_results: Iterable[str],
    conversation: Conversation | None = None,
) -> ReplyReport:
    """Classify every identifier of ``reply`` as found, an echo, or unverified.

    ``tool_results`` are the texts the agent's tools returned; tool messages in
    ``conversation`` count as tool results too. User and assistant messages count
    as echoes; system messages and assay's own correction messages count as nothing.
    """
    return reply_report(reply, tool_results=tool_results, conversation=conversation)


def reply_report(
    reply: object,
    *,
    tool_results: Iterable[str],
    conversation: Conversation | None = None,
    extra_echoes: Iterable[str] = (),
) -> ReplyReport:
    """:func:`validate_reply`, plus echo texts from elsewhere (the ledger's human facts).

    An identifier written with invisible characters in or next to it, inside a bidi
    override, or in a word that mixes scripts with look-alike letters is unverified
    whatever the tool results say; so is what a right-to-left override shows as an
    identifier.
    """
    tools = [t for t in tool_results if isinstance(t, str)]
    echoes = list(extra_echoes)
    for message in conversation or ():
        if is_assay_message(message):
            continue
        role, text = role_of(message), text_of(message)
        if role == "tool":
            tools.append(text)
        elif role in ("user", "assistant"):
            echoes.append(text)
    norm = normalise(text_of(reply))
    idents = identifiers_of(norm)
    suspicious = suspicious_identifiers(norm, idents)
    origin = _Origins(tools, echoes)
    found: list[Identifier] = []
    user_origin: list[Identifier] = []
    unverified: list[Identifier] = []
    for i, ident in enumerate(idents):
        where = "unverified" if i in suspicious else origin.of(ident)
        if where == "found":
            found.append(ident)
        elif where == "user_origin":
            user_origin.append(ident)
        else:
            unverified.append(ident)
    unverified += reordered_identifiers(norm.original)
    unverified.sort(key=lambda i: (i.start, i.end))
    known = sorted({i.value for t in (*tools, *echoes) for i in extract_identifiers(t)})
    return ReplyReport(
        unverified=tuple(unverified),
        user_origin=tuple(user_origin),
        found=tuple(found),
        known=tuple(known),
    )


Origin = Literal["found", "user_origin", "unverified"]


class _Origins:
    """Where identifiers come from: each text prepared once, each value decided once."""

    def __init__(self, tools: list[str], echoes: list[str]) -> None:
        self._tools = [evidence(t) for t in tools]
        self._echoes = [evidence(t) for t in echoes]
        self._seen: dict[tuple[str, str], Origin] = {}

    def of(self, ident: Identifier) -> Origin:
        key = (ident.kind, ident.value)
        if key not in self._seen:
            if any(found_in(ident, text, derived) for text, derived in self._tools):
                self._seen[key] = "found"
            elif any(found_in(ident, text, derived) for text, derived in self._echoes):
                self._seen[key] = "user_origin"
            else:
                self._seen[key] = "unverified"
        return self._seen[key]


def annotate(reply: str, report: ReplyReport, *, after_self_correction: bool = False) -> str:
    """``reply`` with a visible footnote for each identifier it could not back.

    Unverified identifiers get a warning, a stronger one when the reply already
    failed a self-correction; echoes of the person's own values get a note saying so.
    A reply with nothing to flag comes back unchanged.
    """
    notes: list[str] = []
    unverified = _distinct(report.unverified)
    if unverified and after_self_correction:
        notes.append(
            f"Unverified after self-correction: {_list(unverified)} still "
            f"{_verb(unverified, 'does', 'do')} not appear in any tool result, even after "
            f"the assistant was asked to check. Do not rely on {_it(unverified)}."
        )
    elif unverified:
        notes.append(
            f"Unverified: {_list(unverified)} {_verb(unverified, 'does', 'do')} not appear in "
            f"any tool result of this conversation. Treat {_it(unverified)} as unconfirmed."
        )
    echoed = _distinct(report.user_origin)
    if echoed:
        notes.append(
            f"From your own message: {_list(echoed)} {_verb(echoed, 'is', 'are')} repeated "
            "from what you wrote, not confirmed by a tool."
        )
    if not notes:
        return reply
    return reply.rstrip() + "\n\n---\n" + "\n".join(f"[{n}]" for n in notes)


def _distinct(idents: Iterable[Identifier]) -> list[str]:
    return list(dict.fromkeys(i.value for i in idents))


def _list(values: list[str]) -> str:
    return ", ".join(f"`{visible(v)}`" for v in values)


def _verb(values: list[str], one: str, many: str) -> str:
    return one if len(values) == 1 else many


def _it(values: list[str]) -> str:
    return "it" if len(values) == 1 else "them"


# --- messages ---------------------------------------------------------------------


def role_of(message: object) -> Role:
    """The provider-neutral role of a LangChain message or a ``{"role": …}`` dict."""
    if isinstance(message, BaseMessage):
        return _ROLES.get(message.type, "other")
    if isinstance(message, Mapping):
        role = message.get("role", message.get("type"))
        return _ROLES.get(role, "other") if isinstance(role, str) else "other"
    return "other"


def text_of(message: object) -> str:
    """The text of a message, a dict message, or a plain string."""
    if isinstance(message, str):
        return message
    if isinstance(message, BaseMessage):
        return message.text
    if isinstance(message, Mapping):
        return _content_text(message.get("content"))
    return ""


def _content_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            _content_text(c.get("text")) if isinstance(c, Mapping) else _content_text(c)
            for c in content
        ]
        return "".join(parts)
    return ""


def is_assay_message(message: object) -> bool:
    """Whether assay added this message (a correction, or the reply it flagged)."""
    if isinstance(message, BaseMessage):
        marker = message.additional_kwargs.get(MARKER_KEY)
    elif isinstance(message, Mapping):
        marker = message.get(MARKER_KEY)
    else:
        return False
    return marker in (CORRECTION, FLAGGED_REPLY)
