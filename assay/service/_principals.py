"""Principal names: one spelling per principal, and nothing a reader cannot see.

A principal is whom a token speaks for, and separation of duties asks whether the
principal deciding a run's calls is the one who started it. Compared code point by
code point, ``bob``, ``bob `` (a trailing space), ``Bob`` and ``bob`` in fullwidth
letters (U+FF42 U+FF4F U+FF42) are four principals, although a reviewer page shows
one person; and ``bob`` followed by a zero-width space shows as ``bob``, while a
right-to-left override shows the rest of a name backwards. So a principal's name
has three forms:

* **as given**, which is refused when a token is made if it is blank, longer than
  :data:`MAX_PRINCIPAL_CHARS`, or holds a character a terminal does not show as it
  is: control characters (Cc), format characters (Cf: zero-width characters, bidi
  controls, the soft hyphen), surrogates, private-use and unassigned code points,
  line and paragraph separators, and the invisible characters of other categories
  (variation selectors, the Hangul fillers, the blank Braille pattern);
* **as written** (:func:`written_principal`), what is stored and shown: NFKC
  (fullwidth letters, no-break and other compatibility spaces become their plain
  form), every run of whitespace one space, trimmed; case is kept as given;
* **its key** (:func:`principal_key`), what is compared: the written form without
  any character refused above, case-folded (NFKC after case folding, as Unicode's
  caseless matching asks). Two names are one principal when their keys are equal,
  so a name stored before these checks existed (``bob`` and a zero-width space)
  is still ``bob``.

Letters of another script that look like Latin ones (``bob`` with a Cyrillic o,
U+043E) are not folded: such a name is another principal.
"""

from __future__ import annotations

import unicodedata

__all__ = [
    "MAX_PRINCIPAL_CHARS",
    "principal_key",
    "principal_problem",
    "same_principal",
    "written_principal",
]

#: The longest principal name (the ``name`` and ``principal`` columns hold 200).
MAX_PRINCIPAL_CHARS = 200

#: Categories a terminal does not show as they are, and how a refusal names them.
_REFUSED = {
    "Cc": "a control character",
    "Cf": "a format character",
    "Cs": "a surrogate",
    "Co": "a private-use character",
    "Cn": "an unassigned code point",
    "Zl": "a line separator",
    "Zp": "a paragraph separator",
}

#: Invisible characters of other categories: the default-ignorable code points that
#: are not format characters (combining grapheme joiner, Hangul and halfwidth
#: fillers, Khmer inherent vowels, Mongolian and other variation selectors), and the
#: blank Braille pattern, which shows as a space that no trimming removes.
_INVISIBLE = frozenset(
    "\u034f\u115f\u1160\u17b4\u17b5\u180b\u180c\u180d\u180f\u2800\u3164\uffa0"
    + "".join(chr(c) for c in range(0xFE00, 0xFE10))
    + "".join(chr(c) for c in range(0xE0100, 0xE01F0))
)


def _refusal(char: str) -> str | None:
    """Why ``char`` may not be part of a principal's name, or ``None``. Spaces of
    every width pass (the written form folds them into one); tabs and newlines are
    control characters."""
    if char in _INVISIBLE:
        return "an invisible character"
    category = unicodedata.category(char)
    if category == "Zs":
        return None
    return _REFUSED.get(category)


def principal_problem(name: object, *, field: str = "name") -> str | None:
    """Why ``name`` cannot name a principal, or ``None`` when it can.

    The message names ``field``, the code point and where it is, never the value
    itself, so it is safe to print and to store."""
    if not isinstance(name, str):
        return f"{field} must be a string, not {type(name).__name__}"
    for index, char in enumerate(name):
        why = _refusal(char)
        if why is not None:
            label = unicodedata.name(char, "")
            return (
                f"{field} must show as it is written, with no control characters, format "
                f"characters or other invisible ones: it holds U+{ord(char):04X}"
                f"{' ' + label if label else ''} ({why}) at index {index}"
            )
    written = written_principal(name)
    if not written:
        return f"{field} must not be empty or blank"
    if max(len(name), len(written)) > MAX_PRINCIPAL_CHARS:
        return f"{field} is longer than {MAX_PRINCIPAL_CHARS} characters"
    return None


def written_principal(name: str) -> str:
    """``name`` as it is stored and shown: NFKC, each run of whitespace one space,
    trimmed, its case kept."""
    return " ".join(unicodedata.normalize("NFKC", name).split())


def principal_key(name: str) -> str:
    """What two names are compared by: the written form without the characters
    :func:`principal_problem` refuses, case-folded."""
    shown = "".join(char for char in unicodedata.normalize("NFKC", name) if _refusal(char) is None)
    return " ".join(unicodedata.normalize("NFKC", shown.casefold()).split())


def same_principal(first: str | None, second: str | None) -> bool:
    """Whether two names are one principal (``None``, no principal, is nobody)."""
    if first is None or second is None:
        return False
    return principal_key(first) == principal_key(second)
