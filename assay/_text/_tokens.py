"""Tokens: the words and numbers of a text, each kind read by one pattern here.

A check that compares words must cut them as the thing it compares is written: an
e-mail address is one name, ``node-a3`` one cell of a table, ``3.5`` one number,
``merged_by`` two words of a field's name. So there is more than one kind of token,
and each kind is named, documented and tested here, not re-written inside the checks
(two checks that cut alike read the same kind). Every kind's pattern is exactly the
one its checks were tuned with; making two kinds one would move verdicts, which is
why they stay apart.

========== ================================================ ==============================
kind       a token is                                       read by
========== ================================================ ==============================
chunks     a run of non-blank characters                    word counts, evidence units,
                                                            long records cut into pieces
letters    a run of ASCII letters                           action verbs, "-able" flags,
                                                            party roles, a field's words
word_chars a run of word characters (``\\w``)               look-alike letters in a word
stem_words lower-case letters and digits, joined by one     word stems (``3.5``,
           ``.``, ``,`` or ``/`` (of lower-cased text)      ``1,200`` and ``24/7`` whole)
hyphenated letters, with inner hyphens                      the words evidence writes,
                                                            compounds whole and in parts
names      word characters and ``.@'-``                     names and handles in a claim
                                                            (``d.varga``, ``O'Neil``)
terms      word characters and ``.%€$£/-``                  paraphrase overlap (amounts
                                                            and units stay one term)
args       word characters with inner ``.`` and ``-``       typed arguments (``P-1``)
cells      ASCII letters and digits, with inner ``._-``     table cells and row keys
runs       word characters and hyphens                      whole words as
                                                            ``(?<![\\w-])w(?![\\w-])``
                                                            finds them
row_words  a word that may name a row: three or more        the words of a claim the
           letters, digits and hyphens starting with a      arithmetic counts records by
           letter; digits then a letter; capitals
key_words  the words of a camel- or snake-case name         a JSON field's name
numbers    a number standing alone: optional sign,          numbers a claim states and its
           digits, thousands commas, a decimal part         premise must write
amounts    a number not part of an identifier               whether a claim states one
========== ================================================ ==============================
"""

from __future__ import annotations

import re
from typing import Literal

__all__ = ["TokenKind", "numbers_in", "token_pattern", "tokens"]

TokenKind = Literal[
    "chunks",
    "letters",
    "word_chars",
    "stem_words",
    "hyphenated",
    "names",
    "terms",
    "args",
    "cells",
    "runs",
    "row_words",
    "key_words",
    "numbers",
    "amounts",
]

_PATTERNS: dict[TokenKind, re.Pattern[str]] = {
    "chunks": re.compile(r"\S+"),
    "letters": re.compile(r"[A-Za-z]+"),
    "word_chars": re.compile(r"\w+"),
    "stem_words": re.compile(r"[a-z0-9]+(?:[.,/][a-z0-9]+)*"),
    "hyphenated": re.compile(r"[A-Za-z]+(?:-[A-Za-z]+)*"),
    "names": re.compile(r"[\w.@'-]+"),
    "terms": re.compile(r"[\w.%€$£/-]+"),
    "args": re.compile(r"\w(?:[\w.-]*\w)?"),
    "cells": re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"),
    "runs": re.compile(r"[\w-]+"),
    "row_words": re.compile(r"[A-Za-z][A-Za-z0-9-]{2,}|\d+[A-Za-z][A-Za-z0-9-]*|[A-Z]{2,}\d*"),
    "key_words": re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])"),
    "numbers": re.compile(r"(?<![\w.])[-+]?\d[\d,]*(?:\.\d+)?(?![\w])"),
    "amounts": re.compile(r"(?<![\w./-])\d[\d,.]*(?![\w/-])"),
}


def token_pattern(kind: TokenKind) -> re.Pattern[str]:
    """The compiled pattern of one kind of token (for ``finditer`` with bounds, or
    ``sub``)."""
    return _PATTERNS[kind]


def tokens(text: str, kind: TokenKind) -> list[str]:
    """The tokens of ``kind`` in ``text``, in order."""
    return _PATTERNS[kind].findall(text)


def numbers_in(text: str) -> list[str]:
    """The numbers written in ``text``, normalised (thousands separators and a plus
    sign dropped)."""
    return [m.group(0).replace(",", "").lstrip("+") for m in _PATTERNS["numbers"].finditer(text)]
