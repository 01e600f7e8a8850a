"""A JSON tool output's true/false fields read as the statements they make:
``fare.refundable: false`` says the fare is not refundable, ``active: true`` that
the account is active.

A small model reads "The team plan is inactive" against a record that writes
``active: true`` as support (it shares every word but the prefix) and "The fare
cannot be refunded" against ``refundable: false`` as unrelated (it never learnt
that ``false`` denies the key before it). Both are plain to read without it: the
field's name is the statement, its value the polarity.

- A claim that writes every word of a field's name and denies it where the field is
  ``true``, or affirms it where it is ``false``, is contradicted by that field
  ("inactive" and "not active" deny ``active``; "cannot be refunded" denies
  ``refundable``).
- A one-clause claim whose polarity about the field agrees with its value, and
  every other content word of which the field's record writes (its path, its
  sibling fields and their values), is entailed by the field: "The QX7-22K fare
  cannot be refunded" by ``fare.refundable: false`` beside ``booking_ref: QX7-22K``.
  A claim that also states a number is left to the row check and the model: "9 of
  its 12 seats in use" binds numbers to fields, which the record's words alone do
  not show.

A field whose name the view writes more than once with different values (one
line item paid, another not) decides nothing here: which record the claim means is
the row check's and the model's to read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from assay._text import token_pattern, word_list, word_set
from assay.verifier._antonyms import opposite_actions
from assay.verifier._polarity import NEGATION_STEMS, negation_about_shared_words
from assay.verifier._slots import ancestors
from assay.verifier._text import content_words, split_claim, split_clauses, word_stems

__all__ = ["Flag", "flag_conflict", "flag_support", "spaced", "state_conflict"]

#: A true/false leaf of a JSON view (``fare.refundable: false``).
_FLAG_LINE = re.compile(r"^(?P<path>[^\n:]+): (?P<value>true|false)$", re.MULTILINE)
_KEY_WORDS = token_pattern("key_words")
#: Words a field's name starts with that say nothing of what it states
#: (``is_active``, ``has_pets``; ``words/field-name-leads.txt``).
_LEADING = word_set("field-name-leads")
#: "-able" and "-ible" are read off a field's name, so that ``changeable`` is the
#: field "cannot be changed" denies; such a name is stated only by the word itself
#: or a passive ("be changed"), so that "a refund was issued" says nothing of
#: ``refundable``.
_ABLE = re.compile(r"(?<=\w{4})(?:able|ible)$")
_PASSIVE = word_set("passive-auxiliaries")
_CLAIM_WORD = token_pattern("letters")
#: A number standing on its own, not part of an identifier ("9 of its 12 seats",
#: not ``ACC-55102`` or ``QX7-22K``).
_AMOUNT = token_pattern("amounts")
#: Words whose work the polarity comparison has done: a claim that denies the field
#: need not find "not" or "cannot" in its record.
_POLARITY_WORDS = NEGATION_STEMS | {"cannot", "can", "non", "will", "would", "yet", "still"}
#: Pronouns, which name what the record is about without a word of it
#: (``words/pronouns.txt``).
_PRONOUNS = word_set("pronouns")
#: Words of a field's name that grant a permission (``words/permission-words.txt``,
#: as word stems), and the modals that state one.
_PERMISSION = frozenset(s for w in word_list("permission-words") for s in word_stems(w))
_MODAL = re.compile(r"\b(?:may|can|could|cannot|able\s+to)\b|\b\w+n['\u2019]t\b", re.IGNORECASE)
_SEGMENT = re.compile(r"[^.\[\]]+")


@dataclass(frozen=True, slots=True)
class Flag:
    """One true/false field of a view: its line at ``start:end``, its path, its
    name's word stems and its name as words (an "-able" name without the suffix,
    ``able``), and its value."""

    start: int
    end: int
    path: str
    key: frozenset[str]
    phrase: str
    able: bool
    value: bool


@lru_cache(maxsize=32)
def flags(view: str) -> tuple[Flag, ...]:
    """The true/false fields of a JSON view whose name the view gives one value
    (read once per view: every proposition citing an entry asks)."""
    found: list[Flag] = []
    values: dict[frozenset[str], set[bool]] = {}
    for match in _FLAG_LINE.finditer(view):
        path = match.group("path")
        segments = _SEGMENT.findall(path)
        words = [w.lower() for w in _KEY_WORDS.findall(segments[-1])] if segments else []
        while words and words[0] in _LEADING:
            words = words[1:]
        able = len(words) == 1 and _ABLE.search(words[0]) is not None
        key = frozenset(word_stems(" ".join(_ABLE.sub("", w) for w in words)))
        if not key:
            continue
        value = match.group("value") == "true"
        values.setdefault(key, set()).add(value)
        found.append(
            Flag(
                start=match.start(),
                end=match.end(),
                key=key,
                path=path,
                phrase=" ".join(_ABLE.sub("", w) for w in words),
                able=able,
                value=value,
            )
        )
    return tuple(flag for flag in found if len(values[flag.key]) == 1)


def _record(view: str, path: str) -> frozenset[str]:
    """The word stems of the record that holds the field at ``path``: the path
    itself, and every line of the view in the same object or above it (a nested
    object's fields are about what its parents name)."""
    owned = _owned(view)
    held = (owned.get(outer, frozenset()) for outer in ancestors(path))
    return frozenset(word_stems(spaced(path))).union(*held)


@lru_cache(maxsize=32)
def _owned(view: str) -> dict[str, frozenset[str]]:
    """The word stems of each object's own lines in a view, by the object's path
    (``""`` for the top level): read once per view, in time linear in its size."""
    owned: dict[str, set[str]] = {}
    for line in view.splitlines():
        name, _, value = line.partition(": ")
        owner = name.rsplit(".", 1)[0] if "." in name else ""
        owned.setdefault(owner, set()).update(word_stems(f"{spaced(name)} {value}"))
    return {owner: frozenset(stems) for owner, stems in owned.items()}


def spaced(name: str) -> str:
    """A field's path with its separators as spaces (``fare.change_fee_eur`` as
    "fare change fee eur")."""
    return re.sub(r"[._\[\]\d]+", " ", name)


def _states(claim: str, flag: Flag) -> bool | None:
    """Whether ``claim`` affirms (True) or denies (False) the field, or None where
    it does not write every word of the field's name. A name that grants a
    permission (``carry_over_allowed``, ``remote_eligible``) is also written by a
    modal ("may carry over")."""
    written = _written(claim, flag)
    key = flag.key
    if key & _PERMISSION and _MODAL.search(claim):
        key = key - _PERMISSION
    if not key <= written and not _prefixed(claim, flag):
        return None
    return not negation_about_shared_words(claim, flag.phrase)


def _written(claim: str, flag: Flag) -> set[str]:
    """The word stems of ``claim`` that can state the field: all of them, or for
    an "-able" name only the word itself and a passive ("be refunded")."""
    if not flag.able:
        return set(word_stems(claim))
    words = _CLAIM_WORD.findall(claim.lower())
    return {
        word_stems(_ABLE.sub("", word))[0]
        for before, word in zip(["", *words], words, strict=False)
        if _ABLE.search(word) or before in _PASSIVE
    }


def _prefixed(claim: str, flag: Flag) -> bool:
    """Whether ``claim`` writes a one-word field's name with a negating prefix
    ("inactive" for ``active``, "non-refundable" for ``refundable``)."""
    if len(flag.key) != 1:
        return False
    return negation_about_shared_words(claim, flag.phrase) and not flag.key <= set(
        word_stems(claim)
    )


def _able_words(claim: str, flag: Flag) -> set[str]:
    """The claim's stems of the field's "-able" name as written ("refundabl"),
    which the field states though its stem drops the suffix."""
    if not flag.able:
        return set()
    return {s for s in word_stems(claim) if word_stems(_ABLE.sub("", s + "e"))[0] in flag.key}


def flag_conflict(view: str, claim: str) -> tuple[int, int] | None:
    """The line of ``view`` holding a true/false field that ``claim`` states with
    the opposite value, or None. Where several records write the field, the line of
    the one that writes most of the claim's words ("R-17 is not paid" points at
    record R-17's ``paid: true``)."""
    opposed = [f for f in flags(view) if _states(claim, f) not in (None, f.value)]
    if not opposed:
        return None
    wanted = set(content_words(claim))
    best = max(opposed, key=lambda f: len(wanted & _record(view, f.path)))
    return best.start, best.end


def flag_support(view: str, claim: str) -> tuple[int, int] | None:
    """The line of ``view`` holding a true/false field that states ``claim``: a
    one-clause claim with the field's polarity, every content word of which the
    field's record writes. None where there is none."""
    if len(split_claim(claim)) != 1 or split_clauses(claim):
        return None  # more than one statement: the others are the model's to read
    if _AMOUNT.search(claim):
        return None  # which field a number is, the row check and the model read
    wanted = set(content_words(claim)) - _POLARITY_WORDS - _PRONOUNS
    for flag in flags(view):
        if _states(claim, flag) != flag.value:
            continue
        known = _record(view, flag.path) | flag.key
        if all(word in known for word in wanted - _able_words(claim, flag)):
            return flag.start, flag.end
    return None


#: A field that records the outcome of a decision or a run (``status: approved``,
#: ``result: failed``), and how much of a claim's other words its record must
#: write for the claim to be about it.
_STATE_LINE = re.compile(
    r"^(?P<path>(?:[^\n:]*[._])?(?:status|state|decision|outcome|result))"
    r": (?P<value>[A-Za-z]+)$",
    re.MULTILINE | re.IGNORECASE,
)
_ABOUT_THE_RECORD = 0.6


def state_conflict(view: str, claim: str) -> tuple[int, int] | None:
    """The line of ``view`` whose outcome field states the opposite action of
    ``claim``, or None: "Claim WC-88412 was rejected" against ``status: approved``
    in the record whose ``claim_id`` is ``WC-88412``. The claim must write an
    opposite of the value and none of its own words for it, and at least 60% of
    its other content words must be in the field's record."""
    claimed = set(word_stems(claim))
    for match in _STATE_LINE.finditer(view):
        value = word_stems(match.group("value"))
        sides = opposite_actions(value[0]) if value else None
        if sides is None:
            continue
        own, opposite = sides
        if not claimed & opposite or claimed & own:
            continue
        rest = [w for w in content_words(claim) if w not in opposite]
        record = _record(view, match.group("path"))
        if rest and sum(w in record for w in rest) >= _ABOUT_THE_RECORD * len(rest):
            return match.start(), match.end()
    return None
