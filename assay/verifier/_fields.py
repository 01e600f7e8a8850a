"""Which field of a JSON record a name is: "PR 4412 was merged by dvarga" against a
record whose ``merged_by`` is ``lcho`` and whose ``author`` is ``dvarga``; and which
party of an agreement: "Brightwater Credit Union is the borrower" against
"Brightwater Credit Union (lender) and Kestrel Joinery Ltd (borrower)".

Every word of such a claim is in the record, and a small model reads it as support:
the name is there, so is "merged". What it cannot see is that the name fills
another field. So where a claim writes the words of one field's name and, right
after them, the value of another field of the same record (not that field's own
value), it binds the name to the wrong role. Only names and codes are read here,
short values without digits of their own; numbers are the value checks' and the row
check's.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

from assay._text import token_pattern, word_list
from assay.verifier._flags import spaced
from assay.verifier._text import STOP_WORDS, word_stems

__all__ = ["wrong_field", "wrong_party"]

#: A line of a JSON view whose value is a short name: ``merged_by: lcho``,
#: ``approver: Dana Ruiz``.
_NAME_LINE = re.compile(
    r"^(?P<path>[^\n:]+): (?P<value>[A-Za-z][\w.@'-]*(?: [A-Za-z][\w.@'-]*){0,2})$",
    re.MULTILINE,
)
_VALUE_WORDS = frozenset({"true", "false", "null"})
#: Fields that hold a word from a fixed set ("merged", "open", "APPROVED"), not a
#: name: their values are states, which the polarity and action checks read
#: (``words/state-fields.txt``, as word stems).
_STATES = frozenset(s for w in word_list("state-fields") for s in word_stems(w))
#: How many words after a field's name its value may stand in the claim ("merged
#: by dvarga", "approved on Monday by Dana Ruiz"), and before it where the name is
#: the claim's verb ("Rita Okoro reviewed the claim").
_AFTER = 4
_BEFORE = 3
_PASSIVE_BY = frozenset({"by", "to"})
_LETTERS = token_pattern("letters")
_TOKEN = token_pattern("names")


@dataclass(frozen=True, slots=True)
class _Field:
    start: int
    end: int
    parent: str
    key: frozenset[str]
    value: str


def wrong_field(view: str, claim: str) -> tuple[tuple[int, int], str, str] | None:
    """The line of ``view`` holding a field whose name ``claim`` writes with another
    field's value after it, that field's value, and the value the claim gives it;
    or None."""
    fields = _fields(view)
    if len(fields) < 2:
        return None
    siblings: defaultdict[str, list[_Field]] = defaultdict(list)
    for field in fields:
        siblings[field.parent].append(field)
    tokens = [(m.start(), m.end(), m.group(0)) for m in _TOKEN.finditer(claim)]
    stems = [set(word_stems(text)) for _, _, text in tokens]
    lowered = claim.lower()
    written = set().union(*stems)
    for field in fields:
        if not field.key <= written or field.value.lower() in lowered:
            continue  # the claim gives the field its own value somewhere
        named = [i for i, words in enumerate(stems) if words & field.key]
        if not named or not field.key <= set().union(*(stems[i] for i in named)):
            continue
        window = _role_window(tokens, named[0], named[-1])
        for other in siblings[field.parent]:
            if other is field or other.value == field.value:
                continue
            if _holds(window, other.value):
                return (field.start, field.end), field.value, other.value
    return None


def _role_window(tokens: list[tuple[int, int, str]], first: int, last: int) -> str:
    """The words of the claim that fill the role a field's name writes at tokens
    ``first`` to ``last``: those after it ("the reviewer, Dev Malhotra"; "merged by
    dvarga"), or, where the name is a verb in the past tense not followed by "by"
    or "to", those before it ("Rita Okoro reviewed the claim")."""
    word = tokens[last][2].lower()
    following = tokens[last + 1][2].lower() if last + 1 < len(tokens) else ""
    if word.endswith("ed") and following not in _PASSIVE_BY:
        return " ".join(t for _, _, t in tokens[max(0, first - _BEFORE) : first])
    return " ".join(t for _, _, t in tokens[last + 1 : last + 1 + _AFTER])


@lru_cache(maxsize=32)
def _fields(view: str) -> tuple[_Field, ...]:
    """The name-valued fields of a view, with their names' content stems (read once
    per view: every proposition citing an entry asks)."""
    found: list[_Field] = []
    for match in _NAME_LINE.finditer(view):
        value = match.group("value")
        if value.lower() in _VALUE_WORDS or any(c.isdigit() for c in value):
            continue  # a flag, or an identifier of the record rather than a name
        path = match.group("path")
        if path.endswith("]"):
            continue  # an item of a list: any of its items is the list's value
        parent, _, key = path.rpartition(".")
        stems = frozenset(s for s in word_stems(spaced(key)) if s not in STOP_WORDS)
        if stems and not stems & _STATES:
            found.append(_Field(match.start(), match.end(), parent, stems, value))
    return tuple(found)


def _holds(window: str, value: str) -> bool:
    """Whether the words after a field's name hold ``value`` as whole words."""
    pattern = rf"(?<![\w@.-]){re.escape(value)}(?![\w@-])"
    return re.search(pattern, window, re.IGNORECASE) is not None


#: A party named with its role in parentheses, as agreements introduce them:
#: ``Kestrel Joinery Ltd (borrower)``, ``Hollis Retail Ltd (the "Tenant")``.
_PARTY = re.compile(
    r"(?P<name>(?:[A-Z][\w&.'-]*\s+){0,5}[A-Z][\w&.'-]*"
    r"(?:\s+(?:plc|ltd|llc|llp|inc|gmbh)\.?)?)\s*"
    r"\((?:the\s+)?[\"“']?(?P<role>[A-Za-z]{3,})[\"”']?\)"
)
#: A legal form at the end of a party's name, where white space comes before it.
_LEGAL_FORM = re.compile(r"(?:Ltd|Limited|plc|Inc|LLC|LLP|GmbH|AG|SA|BV|NV)\.?$", re.IGNORECASE)
#: Where a party's name may start: the first capital of a run of the characters
#: its words are made of (every capital of one run starts the same name, or none).
_NAME_START = re.compile(r"(?<![\w&.'-])[\w&.'-]*?[A-Z]")
#: How many words apart a party's name and a role word may stand in the claim.
_NEAR = 5


def wrong_party(text: str, claim: str) -> tuple[tuple[int, int], str, str] | None:
    """Where ``text`` introduces a party the claim gives another party's role, that
    party's role there, and the role the claim gives it; or None.

    The claim must write the party's name (its legal form aside) and, within five
    words of it, the role word of another party, and not write that other party's
    name: "Kestrel Joinery borrowed from Brightwater Credit Union, the lender" names
    both, and is left alone."""
    parties: dict[str, tuple[str, tuple[int, int]]] = {}
    for match in _parties(text):
        name = _without_legal_form(match.group("name").strip())
        parties.setdefault(name, (match.group("role").lower(), match.span()))
    roles = {role: name for name, (role, _) in parties.items()}
    if len(roles) < 2:
        return None
    lowered = claim.lower()
    named = {role: name.lower() in lowered for role, name in roles.items()}
    words = [(m.start(), m.group(0).lower()) for m in _LETTERS.finditer(claim)]
    for name, (own, span) in parties.items():
        at = lowered.find(name.lower())
        if at < 0:
            continue
        # The claim's words that start within the name (found by bisection).
        first = bisect_left(words, at, key=lambda w: w[0])
        last = bisect_left(words, at + len(name), key=lambda w: w[0]) - 1
        if last < first:
            continue
        for _, word in words[max(0, first - _NEAR) : last + 1 + _NEAR]:
            role = word if word in roles else word.rstrip("s")
            if role in roles and role != own and not named[role]:
                return span, own, role
    return None


def _parties(text: str) -> Iterator[re.Match[str]]:
    """What ``_PARTY.finditer(text)`` finds, trying each run of name characters once.

    A name's first word runs to the end of its run of name characters, so a name
    that starts at one capital of a run is there from every capital of it, or from
    none: trying every capital of a long run of capitals would read the rest of the
    run for each."""
    at = 0
    for start in _NAME_START.finditer(text):
        if start.end() - 1 < at:
            continue  # inside the party found last
        match = _PARTY.match(text, start.end() - 1)
        if match is not None:
            at = match.end()
            yield match


def _without_legal_form(name: str) -> str:
    """``name`` without the legal form at its end (and the white space before it)."""
    form = _LEGAL_FORM.search(name)
    if form is None or form.start() == 0 or not name[form.start() - 1].isspace():
        return name
    return name[: form.start()].rstrip()
