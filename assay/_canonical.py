"""One canonical form of a value: what the gate grounds, the effect key names and a
repeat is recognised by.

An irreversible call is named twice: the gate decides whether its arguments are the
values its evidence states, and the effect key decides whether it repeats a call
already made. If the two read a value differently, an agent can spell a value so
that the gate accepts it as the evidence's and the key takes it for a new one
(``INV-4421`` and ``INV-4421`` with a zero-width space, a fullwidth digit or a
trailing space; ``3F9A2C1D7E8B`` and ``3f9a2c1d7e8b``). So both read values here:

* **text**: NFKC (fullwidth letters and digits, ligatures, no-break spaces become
  their plain form), every other decimal digit written as its ASCII digit
  (Arabic-Indic ``١٢`` as ``12``), invisible characters removed (format characters,
  category Cf, variation selectors, the other default-ignorable code points), dash
  look-alikes written ``-``, surrounding white space trimmed.
* **case**: folded where the kind of value is case-insensitive: hex digests and
  e-mail addresses. Other identifiers (``OPS-1234``, a path, a host or file name such
  as ``README.md``) keep their case, so a spelling the evidence does not use is not
  grounded by it.
* **numbers**: by value, as canonical JSON (RFC 8785) already writes them: ``129``,
  ``129.0`` and ``1.29e2`` are one number.

:func:`identifier_kind` says which strings are identifiers (one token holding a
digit or the punctuation of an id, a path, a host or an address; a hex run of at
least 7 digits), and :func:`occurs_in` whether one is written, whole, in a text read
the same way. Both the gate (:mod:`assay._values`) and the effect key
(``assay.tool_bus``) use these functions and nothing else.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from functools import lru_cache
from typing import Any, Literal, cast

__all__ = [
    "IdentifierKind",
    "canonical_text",
    "canonical_value",
    "control_characters",
    "identifier_kind",
    "occurs_in",
]

IdentifierKind = Literal["hash", "email", "host", "path", "id"]

#: Default-ignorable code points that are not format characters.
_IGNORABLE_NON_FORMAT = "\u034f\u115f\u1160\u17b4\u17b5\u3164\uffa0"
_VARIATION_SELECTORS = "".join(
    [chr(c) for c in range(0xFE00, 0xFE10)] + ["\u180b", "\u180c", "\u180d", "\u180f"]
)
#: Dashes a reader takes for ``-`` (Unicode's Pd and the minus sign).
_DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d"

_HEX = re.compile(r"[0-9a-f]{7,}")
_EMAIL = re.compile(r"[^@\s]+@[a-z0-9-]+(?:\.[a-z0-9-]+)+")
_HOST = re.compile(r"(?=.*[a-z])[a-z0-9-]+(?:\.[a-z0-9-]+)+")
#: What an identifier is written with besides letters and digits.
_ID_PUNCTUATION = frozenset("-_./@:#+~")
_MAX_IDENTIFIER_CHARS = 512


@lru_cache(maxsize=4096)
def _char(c: str) -> str:
    """The canonical spelling of one code point (possibly empty, possibly several)."""
    if c.isascii():
        return c
    category = unicodedata.category(c)
    if category == "Cf" or c in _IGNORABLE_NON_FORMAT or c in _VARIATION_SELECTORS:
        return ""
    if 0xE0100 <= ord(c) <= 0xE01EF:  # variation selectors supplement
        return ""
    if c in _DASHES:
        return "-"
    if category == "Nd":
        return str(unicodedata.decimal(c))
    out = unicodedata.normalize("NFKC", c)
    return "".join(_char(x) if not x.isascii() and x != c else x for x in out)


def canonical_text(text: str) -> str:
    """``text`` as values are compared (see the module docstring), not trimmed."""
    if text.isascii():
        return text
    return unicodedata.normalize("NFKC", "".join(_char(c) for c in text))


def identifier_kind(value: str) -> IdentifierKind | None:
    """What kind of identifier the canonical string ``value`` is, or ``None`` for a
    word, a phrase or a number (``high``, ``the rate``, ``42``)."""
    if not value or len(value) > _MAX_IDENTIFIER_CHARS or any(c.isspace() for c in value):
        return None
    folded = value.lower()
    if _HEX.fullmatch(folded):
        return "hash"
    if _EMAIL.fullmatch(folded):
        return "email"
    if "/" in value or "\\" in value:
        return "path"
    if _HOST.fullmatch(folded) and not any(c.isdigit() for c in folded.rsplit(".", 1)[-1]):
        return "host"
    if value.isdigit():
        return None  # a bare number is a number: the value checks read it
    has_digit = any(c.isdigit() for c in value)
    has_punct = any(c in _ID_PUNCTUATION for c in value)
    if (has_digit or has_punct) and any(c.isalnum() for c in value):
        return "id"
    return None


def _folds(kind: IdentifierKind | None) -> bool:
    return kind in ("hash", "email")


def canonical_value(value: Any) -> Any:
    """A JSON value in canonical form: strings as :func:`canonical_text`, trimmed, and
    case-folded where their kind is case-insensitive; arrays and objects element by
    element (keys included); numbers and booleans as they are (canonical JSON writes
    numbers by value)."""
    if isinstance(value, str):
        text = canonical_text(value).strip()
        return text.lower() if _folds(identifier_kind(text)) else text
    if isinstance(value, list):
        return [canonical_value(v) for v in cast(list[Any], value)]
    if isinstance(value, Mapping):
        items = cast(Mapping[str, Any], value).items()
        return {canonical_value(k): canonical_value(v) for k, v in items}
    return value


def control_characters(value: str, *, multiline: bool = False) -> list[str]:
    """The control characters (category Cc) in ``value``, as ``U+XXXX``; tab, line
    feed and carriage return are allowed where ``multiline``."""
    allowed = "\t\n\r" if multiline else ""
    found = (c for c in value if unicodedata.category(c) == "Cc" and c not in allowed)
    return [f"U+{ord(c):04X}" for c in dict.fromkeys(found)]


def _glued(text: str, at: int, step: int) -> bool:
    """Whether the character at ``at`` continues an identifier that ends (or starts)
    next to it: a letter, a digit or ``_``, or id punctuation followed (or preceded)
    by one, so ``INV-4421`` is not in ``INV-4421-A`` and ``4421`` is not in it."""
    if not 0 <= at < len(text):
        return False
    c = text[at]
    if c.isalnum() or c == "_":
        return True
    beyond = at + step
    return c in "-./@" and 0 <= beyond < len(text) and text[beyond].isalnum()


def occurs_in(
    value: str, text: str, *, kind: IdentifierKind | None = None, prefix_ok: bool = False
) -> bool:
    """Whether the canonical identifier ``value`` is written whole in ``text``,
    compared in canonical form (case-folded for a case-insensitive ``kind``). A hash
    of at least 7 digits may, where ``prefix_ok``, be the start of a longer one in
    ``text`` (git's short form); otherwise it must be the whole hash."""
    if not value:
        return False
    haystack = canonical_text(text)
    needle = value
    if _folds(kind):
        haystack, needle = haystack.lower(), needle.lower()
    start = haystack.find(needle)
    while start != -1:
        end = start + len(needle)
        left = _glued(haystack, start - 1, -1)
        right = _glued(haystack, end, 1)
        if kind == "hash" and prefix_ok and right and haystack[end].lower() in "0123456789abcdef":
            right = _hex_run_continues(haystack, end)
        if not left and not right:
            return True
        start = haystack.find(needle, start + 1)
    return False


def _hex_run_continues(text: str, end: int) -> bool:
    """After a hash prefix: glued only if the hex run goes on into a non-hex letter."""
    i = end
    while i < len(text) and text[i].lower() in "0123456789abcdef":
        i += 1
    return _glued(text, i, 1)
