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

Tokens are found in the search form of the text and compared in its matching form
(:mod:`assay.gate._unicode`): a fullwidth ``INV-4421``, an NBSP or a non-breaking
hyphen is the identifier it looks like, a zero-width character inside one is not
there, and a Cyrillic or Greek look-alike is found as an identifier but is never
equal to the ASCII one. Reported values and offsets are those of the text as given.

Matching (:func:`identifier_in_evidence`) is verbatim, with the token's edges not
glued to a longer alphanumeric run (``INV-44`` is not in ``INV-4421``; an ASCII
token next to letters of another script, as in Chinese or Japanese prose, is not
glued to them), plus three rules where no reading is ambiguous: a hash matches a
hash in the evidence that it is a prefix or an extension of (both at least 7
digits, case-insensitive); amounts and quantities match when currency (``€``=
``EUR``, ``£``=``GBP``; ``$`` is not ``USD``, it is also AUD, CAD…), unit and value
agree, where thousands separators are dropped only when unambiguous (apostrophes
and spaces always; commas or dots only with two or more groups or a decimal part
of the other kind — ``1,200`` alone stays verbatim, it is 1.2 in half of Europe);
and ISO and written-month dates match each other (slash dates are only ever
verbatim: 03/01 is March in the US and January elsewhere).

What is derived from an evidence text, and the identifiers of a claim's text, are
cached by the text's digest, within a byte bound (:mod:`assay.gate._digest_cache`),
never by the text itself.
"""

from __future__ import annotations

import sys
import unicodedata
from bisect import bisect_left
from dataclasses import dataclass
from datetime import date

from assay.gate._digest_cache import DigestCache
from assay.gate._patterns import AMOUNT, DATE, HEX, MONTHS, QUANTITY, Span, find
from assay.gate._records import Identifier, IdentifierKind
from assay.gate._unicode import Normalised, normalise

__all__ = [
    "CLAIM_CACHE",
    "EVIDENCE_CACHE",
    "Evidence",
    "evidence",
    "expanded_characters",
    "extract_identifiers",
    "found_in",
    "identifier_in_evidence",
    "identifiers_of",
]


def extract_identifiers(text: str) -> list[Identifier]:
    """Every identifier-like token of ``text``, in order of position, none overlapping.

    Kinds are tried from the most specific (URL, UUID) to the least (quantity); a
    token inside one already found is not reported again. Cached by the text's digest
    (:data:`CLAIM_CACHE`): the gate and then the verifier read the same claim texts.
    """
    return list(CLAIM_CACHE.get(text))


def _extracted(text: str) -> tuple[Identifier, ...]:
    return tuple(identifiers_of(normalise(text)))


def _extracted_size(found: tuple[Identifier, ...]) -> int:
    return sys.getsizeof(found) + sum(sys.getsizeof(i.value) + 120 for i in found)


#: Identifiers found in texts (claims, propositions, replies), by SHA-256 of the
#: text, at most 8 MiB.
CLAIM_CACHE: DigestCache[tuple[Identifier, ...]] = DigestCache(
    _extracted, _extracted_size, max_bytes=8 * 1024 * 1024
)


def identifiers_of(norm: Normalised) -> list[Identifier]:
    """:func:`extract_identifiers` of an already normalised text."""
    return [_identifier(norm, span) for span in find(norm.search)]


def _identifier(norm: Normalised, span: Span) -> Identifier:
    kind, start, end = span
    start, end = norm.original_span(start, end)
    return Identifier(kind=kind, value=norm.original[start:end], start=start, end=end)


# --- evidence -----------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Evidence:
    """What matching needs of one evidence text, without the text itself.

    ``text`` is the matching form where it differs from the text as given (``None``
    otherwise: the caller has that). ``hashes`` are its hex runs, lower-cased and
    sorted; ``keys`` the normal forms of its amounts, quantities and dates.
    """

    text: str | None
    hashes: tuple[str, ...]
    hash_set: frozenset[str]
    keys: frozenset[tuple[str, ...]]
    nbytes: int


def index_evidence(text: str) -> Evidence:
    norm = normalise(text)
    spans = find(norm.search)
    hashes = sorted({m.group().lower() for m in HEX.finditer(norm.text) if _has_digit(m.group())})
    keys = frozenset(
        k for kind, s, e in spans if (k := _normal_key(kind, norm.text[s:e])) is not None
    )
    # Never the text itself: an equal matching form is left out, the caller has it.
    matching = None if norm.text == text else norm.text
    nbytes = sys.getsizeof(matching) if matching is not None else 0
    nbytes += sum(2 * sys.getsizeof(h) for h in hashes)
    nbytes += sum(sys.getsizeof(k) + sum(sys.getsizeof(p) for p in k) for k in keys)
    nbytes += 64 * (2 * len(hashes) + len(keys))  # the containers' slots
    return Evidence(
        text=matching,
        hashes=tuple(hashes),
        hash_set=frozenset(hashes),
        keys=keys,
        nbytes=nbytes,
    )


#: Evidence derived from texts, by SHA-256 of the text, at most 32 MiB.
EVIDENCE_CACHE: DigestCache[Evidence] = DigestCache(index_evidence, lambda e: e.nbytes)


def evidence(text: str) -> tuple[str, Evidence]:
    """The matching form of an evidence text and what was derived from it (cached)."""
    derived = EVIDENCE_CACHE.get(text)
    return (derived.text if derived.text is not None else text), derived


# --- matching -----------------------------------------------------------------------


def identifier_in_evidence(identifier: Identifier | str, evidence_text: str) -> bool:
    """Whether ``evidence_text`` contains ``identifier`` by the rules of this module.

    A plain string is first classified with :func:`extract_identifiers` (a string
    that is not one identifier is matched verbatim).
    """
    ident = _classify(identifier) if isinstance(identifier, str) else identifier
    matching, derived = evidence(evidence_text)
    if ident is None:
        return _verbatim(normalise(str(identifier)).text, matching)
    return found_in(ident, matching, derived)


def expanded_characters(value: str) -> str:
    """The characters of ``value`` that NFKC writes as several (``¼`` as ``1\u20444``).

    An identifier holding one is never matched: its compared form runs past what the
    extractor found (``$¼0`` is read as ``$1``, then compared as ``$1\u20444``), and it
    would equate ``EUR 97¼`` with ``EUR 971``.
    """
    if value.isascii():
        return ""
    found = (c for c in value if len(unicodedata.normalize("NFKC", c)) > 1)
    return "".join(dict.fromkeys(found))


def found_in(ident: Identifier, matching: str, derived: Evidence) -> bool:
    """:func:`identifier_in_evidence` against an evidence text already prepared."""
    if expanded_characters(ident.value):
        return False
    value = normalise(ident.value).text
    if _verbatim(value, matching):
        return True
    if ident.kind == "hash":
        return _hash_in(value.lower(), derived)
    if ident.kind in ("amount", "quantity", "date"):
        key = _normal_key(ident.kind, value)
        return key is not None and key in derived.keys
    return False


def _hash_in(value: str, derived: Evidence) -> bool:
    """A hash of the evidence starts with ``value``, or ``value`` extends one."""
    i = bisect_left(derived.hashes, value)
    if i < len(derived.hashes) and derived.hashes[i].startswith(value):
        return True
    return any(value[:n] in derived.hash_set for n in range(7, min(len(value), 64) + 1))


def _has_digit(token: str) -> bool:
    return any(c.isdigit() for c in token)


def _classify(value: str) -> Identifier | None:
    """A bare string as an identifier: a hex run is a hash even without context."""
    search = normalise(value).search
    if HEX.fullmatch(search) and _has_digit(search):
        return Identifier(kind="hash", value=value, start=0, end=len(value))
    found = extract_identifiers(value)
    return found[0] if len(found) == 1 and found[0].value == value else None


def _verbatim(value: str, text: str) -> bool:
    """``value`` occurs in ``text`` with neither edge glued to a longer alphanumeric run.

    Letters and digits glue only within the same kind of writing: ``INV-44`` is not
    in ``INV-4421``, but ``INV-4421`` is in ``请求书INV-4421已付``.
    """
    if not value:
        return False
    start = text.find(value)
    while start != -1:
        end = start + len(value)
        glued_left = start > 0 and _glued(text[start - 1], value[0])
        glued_right = end < len(text) and _glued(value[-1], text[end])
        if not glued_left and not glued_right:
            return True
        start = text.find(value, start + 1)
    return False


def _glued(a: str, b: str) -> bool:
    return a.isalnum() and b.isalnum() and a.isascii() == b.isascii()


# --- normal forms of amounts, quantities and dates ---------------------------------


def _normal_key(kind: IdentifierKind, value: str) -> tuple[str, ...] | None:
    """The comparable form of an amount, quantity or date, from its matching form."""
    if kind == "date":
        return _date_key(value)
    if kind == "amount":
        m = AMOUNT.fullmatch(value)
        if m is None:
            return None
        currency = m.group("sym") or m.group("code") or m.group("sym2") or m.group("code2")
        sign = "-" if (m.group("neg") or m.group("neg2")) else ""
        number = _normal_number(m.group("num") or m.group("num2"))
        return ("amount", _CURRENCY_ALIASES.get(currency, currency), sign + number)
    if kind != "quantity":
        return None
    m = QUANTITY.fullmatch(value)
    if m is None:
        return None
    raw = m.group("num")
    sign, raw = ("-", raw[1:]) if raw.startswith("-") else ("", raw)
    unit = m.group("unit").replace("µ", "μ")
    return ("quantity", unit, sign + _normal_number(raw))


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
    m = DATE.fullmatch(value)
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
    return next(i + 1 for i, full in enumerate(MONTHS) if full.startswith(lowered[:3]))
