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
* in progress against failed, refused or cancelled ("is running" where
  ``STATUS: CrashLoopBackOff``);
* active (in force) against ended (lapsed, expired);
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
from functools import lru_cache
from http import HTTPStatus

from assay._text import word_table
from assay.grounding import find_numbers
from assay.verifier._slots import ancestors
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
    stopped = "in_progress" in pair and bool(pair & _REFUSED)
    lapsed = pair == {"active", "ended"}
    return done_or_not or decided or stopped or lapsed


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


#: How far before a state word a negation or a future may stand (three words).
_LOOK_BACK = 48


def said_classes(clause: str) -> set[str]:
    """The classes a clause puts its subject in: its state words that no negation
    stands before ("has not completed" says nothing); one after "will", "to be" or
    "expected to" is still to come ("will be delivered" waits)."""
    found: set[str] = set()
    for match in _WORD.finditer(clause):
        before = clause[max(match.start() - _LOOK_BACK, 0) : match.start()]
        if _NEGATED.search(before):
            continue
        word = " ".join(re.split(r"[\s_-]+", match.group(1).casefold()))
        future = _FUTURE.search(before)
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
    #: Whether it is the status of a whole response (``HTTP/1.1 409 Conflict``).
    response: bool = False

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
    r"\"?(?:status|state|decision|outcome|result|conclusion|remarks)\"?\s*[:=]\s*\"?"
    r"(?P<value>[A-Za-z][A-Za-z_-]*)",
    re.IGNORECASE,
)
#: An HTTP response line that failed: ``HTTP/1.1 409 Conflict``, ``-> 403 Forbidden``.
#: Or a failed status written with its reason phrase (``502 Bad Gateway``, ``npm error
#: 404 Not Found``), the phrases as the standard library names them.
_PHRASES = "|".join(
    re.escape(status.phrase) for status in HTTPStatus if status.value >= 400 and status.phrase
)
_HTTP_FAILED = re.compile(
    rf"(?:HTTP/\d(?:\.\d)?\s+|->\s*)(?P<code>[45]\d\d)\b[^\n]*"
    rf"|\b(?P<bare>[45]\d\d)\s+(?:{_PHRASES})\b[^\n]*",
    re.IGNORECASE,
)
#: A response that succeeded: ``HTTP/1.1 200 OK``, ``-> 202 Accepted``, ``201 Created``.
_HTTP_OK = re.compile(
    r"(?:HTTP/\d(?:\.\d)?\s+|->\s*)(?P<code>2\d\d)\b[^\n]*"
    r"|\b(?P<bare>2\d\d)\s+(?:OK|Created|Accepted|No Content)\b[^\n]*",
)
#: A JSON response's numeric status: ``status: 422``, ``status_code: 503``.
_FAILED_FIELD = re.compile(
    r"^(?:[^\n:]*[._])?(?:status|status_code|http_status|statuscode): [45]\d\d$",
    re.MULTILINE | re.IGNORECASE,
)


def state_lines(text: str) -> tuple[StateLine, ...]:
    """Every field of ``text`` (what was read of one entry) that states a class.
    Linear in the text: each JSON line is filed once under the object it is in."""
    return _state_lines(text)


@lru_cache(maxsize=64)
def _state_lines(text: str) -> tuple[StateLine, ...]:
    if _FIELD.search(text) or _FAILED_FIELD.search(text):
        return tuple(_json_state_lines(text))
    return tuple(_text_state_lines(text))


def _json_state_lines(text: str) -> Iterator[StateLine]:
    for match in _FAILED_FIELD.finditer(text):
        yield StateLine(match.span(), "failed", text, text, response=True)
    by_object: dict[str, list[str]] = {}
    for line in text.splitlines():
        by_object.setdefault(_parent(line.partition(": ")[0]), []).append(line)
    for match in _FIELD.finditer(text):
        state = class_of(match.group("value"))
        if state is not None:
            path = match.group("path")
            holder = _parent(path)
            own = "\n".join(by_object.get(holder, ()))
            above = ("\n".join(by_object.get(a, ())) for a in ancestors(holder) if a != holder)
            record = "\n".join([*above, own])
            yield StateLine(match.span(), state, record, own, path)


def _text_state_lines(text: str) -> Iterator[StateLine]:
    before: list[str] = []  # the two lines before: a response and its request
    for start, body in _lines(text):
        for match in _INLINE.finditer(body):
            state = class_of(match.group("value"))
            if state is not None:
                # A table row stands alone; a response is about the request before it.
                record = body if _TABLE_ROW.match(body) else "\n".join([*before, body])
                yield StateLine((start, start + len(body)), state, record, record)
        for pattern, state in ((_HTTP_FAILED, "failed"), (_HTTP_OK, "")):
            found = pattern.search(body)
            if found is not None:  # a success among failures leaves the entry undecided
                code = found.group("code") or found.group("bare")
                state = state or ("accepted" if code == "202" else "done")
                span = (start + found.start(), start + found.end())
                yield StateLine(span, state, text, text, response=True)
        before = [*before, body][-2:] if body.strip() else before


#: A table row as a reading writes it: ``NAME: api-1, READY: 2/2, STATUS: Running``.
_TABLE_ROW = re.compile(r"^(?:[A-Za-z][^,:\n\"]*: [^,\n]*, ){2,}")

#: A clause about every one of its records: "all three pods", "both courses".
_EVERY = re.compile(r"\b(?:all|every|each|both)\b", re.IGNORECASE)


def _lines(text: str) -> Iterator[tuple[int, str]]:
    at = 0
    for raw in text.splitlines(keepends=True):
        yield at, raw.rstrip("\r\n")
        at += len(raw)


def _parent(path: str) -> str:
    cut = max(path.rfind("."), path.rfind("["))
    return path[: max(cut, 0)]


def contradicting(lines: list[StateLine], clause: str, anchors: list[str]) -> StateLine | None:
    """The state field that ``clause`` contradicts, or None.

    Where a field's own object writes one of the clause's anchors, the fields of
    each such anchor decide for it: the clause contradicts them when it clashes with
    every one ("passed both MA 2101 and MA 2204" where ``MA 2204`` failed). Else
    every field of a record the clause speaks of decides: one it agrees with
    (``decision: pending`` beside ``biometrics.status: done``) clears it. A clause
    about every one of its records ("all three pods are running": the word stands
    before its state word) is contradicted by any one that clashes. A failed HTTP
    response decides for its whole entry ("the request was accepted" after ``409
    Conflict``, whatever states its body lists)."""
    said = said_classes(clause)
    if not said:
        return None
    specific = [[line for line in lines if _writes(line.own, a)] for a in anchors]
    words = set(re.findall(r"[a-z][a-z0-9._-]{2,}[a-z0-9]", clause.casefold()))
    specific += [[line for line in lines if line.names(w)] for w in sorted(words)]
    groups = [group for group in specific if group]
    if not groups:  # its state words, counts and quantifiers name no record
        unstated = _EVERY.sub(" ", _WORD.sub(" ", clause))
        for number in reversed(find_numbers(unstated)):
            unstated = unstated[: number.start] + " " + unstated[number.end :]
        # A nested object's state is its own thing's ("inbound.status: landed" is the
        # inbound flight's), not the state of what an anchor above it names.
        whole = [line for line in lines if not anchors or line.own == line.record]
        groups = [[line for line in whole if about(line.record, unstated, anchors)]]
    # A failed response answers for everything in it, whatever its body lists.
    plain = _WORD.sub(" ", clause)
    groups.insert(
        0, [line for line in lines if line.response and about(line.record, plain, anchors)]
    )
    first = _WORD.search(clause)
    every = first is not None and bool(_EVERY.search(clause, 0, first.start()))
    for group in groups:
        related = [line for line in group if any(_related(s, line.state) for s in said)]
        clashing = [line for line in related if _clashes(said, line.state)]
        if clashing and (every or len(clashing) == len(related)):
            return clashing[0]
    return None


#: Whether a thing is in force is another question than where it is in its life:
#: a claim under review may be about a policy that has lapsed.
_STANDING = frozenset({"active", "ended"})


def _related(said: str, state: str) -> bool:
    """Whether a state field speaks to the question a state word answers."""
    return (said in _STANDING) == (state in _STANDING)


def _clashes(said: set[str], state: str) -> bool:
    return state not in said and any(clash(s, state) for s in said)


#: A code that names a record: ``CS 4910``, ``MA 2204``, ``QF 9``.
_CODE = re.compile(r"\b[A-Z]{2,5} ?\d{1,5}\b")


def codes(clause: str) -> list[str]:
    """The codes of ``clause`` that may name a record (see :data:`_CODE`)."""
    return _CODE.findall(clause)


def _writes(text: str, anchor: str) -> bool:
    """Whether ``text`` writes ``anchor`` whole (``T-5`` is not in ``T-50``)."""
    return _anchor_pattern(anchor).search(text) is not None


@lru_cache(maxsize=256)
def _anchor_pattern(anchor: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w-]){re.escape(anchor)}(?![\w-])", re.IGNORECASE)


def about(record: str, clause: str, anchors: list[str]) -> bool:
    """Whether ``clause`` speaks of ``record``: one of its anchors (identifiers and
    names, found by the caller) is written there, or, with none, half of its content
    words are."""
    if anchors:
        return any(_writes(record, a) for a in anchors)
    words = set(content_words(clause))
    held = set(content_words(record))
    return bool(words) and len(words & held) * 2 >= len(words)
