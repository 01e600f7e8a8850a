"""Evaluating a suite: each case run on the fenced graph, in this process or in worker
processes, then scored against its gold."""

from __future__ import annotations

import multiprocessing
import secrets
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from assay.control_plane import ControlPlane, GraphFactory
from assay.errors import UsageError
from assay.evals._match import NLIJudge
from assay.evals._metrics import CaseMetrics, SuiteMetrics, score_case, summarise
from assay.evals._ray import run_on_ray
from assay.evals._run import CaseRun, TimedModel, run_case
from assay.evals._suite import Suite, load_suite
from assay.fence import FencedGraph, effect_scoped, graph_identity
from assay.verifier import NLIModel, Verifier

__all__ = ["DEFAULT_JUDGE", "CaseDone", "EvalReport", "evaluate"]

Judge = Callable[[str, str], bool]
#: Called as each case finishes, with what it came to (in the calling process, in
#: the order cases finish): a progress display hangs on it, the library shows nothing.
CaseDone = Callable[[CaseRun], None]
#: The most worker processes ``jobs`` may ask for.
MAX_JOBS = 64


class _VerifierJudge:
    """The default meaning judge: the shipped NLI model (or ``ASSAY_NLI_MODEL``),
    loaded the first time words differ."""

    def __init__(self) -> None:
        self._judge: NLIJudge | None = None

    def __call__(self, premise: str, hypothesis: str) -> bool:
        if self._judge is None:
            self._judge = NLIJudge(Verifier.default())
        return self._judge(premise, hypothesis)


#: Stands for "the verifier's model" as ``evaluate``'s judge.
DEFAULT_JUDGE: Judge = _VerifierJudge()


@dataclass(frozen=True, kw_only=True)
class EvalReport:
    """A suite's evaluation: each case's figures and the suite's. ``evaluate`` also
    says which fenced graph ran (the name and version given to ``fence()``) and when;
    a report built by :func:`score` alone leaves them ``None``."""

    suite_id: str
    suite_name: str
    suite_file: str
    cases: tuple[CaseMetrics, ...]
    metrics: SuiteMetrics
    graph_name: str | None = None
    graph_version: str | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None

    def case(self, case_id: str) -> CaseMetrics:
        for case in self.cases:
            if case.case_id == case_id:
                return case
        raise UsageError(f"the report has no case {case_id!r}")


def evaluate(
    suite: Suite | str | Path,
    graph: GraphFactory,
    *,
    control_plane: ControlPlane | None = None,
    database_url: str | None = None,
    jobs: int = 1,
    nli: NLIModel | None = None,
    judge: Judge | None = DEFAULT_JUDGE,
    on_case: CaseDone | None = None,
    ray: bool | str = False,
) -> EvalReport:
    """Run every case of ``suite`` on the graph ``graph(control_plane)`` builds, and
    score it.

    With ``control_plane`` the cases run on it, one after the other. Otherwise a
    control plane is opened on ``database_url`` (default ``ASSAY_DATABASE_URL``)
    with ``nli`` as its model (default: the shipped one), which also times the
    model; ``jobs > 1`` runs the cases in that many worker processes, each opening
    its own control plane (``graph`` and ``nli`` must then be picklable: a
    module-level factory). ``judge(premise, hypothesis)`` decides whether two
    statements say the same where their words differ (default: the verifier's
    model; ``None``: words and values only). ``on_case(case_run)`` is called as each
    case finishes, in this process.

    ``ray`` runs the cases on ``jobs`` Ray actors instead of worker processes
    (the ``ray`` extra): ``True`` on the cluster ``RAY_ADDRESS`` or a local ``ray
    start`` names (else a new local one), a string on the cluster at that address.
    Every actor opens the database at ``database_url``, so it must be one the
    cluster's nodes reach.

    The evaluation's effects are its own: its graph runs on a bus whose effects are
    named in a scope of this evaluation (:func:`~assay.fence.effect_scoped`), so a
    call an earlier evaluation made on the same database is not one its cases repeat
    (two cases of one evaluation with the same effect still are).
    """
    loaded = suite if isinstance(suite, Suite) else load_suite(suite)
    if isinstance(jobs, bool) or not isinstance(jobs, int) or not 1 <= jobs <= MAX_JOBS:
        raise UsageError(f"jobs must be a whole number from 1 to {MAX_JOBS}, not {jobs!r}")
    if not callable(graph):
        raise UsageError("graph must be a factory graph(control_plane) -> fenced graph")
    if not isinstance(ray, bool | str):
        raise UsageError(f"ray must be True, False or a cluster address, not {ray!r}")
    done: CaseDone = on_case if on_case is not None else _ignore
    started = datetime.now(UTC)
    # The evaluation's effects are its own: a refund an earlier evaluation made on
    # this database is not one this evaluation's cases repeat.
    graph = InScope(factory=graph, scope=f"eval:{loaded.id}:{secrets.token_hex(8)}")
    if ray is not False:
        url = database_url or (control_plane.url if control_plane is not None else None)
        with ControlPlane.open(url) as cp:  # the schema, brought up once here
            resolved = cp.url
        address = None if ray is True or not ray.strip() else ray.strip()
        identity, runs = run_on_ray(address, resolved, graph, loaded, nli, jobs, done)
    elif control_plane is not None and jobs == 1:
        identity, runs = _run_here(control_plane, graph, loaded, None, done)
    elif jobs == 1:
        timer = TimedModel(nli)
        with ControlPlane.open(database_url, nli=timer) as cp:
            identity, runs = _run_here(cp, graph, loaded, timer, done)
    else:
        url = database_url or (control_plane.url if control_plane is not None else None)
        identity, runs = _run_parallel(url, graph, loaded, nli, jobs, done)
    # The default judge loads the verifier's model afresh for each evaluation, when
    # words first differ.
    report = score(loaded, runs, judge=_VerifierJudge() if judge is DEFAULT_JUDGE else judge)
    return replace(
        report,
        graph_name=identity[0],
        graph_version=identity[1],
        started_at=started,
        finished_at=datetime.now(UTC),
    )


@dataclass(frozen=True, kw_only=True)
class InScope:
    """A graph factory whose graph runs on components whose effects are named in
    ``scope`` (:func:`~assay.fence.effect_scoped`); picklable when ``factory`` is, so
    worker processes and Ray actors build it the same way."""

    factory: GraphFactory
    scope: str

    def __call__(self, cp: ControlPlane) -> FencedGraph:
        return self.factory(effect_scoped(cp, self.scope))


def _ignore(_run: CaseRun) -> None:
    return None


def _identity(graph: FencedGraph) -> tuple[str, str]:
    found = graph_identity(graph)
    return found.name, found.version


def score(suite: Suite, runs: Sequence[CaseRun], *, judge: Judge | None = None) -> EvalReport:
    """The report of ``suite`` from its case runs (one per case, in any order)."""
    by_id = {run.case_id: run for run in runs}
    cases = tuple(score_case(case, by_id[case.id], judge=judge) for case in suite.cases)
    return EvalReport(
        suite_id=suite.id,
        suite_name=suite.name,
        suite_file=suite.file,
        cases=cases,
        metrics=summarise(cases),
    )


def _run_here(
    cp: ControlPlane,
    factory: GraphFactory,
    suite: Suite,
    timer: TimedModel | None,
    done: CaseDone,
) -> tuple[tuple[str, str], list[CaseRun]]:
    graph = factory(cp)
    identity = _identity(graph)
    runs: list[CaseRun] = []
    for case in suite.cases:
        runs.append(run_case(cp, graph, suite, case, timer=timer))
        done(runs[-1])
    return identity, runs


def _run_parallel(
    url: str | None,
    factory: GraphFactory,
    suite: Suite,
    nli: NLIModel | None,
    jobs: int,
    done: CaseDone,
) -> tuple[tuple[str, str], list[CaseRun]]:
    # The schema is brought up once here, so the workers only open it.
    with ControlPlane.open(url) as cp:
        resolved = cp.url
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(
        max_workers=min(jobs, len(suite.cases)),
        mp_context=context,
        initializer=_start_worker,
        initargs=(resolved, factory, suite, nli),
    ) as pool:
        identity = pool.submit(_identity_in_worker)
        runs: list[CaseRun] = []
        for future in as_completed([pool.submit(_run_in_worker, c.id) for c in suite.cases]):
            runs.append(future.result())
            done(runs[-1])
        return identity.result(), runs


_WORKER: dict[str, Any] = {}


def _start_worker(url: str, factory: GraphFactory, suite: Suite, nli: NLIModel | None) -> None:
    timer = TimedModel(nli)
    cp = ControlPlane.open(url, migrate=False, nli=timer)
    _WORKER.update(cp=cp, graph=factory(cp), suite=suite, timer=timer)


def _identity_in_worker() -> tuple[str, str]:
    return _identity(_WORKER["graph"])


def _run_in_worker(case_id: str) -> CaseRun:
    suite: Suite = _WORKER["suite"]
    return run_case(
        _WORKER["cp"], _WORKER["graph"], suite, suite.case(case_id), timer=_WORKER["timer"]
    )
