"""Where a record is in its life, and a proposition that puts it elsewhere.

A tool output often says in one field where a thing stands (``status: in_progress``,
``"state": "queued"``, ``inbound.status: landed``, ``HTTP/1.1 409 Conflict``), and an
agent's sentence says it in a verb ("has completed", "was delivered", "is expected
to land", "was accepted"). A small model reads "Oskar has completed both capstone
courses" against ``capstone[1].status: in_progress`` as support (every name is
there); the two words belong to states that cannot hold together, which a word list
settles.

States come in classes (:data:`CLASSES`). Two classes *clash* when a record cannot
be in one while a sentence truthfully puts it in the other:

* done (completed, delivered, landed, approved) against not done (pending, queued,
  in progress, failed, denied, cancelled), either way round;
* decided (approved, denied, cancelled) against undecided (pending, under review,
  in progress): "has been denied" where ``status: under_review``;
* accepted (taken in, as ``202 Accepted`` takes a command in) against refused,
  failed or cancelled only.

Classes that may describe one record at once (done and delivered; failed and
refused; pending and in progress) do not clash. A state word under a negation ("has
not completed") says nothing here, nor does a sentence that also writes a word of
the record's own class.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from assay._text import word_table
from assay.verifier._text import content_words

#: Each class's words, as a record writes them (``under_review``) or a sentence does
#: ("is under review"): the list ``state-classes.toml``.
CLASSES: Mapping[str, tuple[str, ...]] = word_table("state-classes")

_REFUSED = frozenset({"refused", "cancelled", "failed"})
_DONE = frozenset({"approved", "done", "arrived"})
_NOT_DONE = frozenset({"refused", "cancelled", "failed", "in_progress", "waiting"})
_DECIDED = frozenset({"approved", "refused", "cancelled"})
_UNDECIDED = frozenset({"waiting", "in_progress"})


def clash(said: str, recorded: str) -> bool:
    """Whether a sentence putting a record in class ``said`` cannot be true of a
    record in class ``recorded``."""
    if said == recorded:
        return False
    if "accepted" in (said, recorded):  # taken in ("202 Accepted"), not yet decided
        return bool({said, recorded} & _REFUSED)
    pair = {said, recorded}
    done_or_not = bool(pair & _DONE) and bool(pair & _NOT_DONE)
    decided = bool(pair & _DECIDED) and bool(pair & _UNDECIDED)
    return done_or_not or decided


_WORDS = sorted(
    ((word, name) for name, words in CLASSES.items() for word in words),
    key=lambda pair: -len(pair[0]),
)
_CLASS_OF = dict(_WORDS)
_WORD = re.compile(
    r"(?<![\w-])("
    + "|".join(re.escape(w).replace(r"\ ", r"[\s_-]+") for w, _ in _WORDS)
    + r")(?![\w-])",
    re.IGNORECASE,
)
_NEGATED = re.compile(r"\b(?:not|never|no|n't|yet\s+to|without)\W+(?:\w+\W+){0,2}$", re.IGNORECASE)
#: What makes a state word one still to come: "will be delivered", "is to be approved".
_FUTURE = re.compile(
    r"\b(?:will|would|shall|going\s+to|to\s+be|expected\s+to|due\s+to)\W+(?:\w+\W+){0,2}$",
    re.IGNORECASE,
)


def class_of(value: str) -> str | None:
    """The class of a field's value (``under_review`` → ``waiting``), where the
    whole value is one state word."""
    words = " ".join(re.split(r"[\s_-]+", value.strip().casefold()))
    return _CLASS_OF.get(words)


def said_classes(clause: str) -> set[str]:
    """The classes a clause puts its subject in: its state words that no negation
    stands before ("has not completed" says nothing)."""
    found: set[str] = set()
    for match in _WORD.finditer(clause):
        if _NEGATED.search(clause[: match.start()]):
            continue
        word = " ".join(re.split(r"[\s_-]+", match.group(1).casefold()))
        future = _FUTURE.search(clause[: match.start()])
        found.add("waiting" if future else _CLASS_OF[word])
    return found


@dataclass(frozen=True, slots=True)
class StateLine:
    """A field of what was read that states where its record stands."""

    span: tuple[int, int]
    state: str
    #: The text of the record the field belongs to (its own and its parents' lines).
    record: str
    #: The lines of the object the field is in, without its parents'.
    own: str
    #: The field's path (``payout.status``); empty for a field written inline.
    path: str = ""

    def names(self, word: str) -> bool:
        """Whether ``word`` (folded) names this field's object: a word of its path
        above the field (``payout``), or a one-word value of its own lines (``name:
        integration``)."""
        above = re.split(r"[^a-z]+", _parent(self.path).casefold())
        values = (line.partition(": ")[2].strip().casefold() for line in self.own.splitlines())
        return word in above or word in values


#: ``path: value`` lines of a JSON view whose last key names a state.
_FIELD = re.compile(
    r"^(?P<path>(?:[^\n:]*[._])?(?:status|state|decision|outcome|result|conclusion|phase))"
    r": (?P<value>[A-Za-z][A-Za-z _-]*)$",
    re.MULTILINE | re.IGNORECASE,
)
#: ``"state": "queued"``, ``status=OPEN`` written inline in a text entry.
_INLINE = re.compile(
    r"\"?(?:status|state|decision|outcome|result|conclusion)\"?\s*[:=]\s*\"?"
    r"(?P<value>[A-Za-z][A-Za-z_-]*)",
    re.IGNORECASE,
)
#: An HTTP response line that failed: ``HTTP/1.1 409 Conflict``, ``-> 403 Forbidden``.
_HTTP_FAILED = re.compile(r"(?:HTTP/\d(?:\.\d)?\s+|->\s*)(?P<code>[45]\d\d)\b[^\n]*")


def state_lines(text: str) -> Iterator[StateLine]:
    """Every field of ``text`` (what was read of one entry) that states a class."""
    json_like = bool(_FIELD.search(text))
    for match in _FIELD.finditer(text):
        state = class_of(match.group("value"))
        if state is not None:
            path = match.group("path")
            record, own = _record(text, path), _record(text, path, own=True)
            yield StateLine(match.span(), state, record, own, path)
    if json_like:
        return
    before: list[str] = []  # the two lines before: a response and its request
    for start, body in _lines(text):
        for match in _INLINE.finditer(body):
            state = class_of(match.group("value"))
            if state is not None:  # a response is about the request on the line before
                record = "\n".join([*before, body])
                yield StateLine((start, start + len(body)), state, record, record)
        failed = _HTTP_FAILED.search(body)
        if failed is not None:
            span = (start + failed.start(), start + failed.end())
            yield StateLine(span, "failed", text, text)
        before = [*before, body][-2:] if body.strip() else before


def _lines(text: str) -> Iterator[tuple[int, str]]:
    at = 0
    for raw in text.splitlines(keepends=True):
        yield at, raw.rstrip("\r\n")
        at += len(raw)


def _record(view: str, path: str, *, own: bool = False) -> str:
    """The lines of the JSON view that belong to the record holding ``path``: its
    own fields and (unless ``own``) those of the objects above it."""
    holder = _parent(path)
    lines = []
    for line in view.splitlines():
        parent = _parent(line.partition(": ")[0])
        above = not parent or holder.startswith((parent + ".", parent + "["))
        if holder == parent or (above and not own):
            lines.append(line)
    return "\n".join(lines)


def _parent(path: str) -> str:
    cut = max(path.rfind("."), path.rfind("["))
    return path[: max(cut, 0)]


def contradicting(lines: list[StateLine], clause: str, anchors: list[str]) -> StateLine | None:
    """The state field that ``clause`` contradicts, or None.

    Where a field's own object writes one of the clause's anchors, the fields of
    each such anchor decide for it: the clause contradicts them when it clashes with
    every one ("passed both MA 2101 and MA 2204" where ``MA 2204`` failed). Else
    every field of a record the clause speaks of decides: one it agrees with
    (``decision: pending`` beside ``biometrics.status: done``) clears it."""
    said = said_classes(clause)
    if not said:
        return None
    folded = [a.casefold() for a in anchors]
    specific = [[line for line in lines if a in line.own.casefold()] for a in folded]
    words = set(re.findall(r"[a-z][a-z-]{3,}", clause.casefold()))
    specific += [[line for line in lines if line.names(w)] for w in sorted(words)]
    groups = [group for group in specific if group]
    if not groups:
        groups = [[line for line in lines if about(line.record, clause, anchors)]]
    for group in groups:
        if group and all(_clashes(said, line.state) for line in group):
            return group[0]
    return None


def _clashes(said: set[str], state: str) -> bool:
    return state not in said and any(clash(s, state) for s in said)


#: A code that names a record: ``CS 4910``, ``MA 2204``, ``QF 9``.
_CODE = re.compile(r"\b[A-Z]{2,5} ?\d{1,5}\b")


def codes(clause: str) -> list[str]:
    """The codes of ``clause`` that may name a record (see :data:`_CODE`)."""
    return _CODE.findall(clause)


def about(record: str, clause: str, anchors: list[str]) -> bool:
    """Whether ``clause`` speaks of ``record``: one of its anchors (identifiers and
    names, found by the caller) is written there, or, with none, half of its content
    words are."""
    if anchors:
        folded = record.casefold()
        return any(a.casefold() in folded for a in anchors)
    words = set(content_words(clause))
    held = set(content_words(record))
    return bool(words) and len(words & held) * 2 >= len(words)
