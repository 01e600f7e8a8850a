"""The lines of an invoice, in the layouts firms write them: a numbered line ("Line 3:
partner, 2.0 h at EUR 520/h", "Item 3 — Principal — 6.5 hours @ C$640/hour", "3.
Counsel: 4 hours at USD 420 per hour") or a table row under a header that names its
columns (line, role, hours or days, rate, amount).

A line is read as its number, its role (the one role it names before its figures),
the time billed (hours or days) and the rate in a currency (amounts with
``assay.grounding``). A line that names no role or several, or whose time or rate
cannot be told, is kept with the text it has, for the audit to ask about.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from assay.apps.reference._caps import money, per_of_words, words
from assay.apps.reference._lexicon import ROLE_MENTION, singular_role
from assay.grounding import Quantity, find_quantities

__all__ = ["LineReading", "read_lines"]

#: How a line's number is written at its start: "Line 3", "Item 3", "Pos. 3",
#: "Position 3", "No. 3", "#3", "3." or "3)".
_MARKER = re.compile(
    r"^\s*(?:(?:line|item|pos(?:ition)?\.?|no\.?|#)\s*(?P<a>\d+)\b|(?P<b>\d+)[.)]\s)",
    re.IGNORECASE,
)
_STANDARD = re.compile(
    r"Line (?P<line>\d+): (?P<role>[a-z ]+?), (?P<hours>[\d.]+) h at (?P<cur>[A-Z]{3}) "
    r"(?P<rate>\d[\d,]*(?:\.\d+)?)/h"
)
_TABLE_RULE = re.compile(r"^\s*\|?[\s:|-]+\|?\s*$")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
#: The words of a table's header that name each column the reader needs.
_COLUMNS = {
    "number": frozenset(["line", "no", "item", "ref", "pos", "position"]),
    "time": frozenset(["hours", "hrs", "days", "time", "quantity", "qty"]),
    "rate": frozenset(["rate", "price"]),
}


@dataclass(frozen=True, kw_only=True)
class LineReading:
    """One invoice line as read. ``role`` is ``None`` where it names no role or
    several (``roles`` has those it names); ``per``, ``currency`` and ``rate`` are
    ``None`` where they cannot be told; ``standard`` when it is written in the
    audit's set phrasing, which a claim may restate instead of quoting."""

    number: int
    role: str | None
    roles: tuple[str, ...]
    quantity: str | None
    per: str | None
    currency: str | None
    rate: str | None
    text: str
    standard: bool = False

    @property
    def complete(self) -> bool:
        return None not in (self.role, self.quantity, self.per, self.currency, self.rate)


def read_lines(text: str) -> list[LineReading]:
    """Every numbered line and table row of an invoice passage, read or not."""
    found: list[LineReading] = []
    rows: list[str] = []
    for line in [*text.split("\n"), ""]:
        if line.lstrip().startswith("|"):
            rows.append(line)
            continue
        if rows:
            found += _table_lines(rows)
            rows = []
        marker = _MARKER.match(line)
        if marker is not None:
            found.append(_numbered(int(marker["a"] or marker["b"]), line, line[marker.end() :]))
    return found


def _numbered(number: int, line: str, rest: str) -> LineReading:
    standard = _STANDARD.search(line)
    if standard is not None and int(standard["line"]) == number:
        role = singular_role(standard["role"]) or standard["role"]
        return LineReading(
            number=number,
            role=role,
            roles=(role,),
            quantity=standard["hours"],
            per="hour",
            currency=standard["cur"],
            rate=standard["rate"],
            text=line.strip(),
            standard=True,
        )
    quantities = find_quantities(rest)
    first = quantities[0].start if quantities else len(rest)
    roles = _roles(rest[:first]) or _roles(rest)[:1]
    time = next((q for q in quantities if _time_of(q) is not None), None)
    per = _time_of(time) if time is not None else None
    return _reading(number, line, roles, time, per, quantities)


def _reading(
    number: int,
    line: str,
    roles: tuple[str, ...],
    time: Quantity | None,
    per: str | None,
    quantities: list[Quantity],
) -> LineReading:
    after = [q for q in quantities if time is None or q.start > time.start]
    rate = next((q for q in after if money(q) is not None), None)
    read = money(rate) if rate is not None else None
    if read is not None and read[1] is not None:
        per = per if per == read[1] else None if time is not None else read[1]
    return LineReading(
        number=number,
        role=roles[0] if len(roles) == 1 else None,
        roles=roles,
        quantity=_number(time.text) if time is not None else None,
        per=per,
        currency=read[0] if read else None,
        rate=_amount(rate.text) if rate is not None else None,
        text=line.strip(),
    )


def _time_of(quantity: Quantity) -> str | None:
    return (
        quantity.unit if quantity.kind == "measure" and quantity.unit in ("hour", "day") else None
    )


def _roles(text: str) -> tuple[str, ...]:
    """The distinct roles ``text`` names, in order."""
    seen: dict[str, None] = {}
    for m in ROLE_MENTION.finditer(text):
        role = singular_role(m.group(0))
        if role is not None:
            seen.setdefault(role, None)
    return tuple(seen)


def _number(text: str) -> str | None:
    match = _NUMBER.search(text.replace(",", ""))
    return match.group(0) if match else None


def _amount(text: str) -> str | None:
    match = re.search(r"\d[\d,]*(?:\.\d+)?", text)
    return match.group(0) if match else None


def _cells(row: str) -> list[str]:
    return [c.strip() for c in row.strip().strip("|").split("|")]


def _column(header: list[str], kind: str) -> int | None:
    for i, title in enumerate(header):
        if set(words(title)) & _COLUMNS[kind] or (kind == "number" and title.strip() == "#"):
            return i
    return None


def _table_lines(rows: list[str]) -> list[LineReading]:
    """The rows of an invoice table whose header names a line-number column."""
    body = [r for r in rows if not _TABLE_RULE.match(r)]
    header = _cells(body[0]) if body else []
    number, hours, rate = (_column(header, k) for k in ("number", "time", "rate"))
    if number is None:
        return []
    found: list[LineReading] = []
    for row in body[1:]:
        cells = _cells(row)
        if number >= len(cells) or not cells[number].strip().isdigit():
            continue
        roles = _roles(" | ".join(c for i, c in enumerate(cells) if i != number))
        time_cell = cells[hours] if hours is not None and hours < len(cells) else ""
        rate_cell = cells[rate] if rate is not None and rate < len(cells) else ""
        per = per_of_words(header[hours]) if hours is not None else None
        time = _bare_time(time_cell, per)
        rate_q = [q for q in find_quantities(rate_cell) if money(q) is not None]
        read = money(rate_q[0]) if rate_q else None
        per = (
            per
            or (read[1] if read else None)
            or per_of_words(header[rate] if rate is not None else "")
        )
        found.append(
            LineReading(
                number=int(cells[number]),
                role=roles[0] if len(roles) == 1 else None,
                roles=roles,
                quantity=time,
                per=per,
                currency=read[0] if read else None,
                rate=_amount(rate_q[0].text) if rate_q else None,
                text=row.strip(),
            )
        )
    return found


def _bare_time(cell: str, per: str | None) -> str | None:
    """The time of a table cell: ``2.0`` under "Hours", or ``2.0 h`` anywhere."""
    for q in find_quantities(cell):
        if _time_of(q) is not None and (per is None or _time_of(q) == per):
            return _number(q.text)
    return _number(cell) if per is not None and _NUMBER.fullmatch(cell.strip()) else None
