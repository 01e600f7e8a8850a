"""The word lists the checks read, loaded from the data files in ``assay/_text/words/``.

A list of words is data, not code: a negation, an antonym or a cue added to a file
changes what every check that reads the list finds, and each list has its own tests
(well formed, no duplicates, written as its readers expect, and a test per list that
shows a check using it). Two formats:

* ``NAME.txt``: one entry a line (a word, or a phrase of words separated by single
  spaces); blank lines and lines starting with ``#`` are comments. Read with
  :func:`word_list` (in file order) or :func:`word_set`.
* ``NAME.toml``: a list that has structure (words by the direction they point, pairs
  of opposites, a clipped word and the word it clips). Read with :func:`word_table`;
  its arrays come back as tuples and its tables as read-only mappings, so that no
  reader can change what the next one reads.

Each file is read once per process (``functools.cache``). :func:`alternation` writes
a list as the body of a regular expression (each entry escaped, a space between two
words matching any run of blanks), for checks that look for its words in a text.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Mapping
from functools import cache
from importlib.resources import files
from types import MappingProxyType
from typing import Any

__all__ = ["WORDS_PACKAGE", "alternation", "word_list", "word_set", "word_table"]

#: The package whose ``words`` folder holds the lists.
WORDS_PACKAGE = "assay._text"
_NAME = re.compile(r"[a-z][a-z0-9-]*")


def _read(name: str, suffix: str) -> str:
    if not _NAME.fullmatch(name):
        raise ValueError(f"not a word list's name: {name!r}")
    return (files(WORDS_PACKAGE) / "words" / f"{name}{suffix}").read_text(encoding="utf-8")


@cache
def word_list(name: str) -> tuple[str, ...]:
    """The entries of ``words/NAME.txt``, in file order, comments and blank lines left
    out (each entry stripped)."""
    lines = (line.strip() for line in _read(name, ".txt").splitlines())
    return tuple(line for line in lines if line and not line.startswith("#"))


@cache
def word_set(name: str) -> frozenset[str]:
    """The entries of ``words/NAME.txt`` as a set."""
    return frozenset(word_list(name))


@cache
def word_table(name: str) -> Mapping[str, Any]:
    """``words/NAME.toml``, its arrays as tuples and its tables as read-only mappings."""
    return _frozen(tomllib.loads(_read(name, ".toml")))


def _frozen(value: Any) -> Any:
    if isinstance(value, dict):
        return MappingProxyType({k: _frozen(v) for k, v in value.items()})  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)  # pyright: ignore[reportUnknownVariableType]
    return value


def alternation(entries: Iterable[str]) -> str:
    """The entries as alternatives of a regular expression, longest first: each
    escaped, the space between two words of a phrase matching any run of blanks
    (``pushed back`` as ``pushed\\s+back``). Between word boundaries at most one
    entry can match at a place, so their order changes nothing but speed."""
    ordered = sorted(set(entries), key=lambda e: (-len(e), e))
    return "|".join(r"\s+".join(re.escape(word) for word in e.split(" ")) for e in ordered)
