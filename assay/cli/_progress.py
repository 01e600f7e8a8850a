"""Progress bars for long commands (eval cases, training steps, calibration items).

A bar is drawn on stderr only when stderr is a terminal and the command was not
asked for JSON, and it is gone when the work is done, so piped and machine-read
output never holds one. The library reports progress through plain callbacks
(``(done, total, what)``); drawing is this module's alone.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from contextlib import contextmanager

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from assay.cli._common import err_console

__all__ = ["ProgressUpdate", "progress_bar"]

#: Moves the bar: ``update(done, total, what)``.
ProgressUpdate = Callable[[int, int, str], None]


@contextmanager
def progress_bar(*, shown_if: bool = True) -> Generator[ProgressUpdate | None]:
    """A bar on stderr while the block runs, moved by the update it yields; ``None``
    (nothing drawn) when stderr is no terminal or ``shown_if`` is false."""
    err = err_console()
    if not shown_if or not err.is_terminal:
        yield None
        return
    columns = (
        TextColumn("{task.description}", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=err, transient=True) as progress:
        task = progress.add_task("", total=None)

        def update(done: int, total: int, what: str) -> None:
            progress.update(task, completed=done, total=total, description=what)

        yield update
