"""Values for the synthetic scenes: how tools print them, how an agent rewrites them
faithfully (dates, amounts, durations, counts), the near misses that break them, and
the records a scene is made of (:class:`Slot`, :class:`Scene`).

JSON records are rendered by the evidence view, exactly as the verifier shows them.
"""

from __future__ import annotations

import datetime as dt
import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from assay.grounding import view_of
from assay.training._synthetic_pools import CURRENCIES, FIRST, LAST

_SYMBOL = {"EUR": "€", "USD": "$", "GBP": "£", "JPY": "¥"}
_CURRENCY_WORD = {
    "EUR": "euros",
    "USD": "US dollars",
    "GBP": "pounds",
    "CHF": "Swiss francs",
    "SEK": "kronor",
    "JPY": "yen",
    "CAD": "Canadian dollars",
}
_NUMBER_WORDS = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
]


@dataclass(frozen=True, kw_only=True)
class Slot:
    """Faithful renderings of one value, and wrong ones tagged with their phenomenon."""

    good: list[str]
    bad: list[tuple[str, str]] = field(default_factory=list[tuple[str, str]])


@dataclass(frozen=True, kw_only=True)
class Scene:
    domain: str
    premise: str
    slots: dict[str, Slot]
    templates: list[str]
    #: Clauses appended to a faithful claim that the premise never states.
    additions: list[tuple[str, str]] = field(default_factory=list[tuple[str, str]])
    #: Whole wrong claims (error reported as success, overgeneralisation).
    whole: list[tuple[str, str]] = field(default_factory=list[tuple[str, str]])


def pick(rng: random.Random, items: Sequence[str], k: int) -> list[str]:
    return rng.sample(list(items), k)


def choose_format(rng: random.Random, record: dict[str, Any], prose: str, keys: list[str]) -> str:
    """The record as ``path: value`` lines (focused on ``keys``), or as prose."""
    if rng.random() < 0.55:
        return render_record(record, keys, rng)
    return prose


def person(rng: random.Random) -> str:
    return f"{rng.choice(FIRST)} {rng.choice(LAST)}"


def handle(rng: random.Random) -> str:
    first, last = rng.choice(FIRST).lower(), rng.choice(LAST).lower().replace("'", "")
    return rng.choice([f"{first[0]}.{last}", f"{first}.{last}", f"{first}{last[0]}", f"@{first}"])


def date(rng: random.Random) -> dt.date:
    return dt.date(2021, 1, 1) + dt.timedelta(days=rng.randrange(6 * 365))


def timestamp(rng: random.Random) -> str:
    day = date(rng)
    hh, mm, ss = rng.randrange(24), rng.randrange(60), rng.randrange(60)
    return f"{day.isoformat()}T{hh:02d}:{mm:02d}:{ss:02d}Z"


def num(value: float) -> str:
    """A number as a tool would print it (``2.0`` stays ``2.0``)."""
    return repr(value) if isinstance(value, float) else str(value)


def date_forms(day: dt.date) -> list[str]:
    return [
        f"{day.day} {day:%B %Y}",
        f"{day:%B} {day.day}, {day.year}",
        f"{day:%b} {day.day}, {day.year}",
        f"{day.day} {day:%b %Y}",
        day.isoformat(),
    ]


def date_wrongs(day: dt.date, rng: random.Random) -> list[str]:
    shifts = rng.sample([-7, -3, -2, -1, 1, 2, 3, 7, 30, -30], 2)
    return [rng.choice(date_forms(day + dt.timedelta(days=s))) for s in shifts]


def duration_forms(value: float, unit: str) -> list[str]:
    g = f"{value:g}"
    if unit == "h":
        forms = [f"{g} hours" if value != 1 else "1 hour", f"{g} h", f"{num(value)} hours"]
        if value == 1:
            forms.append("one hour")
        if value < 2:
            forms.append(f"{value * 60:g} minutes")
        return forms
    forms = [f"{g} seconds", f"{g} s"]
    if value >= 120:
        forms.append(f"about {round(value / 60)} minutes")
    elif value < 1:
        forms.append(f"{value * 1000:g} milliseconds")
    return forms


def count_forms(n: int, noun: str) -> list[str]:
    forms = [f"{n} {noun}" if n == 1 else f"{n} {noun}s"]
    if n <= 12:
        forms.append(f"{_NUMBER_WORDS[n]} {noun}" if n == 1 else f"{_NUMBER_WORDS[n]} {noun}s")
    return forms


def near_misses(text: str, rng: random.Random) -> list[str]:
    """Up to three near-miss edits of a number: two digits transposed, one digit moved
    by one, a digit dropped (1,240 vs 1,420; 5842.17 vs 5482.17)."""
    digits = [i for i, ch in enumerate(text) if ch.isdigit()]
    out: list[str] = []
    pairs = [(a, b) for a, b in pairwise(digits) if b == a + 1 and text[a] != text[b]]
    if pairs:
        a, b = rng.choice(pairs)
        out.append(text[:a] + text[b] + text[a] + text[b + 1 :])
    if digits:
        i = rng.choice(digits)
        d = int(text[i])
        new = d + 1 if d < 9 else d - 1
        if not (i == digits[0] and new == 0):
            out.append(text[:i] + str(new) + text[i + 1 :])
    if len(digits) > 2:
        i = rng.choice(digits[1:])
        out.append(text[:i] + text[i + 1 :])
    return [o for o in dict.fromkeys(out) if o != text]


def money_forms(amount: float, cur: str) -> list[str]:
    exact = f"{amount:,.2f}"
    short = f"{amount:,.0f}" if amount == int(amount) else exact
    forms = [f"{cur} {exact}", f"{exact} {cur}", f"{short} {_CURRENCY_WORD[cur]}"]
    if cur in _SYMBOL:
        forms += [f"{_SYMBOL[cur]}{exact}", f"{_SYMBOL[cur]}{short}"]
    return forms


def money_wrongs(amount: float, cur: str, rng: random.Random) -> list[tuple[str, str]]:
    """Near-miss amounts in the same currency, and the right amount in another one."""
    out: list[tuple[str, str]] = []
    for miss in near_misses(f"{amount:.2f}", rng)[:2]:
        try:
            out.append((rng.choice(money_forms(float(miss), cur)), "number_swap"))
        except ValueError:
            continue
    other = rng.choice([c for c in CURRENCIES if c != cur])
    out.append((rng.choice(money_forms(amount, other)), "unit_error"))
    return out


def render_record(record: dict[str, Any], keys: list[str] | None, rng: random.Random) -> str:
    """A JSON record as the verifier shows it to the model: the evidence view's
    sentences (``lines[3].rate: EUR 610/h.``), one per record; with ``keys``, mostly
    just the records that mention one of them (a focused premise)."""
    sentences = view_of(json.dumps(record, ensure_ascii=False)).sentences()
    if keys and rng.random() < 0.7:
        sentences = [s for s in sentences if any(k in s for k in keys)] or sentences
    return " ".join(sentences)


#: Small tables: header row and 3-5 data rows; the first column names the row, the
#: last holds the value claims are about.
def _sports(rng: random.Random) -> tuple[list[str], list[list[Any]]]:
    teams = rng.sample(
        [
            "Harbour FC",
            "Riverside Rovers",
            "Northgate United",
            "Kestrel Athletic",
            "Old Mill Town",
            "Dockside Wanderers",
        ],
        4,
    )
    return ["team", "played", "points"], [[t, 12, rng.randint(3, 34)] for t in teams]


def _stock(rng: random.Random) -> tuple[list[str], list[list[Any]]]:
    items = rng.sample(
        [
            "ibuprofen 400mg",
            "saline 0.9% 500ml",
            "gauze pads",
            "amoxicillin 250mg",
            "nitrile gloves M",
            "paracetamol 500mg",
        ],
        4,
    )
    return ["product", "location", "units on hand"], [
        [i, rng.choice(["A1", "B4", "C2", "cold room"]), rng.randint(0, 2400)] for i in items
    ]


def _revenue(rng: random.Random) -> tuple[list[str], list[list[Any]]]:
    regions = rng.sample(["North", "South", "East", "West", "Central", "Overseas"], 4)
    return ["region", "quarter", "revenue"], [[r, "Q3", rng.randint(1000, 99999)] for r in regions]


def _courses(rng: random.Random) -> tuple[list[str], list[list[Any]]]:
    courses = rng.sample(["MATH 201", "HIST 110", "CS 340", "BIO 150", "ECON 220", "PHYS 101"], 4)
    return ["course", "instructor", "enrolment"], [
        [c, person(rng), rng.randint(8, 320)] for c in courses
    ]


TABLES: tuple[Callable[[random.Random], tuple[list[str], list[list[Any]]]], ...] = (
    _sports,
    _stock,
    _revenue,
    _courses,
)
