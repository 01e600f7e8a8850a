"""What every ``assay`` sub-command shares: the consoles, the ``--db`` and ``--json``
options, the one-line error report and exit statuses, the safe display of untrusted
text, and the loader of ``module:attr`` references (``--graph``).

Every failure ends as one line on stderr and an exit status: 2 for a mistake in the
call (assay's :class:`~assay.errors.UsageError`, a bad option), 3 for a failure at
run time (:class:`~assay.errors.RunError`, or anything unexpected); the global
``--debug`` option lets the exception and its traceback through instead. Commands
that check something (a chain, a bundle, a checkpoint) exit 1 when it fails.

The consoles never interpret rich markup or emoji codes: whatever is printed as a
string is shown as it is, so text from agents, tools, documents or a database cannot
style, hide or forge output. Styles are applied with :class:`rich.text.Text` only, and
:func:`shown` makes control characters visible before any such text is printed.
"""

from __future__ import annotations

import functools
import importlib
import json
import os
import re
import sys
from collections.abc import Callable, Generator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.text import Text
from typer.core import TyperGroup

from assay.errors import AssayError, UsageError

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

    from assay.control_plane import ControlPlane
    from assay.ledger import Ledger

__all__ = [
    "CLICK_USAGE_ERROR",
    "EXIT_FAILED_CHECK",
    "EXIT_RUN_ERROR",
    "EXIT_USAGE",
    "AssayGroup",
    "DbOption",
    "JsonOption",
    "LedgerStore",
    "age",
    "console",
    "emit_json",
    "err_console",
    "fit_line",
    "handles_errors",
    "jsonable",
    "load_reference",
    "open_ledger",
    "open_plane",
    "report_error",
    "set_debug",
    "shown",
    "styled",
]

EXIT_FAILED_CHECK = 1
EXIT_USAGE = 2
EXIT_RUN_ERROR = 3

DbOption = Annotated[
    str | None,
    typer.Option(
        "--db",
        envvar="ASSAY_DATABASE_URL",
        help="Database URL (default sqlite:///./assay.db).",
        show_default=False,
    ),
]
JsonOption = Annotated[
    bool,
    typer.Option("--json", help="Print JSON (stable keys) instead of tables."),
]


def _new_console(*, stderr: bool) -> Console:
    # Width from COLUMNS or the terminal, read when the console is made (once per
    # invocation); no markup, emoji codes or highlighting: printed text is shown as is.
    return Console(stderr=stderr, markup=False, emoji=False, highlight=False)


@dataclass
class _Invocation:
    """What one invocation of the command line holds: its consoles and ``--debug``."""

    out: Console = field(default_factory=lambda: _new_console(stderr=False))
    err: Console = field(default_factory=lambda: _new_console(stderr=True))
    debug: bool = False


_current = _Invocation()


def console() -> Console:
    """The console for the command's output (stdout) in this invocation."""
    return _current.out


def err_console() -> Console:
    """The console for messages and errors (stderr) in this invocation."""
    return _current.err


def set_debug(debug: bool) -> None:
    """``--debug``: let exceptions and their tracebacks through."""
    _current.debug = debug


# C0 and C1 controls but newline and tab, DEL, and the invisible format characters
# that reorder or hide text (bidirectional overrides and isolates, zero-width ones).
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")
_LINE_BREAK = re.compile(r"[\n\t]")


def _escape_control(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def shown(value: object, width: int | None = None, *, one_line: bool = False) -> str:
    """``value`` as text safe to print: control characters made visible (``\\x1b``),
    JSON for anything not a string, cut to ``width`` characters with an ellipsis when
    given. ``one_line`` also shows newlines and tabs as ``\\n`` and ``\\t``."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = _CONTROL.sub(_escape_control, text)
    if one_line:
        text = _LINE_BREAK.sub(lambda m: "\\n" if m.group(0) == "\n" else "\\t", text)
    if width is not None and len(text) > width:
        text = text[: max(width - 1, 0)] + "…"
    return text


def styled(*parts: str | tuple[str, str]) -> Text:
    """A line from plain parts and ``(text, style)`` parts; no markup is parsed."""
    return Text.assemble(*parts)


def _utc_now() -> datetime:
    return datetime.now(UTC)


#: The clock that ages are measured against (tests fix it for stable output).
now: Callable[[], datetime] = _utc_now


def age(since: datetime) -> str:
    """How long ago ``since`` was, in its largest whole unit: ``42s``, ``5m``, ``3h``,
    ``12d``."""
    seconds = max(int((now() - since).total_seconds()), 0)
    for unit, size in (("d", 86_400), ("h", 3_600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def fit_line(console: Console, text: Text) -> None:
    """Print ``text`` as one line, cut with an ellipsis at the console's width."""
    text.truncate(console.width, overflow="ellipsis")
    console.print(text, no_wrap=True, overflow="ellipsis", crop=True)


def report_error(message: str) -> None:
    """Print ``error: message`` as one line on stderr, whatever ``message`` holds."""
    flat = " ".join(str(message).split())
    err_console().print(styled(("error:", "bold red"), " ", shown(flat)), soft_wrap=True)


def _exit_code(exc: AssayError) -> int:
    return EXIT_USAGE if isinstance(exc, UsageError) else EXIT_RUN_ERROR


F = TypeVar("F", bound=Callable[..., Any])


def handles_errors(func: F) -> F:
    """Turn assay's exceptions into one line on stderr and an exit status (2 for a
    usage mistake, 3 at run time); with ``--debug`` they go through unchanged."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except AssayError as exc:
            if _current.debug:
                raise
            report_error(str(exc))
            raise typer.Exit(_exit_code(exc)) from None

    return wrapper  # type: ignore[return-value]


def _click_class(name: str) -> type[Exception]:
    """A class of the click that typer runs on (its own copy in newer typers, the
    ``click`` package in older ones), found from typer's public ``BadParameter``."""
    return next(c for c in typer.BadParameter.__mro__ if c.__name__ == name)


_CLICK_ERROR = _click_class("ClickException")
CLICK_USAGE_ERROR = _click_class("UsageError")


class AssayGroup(TyperGroup):
    """The root command group: each invocation gets fresh consoles, and whatever
    escapes a command (a bad option, an assay error, a bug) becomes one line on
    stderr and an exit status, unless ``--debug`` was given."""

    def main(  # type: ignore[override]
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        global _current
        _current = _Invocation()
        code = self._invoke_once(args, prog_name, complete_var, windows_expand_args, extra)
        if standalone_mode:
            sys.exit(code)
        return code

    def _invoke_once(
        self,
        args: Sequence[str] | None,
        prog_name: str | None,
        complete_var: str | None,
        windows_expand_args: bool,
        extra: dict[str, Any],
    ) -> int:
        try:
            returned = super().main(
                args,
                prog_name,
                complete_var,
                standalone_mode=False,
                windows_expand_args=windows_expand_args,
                **extra,
            )
        except _CLICK_ERROR as exc:
            report_error(_click_message(exc))
            return int(getattr(exc, "exit_code", EXIT_USAGE))
        except typer.Abort:
            report_error("aborted")
            return 130
        except AssayError as exc:
            if _current.debug:
                raise
            report_error(str(exc))
            return _exit_code(exc)
        except Exception as exc:
            if _current.debug:
                raise
            report_error(
                f"unexpected {type(exc).__name__}: {exc} "
                "(a bug in assay; --debug shows the traceback)"
            )
            return EXIT_RUN_ERROR
        return returned if isinstance(returned, int) else 0


def _click_message(exc: Exception) -> str:
    message = str(getattr(exc, "format_message", exc.__str__)())
    ctx = getattr(exc, "ctx", None)
    if isinstance(exc, CLICK_USAGE_ERROR) and ctx is not None:
        message += f" (see '{ctx.command_path} --help')"
    return message


def jsonable(value: object) -> Any:
    """``value`` (dataclasses, pydantic models, datetimes included) as plain JSON data."""
    from pydantic_core import to_jsonable_python

    return to_jsonable_python(value, fallback=repr)


def emit_json(value: object) -> None:
    """Print ``value`` as indented JSON on stdout. Non-ASCII characters are escaped,
    so no character of stored text can act on a terminal it is printed to."""
    typer.echo(json.dumps(jsonable(value), indent=2, ensure_ascii=True))


def open_plane(db: str | None, *, migrate: bool = True) -> ControlPlane:
    """The control plane on ``db``; the composition root, and with it LangGraph and
    the components, is imported only by the commands that open one."""
    from assay.control_plane import ControlPlane

    return ControlPlane.open(db, migrate=migrate)


@dataclass(frozen=True, kw_only=True)
class LedgerStore:
    """The ledger on one database, without the rest of the control plane: what the
    commands that only read or check the ledger open (no LangGraph, no model)."""

    engine: Engine
    ledger: Ledger


@contextmanager
def open_ledger(db: str | None) -> Generator[LedgerStore]:
    """The ledger on ``db``, its schema brought to the newest revision first (as
    :func:`open_plane` does); the engine is disposed of on the way out."""
    from assay import _db
    from assay.ledger import Ledger

    engine = _db.create_engine(_db.resolve_url(db))
    try:
        _db.upgrade(engine)
        yield LedgerStore(engine=engine, ledger=Ledger(engine))
    finally:
        engine.dispose()


_REFERENCE = re.compile(r"[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*:[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*")


def load_reference(reference: str, what: str = "--graph") -> Any:
    """The object ``module:attr`` names, imported as a program would (the working
    directory first on the path, as ``python -m`` has it); :class:`UsageError` with
    one line for anything that does not resolve."""
    if not _REFERENCE.fullmatch(reference):
        raise UsageError(
            f"{what} must be module:attr (e.g. my_app.graphs:orders), not {reference!r}"
        )
    module_name, attr = reference.split(":", 1)
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        found: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise UsageError(f"{what} {reference}: cannot import {module_name!r} ({exc})") from None
    for part in attr.split("."):
        if not hasattr(found, part):
            raise UsageError(f"{what} {reference}: {module_name!r} has no attribute {attr!r}")
        found = getattr(found, part)
    return found
