"""What the invoice audit's analyst reads in the passages the researcher handed on:
invoice lines (:mod:`._lines`), the caps of the engagement letter (:mod:`._caps`),
amendments that replace them, and the time entries.

Whatever the readers miss or cannot tell must surface as an open question (a line
that is there but not read, a role several caps could belong to, a cap that does not
say per hour or per day), never as a silent clean bill or a guess.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal

from assay.apps.reference._caps import DOLLAR, per_of_words, read_caps
from assay.apps.reference._lexicon import role_kind
from assay.apps.reference._lines import LineReading, read_lines

__all__ = ["Cap", "Evidence", "Findings", "Line", "dollar_of", "parse"]

_AMOUNT = r"\d[\d,]*(?:\.\d+)?"
#: The audit's set phrasing of a cap, which a claim may restate instead of quoting.
_CAP = re.compile(
    rf"hourly rate for (?P<role>[a-z ]+?)s is capped at (?P<cur>[A-Z]{{3}}) "
    rf"(?P<cap>{_AMOUNT}) per hour"
)
_ENTRIES = re.compile(
    r"Line (?P<line>\d+): (?P<role>[a-z ]+?), \d+ entries, (?P<hours>[\d.]+) h in total"
)
_INVOICE = re.compile(r"Invoice (INV-\d+)")
_AMENDMENT = re.compile(r"\bamend(?:ment|ed|s)?\b", re.IGNORECASE)
#: How a document names a dollar: its code, its sign or its name.
_DOLLARS = {
    "USD": r"\bUSD\b|\bUS\$|\bU\.S\. dollars?\b|\bUS dollars?\b|\bUnited States dollars?\b",
    "CAD": r"\bCAD\b|\bC\$|\bCA\$|\bCanadian dollars?\b",
    "AUD": r"\bAUD\b|\bA\$|\bAU\$|\bAustralian dollars?\b",
    "NZD": r"\bNZD\b|\bNZ\$|\bNew Zealand dollars?\b",
    "HKD": r"\bHKD\b|\bHK\$|\bHong Kong dollars?\b",
    "SGD": r"\bSGD\b|\bS\$|\bSingapore dollars?\b",
}


@dataclass(frozen=True, kw_only=True)
class Evidence:
    """A passage an agent read, and the ledger entry that holds its exact text."""

    ledger_id: str
    document: str
    passage: int
    text: str


@dataclass(frozen=True, kw_only=True)
class Line:
    """An invoice line: a time (hours, or days where ``per`` is ``day``) at a rate in
    a currency. ``text`` is the line verbatim where it is not in the set phrasing:
    the analyst then quotes it instead of restating it."""

    number: int
    role: str
    hours: str
    currency: str
    rate: str
    ledger_id: str
    per: str = "hour"
    text: str | None = None

    @property
    def rate_value(self) -> Decimal:
        return Decimal(self.rate.replace(",", ""))


@dataclass(frozen=True, kw_only=True)
class Cap:
    """A cap the letter (or an amendment of it) sets on a role's rate, per hour or per
    day (``per`` is ``None`` where the letter does not say).

    ``sentence`` is set when the letter says it in its own words: the analyst then
    quotes it verbatim instead of restating it."""

    role: str
    amount: str
    currency: str
    ledger_id: str
    amended: bool = False
    sentence: str | None = None
    per: str | None = "hour"

    @property
    def value(self) -> Decimal:
        return Decimal(self.amount.replace(",", "").replace("'", ""))


@dataclass(kw_only=True)
class Findings:
    """What the analyst parsed from the passages, each fact with its evidence."""

    invoice: str | None = None
    invoice_evidence: str | None = None
    lines: dict[int, Line] = field(default_factory=dict[int, Line])
    #: Invoice lines that are there but could not be read: number -> why and text.
    unread: dict[int, str] = field(default_factory=dict[int, str])
    caps: list[Cap] = field(default_factory=list[Cap])
    #: Caps whose role the letter's sentence does not tell.
    unplaced: list[Cap] = field(default_factory=list[Cap])
    entries: dict[int, tuple[re.Match[str], str]] = field(default_factory=dict)
    #: document -> ledger id of its title passage ("# Engagement letter: ...").
    titles: dict[str, str] = field(default_factory=dict)
    #: ledger id -> the document the passage came from.
    documents: dict[str, str] = field(default_factory=dict)

    def with_title(self, ledger_ids: list[str]) -> list[str]:
        """The ids plus the title passages of their documents: a claim that names its
        source ("the engagement letter caps ...") must cite what shows the source."""
        titles = {self.titles.get(self.documents.get(i, "")) for i in ledger_ids}
        return [*ledger_ids, *sorted(t for t in titles if t and t not in ledger_ids)]

    def add_cap(self, cap: Cap) -> None:
        """Keep ``cap`` once (the same cap read twice is one)."""
        if cap.role == "":
            if cap not in self.unplaced:
                self.unplaced.append(cap)
        elif cap not in self.caps:
            self.caps.append(cap)

    def cap_for(self, line: Line) -> Cap | str | None:
        """The cap of ``line``'s role, per its time; ``None`` where the letter caps no
        such role; why not, where it cannot be told which cap applies or how it
        compares. A role's own caps come first, then those of its synonyms
        ("principal" for "partner"); an amendment's caps replace the letter's."""
        kind = role_kind(line.role)
        caps = [c for c in self.caps if c.role == line.role] or [
            c for c in self.caps if kind is not None and role_kind(c.role) == kind
        ]
        if not caps:
            return None
        amended = [c for c in caps if c.amended]
        caps = amended or caps
        same = [c for c in caps if c.per == line.per]
        distinct = sorted({f"{c.currency} {c.amount} for {c.role}s" for c in same})
        if len(distinct) == 1:
            return same[0]
        if len(distinct) > 1:
            return (
                f"the letter caps this role more than once ({'; '.join(distinct)}) and does "
                f"not say which cap a {line.role} is held to"
            )
        if any(c.per is None for c in caps):
            return "the letter's cap for the role does not say whether it is per hour or per day"
        other = sorted({c.per or "" for c in caps})
        return f"the letter caps the role per {' and '.join(other)}, not per {line.per}"


def parse(evidence: list[Evidence]) -> Findings:
    """Facts from the passages: invoice lines (and those that cannot be read), caps in
    the letter's set phrasing or in its own words, amendments over the letter, time
    entries."""
    found = Findings()
    amended = _amendments(evidence)
    texts = _document_texts(evidence)
    invoices = _invoice_documents(evidence)
    for item in evidence:
        found.documents[item.ledger_id] = item.document
        if item.text.lstrip().startswith("# "):
            found.titles.setdefault(item.document, item.ledger_id)
        if (invoice := _INVOICE.search(item.text)) and found.invoice is None:
            found.invoice, found.invoice_evidence = invoice.group(1), item.ledger_id
        if item.document.startswith("time"):
            for m in _ENTRIES.finditer(item.text):
                found.entries[int(m["line"])] = (m, item.ledger_id)
        elif item.document in invoices:
            _add_lines(found, item, read_lines(item.text), dollar=dollar_of(texts[item.document]))
        else:
            text = texts[item.document]
            _add_caps(found, item, amended=item.document in amended, text=text)
    for number in found.lines:
        found.unread.pop(number, None)
    return found


def _amendments(evidence: list[Evidence]) -> set[str]:
    """Documents that amend the letter: their name or title says so."""
    return {
        e.document
        for e in evidence
        if _AMENDMENT.search(e.document)
        or (e.text.lstrip().startswith("# ") and _AMENDMENT.search(e.text.splitlines()[0]))
    }


def _invoice_documents(evidence: list[Evidence]) -> set[str]:
    """Documents that are invoices: their name or title says so."""
    return {
        e.document
        for e in evidence
        if "invoice" in e.document.lower()
        or (e.text.lstrip().startswith("# ") and "invoice" in e.text.splitlines()[0].lower())
    }


def _document_texts(evidence: Iterable[Evidence]) -> dict[str, str]:
    texts: dict[str, list[str]] = {}
    for e in evidence:
        texts.setdefault(e.document, []).append(e.text)
    return {name: "\n".join(parts) for name, parts in texts.items()}


def dollar_of(text: str) -> str:
    """The dollar a bare ``$`` of ``text`` stands for: the one dollar the document
    names (``C$``, ``Canadian dollars``, ``AUD``), the US dollar where it names none
    (as ``assay.grounding`` reads a ``$``), and ``$`` itself, unresolved, where it
    names several: an amount whose currency cannot be told is never compared."""
    named = {code for code, pattern in _DOLLARS.items() if re.search(pattern, text)}
    return named.pop() if len(named) == 1 else "USD" if not named else DOLLAR


def _add_lines(
    found: Findings, item: Evidence, readings: list[LineReading], *, dollar: str
) -> None:
    for r in readings:
        if r.role and r.quantity and r.per and r.currency and r.rate:
            found.lines[r.number] = Line(
                number=r.number,
                role=r.role,
                hours=r.quantity,
                currency=dollar if r.currency == DOLLAR else r.currency,
                rate=r.rate,
                ledger_id=item.ledger_id,
                per=r.per,
                text=None if r.standard else r.text,
            )
        elif len(r.roles) > 1:
            found.unread.setdefault(
                r.number,
                f"Line {r.number} names more than one role ({', '.join(r.roles)}), so it "
                f"was not checked against a cap: {r.text[:200]!r}",
            )
        else:
            found.unread.setdefault(
                r.number,
                f"Line {r.number} is not written as a time at a rate for a role, so it was "
                f"not checked against a cap: {r.text[:200]!r}",
            )


def _add_caps(found: Findings, item: Evidence, *, amended: bool, text: str) -> None:
    """The caps of a passage; ``text`` is its whole document, which says what time its
    caps are per and which dollar its ``$`` is, where they do not."""
    per, dollar = per_of_words(text), dollar_of(text)
    for m in _CAP.finditer(item.text):
        found.add_cap(
            Cap(
                role=m["role"],
                amount=m["cap"],
                currency=m["cur"],
                ledger_id=item.ledger_id,
                amended=amended,
            )
        )
    for reading in read_caps(item.text, default_per=per):
        if _CAP.search(reading.text):
            continue
        found.add_cap(
            Cap(
                role=reading.role or "",
                amount=reading.amount,
                currency=dollar if reading.currency == DOLLAR else reading.currency,
                ledger_id=item.ledger_id,
                amended=amended,
                sentence=reading.text,
                per=reading.per,
            )
        )
