"""``assay runs``: the ledger's runs, newest first, with where each stands.

A run started by a fenced graph carries its thread and graph in the run's ledger
metadata, and its task as the run's ``user:task`` fact; its status is its thread's
(the fence's thread row) while the thread's current run is this one. A run written
to the ledger directly has no status (``-``). Only the ledger and the thread rows
are read: listing runs loads no graph, no LangGraph and no model.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.text import Text

from assay.cli._common import LedgerStore, age, fit_line, shown
from assay.cli._render import STATUS_COLOURS
from assay.errors import UsageError

if TYPE_CHECKING:
    from assay.fence import ThreadRow
    from assay.ledger import RunInfo

__all__ = ["RunRow", "StatusFilter", "render_runs", "run_rows"]


class StatusFilter(StrEnum):
    """What ``--status`` takes: a thread's states (``ThreadState``), and ``none`` for
    the runs that have none (written to the ledger by no fenced graph)."""

    running = "running"
    awaiting_grant = "awaiting_grant"
    answered = "answered"
    denied = "denied"
    incomplete = "incomplete"
    abstained = "abstained"
    failed = "failed"
    none = "none"


_TASK_SOURCE = "user:task"
_GAP = "  "


@dataclass(frozen=True, kw_only=True)
class RunRow:
    """One run as ``assay runs`` lists it (and ``--json`` prints it)."""

    run_id: str
    status: str | None
    thread_id: str | None
    graph: str | None
    graph_version: str | None
    task: str | None
    created_at: datetime
    entries: int
    head_hash: str
    metadata: dict[str, Any]


def run_rows(
    cp: LedgerStore,
    *,
    statuses: Collection[str] = (),
    graph_name: str | None = None,
    limit: int = 50,
) -> list[RunRow]:
    """The newest runs first, at most ``limit``, of the given statuses and graph only."""
    rows: list[RunRow] = []
    for info in reversed(cp.ledger.runs()):
        row = _run_row(cp, info)
        if statuses and (row.status or "none") not in statuses:
            continue
        if graph_name is not None and row.graph != graph_name:
            continue
        rows.append(row)
        if len(rows) >= limit:
            break
    return rows


def _run_row(cp: LedgerStore, info: RunInfo) -> RunRow:
    meta = info.metadata
    thread_id = _text(meta.get("thread_id"))
    thread = _thread(cp, thread_id)
    current = thread is not None and thread.run_id == info.run_id
    graph, version = _text(meta.get("graph")), _text(meta.get("graph_version"))
    if thread is not None and current:
        graph, version = thread.graph.name, thread.graph.version
    return RunRow(
        run_id=info.run_id,
        status=thread.status if thread is not None and current else None,
        thread_id=thread_id,
        graph=graph,
        graph_version=version,
        task=_task(cp, info.run_id) if graph is not None else None,
        created_at=info.created_at,
        entries=info.head_seq,
        head_hash=info.head_hash,
        metadata=meta,
    )


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _thread(cp: LedgerStore, thread_id: str | None) -> ThreadRow | None:
    from assay.fence import check_thread_id, thread_row

    if thread_id is None:
        return None
    try:
        return thread_row(cp.engine, check_thread_id(thread_id))
    except UsageError:  # metadata naming a thread id that could not exist
        return None


def _task(cp: LedgerStore, run_id: str) -> str | None:
    for entry in cp.ledger.entries(run_id, kinds=["human_fact"]):
        if entry.source == _TASK_SOURCE:
            return entry.text
    return None


def render_runs(rows: list[RunRow], console: Console, *, filtered: bool = False) -> None:
    """Two lines a run, cut to the console's width: run, status, age and graph, then
    the thread and the task (or the metadata of a run no graph started)."""
    if not rows:
        console.print("no runs match" if filtered else "no runs")
        return
    ages = [age(row.created_at) for row in rows]
    widths = (
        max(len("RUN"), *(len(shown(row.run_id)) for row in rows)),
        max(len("STATUS"), *(len(row.status or "-") for row in rows)),
        max(len("AGE"), *(len(a) for a in ages)),
    )
    header = ["RUN".ljust(widths[0]), "STATUS".ljust(widths[1]), "AGE".rjust(widths[2]), "GRAPH"]
    fit_line(console, Text(_GAP.join(header), style="bold"))
    for row, row_age in zip(rows, ages, strict=True):
        status = row.status or "-"
        graph = "-" if row.graph is None else shown(row.graph, one_line=True)
        if row.graph_version is not None:
            graph += f" v{shown(row.graph_version, one_line=True)}"
        first = Text.assemble(
            shown(row.run_id).ljust(widths[0]),
            _GAP,
            (status.ljust(widths[1]), STATUS_COLOURS.get(status, "")),
            _GAP,
            row_age.rjust(widths[2]),
            _GAP,
            graph,
        )
        fit_line(console, first)
        fit_line(console, Text("    " + _details(row), style="dim"))


def _details(row: RunRow) -> str:
    parts: list[str] = []
    if row.thread_id is not None:
        parts.append(f"thread {shown(row.thread_id, one_line=True)}")
    if row.task is not None:
        parts.append(f"task “{shown(' '.join(row.task.split()))}”")
    elif row.graph is None and row.metadata:
        parts.append(f"metadata {shown(row.metadata, one_line=True)}")
    parts.append(f"{row.entries} entries")
    return " · ".join(parts)
