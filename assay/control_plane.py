"""The control plane: one database, one engine, and the components built on them."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

from sqlalchemy.engine import Engine

from assay import _db
from assay.errors import ConfigurationError
from assay.gate import Gate, RunManifest, build_manifest
from assay.graph._checkpoint import Checkpointer, open_checkpointer
from assay.graph._result import RunResult
from assay.ledger import DEFAULT_MAX_CONTENT_BYTES, Ledger
from assay.service import _service as service
from assay.tool_bus import Grants, Policy, ToolBus, ToolRegistry
from assay.verifier import (
    LedgerVerifier,
    NLIModel,
    RewordedUnsupportedCheck,
    SqlEntailmentCache,
    Verifier,
)

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver

    from assay.graph.reference import ReferenceApp


class ControlPlane:
    """Everything a fenced graph needs, bound to one database.

    ``ledger`` (evidence and audit trail), ``registry`` / ``bus`` / ``grants`` (typed
    tools and permission for irreversible calls), ``gate`` (plain-code checks of
    hand-overs), ``verifier`` (entailment from ledger evidence), ``checkpointer``
    (durable LangGraph state) and ``reference`` (the invoice-audit application that
    ``run`` / ``resume`` drive). Open it once per process (it is safe to share between
    threads) and close it when done, or use it as a context manager::

        with ControlPlane.open("sqlite:///./assay.db") as cp:
            run_id = cp.ledger.start_run()
    """

    def __init__(
        self,
        engine: Engine,
        *,
        url: str,
        max_content_bytes: int,
        policy: str | Path | Mapping[str, Any] | Policy | None = None,
        nli: NLIModel | None = None,
        verifier_cache: bool = True,
    ) -> None:
        self.url = url
        self.engine = engine
        self.ledger = Ledger(engine, max_content_bytes=max_content_bytes)
        self.registry = ToolRegistry(engine)
        self.grants = Grants(engine, self.ledger, self.registry, policy=policy)
        self.bus = ToolBus(engine, self.ledger, self.registry, self.grants)
        self.gate = Gate(self.ledger, registry=self.registry)
        self.verifier = LedgerVerifier(
            self.ledger,
            cache=SqlEntailmentCache(engine) if verifier_cache else None,
            model_loader=(lambda: nli) if nli is not None else Verifier.default,
        )
        # Grants read claim status from the verifier's verdicts in the ledger, and the
        # gate refuses a reworded Unsupported proposition that cites nothing new.
        self.grants.claim_status_source = self.verifier
        self.gate.add_check(RewordedUnsupportedCheck(self.ledger))
        self._checkpointer: Checkpointer | None = None
        self._reference: ReferenceApp | None = None
        self._lock = threading.Lock()

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
            return cls(
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

    def manifest(self, run_id: str) -> RunManifest:
        """The run's phases, artifacts, gate decisions, verdicts, grants, calls and
        errors, derived from its ledger alone."""
        return build_manifest(self.ledger, run_id)

    @property
    def checkpointer(self) -> BaseCheckpointSaver[Any]:
        """LangGraph's durable saver on this database (SQLite or PostgreSQL), opened on
        first use; paused runs survive the process."""
        with self._lock:
            if self._checkpointer is None:
                self._checkpointer = open_checkpointer(self.engine.url)
            return self._checkpointer.saver

    @property
    def reference(self) -> ReferenceApp:
        """The invoice-audit reference application bound to this control plane."""
        from assay.graph.reference import ReferenceApp

        with self._lock:
            if self._reference is None:
                self._reference = ReferenceApp(self)
            return self._reference

    def run(
        self,
        task: str,
        documents: Mapping[str, str] | str | Path,
        *,
        thread_id: str | None = None,
        agents: str = "rules",
        inject: str | None = None,
        seed: int = 0,
    ) -> RunResult:
        """Run the fenced reference graph on ``documents`` (name -> text, or a folder)."""
        return service.run(
            self, task, documents, thread_id=thread_id, agents=agents, inject=inject, seed=seed
        )

    def resume(self, thread_id: str, decision: Mapping[str, Any]) -> RunResult:
        """Continue a run paused for a grant: ``{"approve": bool, "approver": name}``."""
        return service.resume(self, thread_id, decision)

    async def arun(
        self,
        task: str,
        documents: Mapping[str, str] | str | Path,
        *,
        thread_id: str | None = None,
        agents: str = "rules",
        inject: str | None = None,
        seed: int = 0,
    ) -> RunResult:
        """:meth:`run` without blocking the event loop (it runs in a worker thread)."""
        return await asyncio.to_thread(
            self.run, task, documents, thread_id=thread_id, agents=agents, inject=inject, seed=seed
        )

    async def aresume(self, thread_id: str, decision: Mapping[str, Any]) -> RunResult:
        """:meth:`resume` without blocking the event loop."""
        return await asyncio.to_thread(self.resume, thread_id, decision)

    def close(self) -> None:
        """Release every database connection (the checkpointer's included)."""
        with self._lock:
            if self._checkpointer is not None:
                self._checkpointer.close()
                self._checkpointer = None
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


def _require_head(engine: Engine) -> None:
    current, head = _db.current_revision(engine), _db.head_revision()
    if current != head:
        raise ConfigurationError(
            f"the database schema is at {current or 'nothing'}, not {head}: "
            "run `assay db upgrade` or open with migrate=True"
        )
