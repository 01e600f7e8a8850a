"""Frozen evals that block a deploy: suites of cases with gold read from their source
documents, metrics of a fenced graph's runs against that gold, and a gate that fails
when a metric drops against a baseline kept beside the suite.

- :func:`load_suite` reads a YAML or JSON suite (:func:`suite_json_schema` is its
  published JSON Schema); its ``id`` is the hash of its canonical content.
- :func:`evaluate` runs every case on ``graph(control_plane)`` (in worker processes
  with ``jobs``) and scores it: faithfulness, coverage, abstention precision and
  recall, false alarms, actions, grants, side-effect hygiene, rounds, latency and
  model time (:class:`EvalReport`).
- :func:`check_regressions` compares a report with a :class:`Baseline`;
  :func:`assert_no_regression` is the same gate for a test suite.
- :func:`write_html_report` writes the evaluation as one self-contained HTML file
  (metrics against the baseline, their trend, the audit of each failed case).
- :func:`record_eval` keeps an evaluation and its gate result in the control
  plane's database (append-only); :func:`eval_history` reads them back, newest
  first (:class:`EvalRunRecord`).
"""

import typing

from assay._lazy import exports as _exports

if typing.TYPE_CHECKING:
    from assay.evals._evaluate import DEFAULT_JUDGE, CaseDone, EvalReport, evaluate, score
    from assay.evals._history import (
        MAX_HISTORY,
        EvalHistory,
        EvalRunRecord,
        baseline_sha256,
        eval_history,
        record_eval,
    )
    from assay.evals._match import MatchHow, MeaningJudge, NLIJudge, match_statement
    from assay.evals._metrics import (
        GATED_METRICS,
        CaseMetrics,
        CheckDecision,
        CheckPrecision,
        SuiteMetrics,
        check_precision,
        score_case,
        summarise,
    )
    from assay.evals._model import (
        SUITE_FORMAT,
        SUITE_SCHEMA_ID,
        ActionSpec,
        CaseModel,
        Expectation,
        FactModel,
        FileRef,
        FixtureOutput,
        SuiteModel,
    )
    from assay.evals._regression_gate import (
        BASELINE_FORMAT,
        DEFAULT_THRESHOLD_POINTS,
        Baseline,
        CaseChange,
        MetricChange,
        RegressionGateResult,
        assert_no_regression,
        baseline_of,
        check_regressions,
        read_baseline,
        statement_ref,
        write_baseline,
    )
    from assay.evals._report import (
        REPORT_FILE,
        AuditedProposition,
        AuditedRound,
        CaseAudit,
        audit_run,
        render_html_report,
        write_html_report,
        write_report_dir,
    )
    from assay.evals._run import (
        MAX_RESUMES,
        REVIEWER,
        CaseRun,
        ObservedCall,
        ObservedProposition,
        RequestedGrant,
        TimedModel,
        run_case,
    )
    from assay.evals._suite import (
        EvalCase,
        Suite,
        SuiteProblem,
        load_suite,
        parse_suite,
        suite_json_schema,
        suite_json_schema_text,
        suite_problems,
    )


__all__ = [
    "BASELINE_FORMAT",
    "DEFAULT_JUDGE",
    "DEFAULT_THRESHOLD_POINTS",
    "GATED_METRICS",
    "MAX_HISTORY",
    "MAX_RESUMES",
    "REPORT_FILE",
    "REVIEWER",
    "SUITE_FORMAT",
    "SUITE_SCHEMA_ID",
    "ActionSpec",
    "AuditedProposition",
    "AuditedRound",
    "Baseline",
    "CaseAudit",
    "CaseChange",
    "CaseDone",
    "CaseMetrics",
    "CaseModel",
    "CaseRun",
    "CheckDecision",
    "CheckPrecision",
    "EvalCase",
    "EvalHistory",
    "EvalReport",
    "EvalRunRecord",
    "Expectation",
    "FactModel",
    "FileRef",
    "FixtureOutput",
    "MatchHow",
    "MeaningJudge",
    "MetricChange",
    "NLIJudge",
    "ObservedCall",
    "ObservedProposition",
    "RegressionGateResult",
    "RequestedGrant",
    "Suite",
    "SuiteMetrics",
    "SuiteModel",
    "SuiteProblem",
    "TimedModel",
    "assert_no_regression",
    "audit_run",
    "baseline_of",
    "baseline_sha256",
    "check_precision",
    "check_regressions",
    "eval_history",
    "evaluate",
    "load_suite",
    "match_statement",
    "parse_suite",
    "read_baseline",
    "record_eval",
    "render_html_report",
    "run_case",
    "score",
    "score_case",
    "statement_ref",
    "suite_json_schema",
    "suite_json_schema_text",
    "suite_problems",
    "summarise",
    "write_baseline",
    "write_html_report",
    "write_report_dir",
]


# Each name is imported from its home when first used (PEP 562): importing the
# package loads none of them.
__getattr__, __dir__ = _exports(
    __name__,
    {
        "DEFAULT_JUDGE": "assay.evals._evaluate",
        "CaseDone": "assay.evals._evaluate",
        "EvalReport": "assay.evals._evaluate",
        "evaluate": "assay.evals._evaluate",
        "score": "assay.evals._evaluate",
        "MAX_HISTORY": "assay.evals._history",
        "EvalHistory": "assay.evals._history",
        "EvalRunRecord": "assay.evals._history",
        "baseline_sha256": "assay.evals._history",
        "eval_history": "assay.evals._history",
        "record_eval": "assay.evals._history",
        "MatchHow": "assay.evals._match",
        "MeaningJudge": "assay.evals._match",
        "NLIJudge": "assay.evals._match",
        "match_statement": "assay.evals._match",
        "GATED_METRICS": "assay.evals._metrics",
        "CaseMetrics": "assay.evals._metrics",
        "CheckDecision": "assay.evals._metrics",
        "CheckPrecision": "assay.evals._metrics",
        "SuiteMetrics": "assay.evals._metrics",
        "check_precision": "assay.evals._metrics",
        "score_case": "assay.evals._metrics",
        "summarise": "assay.evals._metrics",
        "SUITE_FORMAT": "assay.evals._model",
        "SUITE_SCHEMA_ID": "assay.evals._model",
        "ActionSpec": "assay.evals._model",
        "CaseModel": "assay.evals._model",
        "Expectation": "assay.evals._model",
        "FactModel": "assay.evals._model",
        "FileRef": "assay.evals._model",
        "FixtureOutput": "assay.evals._model",
        "SuiteModel": "assay.evals._model",
        "BASELINE_FORMAT": "assay.evals._regression_gate",
        "DEFAULT_THRESHOLD_POINTS": "assay.evals._regression_gate",
        "Baseline": "assay.evals._regression_gate",
        "CaseChange": "assay.evals._regression_gate",
        "MetricChange": "assay.evals._regression_gate",
        "RegressionGateResult": "assay.evals._regression_gate",
        "assert_no_regression": "assay.evals._regression_gate",
        "baseline_of": "assay.evals._regression_gate",
        "check_regressions": "assay.evals._regression_gate",
        "read_baseline": "assay.evals._regression_gate",
        "statement_ref": "assay.evals._regression_gate",
        "write_baseline": "assay.evals._regression_gate",
        "REPORT_FILE": "assay.evals._report",
        "AuditedProposition": "assay.evals._report",
        "AuditedRound": "assay.evals._report",
        "CaseAudit": "assay.evals._report",
        "audit_run": "assay.evals._report",
        "render_html_report": "assay.evals._report",
        "write_html_report": "assay.evals._report",
        "write_report_dir": "assay.evals._report",
        "MAX_RESUMES": "assay.evals._run",
        "REVIEWER": "assay.evals._run",
        "CaseRun": "assay.evals._run",
        "ObservedCall": "assay.evals._run",
        "ObservedProposition": "assay.evals._run",
        "RequestedGrant": "assay.evals._run",
        "TimedModel": "assay.evals._run",
        "run_case": "assay.evals._run",
        "EvalCase": "assay.evals._suite",
        "Suite": "assay.evals._suite",
        "SuiteProblem": "assay.evals._suite",
        "load_suite": "assay.evals._suite",
        "parse_suite": "assay.evals._suite",
        "suite_json_schema": "assay.evals._suite",
        "suite_json_schema_text": "assay.evals._suite",
        "suite_problems": "assay.evals._suite",
    },
)
