"""The recorded evaluations: every run of a suite on a fenced graph, kept in the
control plane's database so the trend of each metric can be read back, newest first.

A record is written once and never changed (``eval_runs`` is append-only, enforced
by the database): it holds the suite, the graph's name and version, when the run
started and finished, the suite's figures and each case's outcome, whether the gate
passed and why not, and the sha256 of the baseline file the gate compared with.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from assay._db import driver_errors, read_connection, write_transaction
from assay.control_plane import ControlPlane
from assay.errors import UsageError
from assay.evals._evaluate import EvalReport
from assay.evals._metrics import GATED_METRICS
from assay.evals._regression_gate import RegressionGateResult
from assay.evals._tables import eval_runs

__all__ = [
    "MAX_HISTORY",
    "EvalHistory",
    "EvalRunRecord",
    "baseline_sha256",
    "eval_history",
    "record_eval",
]

#: The most records one read of the history returns.
MAX_HISTORY = 10_000
_MAX_NAME = 200
_MAX_VERSION = 64


@dataclass(frozen=True, kw_only=True)
class EvalRunRecord:
    """One recorded evaluation. ``metrics`` are the suite's figures (fractions in
    [0, 1], counts and seconds, ``None`` where nothing was there to count);
    ``case_outcomes`` maps each case id to its figures and what lies behind them."""

    id: str
    suite_id: str
    suite_name: str
    suite_file: str
    graph_name: str
    graph_version: str
    started_at: datetime
    finished_at: datetime
    cases: int
    metrics: Mapping[str, float | None]
    case_outcomes: Mapping[str, Mapping[str, Any]]
    passed: bool
    failures: tuple[str, ...]
    baseline_sha256: str | None

    def gated(self) -> dict[str, float | None]:
        """The metrics the gate compares, as the run had them (``None`` if absent)."""
        return {name: self.metrics.get(name) for name in GATED_METRICS}


class EvalHistory:
    """The store of recorded evaluations on one database engine."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def record(
        self,
        report: EvalReport,
        gate: RegressionGateResult,
        *,
        graph_name: str | None = None,
        graph_version: str | None = None,
        baseline_sha256: str | None = None,
    ) -> EvalRunRecord:
        """Append ``report`` and its ``gate`` result. The graph's name and version
        default to the report's (``evaluate`` fills them in); a report that names no
        graph needs them given. Nothing is written when anything is refused."""
        record = _new_record(report, gate, graph_name, graph_version, baseline_sha256)
        with (
            driver_errors("could not record the evaluation"),
            write_transaction(self._engine) as conn,
        ):
            conn.execute(eval_runs.insert(), _row_of(record))
        return record

    def runs(
        self, *, suite_id: str | None = None, graph_name: str | None = None, limit: int = 50
    ) -> list[EvalRunRecord]:
        """The recorded evaluations, newest first, at most ``limit``, of one suite
        and one graph name when given."""
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_HISTORY:
            raise UsageError(f"limit must be a whole number from 1 to {MAX_HISTORY}, not {limit!r}")
        query = sa.select(eval_runs)
        if suite_id is not None:
            query = query.where(eval_runs.c.suite_id == suite_id)
        if graph_name is not None:
            query = query.where(eval_runs.c.graph_name == graph_name)
        query = query.order_by(eval_runs.c.finished_at.desc(), eval_runs.c.id.desc()).limit(limit)
        with driver_errors("could not read the eval history"), read_connection(self._engine) as c:
            return [_record_of(row) for row in c.execute(query)]


def record_eval(
    control_plane: ControlPlane,
    report: EvalReport,
    gate: RegressionGateResult,
    *,
    baseline: str | Path | None = None,
    graph_name: str | None = None,
    graph_version: str | None = None,
) -> EvalRunRecord:
    """Record an evaluation in the control plane's database: ``report``, the ``gate``
    result it came to, and the sha256 of the ``baseline`` file the gate compared with
    (read now; give it only when the gate compared with it)."""
    sha = baseline_sha256(baseline) if baseline is not None else None
    return EvalHistory(control_plane.engine).record(
        report, gate, graph_name=graph_name, graph_version=graph_version, baseline_sha256=sha
    )


def eval_history(
    control_plane: ControlPlane,
    *,
    suite_id: str | None = None,
    graph_name: str | None = None,
    limit: int = 50,
) -> list[EvalRunRecord]:
    """The evaluations recorded in the control plane's database, newest first."""
    return EvalHistory(control_plane.engine).runs(
        suite_id=suite_id, graph_name=graph_name, limit=limit
    )


def baseline_sha256(path: str | Path) -> str:
    """The sha256 of the baseline file's bytes, as a record keeps it."""
    target = Path(path)
    try:
        return hashlib.sha256(target.read_bytes()).hexdigest()
    except OSError as exc:
        raise UsageError(f"cannot read the baseline {target} ({exc.strerror or exc})") from None


def _new_record(
    report: EvalReport,
    gate: RegressionGateResult,
    graph_name: str | None,
    graph_version: str | None,
    sha: str | None,
) -> EvalRunRecord:
    if gate.suite_id != report.suite_id:
        raise UsageError(
            f"the gate result is for suite {gate.suite_id}, the report for {report.suite_id}"
        )
    name = _text(graph_name or report.graph_name, "graph name", _MAX_NAME)
    version = _text(graph_version or report.graph_version, "graph version", _MAX_VERSION)
    if sha is not None and (len(sha) != 64 or any(c not in "0123456789abcdef" for c in sha)):
        raise UsageError(f"baseline_sha256 must be 64 lowercase hex digits, not {sha!r}")
    finished = report.finished_at or datetime.now(UTC)
    return EvalRunRecord(
        id="evr_" + secrets.token_hex(12),
        suite_id=report.suite_id,
        suite_name=report.suite_name,
        suite_file=report.suite_file,
        graph_name=name,
        graph_version=version,
        started_at=report.started_at or finished,
        finished_at=finished,
        cases=len(report.cases),
        metrics=_plain(asdict(report.metrics)),
        case_outcomes={c.case_id: _plain(asdict(c)) for c in report.cases},
        passed=gate.passed,
        failures=tuple(gate.failures),
        baseline_sha256=sha,
    )


def _text(value: str | None, what: str, limit: int) -> str:
    if value is None:
        raise UsageError(
            f"the report names no {what}: pass graph_name and graph_version "
            "(evaluate() fills them in)"
        )
    if not value.strip() or len(value) > limit:
        raise UsageError(f"a {what} must be 1 to {limit} characters, not {value!r}")
    return value


def _plain(value: Mapping[str, Any]) -> dict[str, Any]:
    """``value`` as JSON data (tuples as lists), the form it is read back in."""
    return cast(dict[str, Any], json.loads(json.dumps(value)))


def _row_of(record: EvalRunRecord) -> dict[str, Any]:
    return {
        "id": record.id,
        "suite_id": record.suite_id,
        "suite_name": record.suite_name,
        "suite_file": record.suite_file,
        "graph_name": record.graph_name,
        "graph_version": record.graph_version,
        "started_at": record.started_at.astimezone(UTC),
        "finished_at": record.finished_at.astimezone(UTC),
        "cases": record.cases,
        "metrics_json": json.dumps(record.metrics, sort_keys=True),
        "cases_json": json.dumps(record.case_outcomes, sort_keys=True),
        "passed": record.passed,
        "failures_json": json.dumps(list(record.failures)),
        "baseline_sha256": record.baseline_sha256,
    }


def _record_of(row: sa.Row[Any]) -> EvalRunRecord:
    return EvalRunRecord(
        id=row.id,
        suite_id=row.suite_id,
        suite_name=row.suite_name,
        suite_file=row.suite_file,
        graph_name=row.graph_name,
        graph_version=row.graph_version,
        started_at=_utc(row.started_at),
        finished_at=_utc(row.finished_at),
        cases=row.cases,
        metrics=json.loads(row.metrics_json),
        case_outcomes=json.loads(row.cases_json),
        passed=bool(row.passed),
        failures=tuple(json.loads(row.failures_json)),
        baseline_sha256=row.baseline_sha256,
    )


def _utc(value: datetime) -> datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)
