"""Characters that make an identifier look like something it is not.

Normalisation (:mod:`assay.grounding._unicode`) makes the identifier checks compare what
a reader sees; this module refuses the text that was built to be misread, even when
the identifier under it is right. Three things are refused:

* an **invisible character** (a format character such as U+200D, a variation
  selector, a bidi mark) inside an identifier or touching it: ``IN\\u200dV-4421``
  looks like the evidence, and a program that copies it gets a different string;
* an explicit **bidi control** (embeddings, overrides, isolates, U+202A-202E and
  U+2066-2069) anywhere: it changes the order in which characters are shown, so
  ``INV-\\u202e2244`` is read as ``INV-4422``;
* a **mixed-script look-alike**: a word whose letters come from scripts that are
  not written together (Latin with Cyrillic or Greek, Cyrillic with Greek; Latin
  with Han, kana or Hangul is ordinary CJK text) and that holds a letter the
  Unicode confusables data lists as a look-alike of an ASCII one (``INV`` written
  with a Cyrillic I, U+0406, and a Greek N, U+039D);
* a **compatibility character that stands for several** (``¼`` for ``1\u20444``,
  ``㎏``, the ligature ``ﬁ``) inside an identifier: ``EUR 97¼`` would be compared
  as ``EUR 971\u20444``, so such an identifier is never matched (write it out).

Accents, consistently Cyrillic or CJK text, emoji, typographic quotes and dashes and
no-break spaces are ordinary writing and pass.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left, bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import JsonValue

from assay._text import token_pattern
from assay.contract import Handover
from assay.gate._checks import Entries, Where
from assay.gate._records import GateFinding, path
from assay.grounding import (
    BIDI_CONTROLS,
    VARIATION_SELECTORS,
    Identifier,
    IdentifierKind,
    Normalised,
    expanded_characters,
    identifiers_of,
    lookalike_of,
    normalise,
    script_of,
    visible,
)

__all__ = [
    "SUSPICIOUS_CHARACTERS",
    "Finding",
    "check_characters",
    "findings",
    "reordered_identifiers",
    "suspicious_identifiers",
]

#: The gate error code for text built to be misread.
SUSPICIOUS_CHARACTERS = "suspicious_characters"

FindingKind = Literal["invisible", "bidi", "mixed_script", "expanded"]

_OPENERS = frozenset("\u202a\u202b\u202d\u202e\u2066\u2067\u2068")
_RLO = "\u202e"
_BIDI_OR_BREAK = re.compile("[\u202a-\u202e\u2066-\u2069\n\r\u0085\u2029]")
_WORD = token_pattern("word_chars")
_IGNORED_SCRIPTS = frozenset({"COMMON", "INHERITED", "Unknown"})
#: Scripts written together in one word in ordinary text (UAX #39, highly restrictive).
_WRITTEN_TOGETHER = (
    frozenset({"LATIN", "HAN", "HIRAGANA", "KATAKANA"}),
    frozenset({"LATIN", "HAN", "HANGUL"}),
    frozenset({"LATIN", "HAN", "BOPOMOFO"}),
)
_MAX_PROBLEMS = 5


@dataclass(frozen=True, kw_only=True)
class Finding:
    """One thing in a text built to be misread; ``start``/``end`` index the text."""

    kind: FindingKind
    start: int
    end: int
    chars: str
    text: str
    scripts: tuple[str, ...] = ()

    def describe(self) -> str:
        """What is wrong, with each character named as ``U+XXXX (NAME)``."""
        where = _visible(self.text)
        names = ", ".join(_name(c) for c in self.chars)
        if self.kind == "invisible":
            return f"invisible {names} inside or next to identifier {where}: remove it"
        if self.kind == "bidi":
            return f"bidi control {names} changes the order in which {where} is shown"
        if self.kind == "expanded":
            return f"{names} in identifier {where} stands for several characters: write it out"
        looks = ", ".join(f"{_name(c)} looks like {lookalike_of(c)!r}" for c in self.chars)
        return f"{where} mixes scripts ({', '.join(self.scripts)}): {looks}"


def findings(norm: Normalised, identifiers: Sequence[Identifier]) -> list[Finding]:
    """Every finding of a normalised text whose ``identifiers`` were extracted."""
    if norm.original.isascii():
        return []  # nothing invisible, no other script
    found = _bidi_scopes(norm.original) + _mixed_scripts(norm)
    found += [f for ident in identifiers if (f := _invisible_near(norm, ident)) is not None]
    found += [f for ident in identifiers if (f := _expanded_in(ident)) is not None]
    return sorted(found, key=lambda f: (f.start, f.end))


def suspicious_identifiers(norm: Normalised, identifiers: Sequence[Identifier]) -> set[int]:
    """Indexes of the ``identifiers`` that a finding touches."""
    if norm.original.isascii():
        return set()
    flagged = {
        i
        for i, ident in enumerate(identifiers)
        if _invisible_near(norm, ident) or _expanded_in(ident)
    }
    spans = _merged([(f.start, f.end) for f in _bidi_scopes(norm.original) + _mixed_scripts(norm)])
    starts = [s for s, _ in spans]
    for i, ident in enumerate(identifiers):
        k = bisect_right(starts, ident.end - 1) - 1
        if k >= 0 and spans[k][1] > ident.start:
            flagged.add(i)
    return flagged


def reordered_identifiers(text: str) -> list[Identifier]:
    """Identifiers a right-to-left override shows though the text does not hold them.

    ``\u202e1244-VNI`` is shown as ``INV-4421``: the span is reported as an
    identifier of the kind that its shown order is.
    """
    scopes = [s for s in _bidi_scopes(text) if _RLO in s.chars]
    if not scopes:
        return []
    # Every scope as shown, one per line, so that one scan reads them all.
    shown = ["".join(c for c in reversed(s.text) if c not in BIDI_CONTROLS) for s in scopes]
    starts = [0]
    for line in shown[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    kinds: dict[int, IdentifierKind] = {}
    for ident in identifiers_of(normalise("\n".join(shown))):
        kinds.setdefault(bisect_right(starts, ident.start) - 1, ident.kind)
    return [
        Identifier(kind=kind, value=scopes[k].text, start=scopes[k].start, end=scopes[k].end)
        for k, kind in sorted(kinds.items())
    ]


# --- the three kinds -------------------------------------------------------------


def _invisible_near(norm: Normalised, ident: Identifier) -> Finding | None:
    """Removed characters inside ``ident`` or in an unbroken run touching it.

    A variation selector just before an identifier belongs to the emoji before it.
    """
    removed = norm.removed
    chars = [norm.original[p] for p in norm.removed_between(ident.start, ident.end)]
    i, expected = bisect_left(removed, ident.start) - 1, ident.start - 1
    while i >= 0 and removed[i] == expected:
        if norm.original[expected] not in VARIATION_SELECTORS:
            chars.append(norm.original[expected])
        i, expected = i - 1, expected - 1
    i, expected = bisect_left(removed, ident.end), ident.end
    while i < len(removed) and removed[i] == expected:
        chars.append(norm.original[expected])
        i, expected = i + 1, expected + 1
    if not chars:
        return None
    return Finding(
        kind="invisible",
        start=ident.start,
        end=ident.end,
        chars="".join(dict.fromkeys(chars)),
        text=ident.value,
    )


def _expanded_in(ident: Identifier) -> Finding | None:
    """Characters of ``ident`` that NFKC writes as several (``¼``, ``㎏``, ``ﬁ``)."""
    chars = expanded_characters(ident.value)
    if not chars:
        return None
    return Finding(kind="expanded", start=ident.start, end=ident.end, chars=chars, text=ident.value)


def _bidi_scopes(text: str) -> list[Finding]:
    """Each explicit bidi control with the text it governs (to its closer or line end)."""
    if not any(c in text for c in BIDI_CONTROLS):
        return []
    scopes: list[Finding] = []
    depth, start, chars = 0, 0, ""
    for m in _BIDI_OR_BREAK.finditer(text):
        c, at = m.group(), m.start()
        if c in _OPENERS:
            if depth == 0:
                start, chars = at, ""
            depth, chars = depth + 1, chars + c
        elif c in BIDI_CONTROLS:  # a closer: PDF or PDI
            if depth == 0:
                scopes.append(_scope(text, at, at + 1, c))
                continue
            depth, chars = depth - 1, chars + c
            if depth == 0:
                scopes.append(_scope(text, start, at + 1, chars))
        elif depth:  # a line break ends every embedding
            scopes.append(_scope(text, start, at, chars))
            depth = 0
    if depth:
        scopes.append(_scope(text, start, len(text), chars))
    return scopes


def _scope(text: str, start: int, end: int, chars: str) -> Finding:
    distinct = "".join(dict.fromkeys(chars))
    return Finding(kind="bidi", start=start, end=end, chars=distinct, text=text[start:end])


def _mixed_scripts(norm: Normalised) -> list[Finding]:
    """Words of the matching form that mix scripts and hold an ASCII look-alike."""
    if norm.text.isascii():
        return []
    found: list[Finding] = []
    for m in _WORD.finditer(norm.text):
        word = m.group()
        if word.isascii():
            continue
        scripts = {
            "LATIN" if c.isascii() else script_of(c) for c in word if c.isalpha()
        } - _IGNORED_SCRIPTS
        if len(scripts) < 2 or any(scripts <= ok for ok in _WRITTEN_TOGETHER):
            continue
        lookalikes = "".join(dict.fromkeys(c for c in word if not c.isascii() and lookalike_of(c)))
        if not lookalikes:
            continue
        start, end = norm.original_span(*m.span())
        found.append(
            Finding(
                kind="mixed_script",
                start=start,
                end=end,
                chars=lookalikes,
                text=norm.original[start:end],
                scripts=tuple(sorted(scripts)),
            )
        )
    return found


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


# --- the gate check ----------------------------------------------------------------


def check_characters(run_id: str, handover: Handover, entries: Entries) -> list[GateFinding]:
    """Claims, propositions and action arguments hold no text built to be misread."""
    errors: list[GateFinding] = []
    for where, text in _texts(handover):
        if text.isascii():
            continue  # nothing invisible, no other script
        norm = normalise(text)
        problems = list(dict.fromkeys(f.describe() for f in findings(norm, identifiers_of(norm))))
        if not problems:
            continue
        shown = problems[:_MAX_PROBLEMS]
        if len(problems) > _MAX_PROBLEMS:
            shown.append(f"and {len(problems) - _MAX_PROBLEMS} more")
        errors.append(
            GateFinding(
                code=SUSPICIOUS_CHARACTERS,
                path=path(*where),
                message="; ".join(shown) + " (write identifiers as the evidence has them)",
            )
        )
    return errors


def _texts(handover: Handover) -> Iterator[tuple[Where, str]]:
    for i, claim in enumerate(handover.claims):
        yield ("claims", i, "text"), claim.text
        for j, prop in enumerate(claim.propositions):
            yield ("claims", i, "propositions", j, "text"), prop.text
            for k, arg in enumerate(prop.args or []):
                yield ("claims", i, "propositions", j, "args", k), arg
    for i, intent in enumerate(handover.action_intents):
        yield from _leaves(intent.args, ("action_intents", i, "args"))


def _leaves(value: JsonValue, where: Where) -> Iterator[tuple[Where, str]]:
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, list):
        for k, item in enumerate(value):
            yield from _leaves(item, (*where, k))
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, (*where, key))


# --- showing untrusted text ---------------------------------------------------------


def _name(char: str) -> str:
    return f"U+{ord(char):04X} ({unicodedata.name(char, 'unnamed')})"


def _visible(text: str, limit: int = 60) -> str:
    """``text`` quoted, cut at ``limit``, its invisible characters written out."""
    return "'" + visible(text[:limit]) + ("…'" if len(text) > limit else "'")
