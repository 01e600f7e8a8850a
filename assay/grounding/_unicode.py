"""Text as the identifier checks read it: one spelling per look, nothing invisible.

Unicode can write a string that looks like an identifier from the evidence and is
not it (Cyrillic I, U+0406, for ``I``; a zero-width joiner inside ``INV-4421``),
and one that is it but is spelled differently (fullwidth letters, a no-break space,
a non-breaking hyphen). Compared code point by code point, the first kind can slip
past the extractor and the second kind is refused although it is honest. So every
text, claim and evidence alike, is read in two derived forms:

* the **matching form**: NFKC (fullwidth letters, ligatures, NBSP and other
  compatibility spellings become their plain form), with invisible characters
  removed (format characters — category Cf, among them zero-width characters and
  bidi controls — variation selectors and the other default-ignorable code points)
  and dash look-alikes of ``-`` written ``-``. Identifiers are compared in this form.
* the **search form**: the matching form with every character that the Unicode
  confusables data (TR39, as shipped by ``confusable_homoglyphs``) lists as a
  look-alike of an ASCII letter, digit or path punctuation replaced by that
  character, one for one. Identifiers are *found* in this form, so ``INV-4422``
  spelled with a Cyrillic I and a Greek N is seen as the ticket it imitates; its
  value is still compared in the matching form, where it is not ``INV-4422``.

Both forms have the same length, and :meth:`Normalised.original_span` maps a span
of either back to the text as given, so what is reported is what the author wrote.
NFKC is applied per character with its combining marks, so a text and any slice of
it that starts and ends on a character normalise alike.
"""

from __future__ import annotations

import re
import unicodedata
from array import array
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from functools import lru_cache

from confusable_homoglyphs import categories, confusables

__all__ = [
    "BIDI_CONTROLS",
    "VARIATION_SELECTORS",
    "Normalised",
    "lookalike_of",
    "normalise",
    "script_of",
    "visible",
]

#: Explicit embeddings, overrides and isolates (UAX #9): they reorder what is shown.
BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")

#: Variation selectors attach to the character before them (emoji style ``❤️``).
VARIATION_SELECTORS = frozenset(
    [chr(c) for c in range(0xFE00, 0xFE10)]
    + [chr(c) for c in range(0xE0100, 0xE01F0)]
    + ["\u180b", "\u180c", "\u180d", "\u180f"]
)

# Default-ignorable code points that are not format characters: invisible by
# definition, whatever category they have.
_IGNORABLE_NON_FORMAT = "\u034f\u115f\u1160\u17b4\u17b5\u3164\uffa0"


def _format_characters() -> frozenset[str]:
    """Every Cf code point the running Python knows (they all lie in these planes)."""
    planes = (range(0, 0x20000), range(0xE0000, 0xE1000))
    return frozenset(
        chr(c) for plane in planes for c in plane if unicodedata.category(chr(c)) == "Cf"
    )


_INVISIBLE = _format_characters() | VARIATION_SELECTORS | frozenset(_IGNORABLE_NON_FORMAT)


def _char_class(chars: frozenset[str]) -> re.Pattern[str]:
    return re.compile("[" + "".join(re.escape(c) for c in sorted(chars)) + "]")


def visible(text: str) -> str:
    """``text`` with invisible and control characters written ``<U+XXXX>``, so that
    what is shown to a person is all there is."""
    if text.isascii() and text.isprintable():
        return text
    return "".join(
        f"<U+{ord(c):04X}>" if c in _INVISIBLE or unicodedata.category(c) == "Cc" else c
        for c in text
    )


# --- look-alikes, from the confusables data ------------------------------------------


@lru_cache(maxsize=8192)
def script_of(char: str) -> str:
    """The Unicode script of ``char`` (``LATIN``, ``CYRILLIC``, ``COMMON``…)."""
    return str(categories.alias(char))


_PUNCTUATION = frozenset("-/\\.:")


def _ascii_lookalikes(char: str) -> set[str]:
    """ASCII characters that ``char`` is confusable with, directly or by one step."""
    found: set[str] = set()
    for entry in confusables.confusables_data.get(char, ()):
        target: str = entry["c"]
        if len(target) != 1:
            continue
        found.add(target)
        found.update(e["c"] for e in confusables.confusables_data.get(target, ()))
    return {c for c in found if len(c) == 1 and c.isascii() and (c.isalnum() or c in _PUNCTUATION)}


def _pick(char: str, candidates: set[str]) -> str | None:
    """The candidate a reader would take ``char`` for: same case first, then a digit."""
    if not candidates:
        return None
    category = unicodedata.category(char)
    upper = sorted(c for c in candidates if c.isupper())
    lower = sorted(c for c in candidates if c.islower())
    digits = sorted(c for c in candidates if c.isdigit())
    other = sorted(c for c in candidates if not c.isalnum())
    if category == "Lu":
        order = upper + digits + lower
    elif category.startswith("L"):
        order = lower + digits + upper
    elif category == "Nd":
        order = digits + upper + lower
    else:
        order = other + digits + upper + lower
    if not order:
        return None
    if not char.isalnum() and order[0] not in _PUNCTUATION:
        return None  # a symbol is folded only to punctuation it imitates
    if order[0] in _PUNCTUATION and script_of(char) != "COMMON":
        return None  # a letter of some script (katakana NO, U+30CE) is not a slash
    return order[0]


def _lookalike_tables() -> tuple[dict[int, str], dict[int, str], dict[str, str]]:
    dashes: dict[int, str] = {}
    search: dict[int, str] = {}
    digits: dict[str, str] = {}
    for char in confusables.confusables_data:
        if len(char) != 1 or char.isascii():
            continue
        candidates = _ascii_lookalikes(char)
        target = _pick(char, candidates)
        if target is None:
            continue
        search[ord(char)] = target
        if target == "-":
            dashes[ord(char)] = "-"
        digit = min((c for c in candidates if c.isdigit()), default=None)
        if digit is not None and not target.isdigit() and char.isalpha():
            digits[char] = digit
    return dashes, search, digits


# ``_DIGITS``: letters that also pass for a digit (Greek capital omicron for 0, iota
# for 1); among digits they are read as one, so a date written with an omicron for
# its zero is seen as the date it imitates.
_DASHES, _SEARCH, _DIGITS = _lookalike_tables()


def lookalike_of(char: str) -> str | None:
    """The ASCII character ``char`` imitates, or ``None``."""
    return _SEARCH.get(ord(char)) if len(char) == 1 else None


# --- the two forms -------------------------------------------------------------------

# A run of non-ASCII text, with the spaces and punctuation between its words.
_NON_ASCII = re.compile(r"[^\x00-\x7f](?:[^\x00-\x7f]|[ \t.,;:!?'\"()-])*")
_SPECIAL = _char_class(_INVISIBLE | frozenset(chr(c) for c in _DASHES))
_DIGIT_LIKE = _char_class(frozenset(_DIGITS))
_ASCII_DIGITS = frozenset("0123456789")


@dataclass(frozen=True, kw_only=True)
class Normalised:
    """A text, its matching form and its search form, and how their offsets map.

    ``segments`` are runs of the derived forms: ``(form_start, original_start,
    original_end)``, where ``original_end`` is ``-1`` for a run that maps one for one
    (an offset inside it maps by its distance from the start) and the end of the
    one source character otherwise. ``removed`` holds the original offsets of the
    invisible characters, in order.
    """

    original: str
    text: str
    search: str
    form_starts: array[int]
    original_starts: array[int]
    original_ends: array[int]
    removed: array[int]

    def original_span(self, start: int, end: int) -> tuple[int, int]:
        """The span of the original text that ``text[start:end]`` came from."""
        if not self.form_starts or end <= start:
            return start, end
        s = bisect_right(self.form_starts, start) - 1
        t = bisect_right(self.form_starts, end - 1) - 1
        first = self.original_starts[s]
        if self.original_ends[s] < 0:
            first += start - self.form_starts[s]
        last = self.original_ends[t]
        if last < 0:
            last = self.original_starts[t] + (end - self.form_starts[t])
        return first, last

    def removed_between(self, start: int, end: int) -> list[int]:
        """Original offsets of removed characters in ``[start, end)``."""
        lo, hi = bisect_left(self.removed, start), bisect_left(self.removed, end)
        return list(self.removed[lo:hi])


class _Builder:
    """Accumulates the matching form and its segments, one source piece at a time."""

    def __init__(self, original: str) -> None:
        self.original = original
        self.parts: list[str] = []
        self.length = 0
        self.form_starts = array("q")
        self.original_starts = array("q")
        self.original_ends = array("q")
        self.removed = array("q")
        self.non_ascii: list[tuple[int, int]] = []  # spans of the form from non-ASCII runs
        self._resume = -1  # original offset at which the last one-for-one run goes on

    def same(self, start: int, end: int) -> None:
        """``original[start:end]`` unchanged."""
        if end <= start:
            return
        if start != self._resume:
            self._segment(start, -1)
        self.parts.append(self.original[start:end])
        self.length += end - start
        self._resume = end

    def replaced(self, start: int, end: int, out: str) -> None:
        """``original[start:end]`` (one character and its marks) written ``out``."""
        if not out:
            self.removed.extend(range(start, end))
            return
        if end - start == 1 and len(out) == 1:
            if start != self._resume:
                self._segment(start, -1)
            self._resume = end
        else:
            self._segment(start, end)
            self._resume = -1
        self.parts.append(out)
        self.length += len(out)

    def drop(self, position: int) -> None:
        self.removed.append(position)

    def _segment(self, start: int, end: int) -> None:
        self.form_starts.append(self.length)
        self.original_starts.append(start)
        self.original_ends.append(end)

    def build(self) -> Normalised:
        text = "".join(self.parts)
        return Normalised(
            original=self.original,
            text=text,
            search=_search_form(text, self.non_ascii),
            form_starts=self.form_starts,
            original_starts=self.original_starts,
            original_ends=self.original_ends,
            removed=self.removed,
        )


def _search_form(text: str, non_ascii: list[tuple[int, int]]) -> str:
    """Look-alikes written as the ASCII they imitate; digit look-alikes among digits.

    ``non_ascii`` are the spans of ``text`` that may hold anything but ASCII.
    """
    search = text.translate(_SEARCH)
    among: list[tuple[int, str]] = []
    for start, end in non_ascii:
        for m in _DIGIT_LIKE.finditer(text, start, end):
            at = m.start()
            left = at > 0 and search[at - 1] in _ASCII_DIGITS
            if left or (at + 1 < len(search) and search[at + 1] in _ASCII_DIGITS):
                among.append((at, _DIGITS[m.group()]))
    if not among:
        return search
    chars = list(search)
    for at, digit in among:
        chars[at] = digit
    return "".join(chars)


def normalise(text: str) -> Normalised:
    """``text`` with its matching and search forms (see the module docstring)."""
    if text.isascii():
        empty = array("q")
        return Normalised(
            original=text,
            text=text,
            search=text,
            form_starts=empty,
            original_starts=empty,
            original_ends=empty,
            removed=empty,
        )
    builder = _Builder(text)
    done = 0
    for run in _NON_ASCII.finditer(text):
        start, end = run.span()
        if unicodedata.combining(text[start]) and start > done:
            start -= 1  # the mark belongs to the ASCII letter before it
        builder.same(done, start)
        begin = builder.length
        _non_ascii(builder, text, start, end)
        builder.non_ascii.append((begin, builder.length))
        done = end
    builder.same(done, len(text))
    return builder.build()


def _non_ascii(builder: _Builder, text: str, start: int, end: int) -> None:
    piece = text[start:end]
    if (
        not unicodedata.combining(piece[0])
        and unicodedata.is_normalized("NFKC", piece)
        and _SPECIAL.search(piece) is None
    ):
        builder.same(start, end)
        return
    i = start
    while i < end:
        if text[i] in _INVISIBLE:
            builder.drop(i)
            i += 1
            continue
        j = i + 1
        while j < end and unicodedata.combining(text[j]) and text[j] not in _INVISIBLE:
            j += 1
        out = unicodedata.normalize("NFKC", text[i:j]).translate(_DASHES)
        builder.replaced(i, j, "".join(c for c in out if c not in _INVISIBLE))
        i = j
