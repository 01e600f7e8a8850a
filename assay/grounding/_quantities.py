"""Quantities in text: a number with what it counts or measures, and when two agree.

A quantity is a number (:mod:`assay.grounding._numbers`) read with the words around
it: a currency before or after it (``€1.75``, ``EUR 1.75``, ``1.75 EUR``), a unit
after it (``2.0 h``, ``1500 ms``, ``2.1 tonnes``, ``8.5%``), a period that makes it a
rate (``EUR 610/h``, ``€255 an hour``, ``45.00/day``, ``0.12 per km``), the thing it
counts (``120 units``, ``three orders``), and a hedge before it (``about 9.8
tonnes``, ``a little over 2.1 tonnes``, ``just under two days``). Durations written
in parts (``1 hour 15 minutes``, ``23m 05s``) are one quantity, and so is a number
written twice as contracts write it (``five (5) years``). Dollars may be named in
words (``189 Canadian dollars``), pieces counted as tickets print them (``2PC``),
and a pack read into its count and its measure (``24x500ml``,
:mod:`assay.grounding._tokens`).

:func:`same` says whether two quantities state the same amount: ``2.0 h`` and ``2
hours``, ``1500 ms`` and ``1.5 s``, ``2.1 t`` and ``2100 kg``, ``8.5%`` and ``0.085``
are the same; per second and per minute, monthly and annual, kWh and MWh, ``$`` and
``£`` are not. :func:`supports` is the directed test a claim needs: a claim's ``$``
is supported by an amount the evidence says is in USD, and a hedged claim by a
value that rounds to it on the side it says.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import replace
from decimal import Decimal

from assay._text import word_set
from assay.grounding._numbers import Convention, Number, find_numbers
from assay.grounding._quantity import Approximation, Quantity, QuantityKind
from assay.grounding._tokens import with_compact_durations, with_packs
from assay.grounding._units import (
    CURRENCY_SIGNS,
    DOLLARS,
    TIME_UNITS,
    currency_of,
    dollar_like,
    is_currency,
    measure,
    period_of,
    unit_of,
)

__all__ = [
    "Approximation",
    "Quantity",
    "QuantityKind",
    "find_quantities",
    "same",
    "supports",
]

_UNIT_WORD = re.compile(r"[\x20\u00a0\u202f]?-?(%|[°º][CF]|[A-Za-zµμ€£$¥₹]+(?:/[a-z]+)?)")
#: Units that only count (requests), so that a rate of them may be read as a rate
#: of what the evidence leaves unnamed.
_COUNTED = frozenset({"request"})
_OPENING = re.compile(r"\x20?\(\x20?")
_CLOSING = re.compile(r"\x20?\)")
_PER_CENT = re.compile(r"[\x20\u00a0]per[\x20\u00a0]cent\b|[\x20\u00a0]?percent\b", re.I)
_RATE = re.compile(r"(?:\x20?/\x20?|\x20per\x20|\x20an?\x20|\x20each\x20)([A-Za-z]+)\b")
_PERIOD_AFTER = re.compile(r"\x20(hourly|daily|nightly|weekly|monthly|quarterly|yearly|annually)\b")
_CODE_BEFORE = re.compile(r"(?<![A-Za-z])(US\$|[A-Z]{3})[\x20\u00a0]?$")
_HEDGE = re.compile(
    r"(?:^|[\s(])(about|around|approximately|approx\.|roughly|circa|some|nearly|almost|"
    r"just\x20under|just\x20over|a\x20little\x20over|a\x20little\x20under|slightly\x20over|"
    r"slightly\x20under|over|under|more\x20than|less\x20than|fewer\x20than|above|below|~|≈)"
    r"\x20?$",
    re.I,
)
_HEDGES: dict[str, Approximation] = {
    "nearly": "under",
    "almost": "under",
    "just under": "under",
    "a little under": "under",
    "slightly under": "under",
    "under": "under",
    "less than": "under",
    "fewer than": "under",
    "below": "under",
    "just over": "over",
    "a little over": "over",
    "slightly over": "over",
    "over": "over",
    "more than": "over",
    "above": "over",
}
#: Nouns that are plural without an "s" (``words/plural-nouns.txt``).
_PLURALS = word_set("plural-nouns")
_PARTS_JOIN = re.compile(r"(?:,?\x20(?:and\x20)?|\x20?)$")
#: Words after a number that are not the thing it counts (``words/not-nouns.txt``).
_NOT_NOUNS = word_set("not-nouns")
#: Scale words after an amount of money (``€1.2m``, ``USD 2 billion``, ``£3.5k``); a
#: letter only glued to the number (``EUR 5 M&A fees`` is five euros).
_SCALE = re.compile(
    r"(?:(k|m|b)|[\x20\u00a0]?(thousand|mn|mln|million|bn|billion|tn|trillion))\b",
    re.IGNORECASE,
)
_SCALES = {
    "k": Decimal(10) ** 3,
    "thousand": Decimal(10) ** 3,
    "m": Decimal(10) ** 6,
    "mn": Decimal(10) ** 6,
    "mln": Decimal(10) ** 6,
    "million": Decimal(10) ** 6,
    "b": Decimal(10) ** 9,
    "bn": Decimal(10) ** 9,
    "billion": Decimal(10) ** 9,
    "tn": Decimal(10) ** 12,
    "trillion": Decimal(10) ** 12,
}
#: One mark and three digits (``3,500``, ``3.500``): in a text whose decimal mark is
#: not known, either a thousands group or three decimals.
_ONE_GROUP = re.compile(r"\d{1,3}[.,]\d{3}")
#: Currencies whose minor unit is a thousandth (ISO 4217): three decimals are usual.
_THOUSANDTHS = frozenset({"BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND"})
#: A verb or adverb of decrease right before an amount: "fell 5%", "down by EUR 20",
#: "declined 3.2 points" state a change whose value is negative ("fell to 5%" states
#: a level, and is not matched). Either reading is kept: the amount, and the change.
_FALL = re.compile(
    r"\b(?:fell|fallen|falls?|dropped|drops?|declined|declines?|decreased|decreases?|down|"
    r"lost|loses?|shrank|shrunk|shrinks?|slipped|slips?|slid|slides?|lower|reduced|cut)"
    r"(?:\x20by)?\x20$",
    re.IGNORECASE,
)
#: A word of decrease right after an amount: "5% lower", "EUR 20 less", "a 3% drop".
_LOWER = re.compile(
    r"\x20(?:lower|less|down|smaller|cheaper|fewer|drop|decrease|decline|fall|reduction|cut)"
    r"(?![\w-])",
    re.IGNORECASE,
)
#: Prefixes of ``$`` that name the dollar (``CA$``, ``US$``) and codes before it
#: (``USD $1,200``).
_DOLLAR_PREFIXES = {
    "US": "USD",
    "CA": "CAD",
    "C": "CAD",
    "AU": "AUD",
    "A": "AUD",
    "NZ": "NZD",
    "HK": "HKD",
    "SG": "SGD",
    "S": "SGD",
}
_DOLLAR_CODE_BEFORE = re.compile(
    r"(?<![A-Za-z])(?:(US|CA|C|AU|A|NZ|HK|SG|S)|(USD|CAD|AUD|NZD|HKD|SGD|MXN)\x20?)$"
)
_DOLLAR_CODE_AFTER = re.compile(r"[\x20\u00a0]?(?:\(([A-Z]{3})\)|([A-Z]{3}))(?![A-Za-z])")
#: A dollar named in words after an amount (``189 Canadian dollars``, ``129.00 US
#: dollars``); ``dollars`` alone is some dollar, as ``$`` is.
_DOLLAR_WORDS = re.compile(
    r"[\x20\u00a0](?:(US|U\.S\.|American|Canadian|Australian|New\x20Zealand|Hong\x20Kong|"
    r"Singapore|Mexican)\x20)?dollars?\b",
    re.IGNORECASE,
)
_DOLLAR_NAMES = {
    "us": "USD",
    "u.s.": "USD",
    "american": "USD",
    "canadian": "CAD",
    "australian": "AUD",
    "new zealand": "NZD",
    "hong kong": "HKD",
    "singapore": "SGD",
    "mexican": "MXN",
}
#: A number that counts part of a group (``three of the five tickets``, ``four of
#: them``); in digits, of a group of so many (``2 of its 4 renewals``, not ``aisle 7
#: of the depot``).
_PART_OF_WORDS = re.compile(r"\x20of\x20(?:the|its|their|these|those|them|which|whom)\b", re.I)
_PART_OF = re.compile(
    r"\x20of\x20(?:the|its|their|these|those|all)\x20(?:\d{1,6}|one|two|three|four|five|six|"
    r"seven|eight|nine|ten|eleven|twelve|[a-z]{3,5}teen|twenty|thirty|forty|fifty)\b",
    re.I,
)
#: Pieces, as baggage allowances and packing lists print them (``2PC``, ``3 pcs``).
_PIECES = frozenset({"pc", "pcs", "pce", "pces"})


def find_quantities(
    text: str,
    *,
    convention: Convention | None = None,
    skip: Sequence[tuple[int, int]] = (),
) -> list[Quantity]:
    """Every quantity of ``text`` in order of position; numbers inside the ``skip``
    spans (dates, times, identifiers found by others) are left out."""
    found: list[Quantity] = []
    spans = sorted(skip)
    starts = [s for s, _ in spans]
    numbers = _undoubled(text, find_numbers(text, convention))
    for number in numbers:
        k = bisect_right(starts, number.start) - 1
        if k >= 0 and number.start < spans[k][1]:
            continue  # inside a skipped span
        if k + 1 < len(spans) and spans[k + 1][0] < number.end:
            continue
        quantity = _read(text, number)
        if found and quantity.start < found[-1].end:
            continue
        found.append(quantity)
    found = with_compact_durations(text, _joined_durations(text, found), spans)
    return with_packs(text, found, spans)


def _undoubled(text: str, numbers: list[Number]) -> list[Number]:
    """The numbers of ``text``, each written twice as contracts write them ("five
    (5) years", "thirty (30) days") read as one number over both, so that the unit
    after the bracket is its unit."""
    out: list[Number] = []
    for number in numbers:
        last = out[-1] if out else None
        if (
            last is not None
            and last.word
            and not number.word
            and last.values & number.values
            and _OPENING.fullmatch(text, last.end, number.start)
        ):
            closing = _CLOSING.match(text, number.end)
            if closing is not None:
                out[-1] = replace(last, end=closing.end(), text=text[last.start : closing.end()])
                continue
        out.append(number)
    return out


def _read(text: str, number: Number) -> Quantity:
    start, end = number.start, number.end
    values = number.values
    if _negative(text, start):
        start, values = start - 1, frozenset(-v for v in values)
    kind: QuantityKind = "number"
    unit: str | None = None
    word: str | None = None
    noun: str | None = None
    decimals = number.decimals
    code = _currency_before(text, start)
    if code is not None:
        unit, kind, start = code[0], "money", code[1]
        if _negative(text, start) and all(v >= 0 for v in values):  # "-€20"
            start, values = start - 1, frozenset(-v for v in values)
    scaled = _scaled(text, end, money=code is not None)
    if scaled is not None:
        factor, end = scaled
        values, decimals = frozenset(v * factor for v in values), 0
    per_cent = _PER_CENT.match(text, end)
    after = _UNIT_WORD.match(text, end)
    dollars = _DOLLAR_WORDS.match(text, end) if unit is None else None
    if dollars is not None:
        named_by = (dollars.group(1) or "").lower().replace("\x20", " ")
        unit, kind, end = _DOLLAR_NAMES.get(named_by, "dollar"), "money", dollars.end()
    elif per_cent is not None and unit is None:
        unit, kind, end = "percent", "percent", per_cent.end()
    elif after is not None and not _glued_on(text, after.end()):
        spelling, stop = after.group(1), after.end()
        if "/" in spelling and unit_of(spelling) is None:  # EUR/h: the rate is read next
            spelling = spelling.split("/")[0]
            stop = after.start(1) + len(spelling)
        named = "percent" if spelling == "%" else unit_of(spelling)
        if named is not None and (unit is None or (is_currency(named) and named == unit)):
            unit, end = named, stop
            kind = "percent" if named == "percent" else "money" if _money(named) else "measure"
        elif unit is None and spelling.lower() in _PIECES:
            noun, kind, end = "pieces", "count", stop
        elif unit is None and not number.word and _unit_like(spelling, glued=after.start(1) == end):
            word, kind, end = spelling, "measure", stop
        elif unit is None and _noun(spelling, values):
            noun, kind, end = spelling.lower(), "count", stop
    if kind == "number" and _whole(values) and _part_of(text, end, number):
        kind = "count"  # "three of the five tickets": a count of rows, to be checked
    unit, end = _dollar_named_after(text, unit, end)
    unit, end = _with_rate(text, unit, end)
    if unit is not None and unit.startswith("/") and kind == "number":
        kind = "measure"
    if kind == "money" and scaled is None and _grouped_amount(number, unit):
        values, decimals = frozenset({max(values)}), 0
    if kind in ("money", "percent", "measure") and (
        _FALL.search(text, max(0, start - 20), start) or _LOWER.match(text, end)
    ):
        values = values | frozenset(-v for v in values)  # "fell 5%" is a change of -5%
    hedge = _HEDGE.search(text, max(0, start - 20), start)
    return Quantity(
        start=start,
        end=end,
        text=text[start:end],
        values=values,
        decimals=decimals,
        kind=kind,
        unit=unit,
        word=word,
        noun=noun,
        approximation=_hedge_of(hedge),
        spelled=number.word,
        hedge_start=hedge.start(1) if hedge is not None else None,
    )


def _scaled(text: str, end: int, *, money: bool) -> tuple[Decimal, int] | None:
    """The factor and end of a scale word after an amount (``€1.2m``, ``4.2 billion
    USD``): only where a currency stands before the number or right after the word,
    so that ``5m`` of cable stays five metres."""
    scale = _SCALE.match(text, end)
    if scale is None:
        return None
    if not money:
        after = _UNIT_WORD.match(text, scale.end())
        named = unit_of(after.group(1)) if after is not None else None
        if named is None or not is_currency(named):
            return None
    return _SCALES[(scale.group(1) or scale.group(2)).lower()], scale.end()


def _grouped_amount(number: Number, unit: str | None) -> bool:
    """``£3,500`` is three thousand five hundred pounds in any convention: money is
    written with two decimals or none, so one mark before three digits groups
    thousands (except in a currency whose minor unit is a thousandth)."""
    code = currency_of(unit) if unit is not None else None
    return (
        len(number.values) > 1
        and _ONE_GROUP.fullmatch(number.text) is not None
        and code not in _THOUSANDTHS
    )


def _negative(text: str, start: int) -> bool:
    if start == 0 or text[start - 1] not in "-\u2212":
        return False
    return start < 2 or not text[start - 2].isalnum()


def _currency_before(text: str, start: int) -> tuple[str, int] | None:
    """The currency written right before a number (``€``, ``EUR``, ``US$``)."""
    at = start
    if at > 0 and text[at - 1] in "\x20\u00a0":
        at -= 1
    if at > 0 and text[at - 1] in CURRENCY_SIGNS:
        sign = CURRENCY_SIGNS[text[at - 1]]
        if sign == "dollar":  # CA$12, US$ 40, USD $1,200: the code says which dollar
            named = _DOLLAR_CODE_BEFORE.search(text, max(0, at - 6), at - 1)
            if named is not None and named.group(1) is not None:
                return _DOLLAR_PREFIXES[named.group(1)], named.start(1)
            if named is not None:
                return named.group(2), named.start(2)
        return sign, at - 1
    code = _CODE_BEFORE.search(text, max(0, start - 5), start)
    named = unit_of(code.group(1).replace("US$", "USD")) if code is not None else None
    if code is not None and named is not None and is_currency(named):
        return named, code.start(1)
    return None


def _dollar_named_after(text: str, unit: str | None, end: int) -> tuple[str | None, int]:
    """``$12 USD``, ``$12 (CAD)``: a dollar code right after a ``$`` amount says which
    dollar it is."""
    if unit != "dollar":
        return unit, end
    named = _DOLLAR_CODE_AFTER.match(text, end)
    code = (named.group(1) or named.group(2)) if named is not None else None
    if named is None or code is None or code not in DOLLARS:
        return unit, end
    return code, named.end()


def _whole(values: frozenset[Decimal]) -> bool:
    """Whole numbers of two or more: what counts part of a group ("one of the", "half
    of the" say which, or how much, not how many)."""
    return all(v >= 2 and v == v.to_integral_value() for v in values)


def _part_of(text: str, end: int, number: Number) -> bool:
    """The number counts part of a group: ``three of the five tickets``."""
    if number.word and _PART_OF_WORDS.match(text, end):
        return True
    return _PART_OF.match(text, end) is not None


def _glued_on(text: str, end: int) -> bool:
    """The word runs on into digits or an underscore: part of a name, not a unit."""
    return end < len(text) and (text[end].isdigit() or text[end] == "_")


def _money(unit: str) -> bool:
    return currency_of(unit) is not None


def _unit_like(spelling: str, *, glued: bool) -> bool:
    """A short word glued to a number that reads as a unit symbol the registry does
    not hold (``750m``, ``10K``, ``80gsm``): kept, compared as written."""
    return glued and len(spelling) <= 3 and spelling.isalpha()


def _noun(spelling: str, values: frozenset[Decimal]) -> bool:
    """A word after a number that is what it counts: lower-case, not a function
    word, and plural unless the number is one (``120 units``, ``1 set``)."""
    word = spelling.lstrip("-")
    if not (word.isalpha() and word.islower() and len(word) >= 3) or word in _NOT_NOUNS:
        return False
    return values == frozenset({Decimal(1)}) or word.endswith("s") or word in _PLURALS


def _with_rate(text: str, unit: str | None, end: int) -> tuple[str | None, int]:
    """``EUR 610/h``, ``45 a day``, ``0.12 per km``, ``1800 monthly``: a rate."""
    rate = _RATE.match(text, end)
    if rate is None:
        rate = _PERIOD_AFTER.match(text, end)
        # "monthly total": a period word before a noun describes the noun; it is no
        # rate. "per month now" is a rate whatever follows it.
        if rate is not None and _adjective(text, rate.end()):
            return unit, end
    if rate is None:
        return unit, end
    period = period_of(rate.group(1))
    if period is None or period == unit or (unit is None and rate.group(0).startswith(" a")):
        return unit, end
    if unit == "percent":
        return unit, end
    return (f"{unit} / {period}" if unit else f"/ {period}"), rate.end()


def _adjective(text: str, end: int) -> bool:
    """``daily total``: a period word before a noun describes it; it is no rate."""
    m = _NEXT_WORD.match(text, end)
    return m is not None and m.group(1).lower() not in _NOT_NOUNS


_NEXT_WORD = re.compile(r"\x20([a-z]{3,})\b")


def _hedge_of(found: re.Match[str] | None) -> Approximation | None:
    if found is None:
        return None
    return _HEDGES.get(" ".join(found.group(1).lower().split()), "about")


def _joined_durations(text: str, found: list[Quantity]) -> list[Quantity]:
    """``1 hour 15 minutes`` and ``1 d 23 h 28 m`` as one duration, in its last unit."""
    out: list[Quantity] = []
    for quantity in found:
        last = out[-1] if out else None
        if last is not None and _continues(text, last, quantity):
            out[-1] = _add_duration(text, last, quantity)
        else:
            out.append(quantity)
    return out


def _continues(text: str, head: Quantity, part: Quantity) -> bool:
    head_unit = _head_unit(head, part)
    if head_unit is None or not (_is_time(part) or part.word == "m"):
        return False
    bigger, smaller = measure(head_unit), measure(part.unit or "minute")
    if bigger is None or smaller is None or smaller.factor >= bigger.factor:
        return False
    between = text[head.end : part.start]
    return len(between) <= 6 and _PARTS_JOIN.fullmatch(between) is not None


def _is_time(quantity: Quantity) -> bool:
    """A duration (checked by name, so that a text without one never loads pint)."""
    return quantity.unit in TIME_UNITS


def _head_unit(head: Quantity, part: Quantity) -> str | None:
    """The time unit of the first part of a duration: its own, or minutes for an
    ``m`` that seconds follow (``23m 05s``), where it cannot be metres."""
    if _is_time(head):
        return head.unit
    if head.word == "m" and part.unit == "second":
        return "minute"
    return None


def _add_duration(text: str, head: Quantity, part: Quantity) -> Quantity:
    unit = part.unit or "minute"
    head_measure, part_measure = measure(_head_unit(head, part) or ""), measure(unit)
    if head_measure is None or part_measure is None:
        return head
    ratio = head_measure.factor / part_measure.factor
    values = frozenset(h * ratio + p for h in head.values for p in part.values)
    return replace(
        head,
        end=part.end,
        text=text[head.start : part.end],
        values=values,
        unit=unit,
        word=None,
        decimals=part.decimals,
    )


# --- comparison -------------------------------------------------------------------


def same(a: Quantity, b: Quantity) -> bool:
    """Whether ``a`` and ``b`` state the same amount of the same thing, both exactly."""
    if a.kind != b.kind and {a.kind, b.kind} - {"count", "number"}:
        return _percent_and_fraction(a, b) or _percent_and_fraction(b, a)
    if a.word != b.word and (a.word or b.word):
        return (
            a.word is not None
            and b.word is not None
            and a.word.lower() == b.word.lower()
            and (bool(a.values & b.values))
        )
    if a.unit == b.unit:
        return bool(a.values & b.values)
    if a.unit is None or b.unit is None:
        return False
    return any(_equal(x, a.unit, y, b.unit) for x in a.values for y in b.values)


def _percent_and_fraction(percent: Quantity, fraction: Quantity) -> bool:
    """``8.5%`` and ``0.085``: a percentage and the bare fraction it is."""
    if percent.kind != "percent" or fraction.kind != "number":
        return False
    return any(p / 100 == f for p in percent.values for f in fraction.values)


def _equal(x: Decimal, unit_x: str, y: Decimal, unit_y: str) -> bool:
    mx, my = measure(_expression(unit_x)), measure(_expression(unit_y))
    if mx is None or my is None or mx.dimension != my.dimension:
        return False
    return _close(x * mx.factor, y * my.factor)


def _expression(unit: str) -> str:
    return "1 " + unit if unit.startswith("/") else unit


def _close(x: Decimal, y: Decimal) -> bool:
    """Equal up to the last of 28 significant digits (factors such as 1/3600)."""
    if x == y:
        return True
    scale = max(abs(x), abs(y))
    return abs(x - y) <= scale * Decimal("1e-20")


def supports(evidence: Quantity, claim: Quantity, *, units: Iterable[str] = ()) -> bool:
    """Whether ``evidence`` (read, where it is a bare number, with each of the
    ``units`` that its context gives it) states the ``claim``.

    A bare claim number is supported by the same number in any unit; a count by
    the same number that is bare or a count; a claim's ``$`` by an amount in a
    dollar the evidence names; a hedged claim by a value that rounds to it, on the
    side it says (``a little over 2.1 t`` by ``2140.5 kg``).
    """
    readings = [evidence]
    if evidence.kind == "number":
        readings += [_as(evidence, unit) for unit in units]
    claim = _counted_rate(claim, readings)
    if claim.kind == "number":
        return any(bool(r.values & claim.values) for r in readings) or any(
            _percent_and_fraction(r, claim) for r in readings
        )
    for reading in readings:
        if claim.kind == "count" and reading.kind in ("count", "number"):
            if reading.values & claim.values:
                return True
            continue
        target = _claim_in(claim, reading)
        if same(reading, target) or (claim.approximation and _rounds_to(reading, claim)):
            return True
    return False


def _counted_rate(claim: Quantity, readings: Sequence[Quantity]) -> Quantity:
    """The claim's ``600 requests per minute`` read as ``600 per minute`` where the
    evidence states a rate of nothing named (``per_minute: 600``): what is counted
    is the claim's word; the value and its period must be the evidence's."""
    head, _, period = (claim.unit or "").partition(" / ")
    if head not in _COUNTED or not any((r.unit or "").startswith("/ ") for r in readings):
        return claim
    return replace(claim, unit=f"/ {period}")  # compared in any period: 10/s is 600/min


def _as(number: Quantity, unit: str) -> Quantity:
    if unit == "percent":
        return replace(number, kind="percent", unit="percent")
    if unit.startswith("/"):
        return replace(number, kind="measure", unit=unit)
    return replace(number, kind="money" if _money(unit) else "measure", unit=unit)


def _claim_in(claim: Quantity, evidence: Quantity) -> Quantity:
    """The claim with its ``$`` read as the dollar the evidence names."""
    stated, named = currency_of(claim.unit), currency_of(evidence.unit)
    if stated is None or named is None or stated == named or not dollar_like(stated, named):
        return claim
    return replace(claim, unit=(claim.unit or "").replace(stated, named, 1))


def _rounds_to(evidence: Quantity, claim: Quantity) -> bool:
    """``evidence`` rounds to the hedged ``claim`` at the claim's precision and lies
    on the side the hedge says."""
    if claim.unit is None and evidence.unit is not None:
        return False
    for x in evidence.values:
        converted = _converted(x, evidence.unit, claim.unit)
        if converted is None:
            continue
        for v in claim.values:
            step = _step(v, claim.decimals)
            if abs(converted - v) * 2 > step:
                continue
            side = claim.approximation
            if (side == "over" and converted < v) or (side == "under" and converted > v):
                continue
            return True
    return False


def _converted(x: Decimal, unit: str | None, to: str | None) -> Decimal | None:
    if unit == to:
        return x
    if unit is None or to is None:
        return None
    a, b = measure(_expression(unit)), measure(_expression(to))
    if a is None or b is None or a.dimension != b.dimension:
        return None
    return x * a.factor / b.factor


def _step(value: Decimal, decimals: int) -> Decimal:
    """The rounding step a written value implies: ``2.1`` tenths, ``2,100`` hundreds."""
    if decimals:
        return Decimal(1).scaleb(-decimals)
    digits = value.normalize().as_tuple()
    exponent = digits.exponent if isinstance(digits.exponent, int) else 0
    return Decimal(1).scaleb(max(0, exponent))
