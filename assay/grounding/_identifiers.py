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
* ``email`` (compared without case) and ``ip`` (an IPv4 address: four numbers,
  each at most 255), which an agent that confuses one recipient or host for another
  writes as fluently as the right one.
* ``uuid``, ``url`` (http/https), ``path`` (``/etc/hosts``, ``./run.sh``,
  ``~/x``, ``src/app/main.py``: a slash and either a leading anchor or an
  extension, so ``and/or`` and ``km/h`` stay out).
* ``ticket`` — ``#123`` (digits only, not after colour/color/fill) and
  ``INV-4421``-style keys (capitals, a dash, digits; ``UTF-8``, ``SHA-256`` and
  similar standards names are not tickets).
* ``amount`` (a number with a currency: ``€1.75``, ``EUR 610/h``), ``quantity`` (a
  number with a unit, a percentage or a count of something: ``250 ms``, ``99.9%``,
  ``120 units``, ``three orders``) and ``date`` (a date or time in any common written
  form), as :mod:`assay.grounding` reads them, with any hedge before them (``about
  9.8 tonnes``).

Tokens are found in the search form of the text and compared in its matching form
(:mod:`assay.grounding._unicode`): a fullwidth ``INV-4421``, an NBSP or a non-breaking
hyphen is the identifier it looks like, a zero-width character inside one is not
there, and a Cyrillic or Greek look-alike is found as an identifier but is never
equal to the ASCII one. Reported values and offsets are those of the text as given.

Matching (:func:`identifier_in_evidence`) is verbatim, with the token's edges not
glued to a longer alphanumeric run (``INV-44`` is not in ``INV-4421``; an ASCII
token next to letters of another script, as in Chinese or Japanese prose, is not
glued to them), plus two rules where no reading is ambiguous: a hash matches a
hash in the evidence that it is a prefix or an extension of (both at least 7
digits, case-insensitive); a ``#4190`` matches a JSON field whose name says it
numbers something (``number``, ``id``, ``issue``, ``pull_requests``…) and whose
value is exactly ``4190``; and an amount, quantity or date matches the same value
written in another form, as :mod:`assay.grounding` decides (``2.0 hours`` and
``2.0 h``, ``€1.75`` and a JSON ``amount: 1.75`` beside ``currency: EUR``, ``31
October 2024`` and ``2024-10-31``; never ``$`` and ``USD`` unless the evidence says
USD, per second and per minute, ``1,240`` and ``1,420``, or a numeric date such as
``03/01/2024`` that could be read both ways, which matches only itself).
:func:`computed_in` accepts, in addition, an amount or quantity that the claim says
is computed (``in total``, ``more than``…) and that is exactly that computation over
the cited evidence (:mod:`assay.grounding`'s checked arithmetic).

What is derived from an evidence text, and the identifiers of a claim's text, are
cached by the text's digest, within a byte bound (:mod:`assay.grounding._digest_cache`),
never by the text itself.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, replace

from assay._text import token_pattern, word_set
from assay.grounding._arithmetic import Computation, Miscalculation
from assay.grounding._check import (
    ClaimValue,
    check_indexed,
    claim_values,
    occurrence_of,
    read_as,
)
from assay.grounding._digest_cache import DigestCache
from assay.grounding._evidence import EvidenceIndex
from assay.grounding._evidence import index_evidence as index_values
from assay.grounding._patterns import HEX, Identifier, Span, find
from assay.grounding._unicode import Normalised, normalise

__all__ = [
    "CLAIM_CACHE",
    "EVIDENCE_CACHE",
    "Evidence",
    "computed_in",
    "describe_computation",
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
    """What matching needs of one evidence text.

    ``text`` is the matching form where it differs from the text as given (``None``
    otherwise: the caller has that). ``hashes`` are its hex runs, lower-cased and
    sorted; ``values`` its amounts, quantities and dates as :mod:`assay.grounding`
    reads them (from the matching form).
    """

    text: str | None
    hashes: tuple[str, ...]
    hash_set: frozenset[str]
    values: EvidenceIndex
    nbytes: int


def prepare_evidence(text: str) -> Evidence:
    """What matching an identifier needs of one evidence text: its matching form, its
    hex runs, and its values (:func:`~assay.grounding.index_evidence` of the matching
    form)."""
    norm = normalise(text)
    hashes = sorted({m.group().lower() for m in HEX.finditer(norm.text) if _has_digit(m.group())})
    values = index_values(norm.text)
    # The matching form only where it differs: the caller has the text itself.
    matching = None if norm.text == text else norm.text
    nbytes = sys.getsizeof(matching) if matching is not None else 0
    nbytes += sum(2 * sys.getsizeof(h) for h in hashes) + 64 * 2 * len(hashes)
    nbytes += sys.getsizeof(values.text) if values.text is not None else 0
    nbytes += 400 * len(values.values) + 300 * len(values.dates) + 80 * len(values.records)
    return Evidence(
        text=matching,
        hashes=tuple(hashes),
        hash_set=frozenset(hashes),
        values=values,
        nbytes=nbytes,
    )


#: Evidence derived from texts, by SHA-256 of the text, at most 32 MiB.
EVIDENCE_CACHE: DigestCache[Evidence] = DigestCache(prepare_evidence, lambda e: e.nbytes)


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
    # A bare count ("2 of the 5") is a value, not a token: "tickets[2]" does not state it.
    if not (ident.kind == "quantity" and value.isdigit()) and _verbatim(value, matching):
        return True
    if ident.kind == "hash":
        return _hash_in(value.lower(), derived)
    if ident.kind == "email":  # e-mail addresses are compared without case
        return _verbatim(value.lower(), matching.lower())
    if ident.kind == "ticket" and value.startswith("#"):
        return _numbered_field(value[1:], matching)
    if ident.kind in ("amount", "quantity", "date"):
        read = _value_of(value, derived.values)
        return read is not None and occurrence_of(read, [derived.values]) is not None
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


#: Words of a field name that say its value numbers something (``number``,
#: ``issue_id``, ``linked_pull_requests``), so ``#4190`` may be written as its bare
#: number there (``words/numbering-words.txt``).
_NUMBERING_WORDS = word_set("numbering-words")
_FIELD_LINE = re.compile(r"^(?P<path>[^\n:]+): (?P<value>[^\n]*)$", re.MULTILINE)
_PATH_WORD = token_pattern("letters")  # of a lower-cased path


def _numbered_field(digits: str, text: str) -> bool:
    """Whether a field of a JSON view whose name says it numbers something holds
    exactly ``digits``: ``#4190`` is ``linked_pull_requests[0]: 4190`` or ``number:
    4190``, never ``amount: 4190`` or ``number: 41900``."""
    if not digits.isdigit():
        return False
    for line in _FIELD_LINE.finditer(text):
        if line["value"].strip() != digits:
            continue
        words = set(_PATH_WORD.findall(line["path"].rsplit(".", 1)[-1].lower()))
        if words & _NUMBERING_WORDS:
            return True
    return False


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
        # ``$12`` is not written in ``CA$12``: letters before a sign name its currency.
        glued_left = glued_left or (
            start > 0
            and value[0] in _SIGNS
            and text[start - 1].isascii()
            and text[start - 1].isalpha()
        )
        glued_right = end < len(text) and _glued(value[-1], text[end])
        if not glued_left and not glued_right:
            return True
        start = text.find(value, start + 1)
    return False


#: Currency signs, which letters right before them qualify (``CA$``, ``US$``).
_SIGNS = frozenset("$€£¥₹")


def _glued(a: str, b: str) -> bool:
    return a.isalnum() and b.isalnum() and a.isascii() == b.isascii()


# --- values: another written form, or a computation --------------------------------


def _value_of(value: str, index: EvidenceIndex) -> ClaimValue | None:
    """``value`` (an amount, quantity or date identifier) as one grounding value, an
    ambiguous number read as ``index``'s evidence writes numbers (:func:`read_as`)."""
    found = claim_values(value, read_as([index]))
    return found[0] if len(found) == 1 else None


def computed_in(
    ident: Identifier, text: str, evidence: Sequence[tuple[str, Evidence]]
) -> Computation | Miscalculation | None:
    """How the amount, quantity or date ``ident`` of ``text`` is computed from the cited
    ``evidence`` (prepared by :func:`evidence`), where ``text`` says it is computed:
    a :class:`~assay.grounding.Computation` accepts it; a
    :class:`~assay.grounding.Miscalculation` names the value the computation the
    text describes gives instead; ``None`` where neither applies."""
    if ident.kind not in ("amount", "quantity", "date") or not evidence:
        return None
    claim = normalise(text).text
    target = normalise(ident.value).text
    for check in check_indexed(claim, [(text, derived.values) for text, derived in evidence]):
        if check.value.text != target:
            continue
        return check.computation or check.miscalculation
    return None


def computation_in(
    ident: Identifier, text: str, evidence_texts: Sequence[str]
) -> Computation | Miscalculation | None:
    """:func:`computed_in` over plain evidence texts, with each operand's span in the
    text it came from (``evidence_texts[operand.document]``), not in its matching form."""
    result = computed_in(ident, text, [evidence(t) for t in evidence_texts])
    if result is None:
        return None

    def located(computation: Computation) -> Computation:
        operands = tuple(
            replace(o, start=span[0], end=span[1])
            for o in computation.operands
            for span in [normalise(evidence_texts[o.document]).original_span(o.start, o.end)]
        )
        return replace(computation, operands=operands)

    if isinstance(result, Miscalculation):
        return replace(result, expected=located(result.expected))
    return located(result)


def describe_computation(result: Computation | Miscalculation) -> str:
    """The computation, for a person: ``the sum of 1040 and 216 (1256)``."""
    computation = result.expected if isinstance(result, Miscalculation) else result
    if computation.operation == "date_shift":
        start, shift = computation.operands
        days = f"{shift.value.normalize():f}"
        return f"{start.text} plus {days} days in the cited evidence is {computation.detail}"
    operands = [o.text for o in computation.operands]
    shown = ", ".join(operands[:8]) + (", …" if len(operands) > 8 else "")
    what = {
        "sum": "the sum of",
        "difference": "the difference of",
        "product": "the product of",
        "ratio": "the ratio of",
        "percentage": "the percentage of",
        "percent_of": "the share of",
        "count": "the count of",
        "elapsed": "the time between",
        "date_shift": "the date shifted from",
        "maximum": "the largest value of",
        "minimum": "the smallest value of",
    }[computation.operation]
    if computation.operation in ("maximum", "minimum"):
        shown = computation.detail
    over = f"{what} {shown}" if shown else f"{what} {computation.detail}"
    return f"{over} in the cited evidence is {computation.result.normalize():f}"
