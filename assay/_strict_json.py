"""Reading JSON that a person wrote (a policy, an eval suite, a case's evidence file),
strictly: what the standard parser would accept silently is refused with a reason.

``json.loads`` keeps the last of two equal keys, reads ``NaN`` and ``Infinity``,
turns ``1e999`` into infinity, and raises ``RecursionError`` (not a parse error) on
text nested a few thousand deep. Each of those is a mistake in a file a reviewer
reads, and each reader of such files refuses them the same way through
:func:`loads_strict`; the caller words the refusal in its own error (a policy's
``InvalidPolicy``, a suite's located problem).

This module imports nothing from assay: it sits at the bottom of the layers.
"""

from __future__ import annotations

import json
import math
from typing import Literal

__all__ = ["JsonTextError", "loads_strict"]

Problem = Literal["syntax", "duplicate_key", "not_finite", "too_deep"]

#: An integer with more digits than this overflows every float a reader may turn
#: it into (the largest double is about 1.8e308).
_MAX_INT_DIGITS = 308


class JsonTextError(ValueError):
    """Why a JSON text is refused: ``problem`` says which rule, ``message`` how,
    ``token`` the offending key or number, ``line`` and ``column`` (1-based) where,
    when the parser knows."""

    def __init__(
        self,
        problem: Problem,
        message: str,
        *,
        token: str | None = None,
        line: int | None = None,
        column: int | None = None,
    ) -> None:
        super().__init__(message)
        self.problem: Problem = problem
        self.message = message
        self.token = token
        self.line = line
        self.column = column


def loads_strict(text: str) -> object:
    """The data of a JSON text; :class:`JsonTextError` for a syntax error, a key given
    twice in one object, a number that is not finite (``NaN``, ``Infinity``,
    ``1e999``, an integer of more than 308 digits), or nesting too deep to parse."""
    try:
        return json.loads(
            text,
            object_pairs_hook=_unique_keys,
            parse_constant=_refuse_constant,
            parse_float=_finite_float,
            parse_int=_finite_int,
        )
    except json.JSONDecodeError as exc:
        raise JsonTextError("syntax", exc.msg, line=exc.lineno, column=exc.colno) from None
    except RecursionError:
        raise JsonTextError("too_deep", "nested too deeply to read") from None


def _unique_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    data: dict[str, object] = {}
    for key, value in pairs:
        if key in data:
            raise JsonTextError("duplicate_key", f"the key {key!r} is given twice", token=key)
        data[key] = value
    return data


def _not_finite(token: str) -> JsonTextError:
    shown = token if len(token) <= 24 else token[:20] + "..."
    return JsonTextError("not_finite", f"{shown} is not a finite number", token=token)


def _refuse_constant(token: str) -> object:
    raise JsonTextError("not_finite", f"{token} is not JSON", token=token)


def _finite_int(token: str) -> int:
    if len(token.lstrip("-")) > _MAX_INT_DIGITS:
        raise _not_finite(token)
    return int(token)


def _finite_float(token: str) -> float:
    value = float(token)
    if not math.isfinite(value):
        raise _not_finite(token)
    return value
