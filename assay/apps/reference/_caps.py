"""The caps an engagement letter (or an amendment of it) sets on its roles' rates,
read by the grammar of the sentences that set them, not from a list of phrasings.

A passage is read a unit at a time: a sentence, a list item, or a table. A unit sets
caps when it says a ceiling: a word that is one ("capped", "maximum", "ceiling"), a
word of "more" under a negation ("shall not exceed", "no more than", "will not be
invoiced above") or a word of "at most" ("up to", "at or below"); an introduction
that says one ("capped as follows:") lends it to the list or table after it. A
contrastive clause ("..., but") keeps its own: a standard rate beside a cap is no cap.

Each amount of money in such a unit is a cap (amounts with ``assay.grounding``: ``C$640``,
``£95/hour``, ``CHF 700 per hour``, ``EUR 2,400 per day``). Its role is the one it is
written for ("USD 420 for counsel"), or else the last role named before it and after
the amount before it ("partners USD 640; associates USD 390"), or else the only role
its sentence names. Its time is the one written with it, or in its clause or
sentence ("hourly rates"), or the one its document charges by; a cap whose role or
time cannot be told is kept as such, for the audit to ask about, never guessed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import pairwise

from assay.apps.reference._lexicon import (
    ABOVE,
    BELOW,
    BELOW_PAIRS,
    CEILING,
    DAY_WORDS,
    HOUR_WORDS,
    NEGATION,
    NOT_RATE,
    RATE_NOUNS,
    ROLE_MENTION,
    singular_role,
)
from assay.grounding import Quantity, find_quantities

__all__ = ["DOLLAR", "CapReading", "money", "per_of_words", "read_caps", "words"]

#: The currency of an amount written with a bare ``$``, until its document says which.
DOLLAR = "$"

_WORD = re.compile(r"[a-z]+(?:'t)?|n't", re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_CONTRAST = re.compile(r",?\s*\b(?:but|whereas|while|although|though|however|except)\b")
_LIST_ITEM = re.compile(r"^\s*(?:[-*•]|\(?[a-z0-9]{1,3}[.)])\s+", re.IGNORECASE)
_TABLE_RULE = re.compile(r"^\s*\|?[\s:|-]+\|?\s*$")
#: What stands between an amount and the role it is written for ("USD 420 for
#: counsel", "EUR 90 an hour for trainees"); after a comma, "for" begins the next item.
_FOR_ROLE = re.compile(
    r"\s*(?:(?:an?|per|the)\s+(?:hour|day)\s+)?(?:for|of)\s+"
    r"(?:(?:a|an|the|each|every|all|any|our|your)\s+)?",
    re.IGNORECASE,
)
#: How many words may stand between a negation and its word of "more".
_NEGATION_REACH = 3


@dataclass(frozen=True, kw_only=True)
class CapReading:
    """A cap as one unit of a letter writes it: ``role`` as written (singular, lower
    case) or ``None`` where the unit does not tell; ``per`` ``hour``, ``day`` or
    ``None`` where nothing says; ``text`` the unit verbatim, for a quotation."""

    role: str | None
    amount: str
    currency: str
    per: str | None
    text: str


def words(text: str) -> list[str]:
    """The lower-case words of ``text`` (``won't`` → ``won``, ``'t``)."""
    return [w.lower() for w in _WORD.findall(text)]


def says_ceiling(text: str) -> bool:
    """Whether ``text`` says a ceiling (see the module's docstring)."""
    seen = words(text)
    for i, word in enumerate(seen):
        if word in CEILING or word in BELOW:
            return True
        if i and (seen[i - 1], word) in BELOW_PAIRS:
            return True
        negated = any(
            w in NEGATION or w.endswith("'t") for w in seen[max(0, i - _NEGATION_REACH - 1) : i]
        )
        if word in ABOVE and negated:
            return True
    return False


def per_of_words(text: str) -> str | None:
    """``hour`` or ``day`` where ``text`` names one time and not the other."""
    seen = set(words(text))
    hour, day = bool(seen & HOUR_WORDS), bool(seen & DAY_WORDS)
    return "hour" if hour and not day else "day" if day and not hour else None


def money(quantity: Quantity) -> tuple[str, str | None] | None:
    """``(currency, per)`` of an amount of money (``CHF / hour`` → ``("CHF",
    "hour")``), or ``None`` for anything else. A bare ``$`` is ``"$"``: which dollar
    it is, its document says (see :mod:`._reading`)."""
    if quantity.kind != "money" or not quantity.unit:
        return None
    currency, _, per = (part.strip() for part in quantity.unit.partition("/"))
    currency = DOLLAR if currency == "dollar" else currency
    if not re.fullmatch(r"[A-Z]{3}|\$", currency) or per not in ("", "hour", "day"):
        return None
    return currency, per or None


def read_caps(text: str, *, default_per: str | None = None) -> list[CapReading]:
    """Every cap ``text`` (one passage) sets, in order; ``default_per`` is the time
    its document charges by, where it names one."""
    found: list[CapReading] = []
    for unit, lent in _units(text):
        if unit.lstrip().startswith("|"):
            found += _table_caps(unit, lent=lent, default_per=default_per)
        else:
            found += _sentence_caps(unit, lent=lent, default_per=default_per)
    return found


@dataclass(frozen=True, kw_only=True)
class _Lent:
    """What an introduction ("Hourly rates are capped as follows:") lends the list or
    table after it: its ceiling and its time."""

    ceiling: bool
    per: str | None


def _units(text: str) -> Iterator[tuple[str, _Lent | None]]:
    """Sentences, list items and tables of a passage, each with what an introduction
    before it lends it."""
    lines = text.split("\n")
    lent: _Lent | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith("|"):
            end = i
            while end < len(lines) and lines[end].lstrip().startswith("|"):
                end += 1
            yield "\n".join(lines[i:end]), lent
            i, lent = end, None
            continue
        item = bool(_LIST_ITEM.match(line))
        for sentence in _SENTENCE.split(line):
            if sentence.strip():
                yield sentence, lent if item else None
        if line.rstrip().endswith(":"):
            lent = _Lent(ceiling=says_ceiling(line), per=per_of_words(line))
        elif not item:
            lent = None
        i += 1


def _sentence_caps(
    sentence: str, *, lent: _Lent | None, default_per: str | None
) -> list[CapReading]:
    inherited = lent is not None and lent.ceiling
    if not inherited and not says_ceiling(sentence):
        return []
    roles = [
        (m.start(), m.end(), singular_role(m.group(0))) for m in ROLE_MENTION.finditer(sentence)
    ]
    only = {r for _, _, r in roles}
    sole = next(iter(only)) if len(only) == 1 else None
    found: list[CapReading] = []
    for clause_start, clause_end in _clauses(sentence):
        clause = sentence[clause_start:clause_end]
        if not inherited and not says_ceiling(clause):
            continue
        amounts = [(q, read) for q in find_quantities(clause) if (read := money(q)) is not None]
        for k, (q, (currency, per)) in enumerate(amounts):
            start = amounts[k - 1][0].end if k else 0
            end = amounts[k + 1][0].start if k + 1 < len(amounts) else len(clause)
            before, after = clause[start : q.start], clause[q.end : end]
            if per is None and set(words(before)) & NOT_RATE:
                continue
            time = per or per_of_words(before + " " + after) or per_of_words(clause)
            time = time or per_of_words(sentence) or (lent.per if lent else None)
            if time is None and not set(words(sentence)) & RATE_NOUNS:
                continue
            role = _role_after(after) or _role_before(before) or sole
            found.append(
                CapReading(
                    role=role,
                    amount=_digits(q.text),
                    currency=currency,
                    per=time or default_per,
                    text=sentence.strip(),
                )
            )
    return found


def _clauses(sentence: str) -> list[tuple[int, int]]:
    """The contrastive clauses of a sentence ("..., but ..."), as (start, end)."""
    cuts = [m.start() for m in _CONTRAST.finditer(sentence)]
    bounds = [0, *cuts, len(sentence)]
    return [(a, b) for a, b in pairwise(bounds) if b > a]


def _role_after(after: str) -> str | None:
    """The role an amount is written for: "USD 420 for counsel"."""
    lead = _FOR_ROLE.match(after)
    if lead is None:
        return None
    role = ROLE_MENTION.match(after, lead.end())
    return singular_role(role.group(0)) if role else None


def _role_before(before: str) -> str | None:
    """The last role named before an amount (and after the amount before it)."""
    mentions = list(ROLE_MENTION.finditer(before))
    return singular_role(mentions[-1].group(0)) if mentions else None


def _digits(text: str) -> str:
    """The number of an amount as written (``C$1,280.00`` → ``1,280.00``)."""
    match = re.search(r"\d[\d,.']*\d|\d", text)
    return match.group(0).rstrip(".,") if match else text


def _cells(row: str) -> list[str]:
    return [c.strip() for c in row.strip().strip("|").split("|")]


def _table_caps(table: str, *, lent: _Lent | None, default_per: str | None) -> list[CapReading]:
    """Caps of a table of roles and maximum rates: a ceiling in its header (or in the
    introduction before it), each row's role and its amounts, each amount's time
    from its cell or its column's header."""
    rows = [r for r in table.split("\n") if r.strip() and not _TABLE_RULE.match(r)]
    if len(rows) < 2:
        return []
    header = _cells(rows[0])
    if not (says_ceiling(rows[0]) or (lent is not None and lent.ceiling)):
        return []
    found: list[CapReading] = []
    for row in rows[1:]:
        cells = _cells(row)
        roles = [r for c in cells if (r := singular_role(c)) is not None]
        for column, cell in enumerate(cells):
            for q in find_quantities(cell):
                read = money(q)
                if read is None:
                    continue
                title = header[column] if column < len(header) else ""
                time = read[1] or per_of_words(title) or (lent.per if lent else None)
                found.append(
                    CapReading(
                        role=roles[0] if len(roles) == 1 else None,
                        amount=_digits(q.text),
                        currency=read[0],
                        per=time or default_per,
                        text=table,
                    )
                )
    return found
