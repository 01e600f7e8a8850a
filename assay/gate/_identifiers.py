"""Identifier-like tokens, and whether a piece of evidence contains one.

An agent that invents a commit hash, an invoice number or an amount produces text
that reads as well as the truth; the only cheap, certain test is whether the token
occurs in evidence. :func:`extract_identifiers` finds the tokens worth that test:

* ``hash`` — a run of 10-64 hex digits holding at least one digit, not part of a
  longer alphanumeric token; 7-9 hex digits only when a word within the preceding
  40 characters says commit/sha/hash/revision (or git, changeset, cherry-pick…) or
  the token sits where git puts hashes (``a1b2c3d..e4f5a6b``, ``repo@a1b2c3d``, a
  ``git log --oneline`` line). A token after ``#`` is never a short hash, so
  colours (``#ff00aa80``) stay out; so do versions (``1.2.3``) and error codes
  (``0x80070005``, ``E0308``), whose hex runs are short or glued to letters.
* ``uuid``, ``url`` (http/https), ``path`` (``/etc/hosts``, ``./run.sh``,
  ``~/x``, ``src/app/main.py``: a slash and either a leading anchor or an
  extension, so ``and/or`` and ``km/h`` stay out).
* ``ticket`` — ``#123`` (digits only, not after colour/color/fill) and
  ``INV-4421``-style keys (capitals, a dash, digits; ``UTF-8``, ``SHA-256`` and
  similar standards names are not tickets).
* ``amount`` (a currency symbol or ISO code with a number), ``date`` (ISO dates,
  ``3 March 2024``, ``March 3, 2024``, ``03/01/2024``) and ``quantity`` (a number
  with a unit: ``250 ms``, ``12.5 GB``, ``99.9%``).

Matching (:func:`identifier_in_evidence`) is verbatim, with the token's edges not
glued to a longer alphanumeric run (``INV-44`` is not in ``INV-4421``), plus three
rules where no reading is ambiguous: a hash matches a hash in the evidence that it
is a prefix or an extension of (both at least 7 digits, case-insensitive);
amounts and quantities match when currency (``€``=``EUR``, ``£``=``GBP``; ``$`` is
not ``USD``, it is also AUD, CAD…), unit and value agree, where thousands
separators are dropped only when unambiguous (apostrophes and spaces always;
commas or dots only with two or more groups or a decimal part of the other kind —
``1,200`` alone stays verbatim, it is 1.2 in half of Europe); and ISO and
written-month dates match each other (slash dates are only ever verbatim: 03/01
is March in the US and January elsewhere).
"""

from __future__ import annotations

import re
from datetime import date
from functools import lru_cache

from assay.gate._records import Identifier, IdentifierKind

__all__ = ["extract_identifiers", "identifier_in_evidence"]

_B = r"(?<![A-Za-z0-9])"  # not glued to a preceding alphanumeric
_E = r"(?![A-Za-z0-9])"  # nor to a following one

_URL = re.compile(r"https?://[^\s<>\"'`]+", re.IGNORECASE)
_UUID = re.compile(
    _B + r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}" + _E
)
_PATH_SEG = r"[\w@+-][\w.@+-]*"
_PATH = re.compile(
    r"(?<![\w/.~:-])(?:"
    r"(?:~|\.{1,2})?/" + _PATH_SEG + r"(?:/" + _PATH_SEG + r")*/?"  # anchored
    r"|[A-Za-z]:\\[\w.@+-]+(?:\\[\w.@+-]+)*"  # Windows drive path
    r"|" + _PATH_SEG + r"(?:/" + _PATH_SEG + r")*/[\w@+-]+\.[A-Za-z][A-Za-z0-9]{0,7}"
    r")(?![\w/])"
)
_HEX = re.compile(_B + r"[0-9a-fA-F]{7,64}" + _E)
_HASH_WORDS = re.compile(
    r"\b(?:commit(?:s|ted)?|sha-?(?:1|256)?|hash(?:es)?|revision|rev|changeset|git|"
    r"cherry-pick(?:ed)?|revert(?:ed|s)?|checkout|rebase[ds]?|HEAD|blob|tree)\b[^\n]{0,40}$",
    re.IGNORECASE,
)
_LINE_START = re.compile(r"(?:^|\n)[ \t*-]*$")
_RANGE_AFTER = re.compile(r"\.\.\.?[0-9a-fA-F]{7}")
_COLOUR_WORDS = re.compile(r"\b(?:colou?r|fill|stroke|background|rgba?|hex)\b[^\n]{0,20}$", re.I)
_TICKET_HASH = re.compile(r"(?<![\w&#])#\d+" + _E)
_TICKET_KEY = re.compile(_B + r"([A-Z][A-Z0-9]{1,9})(?:-\d+)+" + _E)
_STANDARDS = frozenset(
    {"UTF", "SHA", "ISO", "AES", "MD", "COVID", "IPV", "UCS", "CP", "GPT", "TLS"}
)

_NUM = r"\d{1,3}(?:[,.' \u00a0\u202f]\d{3})+(?:[.,]\d+)?|\d+(?:[.,]\d+)?"
_CURRENCY_SYMBOLS = "$€£¥₹"
_CURRENCY_CODES = r"USD|EUR|GBP|CHF|JPY|CNY|INR|CAD|AUD|SEK|NOK|DKK|PLN|CZK"
_AMOUNT = re.compile(
    r"(?:(?P<sym>["
    + _CURRENCY_SYMBOLS
    + r"])\s?|(?<![A-Za-z])(?P<code>"
    + _CURRENCY_CODES
    + r")\s?)(?P<neg>-)?(?P<num>"
    + _NUM
    + r")(?![\d])"
    r"|" + _B + r"(?P<neg2>-)?(?P<num2>" + _NUM + r")\s?"
    r"(?:(?P<sym2>[" + _CURRENCY_SYMBOLS + r"])|(?P<code2>" + _CURRENCY_CODES + r")" + _E + r")"
)
_MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
_MONTH = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
    r"Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
)
_DATE = re.compile(
    _B + r"(?:"
    r"(?P<iso>\d{4}-\d{2}-\d{2})(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?"
    r"|(?P<dmy>\d{1,2})(?:st|nd|rd|th)?\s+(?P<m1>" + _MONTH + r")\.?,?\s+(?P<y1>\d{4})"
    r"|(?P<m2>" + _MONTH + r")\.?\s+(?P<d2>\d{1,2})(?:st|nd|rd|th)?,?\s+(?P<y2>\d{4})"
    r"|\d{1,2}/\d{1,2}/\d{2,4}|\d{1,2}\.\d{1,2}\.\d{4}"
    r")" + _E
)
_UNITS = (
    r"%|percent|ms|µs|us|ns|s|sec|secs|seconds?|min|mins|minutes?|h|hrs?|hours?|days?|weeks?|"
    r"months?|years?|B|KB|MB|GB|TB|PB|KiB|MiB|GiB|TiB|kB|bytes?|Kbps|Mbps|Gbps|km|m|cm|mm|"
    r"kg|g|mg|lbs?|°C|°F|K|req/s|rps|qps|ops/s"
)
_QUANTITY = re.compile(
    r"(?<![\w.,])(?P<num>-?(?:" + _NUM + r"))\s?(?P<unit>" + _UNITS + r")(?![\w/%])"
)
_TRAILING = ".,;:!?)]}'\""


def extract_identifiers(text: str) -> list[Identifier]:
    """Every identifier-like token of ``text``, in order of position, none overlapping.

    Kinds are tried from the most specific (URL, UUID) to the least (quantity); a
    token inside one already found is not reported again.
    """
    found: list[Identifier] = []
    taken: list[tuple[int, int]] = []
    for kind, spans in _candidates(text):
        for start, end in spans:
            if any(start < e and s < end for s, e in taken):
                continue
            taken.append((start, end))
            found.append(Identifier(kind=kind, value=text[start:end], start=start, end=end))
    found.sort(key=lambda i: (i.start, i.end))
    return found


def _candidates(text: str) -> list[tuple[IdentifierKind, list[tuple[int, int]]]]:
    return [
        ("url", [_strip_trailing(text, m.start(), m.end()) for m in _URL.finditer(text)]),
        ("uuid", [m.span() for m in _UUID.finditer(text)]),
        ("date", [m.span() for m in _DATE.finditer(text)]),
        ("hash", [m.span() for m in _HEX.finditer(text) if _is_hash(text, m)]),
        ("path", [_strip_trailing(text, m.start(), m.end()) for m in _PATH.finditer(text)]),
        ("ticket", _tickets(text)),
        ("amount", [m.span() for m in _AMOUNT.finditer(text)]),
        ("quantity", [m.span() for m in _QUANTITY.finditer(text)]),
    ]


def _strip_trailing(text: str, start: int, end: int) -> tuple[int, int]:
    while end > start + 1 and text[end - 1] in _TRAILING:
        end -= 1
    return start, end


def _is_hash(text: str, match: re.Match[str]) -> bool:
    token = match.group()
    if not any(c.isdigit() for c in token):
        return False
    if len(token) >= 10:
        return True
    before, after = text[: match.start()], text[match.end() :]
    if before.endswith("#") or not any(c.isalpha() for c in token):
        return False
    return _HASH_WORDS.search(before[-60:]) is not None or _git_shaped(before, after)


def _git_shaped(before: str, after: str) -> bool:
    """``a1b2c3d..e4f5a6b``, ``repo@a1b2c3d``, or a ``git log --oneline`` line."""
    if before.endswith(".."):
        return True
    if before.endswith("@"):
        return re.match(r"\.[A-Za-z]", after) is None  # not an e-mail domain
    if _RANGE_AFTER.match(after):
        return True
    return _LINE_START.search(before[-20:] if len(before) > 20 else before) is not None and (
        re.match(r" +\S", after) is not None
    )


def _tickets(text: str) -> list[tuple[int, int]]:
    spans = [
        m.span() for m in _TICKET_HASH.finditer(text) if not _COLOUR_WORDS.search(text[: m.start()])
    ]
    for m in _TICKET_KEY.finditer(text):
        prefix = m.group(1)
        if prefix.rstrip("0123456789") in _STANDARDS or prefix in _STANDARDS:
            continue
        spans.append(m.span())
    return spans


# --- matching ---------------------------------------------------------------------


def identifier_in_evidence(identifier: Identifier | str, evidence_text: str) -> bool:
    """Whether ``evidence_text`` contains ``identifier`` by the rules of this module.

    A plain string is first classified with :func:`extract_identifiers` (a string
    that is not one identifier is matched verbatim).
    """
    ident = _classify(identifier) if isinstance(identifier, str) else identifier
    if ident is None:
        return _verbatim(str(identifier), evidence_text)
    if _verbatim(ident.value, evidence_text):
        return True
    if ident.kind == "hash":
        value = ident.value.lower()
        return any(
            h.startswith(value) or value.startswith(h) for h in _evidence_hashes(evidence_text)
        )
    if ident.kind in ("amount", "quantity", "date"):
        key = _normal_key(ident)
        return key is not None and key in _evidence_keys(evidence_text)
    return False


def _classify(value: str) -> Identifier | None:
    """A bare string as an identifier: a hex run is a hash even without context."""
    if _HEX.fullmatch(value) and any(c.isdigit() for c in value):
        return Identifier(kind="hash", value=value, start=0, end=len(value))
    found = extract_identifiers(value)
    return found[0] if len(found) == 1 and found[0].value == value else None


def _verbatim(value: str, text: str) -> bool:
    """``value`` occurs in ``text`` with neither edge glued to a longer alphanumeric run."""
    if not value:
        return False
    start = text.find(value)
    while start != -1:
        end = start + len(value)
        glued_left = start > 0 and value[0].isalnum() and text[start - 1].isalnum()
        glued_right = end < len(text) and value[-1].isalnum() and text[end].isalnum()
        if not glued_left and not glued_right:
            return True
        start = text.find(value, start + 1)
    return False


@lru_cache(maxsize=1024)
def _evidence_hashes(text: str) -> frozenset[str]:
    return frozenset(
        m.group().lower() for m in _HEX.finditer(text) if any(c.isdigit() for c in m.group())
    )


@lru_cache(maxsize=1024)
def _evidence_keys(text: str) -> frozenset[tuple[str, ...]]:
    keys = (_normal_key(i) for i in extract_identifiers(text))
    return frozenset(k for k in keys if k is not None)


def _normal_key(ident: Identifier) -> tuple[str, ...] | None:
    if ident.kind == "date":
        return _date_key(ident.value)
    if ident.kind == "amount":
        m = _AMOUNT.fullmatch(ident.value)
        if m is None:
            return None
        currency = m.group("sym") or m.group("code") or m.group("sym2") or m.group("code2")
        sign = "-" if (m.group("neg") or m.group("neg2")) else ""
        number = _normal_number(m.group("num") or m.group("num2"))
        return ("amount", _CURRENCY_ALIASES.get(currency, currency), sign + number)
    m = _QUANTITY.fullmatch(ident.value)
    if m is None:
        return None
    raw = m.group("num")
    sign, raw = ("-", raw[1:]) if raw.startswith("-") else ("", raw)
    return ("quantity", m.group("unit"), sign + _normal_number(raw))


_CURRENCY_ALIASES = {"€": "EUR", "£": "GBP"}
_GROUPING = ("'", " ", "\u00a0", "\u202f")


def _normal_number(raw: str) -> str:
    """The number without grouping; ``~`` + the spelling when the grouping is ambiguous."""
    text = raw
    for sep in _GROUPING:
        text = text.replace(sep, "")
    commas, dots = text.count(","), text.count(".")
    if commas and dots:
        group, decimal = (",", ".") if text.rfind(".") > text.rfind(",") else (".", ",")
        text = text.replace(group, "").replace(decimal, ".")
    elif commas > 1 or dots > 1:
        text = text.replace("," if commas else ".", "")
    elif commas + dots == 1:
        head, tail = text.split("," if commas else ".")
        if len(tail) == 3 and not head.startswith("0"):
            return "~" + text  # 1,200 is 1200 in English and 1.2 in German
        text = head + "." + tail
    return text.rstrip("0").rstrip(".") if "." in text else text


def _date_key(value: str) -> tuple[str, ...] | None:
    m = _DATE.fullmatch(value)
    if m is None:
        return None
    try:
        if m.group("iso"):
            y, mo, d = (int(p) for p in m.group("iso").split("-"))
        elif m.group("dmy"):
            y, mo, d = int(m.group("y1")), _month(m.group("m1")), int(m.group("dmy"))
        elif m.group("m2"):
            y, mo, d = int(m.group("y2")), _month(m.group("m2")), int(m.group("d2"))
        else:
            return None
        return ("date", date(y, mo, d).isoformat())
    except ValueError:
        return None


def _month(name: str) -> int:
    lowered = name.lower().rstrip(".")
    return next(i + 1 for i, full in enumerate(_MONTHS) if full.startswith(lowered[:3]))
