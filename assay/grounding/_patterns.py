"""The identifier patterns, and the one scan that finds them in a text.

The scan runs on the search form of a text (:mod:`assay.grounding._unicode`) and returns
spans of it; :mod:`assay.grounding._identifiers` maps them back to what was written.
Dates, amounts and quantities are not patterns of this module: they are read by
:mod:`assay.grounding` (:func:`~assay.grounding.claim_values`), which knows their
written forms; every amount (a number with a currency), quantity (with a unit, a
percentage, or a count of something, ``120 units``, ``three orders``) and date or
time it finds is an identifier, with any hedge before it (``about 9.8 tonnes``).

Every pattern does work proportional to its input, whatever the input: agents and
tools hand over text nobody vetted, and a regex that backtracks quadratically on
``1,111,111,…`` turns a 40 KB proposition into half a minute of gate time. So a
pattern never starts a match where a longer one of its own kind could have started
just before (the look-behinds), and a repetition that may be retried from many
starting points is bounded and possessive (a number has at most 13 digit groups). Context tests
(hash words, colour words, git shapes) look at a bounded window around a match,
never at the whole text before it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from assay.grounding._check import claim_values

IdentifierKind = Literal[
    "hash", "uuid", "url", "email", "ip", "path", "ticket", "amount", "date", "quantity"
]


@dataclass(frozen=True, kw_only=True)
class Identifier:
    """An identifier-like token found in text: ``text[start:end] == value``."""

    kind: IdentifierKind
    value: str
    start: int
    end: int


__all__ = [
    "HEX",
    "Span",
    "find",
]

Span = tuple[IdentifierKind, int, int]

_B = r"(?<![A-Za-z0-9])"  # not glued to a preceding alphanumeric
_E = r"(?![A-Za-z0-9])"  # nor to a following one

_URL = re.compile(r"https?://[^\s<>\"'`]+", re.IGNORECASE)
_UUID = re.compile(
    _B + r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}" + _E
)
# An e-mail address: a local part from its first character (the look-behind), then
# dot-separated domain labels, the last of letters; each label's run is possessive
# and bounded, so a match is tried once per "@".
_EMAIL = re.compile(
    r"(?<![\w.%+-])[A-Za-z0-9][\w.%+-]{0,63}+@"
    r"[A-Za-z0-9][A-Za-z0-9-]{0,62}+(?:\.[A-Za-z0-9-]{1,63}+)*\.[A-Za-z]{2,24}+"
    r"(?![\w-]|\.[A-Za-z0-9])"
)
# An IPv4 address: four dotted numbers of at most three digits (each checked <= 255).
_IPV4 = re.compile(r"(?<![\d.])\d{1,3}(?:\.\d{1,3}){3}(?![\d]|\.\d)")
_PATH_SEG = r"[\w@+-][\w.@+-]*"
_PATH = re.compile(
    r"(?<![\w/.~:-])(?:"
    r"(?:~|\.{1,2})?/" + _PATH_SEG + r"(?:/" + _PATH_SEG + r")*/?"  # anchored
    r"|[A-Za-z]:\\[\w.@+-]+(?:\\[\w.@+-]+)*"  # Windows drive path
    # Relative, with an extension; never from inside a segment (after @ or +).
    r"|(?<![@+])" + _PATH_SEG + r"(?:/" + _PATH_SEG + r")*/[\w@+-]+\.[A-Za-z][A-Za-z0-9]{0,7}"
    r")(?![\w/])"
)
HEX = re.compile(_B + r"[0-9a-fA-F]{7,64}" + _E)
_HASH_WORDS = re.compile(
    r"\b(?:commit(?:s|ted)?|sha-?(?:1|256)?|hash(?:es)?|revision|rev|changeset|git|"
    r"cherry-pick(?:ed)?|revert(?:ed|s)?|checkout|rebase[ds]?|HEAD|blob|tree)\b[^\n]{0,40}$",
    re.IGNORECASE,
)
_LINE_START = re.compile(r"(?:^|\n)[ \t*-]*$")
_RANGE_AFTER = re.compile(r"\.\.\.?[0-9a-fA-F]{7}")
_DOMAIN_AFTER = re.compile(r"\.[A-Za-z]")
_WORD_AFTER = re.compile(r" +\S")
_COLOUR_WORDS = re.compile(r"\b(?:colou?r|fill|stroke|background|rgba?|hex)\b[^\n]{0,20}$", re.I)
_TICKET_HASH = re.compile(r"(?<![\w&#])#\d+" + _E)
_TICKET_KEY = re.compile(_B + r"([A-Z][A-Z0-9]{1,9})(?:-\d+)+" + _E)
_STANDARDS = frozenset(
    {"UTF", "SHA", "ISO", "AES", "MD", "COVID", "IPV", "UCS", "CP", "GPT", "TLS"}
)

_TRAILING = ".,;:!?)]}'\""


def find(text: str) -> list[Span]:
    """Every identifier-like span of ``text``, in order of position, none overlapping.

    Kinds are tried from the most specific (URL, UUID) to the least (quantity); a
    span that overlaps one already taken is dropped.
    """
    taken: list[tuple[int, int]] = []
    found: list[Span] = []
    for kind, spans in _candidates(text):
        free = _free(spans, taken)
        found.extend((kind, start, end) for start, end in free)
        taken = sorted(taken + free)
    found.sort(key=lambda s: (s[1], s[2]))
    return found


def _free(spans: Iterable[tuple[int, int]], taken: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The ``spans`` (in order, not overlapping each other) that overlap none ``taken``."""
    free: list[tuple[int, int]] = []
    i = 0
    for start, end in spans:
        while i < len(taken) and taken[i][1] <= start:
            i += 1
        if i < len(taken) and taken[i][0] < end:
            continue
        free.append((start, end))
    return free


def _candidates(text: str) -> list[tuple[IdentifierKind, list[tuple[int, int]]]]:
    dates, amounts, quantities = _values(text)
    return [
        ("url", [_strip_trailing(text, m.start(), m.end()) for m in _URL.finditer(text)]),
        ("uuid", [m.span() for m in _UUID.finditer(text)]),
        ("email", [m.span() for m in _EMAIL.finditer(text)]),
        ("ip", [m.span() for m in _IPV4.finditer(text) if _octets(m.group())]),
        ("date", dates),
        ("hash", [m.span() for m in HEX.finditer(text) if _is_hash(text, m)]),
        ("path", [_strip_trailing(text, m.start(), m.end()) for m in _PATH.finditer(text)]),
        ("ticket", _hash_tickets(text)),
        ("ticket", _key_tickets(text)),
        ("amount", amounts),
        ("quantity", quantities),
    ]


_Spans = list[tuple[int, int]]


def _values(text: str) -> tuple[_Spans, _Spans, _Spans]:
    """Dates and times, amounts, and quantities of ``text`` (a plain number is not
    an identifier: it says too little to be checked on its own)."""
    dates: _Spans = []
    amounts: _Spans = []
    quantities: _Spans = []
    for value in claim_values(text):
        span = (value.start, value.end)
        if value.date is not None:
            dates.append(span)
        elif value.quantity is not None and value.quantity.kind == "money":
            amounts.append(span)
        elif value.quantity is not None and value.quantity.kind != "number":
            quantities.append(span)
    return dates, amounts, quantities


def _octets(token: str) -> bool:
    """Each of the four numbers is an octet (0-255): ``1.234.567.890`` is a number."""
    return all(int(part) <= 255 for part in token.split("."))


def _strip_trailing(text: str, start: int, end: int) -> tuple[int, int]:
    while end > start + 1 and text[end - 1] in _TRAILING:
        end -= 1
    return start, end


def _is_hash(text: str, match: re.Match[str]) -> bool:
    """A hex run is a hash when long, or short with a hash word or a git shape near it."""
    token = match.group()
    if not any(c.isdigit() for c in token):
        return False
    if len(token) >= 10:
        return True
    start, end = match.span()
    before = text[max(0, start - 60) : start]
    if before.endswith("#") or not any(c.isalpha() for c in token):
        return False
    return _HASH_WORDS.search(before) is not None or _git_shaped(text, before, end)


def _git_shaped(text: str, before: str, end: int) -> bool:
    """``a1b2c3d..e4f5a6b``, ``repo@a1b2c3d``, or a ``git log --oneline`` line."""
    if before.endswith(".."):
        return True
    if before.endswith("@"):
        return _DOMAIN_AFTER.match(text, end) is None  # not an e-mail domain
    if _RANGE_AFTER.match(text, end):
        return True
    return _LINE_START.search(before[-20:]) is not None and (
        _WORD_AFTER.match(text, end) is not None
    )


def _hash_tickets(text: str) -> list[tuple[int, int]]:
    return [
        m.span()
        for m in _TICKET_HASH.finditer(text)
        if not _COLOUR_WORDS.search(text[max(0, m.start() - 40) : m.start()])
    ]


def _key_tickets(text: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for m in _TICKET_KEY.finditer(text):
        prefix = m.group(1)
        if prefix.rstrip("0123456789") in _STANDARDS or prefix in _STANDARDS:
            continue
        spans.append(m.span())
    return spans
