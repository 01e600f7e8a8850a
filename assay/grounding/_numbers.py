"""Numbers as people write them: digit grouping, decimal marks and words.

``1,240`` is one thousand two hundred and forty in English and one point two four
in German; ``1.240`` the reverse. A text usually settles which: one that writes
``3,5`` or ``1.200,50`` uses the decimal comma, one that writes ``3.5`` or
``1,200.50`` the decimal point (:func:`convention_of`). Where a text does not say,
a number whose only separator is followed by exactly three digits keeps both
readings, and two numbers are the same when their readings meet: ``1,240`` in an
English report matches ``1240`` in a tool output, and never ``1420``.

Grouping by apostrophe or a no-break space is always grouping (``1'240``,
``1\u202f240``); grouping by a plain space only where there are two groups or
more (``1 000 000``) or the number ends in a decimal comma (``5 842,17``), since
``rows 2 200`` is more often two numbers than one.

Numbers in words (``eleven``, ``twenty-one``, ``a hundred and five``) are found by
``text2num``, which parses them as a language, not by a word list; a few fractions
it does not read are added here (``half``, ``six and a half``, ``three quarters``).
Ordinals (``second``) are not numbers of anything and are left out.

The scan is linear: a digit run is one bounded, possessive match (at most 13
groups), so hostile input such as ``1,111,111…`` costs time in proportion to its
length.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Literal, Protocol

from assay.grounding._units import CURRENCY_CODES

__all__ = [
    "Convention",
    "Number",
    "convention_of",
    "decimals_of",
    "find_numbers",
    "readings",
]

#: How a text writes decimals: with a point, with a comma, or not known.
Convention = Literal["point", "comma", "unknown"]

_GROUP_MARKS = "'\u00a0\u202f"
# A number: grouped thousands (at most 13 groups: linear on endless groups), or a
# plain run with an optional decimal part; the grouped form is tried first. The group
# repeats are greedy, not possessive: what follows them cannot fail, so the two match
# the same, and CPython's possessive repeats of a group holding a lookahead have
# matched characters past the group (gh-100061), the kind of bug a number reader
# must not depend on. Which
# marks group and which one is decimal depends on the text's convention: in a text
# that does not say, a comma is a decimal mark only before a three-digit group
# (so ``1,2,3`` in a CSV row is three numbers).
_START = r"(?<!\d)"
# Two or more groups after plain spaces (``1 000 000``) are one number in any text.
_SPACED = r"\d{1,3}(?:\x20\d{3}(?!\d)){2,12}"
_DIGITS: dict[Convention, re.Pattern[str]] = {
    "point": re.compile(
        _START
        + r"(?:"
        + _SPACED
        + r"(?:\.\d+)?|\d{1,3}(?:[,'\u00a0\u202f]\d{3}(?!\d)){1,12}(?:\.\d+)?|\d+(?:\.\d+)?)"
    ),
    "comma": re.compile(
        _START
        + r"(?:"
        + _SPACED
        + r"(?:,\d+)?|\d{1,3}(?:(?:[.'\u00a0\u202f]|\x20(?=\d{3},\d))\d{3}(?!\d)){1,12}"
        + r"(?:,\d+)?|\d+(?:,\d+)?)"
    ),
    "unknown": re.compile(
        _START
        + r"(?:"
        + _SPACED
        + r"(?:[.,]\d+)?|\d{1,3}(?:[,.'\u00a0\u202f]\d{3}(?!\d)){1,12}(?:[.,]\d+)?|\d+(?:\.\d+)?)"
    ),
}
# A decimal part of other than three digits says which mark is the decimal one (a
# comma before four or more digits is more often a CSV separator than a decimal).
_POINT_SIGNAL = re.compile(r"(?<![\d.,])\d++(?:,\d{3}){0,12}+\.(?:\d{1,2}|\d{4,})(?![\d.,])")
_COMMA_SIGNAL = re.compile(r"(?<![\d.,])\d++(?:[.\x20]\d{3}){0,12}+,\d{1,2}(?![\d.,])")
_BOTH_MARKS = re.compile(r"\d([,.])\d{3}(?!\1)([,.])\d")
_MAX_SIGNALS = 50

_FRACTION_WORDS = {"half": Decimal("0.5"), "quarter": Decimal("0.25")}
_WORD_TOKEN = re.compile(r"[A-Za-z]+|\d+|[^\sA-Za-z\d]|\s+")
_AND_A_HALF = re.compile(r"\s+and\s+a\s+half\b", re.IGNORECASE)
_QUARTERS = re.compile(r"\s+quarters?\b", re.IGNORECASE)
_A_FRACTION = re.compile(r"\b(?:(a|one)\s+)?(half|quarter)\b(?!-)", re.IGNORECASE)
_NOT_WORD_NUMBERS = frozenset({"a", "an", "o", "oh", "nil", "zero", "naught", "nought"})
#: What every cardinal ``text2num`` reads contains: its number words, as substrings
#: so that plurals, compounds and hyphenated forms match too. A text without any is
#: not handed to ``text2num`` at all (most evidence and claims hold digits only); a
#: false match only costs the full reading. ``tests/grounding/test_numbers.py``
#: checks on NLI corpora that no text this skips holds a number ``text2num`` finds.
MAY_SPELL_A_NUMBER = re.compile(
    "zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fifteen"
    "|twenty|thirty|forty|fifty|hundred|thousand|million|billion|trillion"
    "|first|second|third|fifth|ninth|twelfth|nil|naught|nought|dozen|oh",
    re.IGNORECASE,
)


@dataclass(frozen=True, kw_only=True, slots=True)
class Number:
    """A number written in a text: ``text[start:end]``, every value it can mean.

    ``decimals`` is how many digits it writes after its decimal mark (its
    precision: ``2.1`` says tenths); ``word`` whether it is written in words.
    """

    start: int
    end: int
    text: str
    values: frozenset[Decimal]
    decimals: int
    word: bool = False


def convention_of(text: str) -> Convention:
    """Which decimal mark ``text`` uses, from its unambiguous numbers; ``unknown``
    when it writes none or writes both."""
    point = _has(_POINT_SIGNAL, text) or _both_marks(text, ".")
    comma = _has(_COMMA_SIGNAL, text) or _both_marks(text, ",")
    if point == comma:
        return "unknown"
    return "point" if point else "comma"


def _has(pattern: re.Pattern[str], text: str) -> bool:
    return pattern.search(text) is not None


def _both_marks(text: str, decimal: str) -> bool:
    """``1,200.50`` says the point is decimal; ``1.200,50`` the comma."""
    for k, m in enumerate(_BOTH_MARKS.finditer(text)):
        if m.group(2) == decimal:
            return True
        if k >= _MAX_SIGNALS:
            break
    return False


def readings(raw: str, convention: Convention = "unknown") -> frozenset[Decimal]:
    """Every value the digits ``raw`` can mean in a text of ``convention``.

    >>> sorted(readings("1,240"))
    [Decimal('1.240'), Decimal('1240')]
    >>> sorted(readings("1,240", "point"))
    [Decimal('1240')]
    >>> sorted(readings("5 842,17"))
    [Decimal('5842.17')]
    """
    text = raw.strip()
    for mark in (*_GROUP_MARKS, " "):
        text = text.replace(mark, "")
    commas, dots = text.count(","), text.count(".")
    candidates: list[str] = []
    if commas and dots:
        group, decimal = (",", ".") if text.rfind(".") > text.rfind(",") else (".", ",")
        if text.count(decimal) == 1:
            candidates.append(text.replace(group, "").replace(decimal, "."))
    elif commas > 1 or dots > 1:
        candidates.append(text.replace("," if commas else ".", ""))
    elif commas + dots == 1:
        mark = "," if commas else "."
        head, tail = text.split(mark)
        grouped = len(tail) == 3 and head != "0" and not head.startswith("0")
        decimal_mark = {"point": ".", "comma": ","}.get(convention)
        if not grouped or decimal_mark in (None, mark):
            candidates.append(f"{head}.{tail}")
        if grouped and decimal_mark != mark:
            candidates.append(head + tail)
    else:
        candidates.append(text)
    return frozenset(v for c in candidates if (v := _decimal(c)) is not None)


def decimals_of(value: Decimal) -> int:
    """Digits after the decimal mark of ``value`` as written (0 for an integer)."""
    exponent = value.as_tuple().exponent
    return max(0, -exponent) if isinstance(exponent, int) else 0


def _decimal(text: str) -> Decimal | None:
    try:
        value = Decimal(text)
    except InvalidOperation:
        return None
    return value if value.is_finite() else None


def find_numbers(text: str, convention: Convention | None = None) -> list[Number]:
    """Every number of ``text``, in digits or in words, in order of position.

    Digits glued to letters (``RTM3``, ``v2``, ``x86``) or after a dash that follows
    a letter (``INV-4421``) belong to an identifier and are left out; so are
    version strings (``1.2.3``). ``convention`` defaults to :func:`convention_of`
    of ``text``.
    """
    conv = convention_of(text) if convention is None else convention
    found = list(_digit_numbers(text, conv))
    found += _word_numbers(text)
    found.sort(key=lambda n: (n.start, -n.end))
    kept: list[Number] = []
    for number in found:
        if kept and number.start < kept[-1].end:
            continue
        kept.append(number)
    return kept


def _digit_numbers(text: str, convention: Convention) -> Iterator[Number]:
    for match in _DIGITS[convention].finditer(text):
        start, end = match.span()
        raw = match.group()
        if _in_identifier(text, start, end) or _is_version(text, start, end):
            continue
        values = readings(raw, convention)
        if not values:
            continue
        decimals = min(decimals_of(v) for v in values)
        yield Number(start=start, end=end, text=raw, values=values, decimals=decimals)


def _in_identifier(text: str, start: int, end: int) -> bool:
    """Digits that are part of a name: glued to letters before them (``RTM3``, but
    not the size ``x100``), to letters and digits after them (``3f9a``, ``2nd``),
    after ``#``, ``@`` or ``_``, or after a dash or slash that follows a name
    (``INV-4421``, ``FSA-2024-0193``, the second ``2`` of ``2/2``)."""
    before = text[start - 1] if start > 0 else " "
    two_before = text[start - 2] if start > 1 else " "
    if before.isalpha() and not (before in "xX" and not two_before.isalnum()):
        return not _currency_code_before(text, start)
    if before in "_#@" or (end < len(text) and text[end] == "_"):
        return True
    if _glued_name(text, end):
        return True
    if before == "/" and two_before.isalnum():
        return True
    return before == "-" and (two_before.isalpha() or _dash_joined(text, start))


def _currency_code_before(text: str, start: int) -> bool:
    """``EUR975.00``: a currency code written against the number."""
    code = text[max(0, start - 3) : start]
    return code in CURRENCY_CODES and (start < 4 or not text[start - 4].isalnum())


def _glued_name(text: str, end: int) -> bool:
    """Letters right after the digits that make a name with them (``3f9a``, ``2nd``)
    rather than a unit (``250ms``, ``2h``)."""
    stop = end
    while stop < len(text) and text[stop].isascii() and text[stop].isalnum():
        stop += 1
    tail = text[end:stop]
    if not tail or not tail[0].isalpha():
        return False
    return any(c.isdigit() for c in tail) or tail.lower() in _ORDINAL_SUFFIXES


_ORDINAL_SUFFIXES = frozenset({"st", "nd", "rd", "th"})


def _dash_joined(text: str, start: int) -> bool:
    """``0193`` inside ``FSA-2024-0193``: digits after a dash that follows digits
    that are themselves part of a dashed name."""
    i = start - 2
    while i >= 0 and text[i].isdigit():
        i -= 1
    return i > 0 and text[i] == "-" and text[i - 1].isalpha()


def _is_version(text: str, start: int, end: int) -> bool:
    """``1.2.3`` and ``10.42.3.17``: dotted runs of more than two parts."""
    if end < len(text) - 1 and text[end] == "." and text[end + 1].isdigit():
        return True
    return start > 1 and text[start - 1] == "." and text[start - 2].isdigit()


# --- numbers in words -----------------------------------------------------------------


class _Token:
    """A word, a digit run, a mark or a space, as ``text2num`` reads them."""

    __slots__ = ("end", "start", "value")

    def __init__(self, value: str, start: int, end: int) -> None:
        self.value, self.start, self.end = value, start, end

    def text(self) -> str:
        return self.value

    def nt_separated(self, previous: object) -> bool:
        return False

    def not_a_number_part(self) -> bool:
        return self.value.isdigit()


class _Occurrence(Protocol):
    start: int
    end: int
    value: float
    is_ordinal: bool


def _word_numbers(text: str) -> list[Number]:
    if not any(c.isalpha() for c in text):
        return []
    found: list[Number] = []
    spelled = spelled_numbers(text) if MAY_SPELL_A_NUMBER.search(text) else ()
    for start, end, value in spelled:
        start, end, value = _with_fraction(text, start, end, value)
        found.append(
            Number(
                start=start,
                end=end,
                text=text[start:end],
                values=frozenset({value}),
                decimals=decimals_of(value),
                word=True,
            )
        )
    taken = [(n.start, n.end) for n in found]
    for m in _A_FRACTION.finditer(text):
        if any(s <= m.start() < e for s, e in taken):
            continue
        value = _FRACTION_WORDS[m.group(2).lower()]
        found.append(
            Number(
                start=m.start(),
                end=m.end(),
                text=m.group(),
                values=frozenset({value}),
                decimals=2,
                word=True,
            )
        )
    return found


def spelled_numbers(text: str) -> Iterator[tuple[int, int, Decimal]]:
    """``(start, end, value)`` of each cardinal ``text2num`` finds in ``text``."""
    tokens = [_Token(m.group(), m.start(), m.end()) for m in _WORD_TOKEN.finditer(text)]
    for occurrence in _find_words(tokens):
        if occurrence.is_ordinal:
            continue
        first, last = tokens[occurrence.start], tokens[occurrence.end - 1]
        if _not_a_number(text, first, occurrence.end - occurrence.start, occurrence.value):
            continue
        value = Decimal(repr(occurrence.value)).normalize()
        yield (
            first.start,
            last.end,
            value.quantize(Decimal(1)) if value == value.to_integral() else value,
        )


def _not_a_number(text: str, first: _Token, size: int, value: float) -> bool:
    """``OS`` (read as nought), ``a``, and the pronoun ``one`` (``the new one``)."""
    word = first.value
    if (word.isupper() and len(word) > 1) or (value == 0 and word.lower() not in ("zero", "nil")):
        return True
    if size == 1 and word.lower() in _NOT_WORD_NUMBERS:
        return True
    if word.lower() != "one" or size != 1:
        return False
    before = text[max(0, first.start - 12) : first.start].split()
    return bool(before) and before[-1].lower() in _ONE_AS_PRONOUN


_ONE_AS_PRONOUN_WORDS = """
    the this that each every no any which new old other another latest last first only
    same right wrong
"""
_ONE_AS_PRONOUN = frozenset(_ONE_AS_PRONOUN_WORDS.split())


def _find_words(tokens: list[_Token]) -> list[_Occurrence]:
    return list(_text2num().find_numbers(tokens, "en", 0.0))


@lru_cache(maxsize=1)
def _text2num() -> _Text2Num:
    """``text_to_num``, imported on the first text that holds letters."""
    import text_to_num

    return text_to_num  # type: ignore[return-value]


class _Text2Num(Protocol):
    def find_numbers(self, tokens: list[_Token], lang: str, threshold: float) -> list[_Occurrence]:
        """The numbers among ``tokens``."""
        ...


def _with_fraction(text: str, start: int, end: int, value: Decimal) -> tuple[int, int, Decimal]:
    """``six and a half`` is 6.5; ``three quarters`` is 0.75."""
    half = _AND_A_HALF.match(text, end)
    if half is not None:
        return start, half.end(), value + Decimal("0.5")
    quarters = _QUARTERS.match(text, end)
    if quarters is not None and value < 4:
        return start, quarters.end(), value * Decimal("0.25")
    return start, end, value
