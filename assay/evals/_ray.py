"""Cases as Ray tasks: the same evaluation as worker processes, on a Ray cluster.

Each of ``jobs`` Ray actors opens its own control plane from the database URL (the
schema is brought up once, by the caller) and builds the graph once; cases are
handed to whichever actor is free. The database must be one every node can reach:
PostgreSQL for a cluster of several machines, a SQLite file only on a local Ray.

Ray is optional (``pip install 'assay[ray]'``). The graph factory and the NLI model
travel to the actors by pickle, so the factory must be a module-level function
importable on the cluster's nodes: an installed package, or a module under the
driver's working directory, which is put on the actors' ``PYTHONPATH``.
"""

from __future__ import annotations

import logging
import os
import socket
import sys
from collections.abc import Callable
from typing import Any, cast

from assay.control_plane import ControlPlane, GraphFactory
from assay.errors import ConfigurationError
from assay.evals._run import CaseRun, TimedModel, run_case
from assay.evals._suite import Suite
from assay.fence import graph_identity
from assay.verifier import NLIModel

__all__ = ["run_on_ray"]


class _CaseWorker:
    """One Ray actor: a control plane and the graph, kept across the cases it runs."""

    def __init__(self, url: str, factory: GraphFactory, suite: Suite, nli: NLIModel | None):
        self._timer = TimedModel(nli)
        self._cp = ControlPlane.open(url, migrate=False, nli=self._timer)
        self._graph = factory(self._cp)
        self._suite = suite

    def identity(self) -> tuple[str, str]:
        found = graph_identity(self._graph)
        return found.name, found.version

    def run(self, case_id: str) -> CaseRun:
        case = self._suite.case(case_id)
        return run_case(self._cp, self._graph, self._suite, case, timer=self._timer)


def run_on_ray(
    address: str | None,
    url: str,
    factory: GraphFactory,
    suite: Suite,
    nli: NLIModel | None,
    jobs: int,
    done: Callable[[CaseRun], None],
) -> tuple[tuple[str, str], list[CaseRun]]:
    """Run every case of ``suite`` on ``jobs`` Ray actors; ``address`` names the
    cluster (``None``: the one ``RAY_ADDRESS`` or a local ``ray start`` names, else a
    new local one). Ray is left running when it was already initialised in this
    process, and shut down otherwise."""
    try:
        import ray
        from ray.util import ActorPool
    except ModuleNotFoundError as exc:
        raise ConfigurationError(
            "running cases on Ray needs the ray extra: pip install 'assay[ray]'"
        ) from exc
    started_here = not ray.is_initialized()
    if started_here and address is not None:
        _check_reachable(address)
    if started_here:
        path = os.pathsep.join(p for p in (os.getcwd(), *sys.path) if p)
        try:
            ray.init(
                address=address,
                include_dashboard=False,
                log_to_driver=False,
                logging_level=logging.ERROR,
                runtime_env={"env_vars": {"PYTHONPATH": path}},
            )
        except (ConnectionError, ValueError, RuntimeError, SystemExit) as exc:
            # (Ray exits the process when it gives up on a cluster: kept as an error.)
            raise ConfigurationError(f"cannot reach the Ray cluster {address!r}: {exc}") from exc
    try:
        actor: Any = ray.remote(_CaseWorker)
        workers = [actor.remote(url, factory, suite, nli) for _ in range(jobs)]
        identity: tuple[str, str] = ray.get(workers[0].identity.remote())
        pool: Any = ActorPool(workers)
        runs: list[CaseRun] = []
        for run in pool.map_unordered(
            lambda w, case_id: w.run.remote(case_id), [c.id for c in suite.cases]
        ):
            runs.append(cast(CaseRun, run))
            done(runs[-1])
        return identity, runs
    finally:
        if started_here:
            ray.shutdown()


def _check_reachable(address: str, timeout_s: float = 5.0) -> None:
    """Refuse an address whose port does not answer, in seconds rather than after
    Ray's own minutes of retries (which end by exiting the process)."""
    if "://" in address:  # ray:// (Ray Client) and others: left to Ray
        return
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise ConfigurationError(f"not a Ray cluster address (host:port): {address!r}")
    try:
        socket.create_connection((host, int(port)), timeout=timeout_s).close()
    except OSError as exc:
        raise ConfigurationError(f"cannot reach the Ray cluster {address!r}: {exc}") from exc
