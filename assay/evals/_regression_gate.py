"""The deploy gate: a baseline file tied to the suite's id, and the comparison that
fails when a metric drops by ``threshold_points`` (2) or more, when side-effect
hygiene is below 100%, or when a case could not run."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, JsonValue, ValidationError

from assay.errors import UsageError
from assay.evals._evaluate import EvalReport
from assay.evals._files import write_atomically
from assay.evals._metrics import GATED_METRICS, CaseMetrics

__all__ = [
    "BASELINE_FORMAT",
    "DEFAULT_THRESHOLD_POINTS",
    "Baseline",
    "CaseChange",
    "MetricChange",
    "RegressionGateResult",
    "assert_no_regression",
    "baseline_of",
    "check_regressions",
    "read_baseline",
    "write_baseline",
]

BASELINE_FORMAT = "assay-eval-baseline/1"
#: A drop of this many percentage points or more fails the gate.
DEFAULT_THRESHOLD_POINTS = 2.0
#: The case fields behind each metric: a case whose fields changed is named with it.
_BEHIND: dict[str, tuple[str, ...]] = {
    "faithfulness": ("answered_claims", "faithful_claims", "unfaithful_claims", "forbidden_claims"),
    "coverage": ("facts_established", "missing_facts"),
    "status_accuracy": ("status",),
    "abstention_precision": ("status",),
    "abstention_recall": ("status",),
    "false_alarm_rate": ("status",),
    "false_refusal_rate": ("false_refusals", "supported"),
    "false_answer_rate": ("false_answers", "unsupported"),
    "action_accuracy": ("actions_ok", "action_problems"),
    "grant_accuracy": ("grants_ok", "grants_requested"),
    "side_effect_hygiene": ("hygiene_violations",),
}


class Baseline(BaseModel):
    """A recorded evaluation: the suite it belongs to, its gated metrics, and what
    each case came to. It lives in the user's repository, beside the suite."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    format: Literal["assay-eval-baseline/1"] = BASELINE_FORMAT
    suite_id: str
    suite_name: str
    metrics: dict[str, float | None]
    cases: dict[str, dict[str, JsonValue]]


@dataclass(frozen=True, kw_only=True)
class MetricChange:
    """One gated metric against the baseline; ``cases`` changed in what it counts."""

    name: str
    baseline: float | None
    current: float | None
    regressed: bool
    cases: tuple[str, ...] = ()

    @property
    def points(self) -> float | None:
        """The change in percentage points (positive: up)."""
        if self.baseline is None or self.current is None:
            return None
        return (self.current - self.baseline) * 100


@dataclass(frozen=True, kw_only=True)
class CaseChange:
    """A case whose outcome differs from the baseline's, field by field."""

    case_id: str
    before: dict[str, Any]
    after: dict[str, Any]

    @property
    def fields(self) -> tuple[str, ...]:
        return tuple(k for k in self.after if self.before.get(k) != self.after[k])


@dataclass(frozen=True, kw_only=True)
class RegressionGateResult:
    """Whether the deploy may go ahead, and why not."""

    passed: bool
    suite_id: str
    failures: tuple[str, ...]
    metrics: tuple[MetricChange, ...] = ()
    changed_cases: tuple[CaseChange, ...] = ()
    compared: bool = False

    def summary(self) -> str:
        """The failures and the changed cases, one line each."""
        head = "gate passed" if self.passed else f"gate failed ({len(self.failures)})"
        lines = [head, *(f"  - {f}" for f in self.failures)]
        for change in self.changed_cases:
            diffs = "; ".join(
                f"{k}: {change.before.get(k)!r} -> {change.after[k]!r}" for k in change.fields
            )
            lines.append(f"  case {change.case_id} changed: {diffs}")
        return "\n".join(lines)


def baseline_of(report: EvalReport) -> Baseline:
    """What a baseline records of ``report`` (no timings: they vary run to run)."""
    return Baseline(
        suite_id=report.suite_id,
        suite_name=report.suite_name,
        metrics=report.metrics.gated(),
        cases={c.case_id: _json_outcome(c) for c in report.cases},
    )


def _json_outcome(case: CaseMetrics) -> dict[str, JsonValue]:
    """A case's outcome as a baseline keeps it. A forbidden statement that was made,
    and a false answer or false refusal, is named by the sha256 of its text (the suite
    holds the text): a baseline then copies no sentence of the suite's gold into the
    repository beside it."""
    outcome = case.outcome()
    for name in ("forbidden_claims", "false_answers", "false_refusals"):
        outcome[name] = [statement_ref(t) for t in getattr(case, name)]
    return json.loads(json.dumps(outcome))


def statement_ref(text: str) -> str:
    """How a baseline names a statement of the suite: ``sha256:`` and 16 hex digits
    of its UTF-8 text."""
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def write_baseline(report: EvalReport, path: str | Path) -> Baseline:
    """Write ``report``'s baseline to ``path`` (atomically: a reader never sees half a
    file). Refused while the report fails the gate's absolute checks (side-effect
    hygiene below 100%, cases that could not run, expected actions refused as
    duplicates), and while an action the suite expects did not run once: a baseline
    never expects no effect where the suite expects one."""
    failures = _absolute_failures(report)
    failures += [
        f"{c.case_id}: {', '.join(c.action_problems)}, where the suite expects it once"
        for c in report.cases
        if c.action_problems and not c.duplicate_actions
    ]
    if failures:
        raise UsageError("a baseline cannot record a failing evaluation: " + "; ".join(failures))
    target = Path(path)
    if not (target.parent if str(target.parent) else Path(".")).is_dir():
        raise UsageError(f"cannot write the baseline {str(target)!r}: its folder does not exist")
    baseline = baseline_of(report)
    text = json.dumps(baseline.model_dump(mode="json"), indent=2, sort_keys=True) + "\n"
    write_atomically(target, text)
    return baseline


def read_baseline(path: str | Path, *, suite_id: str | None = None) -> Baseline:
    """The baseline at ``path``; with ``suite_id``, refused unless it was recorded for
    that suite (:class:`~assay.errors.UsageError` names both ids)."""
    target = Path(path)
    try:
        data = json.loads(target.read_text(encoding="utf-8"))
        baseline = Baseline.model_validate(data)
    except FileNotFoundError:
        raise UsageError(
            f"no baseline at {target}: record one with --update-baseline (update=True)"
        ) from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        first = exc.errors()[0] if isinstance(exc, ValidationError) else None
        why = f"{'.'.join(map(str, first['loc']))}: {first['msg']}" if first else str(exc)
        raise UsageError(f"{target} is not an eval baseline ({why})") from None
    if suite_id is not None and baseline.suite_id != suite_id:
        raise UsageError(
            f"{target} was recorded for suite {baseline.suite_id} "
            f"({baseline.suite_name!r}), not {suite_id}: the suite changed since; "
            "record a new baseline with --update-baseline (update=True)"
        )
    return baseline


def check_regressions(
    report: EvalReport,
    baseline: Baseline | None = None,
    *,
    threshold_points: float = DEFAULT_THRESHOLD_POINTS,
) -> RegressionGateResult:
    """Compare ``report`` with ``baseline`` (refused when it belongs to another suite):
    each gated metric may not fall by ``threshold_points`` or more (the false-alarm
    rate may not rise by as much); side-effect hygiene must be 100% and every case
    must have run, baseline or not."""
    failures = _absolute_failures(report)
    if baseline is None:
        return RegressionGateResult(
            passed=not failures, suite_id=report.suite_id, failures=tuple(failures)
        )
    if baseline.suite_id != report.suite_id:
        raise UsageError(
            f"the baseline was recorded for suite {baseline.suite_id}, not {report.suite_id}"
        )
    failures += _baseline_expects_too_little(report, baseline)
    changes = _case_changes(report, baseline)
    metrics = tuple(
        _metric(name, baseline, report, changes, threshold_points) for name in GATED_METRICS
    )
    for change in metrics:
        if change.regressed:
            failures.append(_describe(change))
    return RegressionGateResult(
        passed=not failures,
        suite_id=report.suite_id,
        failures=tuple(failures),
        metrics=metrics,
        changed_cases=tuple(changes.values()),
        compared=True,
    )


def _absolute_failures(report: EvalReport) -> list[str]:
    failures: list[str] = []
    hygiene = report.metrics.side_effect_hygiene
    if hygiene is not None and hygiene < 1.0:
        bad = [c for c in report.cases if c.hygiene_violations]
        detail = "; ".join(f"{c.case_id}: {', '.join(c.hygiene_violations)}" for c in bad)
        failures.append(f"side_effect_hygiene is {hygiene:.1%}, must be 100% ({detail})")
    repeated = [c for c in report.cases if c.duplicate_actions]
    if repeated:
        detail = "; ".join(f"{c.case_id}: {', '.join(c.duplicate_actions)}" for c in repeated)
        failures.append(
            f"{len(repeated)} case(s) had an expected action refused as a duplicate of an "
            f"earlier call, so they measured the database's past, not the agent ({detail})"
        )
    broken = [c for c in report.cases if c.error is not None]
    if broken:
        detail = "; ".join(f"{c.case_id}: {c.error}" for c in broken)
        failures.append(f"{len(broken)} case(s) could not run ({detail})")
    return failures


def _baseline_expects_too_little(report: EvalReport, baseline: Baseline) -> list[str]:
    """Cases whose baseline expects fewer of the suite's actions to run than the suite
    does: such a baseline would let the action go missing unnoticed."""
    found: list[str] = []
    for case in report.cases:
        recorded = baseline.cases.get(case.case_id, {})
        ok = recorded.get("actions_ok")
        if isinstance(ok, int) and not isinstance(ok, bool) and ok < case.actions_expected:
            found.append(
                f"the baseline expects {ok} of case {case.case_id}'s {case.actions_expected} "
                "action(s) to run, where the suite expects each once: record a new baseline"
            )
    return found


def _case_changes(report: EvalReport, baseline: Baseline) -> dict[str, CaseChange]:
    changes: dict[str, CaseChange] = {}
    for case in report.cases:
        after = _json_outcome(case)
        before = baseline.cases.get(case.case_id, {})
        if before != after:
            changes[case.case_id] = CaseChange(case_id=case.case_id, before=before, after=after)
    return changes


def _metric(
    name: str,
    baseline: Baseline,
    report: EvalReport,
    changes: dict[str, CaseChange],
    threshold: float,
) -> MetricChange:
    before, now = baseline.metrics.get(name), report.metrics.gated()[name]
    if before is None:
        regressed = False
    elif now is None:
        regressed = True
    else:
        drop = (before - now) if GATED_METRICS[name] == "higher" else (now - before)
        regressed = drop * 100 >= threshold - 1e-9
    behind = _BEHIND[name]
    cases = tuple(case_id for case_id, c in changes.items() if any(f in behind for f in c.fields))
    return MetricChange(name=name, baseline=before, current=now, regressed=regressed, cases=cases)


def _describe(change: MetricChange) -> str:
    def pct(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.1%}"

    verb = "rose" if GATED_METRICS[change.name] == "lower" else "fell"
    points = f" ({change.points:+.1f} points)" if change.points is not None else ""
    cases = f"; cases: {', '.join(change.cases)}" if change.cases else ""
    moved = f"from {pct(change.baseline)} to {pct(change.current)}"
    return f"{change.name} {verb} {moved}{points}{cases}"


def assert_no_regression(
    report: EvalReport,
    baseline: str | Path,
    *,
    update: bool = False,
    threshold_points: float = DEFAULT_THRESHOLD_POINTS,
) -> RegressionGateResult:
    """The deploy gate inside a test suite: raise ``AssertionError`` with the gate's
    summary when ``report`` regresses against the baseline file (or fails hygiene).
    ``update=True`` records ``report`` as the new baseline instead (refused while it
    fails hygiene). A baseline of another suite is a :class:`~assay.errors.UsageError`."""
    if update:
        write_baseline(report, baseline)
        return RegressionGateResult(passed=True, suite_id=report.suite_id, failures=())
    recorded = read_baseline(baseline, suite_id=report.suite_id)
    result = check_regressions(report, recorded, threshold_points=threshold_points)
    if not result.passed:
        raise AssertionError(result.summary())
    return result
