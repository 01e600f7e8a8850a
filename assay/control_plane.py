"""The control plane: one database, one engine, and the components built on them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from langchain_core.runnables import RunnableConfig
from sqlalchemy.engine import Engine

from assay import _db
from assay.errors import ConfigurationError
from assay.fence import Checkpointer, FenceComponents, FencedGraph, RunResult, ThreadStatus
from assay.fence import aresume as aresume_graph
from assay.fence import arun as arun_graph
from assay.fence import paused as paused_threads
from assay.fence import resume as resume_graph
from assay.fence import run as run_graph
from assay.fence import status as thread_status
from assay.gate import Gate, RunManifest, build_manifest
from assay.ledger import DEFAULT_MAX_CONTENT_BYTES, Ledger
from assay.tool_bus import Grants, Policy, ToolBus, ToolRegistry
from assay.verifier import (
    LedgerVerifier,
    NLIModel,
    RewordedUnsupportedCheck,
    SqlEntailmentCache,
    Verifier,
)

__all__ = ["ControlPlane", "GraphFactory"]


@dataclass(frozen=True, kw_only=True, eq=False)
class ControlPlane(FenceComponents):
    """Everything a fenced graph needs, bound to one database.

    ``ledger`` (evidence and audit trail), ``registry`` / ``bus`` / ``grants`` (typed
    tools and permission for irreversible calls), ``gate`` (plain-code checks of
    hand-overs), ``verifier`` (entailment from ledger evidence) and ``checkpointer``
    (durable LangGraph state, for ``invoke`` and ``ainvoke`` alike, opened on first
    use). It is the composition root and holds no application: ``run`` / ``resume`` /
    ``status`` / ``paused`` drive whichever fenced graph they are given (see
    :mod:`assay.fence`). Open it once per process (it is safe to share between
    threads and event loops) and close it when done, or use it as a context manager::

        with ControlPlane.open("sqlite:///./assay.db") as cp:
            run_id = cp.ledger.start_run()

    It is a frozen :class:`~assay.fence.FenceComponents`: a variant (another verifier,
    grants with another policy) is ``dataclasses.replace(cp, ...)``, which shares the
    engine and the checkpointer; close the original only.
    """

    url: str

    @classmethod
    def open(
        cls,
        url: str | None = None,
        *,
        migrate: bool = True,
        max_content_bytes: int = DEFAULT_MAX_CONTENT_BYTES,
        policy: str | Path | Mapping[str, Any] | Policy | None = None,
        nli: NLIModel | None = None,
        verifier_cache: bool = True,
    ) -> Self:
        """Connect to ``url`` (default ``ASSAY_DATABASE_URL`` or ``sqlite:///./assay.db``).

        With ``migrate`` the schema is brought to the newest revision first; without
        it, a database that is not at that revision is refused with a hint to run
        ``assay db upgrade``. ``policy`` is the tool bus's auto-approval rules (a YAML
        or JSON file, or a mapping). ``nli`` replaces the entailment model (default: the
        shipped one, or ``ASSAY_NLI_MODEL``; loaded on first use). ``verifier_cache``
        keeps the model's scores in the database (``verifier_cache``, not append-only
        protected); turn it off where writers of the database are not trusted.
        """
        resolved = _db.resolve_url(url)
        engine = _db.create_engine(resolved)
        try:
            if migrate:
                _db.upgrade(engine)
            else:
                _require_head(engine)
            return cls._compose(
                engine,
                url=resolved,
                max_content_bytes=max_content_bytes,
                policy=policy,
                nli=nli,
                verifier_cache=verifier_cache,
            )
        except BaseException:
            engine.dispose()
            raise

    @classmethod
    def _compose(
        cls,
        engine: Engine,
        *,
        url: str,
        max_content_bytes: int,
        policy: str | Path | Mapping[str, Any] | Policy | None,
        nli: NLIModel | None,
        verifier_cache: bool,
    ) -> Self:
        """The components on ``engine``, wired to each other once: grants read claim
        status from the verifier's verdicts in the ledger, and the gate refuses a
        reworded Unsupported proposition that cites nothing new."""
        ledger = Ledger(engine, max_content_bytes=max_content_bytes)
        registry = ToolRegistry(engine)
        verifier = LedgerVerifier(
            ledger,
            cache=SqlEntailmentCache(engine) if verifier_cache else None,
            model_loader=(lambda: nli) if nli is not None else Verifier.default,
        )
        grants = Grants(engine, ledger, registry, claim_status_source=verifier, policy=policy)
        return cls(
            url=url,
            engine=engine,
            ledger=ledger,
            registry=registry,
            grants=grants,
            bus=ToolBus(engine, ledger, registry, grants),
            gate=Gate(ledger, registry=registry, extra_checks=[RewordedUnsupportedCheck(ledger)]),
            verifier=verifier,
            checkpoints=Checkpointer(engine.url, engine=engine),
        )

    def manifest(self, run_id: str) -> RunManifest:
        """The run's phases, artifacts, gate decisions, verdicts, grants, calls and
        errors, derived from its ledger alone."""
        return build_manifest(self.ledger, run_id)

    def run(
        self,
        graph: FencedGraph,
        input: Mapping[str, Any],
        *,
        thread_id: str | None = None,
        config: RunnableConfig | None = None,
    ) -> RunResult:
        """Start the fenced ``graph`` on ``input`` (``{"task": str, "context": {...}}``,
        or what the graph's ``prepare`` takes) in a new thread. ``config`` is LangGraph's
        (callbacks, tags, metadata, ``recursion_limit``), merged with the thread id the
        fence sets; see :func:`assay.fence.run` for what is refused."""
        return run_graph(self, graph, input, thread_id=thread_id, config=config)

    def resume(
        self,
        graph: FencedGraph,
        thread_id: str,
        decision: Mapping[str, Any],
        *,
        config: RunnableConfig | None = None,
    ) -> RunResult:
        """Continue the run paused for a grant on ``thread_id`` with ``decision``
        (``{"approve": bool, "approver": name, "reason": ...}``), with the graph that
        started it and LangGraph's ``config``; see :func:`assay.fence.resume`."""
        return resume_graph(self, graph, thread_id, decision, config=config)

    async def arun(
        self,
        graph: FencedGraph,
        input: Mapping[str, Any],
        *,
        thread_id: str | None = None,
        config: RunnableConfig | None = None,
    ) -> RunResult:
        """:meth:`run` on the event loop (``graph.ainvoke``)."""
        return await arun_graph(self, graph, input, thread_id=thread_id, config=config)

    async def aresume(
        self,
        graph: FencedGraph,
        thread_id: str,
        decision: Mapping[str, Any],
        *,
        config: RunnableConfig | None = None,
    ) -> RunResult:
        """:meth:`resume` on the event loop (``graph.ainvoke``)."""
        return await aresume_graph(self, graph, thread_id, decision, config=config)

    def status(self, thread_id: str) -> ThreadStatus:
        """Where a thread stands (its graph, run, status and latest result)."""
        return thread_status(self, thread_id)

    def paused(self, *, graph_name: str | None = None, limit: int = 100) -> list[ThreadStatus]:
        """Threads waiting for a grant, the most recently paused first."""
        return paused_threads(self, graph_name=graph_name, limit=limit)

    def close(self) -> None:
        """Release every database connection (the checkpointer's included)."""
        self.checkpoints.close()
        self.engine.dispose()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ControlPlane(url={self.engine.url.render_as_string(hide_password=True)!r})"


#: What builds a fenced graph on a control plane, ``graph(control_plane)``: what
#: ``assay serve --graph name=module:attr`` and ``assay eval`` name, and what
#: :func:`assay.evals.evaluate` calls once per worker.
GraphFactory = Callable[[ControlPlane], FencedGraph]


def _require_head(engine: Engine) -> None:
    current, head = _db.current_revision(engine), _db.head_revision()
    if current != head:
        raise ConfigurationError(
            f"the database schema is at {current or 'nothing'}, not {head}: "
            "run `assay db upgrade` or open with migrate=True"
        )
