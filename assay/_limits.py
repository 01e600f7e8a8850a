"""Limits on what callers hand to assay, and the small validators that apply them.

Every field a caller (or an agent) fills has one limit here, checked before anything
is written, so that a bad value is refused with a documented error instead of
failing half-way in a driver, in ``rfc8785`` or in the interpreter's recursion limit.
Nesting depth is always checked first and without recursion, so a 100 000-deep value
cannot exhaust the stack before it is refused.

This is the lowest layer: it imports nothing from assay. The validators return a
problem message (``None`` when the value is fine) and leave the choice of exception
to the component that calls them.
"""

from __future__ import annotations

import re
import reprlib
from collections.abc import Mapping
from typing import Any, cast

__all__ = [
    "MAX_AGENT_CHARS",
    "MAX_APPROVER_CHARS",
    "MAX_ARGS_BYTES",
    "MAX_CALL_ID_CHARS",
    "MAX_CLAIM_ID_CHARS",
    "MAX_DEPENDS_ON",
    "MAX_ERROR_DETAILS",
    "MAX_GRANT_ID_CHARS",
    "MAX_HANDOVER_BYTES",
    "MAX_JSON_DEPTH",
    "MAX_KEPT_OUTPUT_BYTES",
    "MAX_MESSAGE_CHARS",
    "MAX_METADATA_BYTES",
    "MAX_PROPOSITION_CHARS",
    "MAX_REPR_CHARS",
    "MAX_RUN_ID_CHARS",
    "MAX_SOURCE_CHARS",
    "MAX_TOOL_NAME_CHARS",
    "MAX_TRACEBACK_CHARS",
    "MAX_VERSION_CHARS",
    "bounded",
    "check_text",
    "json_depth_ok",
    "json_problem",
    "safe_repr",
    "visible",
]

# --- identifiers and names (characters) ----------------------------------------------

#: A run id (assay's own are ``run_`` + 32 hex; the column holds 64).
MAX_RUN_ID_CHARS = 64
#: A ledger entry's ``source`` (a path, a URL, ``tool:name@version``).
MAX_SOURCE_CHARS = 2_000
#: A tool name; no registered name is longer (``ToolSpec`` allows 1-64 characters).
MAX_TOOL_NAME_CHARS = 64
#: A tool version; no registered version is longer.
MAX_VERSION_CHARS = 64
#: A call id (the bus's own, or a chat model's tool-call id; the column holds 200).
MAX_CALL_ID_CHARS = 200
#: A grant id (assay's own are ``grant_`` + 32 hex; the column holds 40).
MAX_GRANT_ID_CHARS = 40
#: A claim id in a call's ``depends_on``.
MAX_CLAIM_ID_CHARS = 200
#: How many claim ids one call may depend on (they are kept in the call's metadata).
MAX_DEPENDS_ON = 100
#: Who approved a grant (it becomes part of a ledger source).
MAX_APPROVER_CHARS = 200
#: A hand-over's ``from_agent`` (it becomes a ledger source).
MAX_AGENT_CHARS = 200
#: A proposition is one checkable statement. Longer text is refused by the gate
#: (``proposition_too_long``) and never reaches the verifier, whose cost grows with
#: the proposition.
MAX_PROPOSITION_CHARS = 2_000

# --- structured values (bytes of canonical JSON, nesting) -----------------------------

#: Containers (objects and arrays) nested inside one another in any JSON value.
MAX_JSON_DEPTH = 64
#: An entry's or a run's metadata, as canonical JSON.
MAX_METADATA_BYTES = 64 * 1024
#: A tool call's arguments, as canonical JSON.
MAX_ARGS_BYTES = 1024 * 1024
#: A hand-over given to the gate, as JSON.
MAX_HANDOVER_BYTES = 1024 * 1024

# --- what assay records about failures -----------------------------------------------

#: An exception message kept from a handler.
MAX_MESSAGE_CHARS = 2_000
#: A formatted traceback kept from a handler.
MAX_TRACEBACK_CHARS = 20_000
#: An invalid output kept in its error entry; a larger one is kept as a prefix.
MAX_KEPT_OUTPUT_BYTES = 64 * 1024
#: A ``repr`` of a value that is not JSON.
MAX_REPR_CHARS = 2_000
#: Details (path, message) kept in one structured error.
MAX_ERROR_DETAILS = 100

#: C0 control characters, DEL, and lone surrogates.
_CONTROL = re.compile(r"[\x00-\x1f\x7f\ud800-\udfff]")
_CONTROL_BUT_NEWLINES = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")


def check_text(
    value: object, *, field: str, max_chars: int, allow_newlines: bool = False
) -> str | None:
    """Why ``value`` is not a usable text field, or ``None`` when it is.

    A usable value is a ``str`` that is not blank, has at most ``max_chars``
    characters, is valid Unicode (no lone surrogate, so it encodes as UTF-8) and has
    no control characters (U+0000-U+001F and DEL; NUL among them, which PostgreSQL
    text cannot hold). ``allow_newlines`` lets ``\\n``, ``\\r`` and ``\\t`` through.
    The message names ``field`` and never echoes the value, so it is always safe to
    show and store. For example::

        problem = check_text(approver, field="approver", max_chars=MAX_APPROVER_CHARS)
        if problem is not None:
            raise SomeUsageError(problem)
    """
    if not isinstance(value, str):
        return f"{field} must be a string, not {type(value).__name__}"
    if not value.strip():
        return f"{field} must not be empty or blank"
    if len(value) > max_chars:
        return f"{field} is {len(value)} characters, over the limit of {max_chars}"
    found = (_CONTROL_BUT_NEWLINES if allow_newlines else _CONTROL).search(value)
    if found is not None:
        code, index = ord(found.group()), found.start()
        if 0xD800 <= code <= 0xDFFF:
            return f"{field} is not valid Unicode: lone surrogate U+{code:04X} at index {index}"
        return f"{field} contains control character U+{code:04X} at index {index}"
    return None


def json_depth_ok(value: object, max_depth: int = MAX_JSON_DEPTH) -> bool:
    """Whether no more than ``max_depth`` containers (mappings, lists, tuples) nest in
    ``value``. Iterative: a value nested 100 000 deep (or one that contains itself)
    is refused without recursion."""
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        children = _children(item)
        if children is None:
            continue
        if depth >= max_depth:
            return False
        stack.extend((child, depth + 1) for child in children)
    return True


def json_problem(
    value: object, *, field: str, max_depth: int = MAX_JSON_DEPTH, max_chars: int | None = None
) -> str | None:
    """Why ``value`` cannot be canonical JSON, or ``None`` as far as a cheap walk tells.

    Checks, without recursion: nesting beyond ``max_depth``, keys that are not
    strings, lone surrogates in keys and strings, and (when ``max_chars`` is given)
    more characters in keys and strings than ``max_chars`` (a lower bound of the
    canonical size, so a value refused here is surely too large). Types that JSON
    lacks are left to the serializer.
    """
    if not json_depth_ok(value, max_depth):
        return f"{field} is nested deeper than {max_depth} levels"
    total = 0
    stack: list[object] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            total += len(item)
            if _has_surrogate(item):
                return f"{field} holds a string that is not valid Unicode (lone surrogate)"
        elif isinstance(item, Mapping):
            for key, child in cast(Mapping[object, object], item).items():
                if not isinstance(key, str):
                    return f"{field} has a key that is not a string: {safe_repr(key, 80)}"
                stack.extend((key, child))
        elif isinstance(item, list | tuple):
            stack.extend(cast(list[object], item))
        if max_chars is not None and total > max_chars:
            return f"{field} is larger than the limit of {max_chars} bytes"
    return None


def _children(item: object) -> list[object] | None:
    if isinstance(item, Mapping):
        return list(cast(Mapping[object, object], item).values())
    if isinstance(item, list | tuple):
        return list(cast(list[object], item))
    return None


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def bounded(text: str, max_chars: int) -> str:
    """``text`` cut to ``max_chars`` with a visible marker, lone surrogates escaped
    (``\\ud800``), so that the result always encodes as UTF-8."""
    if len(text) > max_chars:
        cut = len(text) - max_chars
        text = f"{text[:max_chars]}… [{cut} more characters]"
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def visible(text: str, max_chars: int) -> str:
    """``text`` cut as by :func:`bounded`, with control characters also made visible
    (``\\x0a``), for fields such as ledger sources that may hold none. The result
    has at most about ``6 * max_chars`` characters (every one escaped)."""
    shown = "".join(
        f"\\x{ord(c):02x}" if ord(c) < 0x20 or ord(c) == 0x7F else c for c in text[:max_chars]
    )
    if len(text) > max_chars:
        shown += f"… [{len(text) - max_chars} more characters]"
    return shown.encode("utf-8", "backslashreplace").decode("utf-8")


_REPR = reprlib.Repr()
_REPR.maxlevel = 4
_REPR.maxstring = 200
_REPR.maxother = 200
_REPR.maxlist = _REPR.maxtuple = _REPR.maxdict = _REPR.maxset = 20


def safe_repr(value: object, max_chars: int = MAX_REPR_CHARS) -> str:
    """A bounded ``repr`` that never raises, however deep, large or hostile ``value``
    is (a ``__repr__`` that raises gives ``<TypeName object>``)."""
    try:
        text = _REPR.repr(value)
    except Exception:
        text = f"<{_type_name(value)} object>"
    return bounded(text, max_chars)


def _type_name(value: object) -> str:
    name: Any = getattr(type(value), "__name__", "object")
    return bounded(name if isinstance(name, str) else "object", 100)
