"""Typed propositions, checked slot by slot.

A proposition may carry ``pred`` and ``args``: "line 4 bills drafting at EUR 295 per
hour" as ``pred="billed_rate"``, ``args=["line 4", "drafting", "EUR 295 per hour"]``.
Every argument must then occur inside *one* record of one cited entry (a JSON
object with the scalar fields of the objects that hold it, a text line or a
sentence), not scattered over the document: a claim that binds the right number to
the wrong line or role has no record holding all its arguments, and fails for a
reason a person can read. Where one record holds them all, the model judges the
relation with that entry reduced to that record (other cited entries stay beside
it as context).

An argument occurs in a record when its text does (case and spacing aside), when
every identifier, amount, quantity and date in it does in any written form the
gate accepts (:func:`assay.grounding.identifier_in_evidence`), or, for an argument of
plain words, when each of its content words does (by stem).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from assay._text import token_pattern
from assay.grounding import EvidenceView, extract_identifiers, identifier_in_evidence, view_of
from assay.ledger import LedgerEntry
from assay.verifier._premises import Reading, reading_of
from assay.verifier._text import content_words, stem_set

_TOKEN = token_pattern("args")


@dataclass(frozen=True, slots=True)
class Binding:
    """The record of a cited entry that holds every argument."""

    entry: LedgerEntry
    record: str
    reading: Reading


def bind(args: Sequence[str], cited: Sequence[LedgerEntry]) -> Binding | str:
    """The first record of the cited entries that holds every argument, or a reason
    that says which argument is where."""
    wanted = [a for a in args if a.strip()]
    seen: dict[str, list[str]] = {a: [] for a in wanted}
    for entry in cited:
        view = view_of(entry.text)
        for name, reading in scopes(view):
            held = [a for a in wanted if holds(reading.text, a)]
            if len(held) == len(wanted):
                return Binding(entry=entry, record=name, reading=reading)
            for a in held:
                seen[a].append(f"{entry.id} {_label(name)}")
    missing = [a for a in wanted if not seen[a]]
    if missing:
        return "; ".join(f"“{a}” occurs in none of its cited evidence" for a in missing)
    places = "; ".join(f"“{a}” in {', '.join(dict.fromkeys(seen[a]))[:160]}" for a in wanted)
    return f"its arguments are never stated together in one record: {places}"


def holds(text: str, arg: str) -> bool:
    """Whether ``arg`` occurs in ``text`` (see the module's docstring)."""
    needle = re.escape(" ".join(arg.split()).casefold())
    if re.search(rf"(?<![\w-]){needle}(?![\w-])", " ".join(text.split()).casefold()):
        return True
    identifiers = extract_identifiers(arg)
    if identifiers:
        return all(identifier_in_evidence(i, text) for i in identifiers)
    tokens = _TOKEN.findall(arg.casefold())
    if not tokens:
        return False
    have = set(_TOKEN.findall(text.casefold()))
    stems = stem_set(text)
    # A token with a digit (P-1, 4b) must occur whole; a word, by its stem.
    return all(
        token in have if any(c.isdigit() for c in token) else set(content_words(token)) <= stems
        for token in tokens
    )


def scopes(view: EvidenceView) -> list[tuple[str, Reading]]:
    """Each record of ``view`` as a reading: a JSON record with the scalar fields of
    the records that hold it (an invoice line with the invoice's number), a text
    record alone."""
    records = view.records()
    by_name = dict(records) if view.is_json else {}
    scopes: list[tuple[str, Reading]] = []
    for name, (start, end) in records:
        spans = [by_name[outer] for outer in ancestors(name) if outer in by_name]
        scopes.append((name, reading_of(view, [*spans, (start, end)])))
    return scopes


def ancestors(name: str) -> list[str]:
    """The paths that hold record ``name``, outermost first (``a.b[2]`` → ``""``,
    ``"a"``, ``"a.b"``)."""
    found: list[str] = []
    path = name
    while path:
        cut = max(path.rfind("."), path.rfind("["))
        path = path[: max(cut, 0)]
        found.append(path)
    return found[::-1]


def _label(name: str) -> str:
    return f"({name})" if name else "(top level)"
