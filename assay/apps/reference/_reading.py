"""What the invoice audit's analyst reads in the passages the researcher handed on:
invoice lines (and the lines it cannot read), the caps of the engagement letter in
its set phrasing or in prose, amendments that replace them, and the time entries.

Reading is plain pattern matching on purpose: whatever it misses must surface as an
open question (a line that is there but not read), never as a silent clean bill.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal

from assay.apps.reference._tools import CURRENCIES

__all__ = ["ROLES", "Cap", "Evidence", "Findings", "Line", "parse"]

_CUR = rf"(?P<cur>{'|'.join(CURRENCIES)})"
_AMOUNT = r"\d[\d,]*(?:\.\d+)?"
_LINE = re.compile(
    rf"Line (?P<line>\d+): (?P<role>[a-z ]+?), (?P<hours>[\d.]+) h at {_CUR} (?P<rate>{_AMOUNT})/h"
)
#: Any invoice line, read or not: a line the analyst cannot read is asked about.
_ANY_LINE = re.compile(r"^Line (?P<line>\d+)\b", re.MULTILINE)
_CAP = re.compile(
    rf"hourly rate for (?P<role>[a-z ]+?)s is capped at {_CUR} (?P<cap>{_AMOUNT}) per hour"
)
#: A cap written in prose: an amount an hour in a sentence that limits it.
_PROSE_RATE = re.compile(rf"{_CUR} (?P<cap>{_AMOUNT}) (?:an|a|per) hour")
_LIMITS = re.compile(
    r"\b(?:capped|caps?|no more than|not (?:more than|exceed)|at most|up to|maximum)\b",
    re.IGNORECASE,
)
#: Sentence ends: a limiting word ("capped", "no more than") governs every rate
#: of its sentence, including rates listed after it between semicolons.
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
#: Roles a letter may name in prose, besides those the invoice bills.
ROLES = ("partner", "senior associate", "associate", "counsel", "paralegal", "trainee solicitor")
_ENTRIES = re.compile(
    r"Line (?P<line>\d+): (?P<role>[a-z ]+?), \d+ entries, (?P<hours>[\d.]+) h in total"
)
_INVOICE = re.compile(r"Invoice (INV-\d+)")
_AMENDMENT = re.compile(r"\bamend(?:ment|ed|s)?\b", re.IGNORECASE)


@dataclass(frozen=True, kw_only=True)
class Evidence:
    """A passage an agent read, and the ledger entry that holds its exact text."""

    ledger_id: str
    document: str
    passage: int
    text: str


@dataclass(frozen=True, kw_only=True)
class Line:
    """An invoice line as the invoice writes it: hours at a rate in a currency."""

    number: int
    role: str
    hours: str
    currency: str
    rate: str
    ledger_id: str

    @property
    def rate_value(self) -> Decimal:
        return Decimal(self.rate.replace(",", ""))


@dataclass(frozen=True, kw_only=True)
class Cap:
    """A cap the letter (or an amendment of it) sets on a role's hourly rate.

    ``sentence`` is set when the letter says it in prose: the analyst then quotes the
    sentence verbatim instead of restating it in its own words."""

    role: str
    amount: str
    currency: str
    ledger_id: str
    amended: bool = False
    sentence: str | None = None

    @property
    def value(self) -> Decimal:
        return Decimal(self.amount.replace(",", ""))


@dataclass(kw_only=True)
class Findings:
    """What the analyst parsed from the passages, each fact with its evidence."""

    invoice: str | None = None
    invoice_evidence: str | None = None
    lines: dict[int, Line] = field(default_factory=dict[int, Line])
    #: Invoice lines that are there but not written as hours at a rate: number -> text.
    unread: dict[int, str] = field(default_factory=dict[int, str])
    caps: dict[str, Cap] = field(default_factory=dict[str, Cap])
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
        """Keep ``cap`` unless the role already has one from an amendment: an amendment
        replaces what the letter says, whichever passage was read first."""
        held = self.caps.get(cap.role)
        if held is None or cap.amended or not held.amended:
            self.caps[cap.role] = cap


def parse(evidence: list[Evidence]) -> Findings:
    """Facts from the passages: invoice lines (and those that cannot be read), caps in
    the letter's set phrasing or in prose, amendments over the letter, time entries."""
    found = Findings()
    amended = _amendments(evidence)
    for item in evidence:
        found.documents[item.ledger_id] = item.document
        if item.text.lstrip().startswith("# "):
            found.titles.setdefault(item.document, item.ledger_id)
        if (invoice := _INVOICE.search(item.text)) and found.invoice is None:
            found.invoice, found.invoice_evidence = invoice.group(1), item.ledger_id
        if item.document.startswith("time"):
            for m in _ENTRIES.finditer(item.text):
                found.entries[int(m["line"])] = (m, item.ledger_id)
            continue
        _parse_lines(found, item)
        for m in _CAP.finditer(item.text):
            found.add_cap(
                Cap(
                    role=m["role"],
                    amount=m["cap"],
                    currency=m["cur"],
                    ledger_id=item.ledger_id,
                    amended=item.document in amended,
                )
            )
    roles = sorted({*ROLES, *(line.role for line in found.lines.values())}, key=len, reverse=True)
    for item in evidence:
        if not item.document.startswith("time") and not _CAP.search(item.text):
            for cap in _prose_caps(item, roles, amended=item.document in amended):
                found.add_cap(cap)
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


def _parse_lines(found: Findings, item: Evidence) -> None:
    for m in _LINE.finditer(item.text):
        found.lines[int(m["line"])] = Line(
            number=int(m["line"]),
            role=m["role"],
            hours=m["hours"],
            currency=m["cur"],
            rate=m["rate"],
            ledger_id=item.ledger_id,
        )
    for m in _ANY_LINE.finditer(item.text):
        end = item.text.find("\n", m.start())
        found.unread.setdefault(int(m["line"]), item.text[m.start() : end if end > 0 else None])


def _prose_caps(item: Evidence, roles: list[str], *, amended: bool) -> list[Cap]:
    """Caps a letter writes in prose ("associates no more than GBP 240 an hour"): each
    amount an hour, in a sentence that limits it, belongs to the role named last
    before it, so "capped as follows: partners USD 640 an hour; paralegals USD 150
    an hour" gives both caps."""
    names = "|".join(re.escape(r) for r in roles)
    mention = re.compile(rf"\b(?P<role>{names})s?\b", re.IGNORECASE)
    caps: list[Cap] = []
    for sentence in _SENTENCE.split(item.text):
        if not _LIMITS.search(sentence):
            continue
        for rate in _PROSE_RATE.finditer(sentence):
            before = list(mention.finditer(sentence, 0, rate.start()))
            if not before:
                continue
            caps.append(
                Cap(
                    role=before[-1]["role"].lower(),
                    amount=rate["cap"],
                    currency=rate["cur"],
                    ledger_id=item.ledger_id,
                    amended=amended,
                    sentence=sentence.strip(),
                )
            )
    return caps
