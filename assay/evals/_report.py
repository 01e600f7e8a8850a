"""An evaluation as one self-contained HTML file: the gated metrics against the
baseline, their trend over past runs, and the audit of every case that failed.

The file loads nothing: its style is inline and its charts are inline SVG, so it can
be attached to a build, mailed, or opened from a CI artefact offline. The audit of a
case is read from its run's ledger (hand-overs, gate decisions, verdicts with the
exact evidence span, ``Unsupported`` items, grants, tool calls, errors): the record
the control plane kept, not what the agent said about itself. Everything that came
from agents, tools or documents is data: HTML-escaped by the template, with control
and format characters shown as ``\\uXXXX``.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import jinja2

from assay.control_plane import ControlPlane
from assay.evals._evaluate import EvalReport
from assay.evals._files import write_atomically
from assay.evals._metrics import GATED_METRICS, CaseMetrics, check_precision
from assay.evals._regression_gate import Baseline, check_regressions
from assay.ledger import Ledger, LedgerEntry

__all__ = [
    "REPORT_FILE",
    "AuditedProposition",
    "AuditedRound",
    "CaseAudit",
    "audit_run",
    "render_html_report",
    "write_html_report",
    "write_report_dir",
]

#: The file :func:`write_report_dir` writes in its folder.
REPORT_FILE = "eval-report.html"
#: Where a proposition's evidence span is cut, in characters, when it is longer.
_MAX_SPAN = 2_000
_BAR_W, _ROW_H = 420, 26
_TREND_W, _TREND_H, _PAD = 760, 240, 64
_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b",
            "#e377c2", "#7f7f7f")  # fmt: skip


@dataclass(frozen=True, kw_only=True)
class AuditedProposition:
    """A proposition as handed over, with the verifier's verdict on it (if any) and the
    exact evidence span the verdict rests on."""

    claim_id: str
    proposition_id: str
    text: str
    ledger_ids: tuple[str, ...]
    label: str | None = None
    score: float | None = None
    reason: str | None = None
    #: What decided the verdict: a deterministic check's id, or ``model``.
    check: str | None = None
    evidence_id: str | None = None
    evidence_span: str | None = None


@dataclass(frozen=True, kw_only=True)
class AuditedRound:
    """One hand-over of the run and what the gate and the verifier made of it."""

    handover_id: str
    claims: tuple[tuple[str, str, str], ...]  # (id, type, text)
    propositions: tuple[AuditedProposition, ...]
    accepted: bool | None
    gate_errors: tuple[tuple[str, str, str], ...]  # (code, path, message)
    unsupported: tuple[tuple[str, str, str], ...]  # (label, proposition, missing evidence)


@dataclass(frozen=True, kw_only=True)
class CaseAudit:
    """What a case's run recorded, round by round, then its grants, calls and errors."""

    run_id: str
    rounds: tuple[AuditedRound, ...] = ()
    grants: tuple[tuple[str, str, str], ...] = ()  # (tool, decision, via or approver)
    calls: tuple[tuple[str, str, str], ...] = ()  # (tool, args, outcome)
    errors: tuple[tuple[str, str], ...] = ()  # (code, source)
    notes: tuple[str, ...] = field(default=())


# --- the audit, from the ledger --------------------------------------------------------


def audit_run(ledger: Ledger, run_id: str) -> CaseAudit:
    """The audit of ``run_id`` from its ledger entries, in the order they were written."""
    entries = ledger.entries(run_id)
    by_id = {e.id: e for e in entries}
    rounds: list[dict[str, Any]] = []
    grants: list[tuple[str, str, str]] = []
    outcomes: dict[str, str] = {}
    errors: list[tuple[str, str]] = []
    for entry in entries:
        body = _json(entry.text)
        if entry.kind == "handover":
            rounds.append(_new_round(entry, body))
        elif entry.kind == "gate_decision" and rounds:
            rounds[-1]["accepted"] = bool(body.get("accepted"))
            rounds[-1]["gate_errors"] = [
                (str(e.get("code")), str(e.get("path")), str(e.get("message")))
                for e in _dicts(body.get("errors"))
            ]
        elif entry.kind == "verdict" and rounds:
            rounds[-1]["verdicts"][(body.get("claim_id"), body.get("proposition_id"))] = body
        elif entry.kind == "unsupported" and rounds:
            rounds[-1]["unsupported"].append(
                (
                    str(body.get("label", "")),
                    str(body.get("proposition", "")),
                    str(body.get("missing_evidence", "")),
                )
            )
        elif entry.kind == "grant":
            decision = str(body.get("decision", "granted"))
            who = str(body.get("via") or f"reviewer:{body.get('approver', '')}")
            grants.append((str(body.get("tool", "")), decision, who))
        elif entry.kind in ("tool_output", "error") and "call_ledger_id" in entry.metadata:
            code = entry.metadata.get("code")
            outcomes[str(entry.metadata["call_ledger_id"])] = (
                "output recorded" if entry.kind == "tool_output" else f"error {code}"
            )
        elif entry.kind == "error":
            errors.append((str(entry.metadata.get("code", body.get("code", ""))), entry.source))
    calls = tuple(
        (
            str(_json(e.text).get("tool", "")),
            json.dumps(_json(e.text).get("args", {}), ensure_ascii=False, sort_keys=True),
            outcomes.get(e.id, "no result recorded"),
        )
        for e in entries
        if e.kind == "tool_call"
    )
    return CaseAudit(
        run_id=run_id,
        rounds=tuple(_round(r, by_id, ledger) for r in rounds),
        grants=tuple(grants),
        calls=calls,
        errors=tuple(errors),
    )


def _new_round(entry: LedgerEntry, body: Mapping[str, Any]) -> dict[str, Any]:
    return {"entry": entry, "body": body, "accepted": None, "gate_errors": [],
            "verdicts": {}, "unsupported": []}  # fmt: skip


def _round(
    raw: Mapping[str, Any], by_id: Mapping[str, LedgerEntry], ledger: Ledger
) -> AuditedRound:
    body: Mapping[str, Any] = raw["body"]
    claims = _dicts(body.get("claims"))
    props: list[AuditedProposition] = []
    for claim in claims:
        for prop in _dicts(claim.get("propositions")):
            key = (claim.get("id"), prop.get("id"))
            props.append(_proposition(claim, prop, raw["verdicts"].get(key), by_id, ledger))
    return AuditedRound(
        handover_id=raw["entry"].id,
        claims=tuple(
            (str(c.get("id", "")), str(c.get("type", "")), str(c.get("text", ""))) for c in claims
        ),
        propositions=tuple(props),
        accepted=raw["accepted"],
        gate_errors=tuple(raw["gate_errors"]),
        unsupported=tuple(raw["unsupported"]),
    )


def _proposition(
    claim: Mapping[str, Any],
    prop: Mapping[str, Any],
    verdict: Mapping[str, Any] | None,
    by_id: Mapping[str, LedgerEntry],
    ledger: Ledger,
) -> AuditedProposition:
    ids = tuple(str(x) for x in cast(list[Any], prop.get("ledger_ids") or []))
    base = AuditedProposition(
        claim_id=str(claim.get("id", "")),
        proposition_id=str(prop.get("id", "")),
        text=str(prop.get("text", "")),
        ledger_ids=ids,
    )
    if verdict is None:
        return base
    evidence_id = verdict.get("ledger_id")
    span = verdict.get("span")
    found = None
    if isinstance(evidence_id, str) and isinstance(span, list) and len(span) == 2:  # pyright: ignore[reportUnknownArgumentType]
        entry = by_id.get(evidence_id) or ledger.get_many([evidence_id]).get(evidence_id)
        start, end = int(cast(Any, span)[0]), int(cast(Any, span)[1])
        found = entry.text[start : min(end, start + _MAX_SPAN)] if entry is not None else None
    score = verdict.get("score")
    return AuditedProposition(
        claim_id=base.claim_id,
        proposition_id=base.proposition_id,
        text=base.text,
        ledger_ids=ids,
        label=str(verdict.get("label")),
        score=float(score) if isinstance(score, int | float) else None,
        reason=str(verdict.get("reason") or "") or None,
        check=str(verdict["check"]) if isinstance(verdict.get("check"), str) else None,
        evidence_id=evidence_id if isinstance(evidence_id, str) else None,
        evidence_span=found,
    )


def _json(text: str) -> Mapping[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return cast(Mapping[str, Any], value) if isinstance(value, dict) else {}


def _dicts(value: object) -> list[Mapping[str, Any]]:
    items = cast(list[Any], value) if isinstance(value, list) else []
    return [cast(Mapping[str, Any], v) for v in items if isinstance(v, dict)]


# --- what failed -----------------------------------------------------------------------


def _failures(case: CaseMetrics) -> list[str]:
    """Why a case failed, one line per reason; empty when it passed."""
    out: list[str] = []
    if case.error is not None:
        out.append(f"could not run: {case.error}")
    if not case.status_ok and case.error is None:
        out.append(f"status {case.status}, expected {case.expected_status}")
    out += [f"unfaithful claim {c}" for c in case.unfaithful_claims]
    out += [f"forbidden statement made: {t}" for t in case.forbidden_claims]
    out += [f"required fact not established: {f}" for f in case.missing_facts]
    out += list(case.action_problems)
    if case.action_problems:
        expected, taken = ", ".join(case.expected_actions), ", ".join(case.actions_taken)
        out.append(f"actions expected: {expected or 'none'}; taken: {taken or 'none'}")
    out += [f"side-effect hygiene: {v}" for v in case.hygiene_violations]
    if not case.grants_ok:
        out.append(f"grants requested ({case.grants_requested}) differ from the expected")
    return out


# --- charts ----------------------------------------------------------------------------


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def _bars(report: EvalReport, baseline: Baseline | None) -> list[dict[str, Any]]:
    """One row per gated metric: the current bar, the baseline's mark, the change."""
    gate = check_regressions(report, baseline) if baseline is not None else None
    changes = {m.name: m for m in gate.metrics} if gate is not None else {}
    rows: list[dict[str, Any]] = []
    for i, (name, value) in enumerate(report.metrics.gated().items()):
        change = changes.get(name)
        before = change.baseline if change is not None else None
        rows.append(
            {
                "name": name,
                "lower": GATED_METRICS[name] == "lower",
                "y": i * _ROW_H,
                "width": round((value or 0.0) * _BAR_W, 1),
                "base_x": None if before is None else round(before * _BAR_W, 1),
                "value": _pct(value),
                "baseline": _pct(before) if change is not None else "",
                "points": "" if change is None or change.points is None
                else f"{change.points:+.1f} pts",
                "regressed": bool(change and change.regressed),
            }
        )  # fmt: skip
    return rows


def _field(run: object, name: str) -> Any:
    """A past run's field, from a mapping or from a record with that attribute."""
    if isinstance(run, Mapping):
        return cast(Mapping[str, Any], run).get(name)
    return getattr(run, name, None)


def _when(value: object) -> str:
    """A run's time to the minute."""
    return str(value or "")[:16].replace("T", " ")


def _trend(history: Sequence[object]) -> dict[str, Any]:
    """A polyline per gated metric over the past runs (oldest first); a run without a
    figure for a metric leaves that point out."""
    runs = list(history)
    step = (_TREND_W - 2 * _PAD) / max(len(runs) - 1, 1)
    lines: list[dict[str, Any]] = []
    for i, name in enumerate(GATED_METRICS):
        points: list[str] = []
        for j, run in enumerate(runs):
            value = cast(Mapping[str, Any], _field(run, "metrics") or {}).get(name)
            if isinstance(value, int | float) and not isinstance(value, bool):
                x = _PAD + j * step
                y = _TREND_H - _PAD - float(value) * (_TREND_H - 2 * _PAD)
                points.append(f"{x:.1f},{y:.1f}")
        if points:
            lines.append({"name": name, "colour": _COLOURS[i % len(_COLOURS)], "points": points})
    labels = [
        {"x": round(_PAD + j * step, 1), "text": _when(_field(run, "finished_at"))}
        for j, run in enumerate(runs)
    ]
    return {"runs": len(runs), "lines": lines, "labels": labels}


# --- rendering -------------------------------------------------------------------------


def visible(value: object) -> str:
    """``value`` as text with control and format characters (bidi overrides, zero-width
    marks) written as ``\\uXXXX``, so what is shown is what is there. Line breaks and
    tabs stay."""
    return "".join(
        ch
        if ch in "\n\t" or unicodedata.category(ch) not in ("Cc", "Cf", "Cs", "Co", "Cn")
        else f"\\u{ord(ch):04x}"
        for ch in str(value)
    )


_ENV = jinja2.Environment(
    autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True
)
_ENV.filters["visible"] = visible


def render_html_report(
    report: EvalReport,
    *,
    baseline: Baseline | None = None,
    history: Iterable[object] = (),
    audits: Mapping[str, CaseAudit] | None = None,
) -> str:
    """The report as one HTML document. ``history`` holds past runs, oldest first, as
    mappings ``{"finished_at": ..., "metrics": {name: fraction or None}}`` or records
    with those two attributes;
    ``audits`` the audit of each case by its id (a failed case without one is listed
    with its reasons only)."""
    failed = [(c, _failures(c)) for c in report.cases]
    return _template().render(
        report=report,
        m=report.metrics,
        baseline=baseline,
        bars=_bars(report, baseline),
        bar_w=_BAR_W,
        bars_h=len(GATED_METRICS) * _ROW_H,
        trend=_trend(list(history)),
        trend_w=_TREND_W,
        trend_h=_TREND_H,
        pad=_PAD,
        failed=[(c, why, (audits or {}).get(c.case_id)) for c, why in failed if why],
        checks=check_precision(report.cases),
        passed=sum(not why for _, why in failed),
    )


def write_html_report(
    report: EvalReport,
    path: str | Path,
    *,
    baseline: Baseline | None = None,
    history: Iterable[object] = (),
    audits: Mapping[str, CaseAudit] | None = None,
) -> Path:
    """Write :func:`render_html_report` to ``path`` (atomically) and return it."""
    text = render_html_report(report, baseline=baseline, history=history, audits=audits)
    return write_atomically(path, text)


def write_report_dir(
    report: EvalReport,
    directory: str | Path,
    *,
    baseline: Baseline | None = None,
    history: Iterable[object] = (),
    database_url: str | None = None,
) -> Path:
    """Write ``directory/eval-report.html`` (creating the folder), with the audit of each
    failed case read from the ledger at ``database_url`` (default
    ``ASSAY_DATABASE_URL``), where the evaluation ran."""
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    runs = {c.case_id: c.run_id for c in report.cases if c.run_id is not None and _failures(c)}
    audits: dict[str, CaseAudit] = {}
    if runs:
        with ControlPlane.open(database_url) as cp:
            audits = {case_id: audit_run(cp.ledger, run_id) for case_id, run_id in runs.items()}
    return write_html_report(
        report, folder / REPORT_FILE, baseline=baseline, history=history, audits=audits
    )


def _template() -> jinja2.Template:
    return _ENV.from_string(_TEMPLATE)


_TEMPLATE = """\
<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{ report.suite_name|visible }} — eval report</title>
<style>
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px auto;
max-width:1100px;padding:0 16px;color:#1b1f24;background:#fff}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ddd}
h3{font-size:15px;margin:18px 0 6px}.muted{color:#57606a}.ok{color:#1a7f37}.bad{color:#cf222e}
table{border-collapse:collapse;margin:6px 0 10px;width:100%}
td,th{border:1px solid #d0d7de;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f6f8fa}code,pre{font:12px/1.4 ui-monospace,Menlo,Consolas,monospace}
pre{white-space:pre-wrap;word-break:break-word;background:#f6f8fa;padding:6px;margin:0}
.case{border:1px solid #d0d7de;border-radius:6px;padding:8px 14px;margin:12px 0}
.label-entailment{color:#1a7f37}.label-contradiction,.label-missing_evidence{color:#cf222e}
.label-neutral{color:#9a6700}svg text{font:12px system-ui,sans-serif;fill:#1b1f24}
.bar{fill:#54aeff}.bar.regressed{fill:#ff8182}.mark{stroke:#1b1f24;stroke-width:2}
.track{fill:#eaeef2}
</style>
</head>
<body>
<h1>{{ report.suite_name|visible }}</h1>
<p class="muted">suite <code>{{ report.suite_id }}</code> · {{ m.cases }} cases ·
{{ passed }} passed · {{ failed|length }} failed
{% if baseline %} · compared with the baseline of suite
<code>{{ baseline.suite_id }}</code>{% endif %}
</p>

<h2>Gated metrics</h2>
<svg class="bars" xmlns="http://www.w3.org/2000/svg" width="{{ bar_w + 560 }}"
 height="{{ bars_h + 8 }}" role="img" aria-label="gated metrics against the baseline">
{% for b in bars %}
<g transform="translate(0,{{ b.y + 4 }})">
<text x="0" y="15">{{ b.name }}{% if b.lower %} (lower is better){% endif %}</text>
<rect class="track" x="230" y="3" width="{{ bar_w }}" height="16"/>
<rect class="bar current{% if b.regressed %} regressed{% endif %}" data-metric="{{ b.name }}"
 x="230" y="3" width="{{ b.width }}" height="16"/>
{% if b.base_x is not none %}
<line class="mark baseline" x1="{{ 230 + b.base_x }}" x2="{{ 230 + b.base_x }}" y1="0" y2="22"/>
{% endif %}
<text x="{{ 240 + bar_w }}" y="15">{{ b.value }}
{%- if b.baseline %} · baseline {{ b.baseline }}
{%- if b.points %} · {{ b.points }}{% endif %}{% endif %}</text>
</g>
{% endfor %}
</svg>
<p class="muted">Bars: this run; black marks: the baseline
{%- if not baseline %} (none given){% endif %}.
Rounds {{ '%.2f'|format(m.rounds_mean) if m.rounds_mean is not none else 'n/a' }}/case ·
latency {{ '%.2f'|format(m.latency_mean_s) if m.latency_mean_s is not none else 'n/a' }} s/case ·
errors {{ m.errors }}</p>

<h2>Trend over past runs</h2>
{% if trend.runs %}
<svg class="trend" xmlns="http://www.w3.org/2000/svg" width="{{ trend_w + 200 }}"
 height="{{ trend_h + 20 }}" role="img" aria-label="gated metrics over past runs">
<line x1="{{ pad }}" x2="{{ trend_w - pad }}" y1="{{ trend_h - pad }}"
 y2="{{ trend_h - pad }}" stroke="#8c959f"/>
<line x1="{{ pad }}" x2="{{ trend_w - pad }}" y1="{{ pad }}" y2="{{ pad }}" stroke="#eaeef2"/>
<text x="{{ pad - 40 }}" y="{{ pad + 4 }}">100%</text>
<text x="{{ pad - 26 }}" y="{{ trend_h - pad + 4 }}">0%</text>
{% for line in trend.lines %}
<polyline class="trend-line" data-metric="{{ line.name }}" fill="none" stroke="{{ line.colour }}"
 stroke-width="2" points="{{ line.points|join(' ') }}"/>
<text x="{{ trend_w + 4 }}" y="{{ pad + loop.index0 * 16 }}"
 style="fill:{{ line.colour }}">{{ line.name }}</text>
{% endfor %}
{% for label in trend.labels %}
<text x="{{ label.x }}" y="{{ trend_h - pad + 18 }}" text-anchor="middle"
 class="muted">{{ label.text|visible }}</text>
{% endfor %}
</svg>
{% else %}
<p class="muted">No past runs were given.</p>
{% endif %}

<h2>What decided the verdicts</h2>
{% if checks %}
<table class="checks"><tr><th>check</th><th>verdicts decided</th><th>entailed</th>
<th>refused</th><th>precision (gold agrees)</th></tr>
{% for c in checks %}
<tr><td><code>{{ c.check|visible }}</code></td><td>{{ c.decided }}</td><td>{{ c.entailed }}</td>
<td>{{ c.refused }}</td>
<td>{{ '%.1f%%'|format(100 * c.precision) if c.precision is not none else 'n/a' }}</td></tr>
{% endfor %}
</table>
{% else %}
<p class="muted">No verdict was recorded.</p>
{% endif %}

<h2>Failed cases</h2>
{% if not failed %}<p class="ok">Every case passed.</p>{% endif %}
{% for case, why, audit in failed %}
<div class="case" id="case-{{ case.case_id|visible }}">
<h3>{{ case.case_id|visible }} <span class="muted">— {{ case.status or 'error' }},
expected {{ case.expected_status }}</span></h3>
<ul>{% for line in why %}<li class="bad">{{ line|visible }}</li>{% endfor %}</ul>
{% if case.run_id %}<p class="muted">run <code>{{ case.run_id|visible }}</code></p>{% endif %}
{% if audit %}
{% for r in audit.rounds %}
<h4>Round {{ loop.index0 }} · hand-over <code>{{ r.handover_id }}</code> ·
{% if r.accepted %}<span class="ok">accepted by the gate</span>
{% elif r.accepted is none %}no gate decision
{% else %}<span class="bad">refused by the gate</span>{% endif %}</h4>
{% if r.claims %}
<table><tr><th>claim</th><th>type</th><th>text</th></tr>
{% for cid, ctype, text in r.claims %}
<tr><td><code>{{ cid|visible }}</code></td><td>{{ ctype|visible }}</td>
<td class="claim">{{ text|visible }}</td></tr>
{% endfor %}
</table>
{% endif %}
{% if r.gate_errors %}
<table><tr><th>gate error</th><th>path</th><th>message</th></tr>
{% for code, path, message in r.gate_errors %}
<tr><td class="bad gate-error"><code>{{ code|visible }}</code></td>
<td><code>{{ path|visible }}</code></td><td>{{ message|visible }}</td></tr>
{% endfor %}
</table>
{% endif %}
{% if r.propositions %}
<table><tr><th>proposition</th><th>cites</th><th>verdict</th><th>evidence span</th></tr>
{% for p in r.propositions %}
<tr><td>{{ p.text|visible }}</td><td><code>{{ p.ledger_ids|join(', ')|visible }}</code></td>
<td>{% if p.label %}<span class="verdict label-{{ p.label|visible }}">{{ p.label|visible }}</span>
{% if p.score is not none %} {{ '%.3f'|format(p.score) }}{% endif %}
{% if p.check %} <span class="muted">decided by</span> <code>{{ p.check|visible }}</code>{% endif %}
{% if p.reason %}<br><span class="muted">{{ p.reason|visible }}</span>{% endif %}
{% else %}<span class="muted">not verified</span>{% endif %}</td>
<td>{% if p.evidence_span is not none %}<code>{{ p.evidence_id|visible }}</code>
<pre class="span">{{ p.evidence_span|visible }}</pre>{% endif %}</td></tr>
{% endfor %}
</table>
{% endif %}
{% if r.unsupported %}
<table><tr><th>Unsupported</th><th>label</th><th>missing evidence</th></tr>
{% for label, text, missing in r.unsupported %}
<tr class="unsupported"><td>{{ text|visible }}</td><td>{{ label|visible }}</td>
<td>{{ missing|visible }}</td></tr>
{% endfor %}
</table>
{% endif %}
{% endfor %}
{% if audit.grants %}
<table><tr><th>grant for</th><th>decision</th><th>by</th></tr>
{% for tool, decision, who in audit.grants %}
<tr class="grant"><td><code>{{ tool|visible }}</code></td><td>{{ decision|visible }}</td>
<td>{{ who|visible }}</td></tr>
{% endfor %}
</table>
{% endif %}
{% if audit.calls %}
<table><tr><th>tool call</th><th>arguments</th><th>outcome</th></tr>
{% for tool, args, outcome in audit.calls %}
<tr class="call"><td><code>{{ tool|visible }}</code></td><td><code>{{ args|visible }}</code></td>
<td>{{ outcome|visible }}</td></tr>
{% endfor %}
</table>
{% endif %}
{% if audit.errors %}
<table><tr><th>error</th><th>source</th></tr>
{% for code, source in audit.errors %}
<tr><td class="bad"><code>{{ code|visible }}</code></td><td>{{ source|visible }}</td></tr>
{% endfor %}
</table>
{% endif %}
{% endif %}
</div>
{% endfor %}
</body>
</html>
"""
