"""The FastAPI application: runs, grants, audits and the ledger over HTTP.

Routes are plain ``def`` functions: FastAPI runs them on its thread pool, and the
control plane is safe to share between threads. Each route names the permission it
needs (:mod:`assay.service._auth`); everything else (which graph, which decision,
what was decided before) is the control plane's, so the service decides nothing the
command line would decide differently.
"""

import secrets
from collections.abc import AsyncGenerator, Generator, Mapping
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated, Any, Self

from fastapi import APIRouter, Depends, FastAPI, Query, Response

from assay.control_plane import ControlPlane, GraphFactory
from assay.errors import UnknownRun, UsageError
from assay.fence import FencedGraph, GraphIdentity, graph_identity
from assay.service._auth import Authenticator
from assay.service._guards import BodyLimit, TokenBuckets
from assay.service._pages import install_pages
from assay.service._principals import same_principal
from assay.service._problems import Problem, install_problem_handlers
from assay.service._settings import ServiceSettings
from assay.service._tokens import (
    Principal,
    RunOwners,
    TokenStore,
    parse_duration,
    spelling_conflict,
    written_name,
)
from assay.service._views import (
    DecisionBody,
    RunBody,
    TokenBody,
    audit_view,
    jsonable,
    thread_view,
    token_view,
)

__all__ = ["build_app"]

_API = "/v1"


@dataclass(frozen=True, kw_only=True)
class _Served:
    """The graphs the service runs: by the name in the URL, and by the identity
    ``fence()`` gave them (how a paused thread finds the graph that may resume it)."""

    by_name: dict[str, FencedGraph]
    by_identity: dict[GraphIdentity, FencedGraph]

    @classmethod
    def build(cls, cp: ControlPlane, graphs: Mapping[str, GraphFactory]) -> Self:
        by_name: dict[str, FencedGraph] = {}
        for name, factory in graphs.items():
            by_name[name] = factory(cp)
            graph_identity(by_name[name])  # UsageError for anything fence() did not return
        return cls(by_name=by_name, by_identity={graph_identity(g): g for g in by_name.values()})


def build_app(
    control_plane: str | ControlPlane,
    graphs: Mapping[str, GraphFactory],
    *,
    settings: ServiceSettings | None = None,
) -> FastAPI:
    """See :func:`assay.service.create_app`."""
    chosen = settings or ServiceSettings()
    owned = not isinstance(control_plane, ControlPlane)
    cp = ControlPlane.open(control_plane) if isinstance(control_plane, str) else control_plane
    try:
        served = _Served.build(cp, graphs)
    except BaseException:
        if owned:
            cp.close()
        raise

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncGenerator[None, None]:
        yield
        if owned:
            cp.close()

    app = FastAPI(
        title="assay",
        summary="Runs of fenced LangGraph graphs, their grants, audits and ledger.",
        version="1",
        lifespan=lifespan,
    )
    install_problem_handlers(app)
    app.add_middleware(BodyLimit, max_bytes=chosen.max_body_bytes)
    auth = Authenticator(
        TokenStore(cp.engine),
        TokenBuckets(rate=chosen.rate_per_second, burst=chosen.rate_burst),
    )
    ctx = _Context(cp=cp, served=served, settings=chosen, auth=auth, owners=RunOwners(cp.engine))
    for routes in (_run_routes, _grant_routes, _ledger_routes, _token_routes):
        router = APIRouter(prefix=_API)
        routes(router, ctx)
        app.include_router(router)
    install_pages(
        app, cp=cp, graphs=served.by_identity, settings=chosen, auth=auth, owners=ctx.owners
    )
    return app


@dataclass(frozen=True, kw_only=True)
class _Context:
    cp: ControlPlane
    served: _Served
    settings: ServiceSettings
    auth: Authenticator
    owners: RunOwners

    def thread_of(self, ref: str) -> str:
        """The thread a URL names: a thread id, or a run id (``run_…``) whose ledger
        metadata names its thread."""
        if not ref.startswith("run_"):
            return ref
        thread = self.cp.ledger.run(ref).metadata.get("thread_id")
        if not isinstance(thread, str):
            raise UnknownRun(f"run {ref!r} was not started by a fenced graph")
        return thread

    def may_read(self, principal: Principal, thread_id: str | None) -> None:
        """An agent reads only the runs its principal started (names compared as
        :func:`same_principal` does); whether another run exists is not its business
        either."""
        if principal.role != "agent":
            return
        owner = self.owners.get(thread_id) if thread_id is not None else None
        if owner is None or not same_principal(owner.principal, principal.name):
            raise Problem(403, "not_your_run", "an agent reads only the runs it started")


def _now() -> datetime:
    return datetime.now(UTC)


# --- runs -------------------------------------------------------------------------------


def _run_routes(router: APIRouter, ctx: _Context) -> None:
    need = ctx.auth.require

    @router.get("/graphs", tags=["runs"])
    def list_graphs(caller: Annotated[Principal, Depends(need("graphs:list"))]) -> Any:
        """The graphs this service runs: the name to start one by, and its identity."""
        return [
            {"name": name, "graph": identity.name, "version": identity.version}
            for name, identity in ((n, graph_identity(g)) for n, g in ctx.served.by_name.items())
        ]

    @router.post("/graphs/{name}/runs", status_code=201, tags=["runs"])
    def start_run(
        name: str,
        body: RunBody,
        response: Response,
        principal: Annotated[Principal, Depends(need("runs:start"))],
    ) -> Any:
        """Start the graph ``name`` on ``input`` in a new thread, recorded as the
        caller's; answers the outcome (``awaiting_grant`` when it paused)."""
        graph = ctx.served.by_name.get(name)
        if graph is None:
            raise Problem(404, "unknown_graph", f"this service runs no graph {name!r}")
        thread_id = "thr_" + secrets.token_hex(12)
        ctx.owners.record(thread_id, name, principal)
        result = ctx.cp.run(graph, body.input, thread_id=thread_id)
        response.headers["Location"] = f"{_API}/runs/{thread_id}"
        return jsonable(result)

    @router.get("/runs/{ref}", tags=["runs"])
    def read_run(ref: str, principal: Annotated[Principal, Depends(need("runs:read"))]) -> Any:
        """Where a thread (or the run ``run_…``) stands, and its latest result."""
        try:
            thread_id = ctx.thread_of(ref)
        except UsageError:
            ctx.may_read(principal, None)  # an agent learns nothing of others' runs
            raise
        ctx.may_read(principal, thread_id)
        found = ctx.cp.status(thread_id)
        return thread_view(found, ctx.owners.get(thread_id))

    @router.get("/runs/{ref}/audit", tags=["audit"])
    def audit_run(ref: str, caller: Annotated[Principal, Depends(need("audit:read"))]) -> Any:
        """The run's manifest and its claims with the exact evidence spans, derived
        from its ledger alone (``ref``: a run id or a thread id)."""
        run_id = ref
        if not ref.startswith("run_"):
            found = ctx.cp.status(ref)
            if found.run_id is None:
                raise Problem(404, "unknown_run", f"thread {ref!r} has no run yet")
            run_id = found.run_id
        return audit_view(ctx.cp, run_id)


# --- grants -----------------------------------------------------------------------------


def _grant_routes(router: APIRouter, ctx: _Context) -> None:
    need = ctx.auth.require

    @router.get("/grants/pending", tags=["grants"])
    def pending(
        caller: Annotated[Principal, Depends(need("grants:read"))],
        graph_name: str | None = None,
        limit: Annotated[int, Query(ge=1, le=1_000)] = 100,
    ) -> Any:
        """Threads waiting for a grant, the most recently paused first, each with the
        calls it waits on and the claims and evidence spans they rest on."""
        found = ctx.cp.paused(graph_name=graph_name, limit=limit)
        return [thread_view(t, ctx.owners.get(t.thread_id)) for t in found]

    @router.post("/runs/{thread}/decisions", tags=["grants"])
    def decide(
        thread: str,
        body: DecisionBody,
        principal: Annotated[Principal, Depends(need("grants:decide"))],
    ) -> Any:
        """Approve or deny every call the paused ``thread`` waits on. The approver
        recorded on the grant is the caller's principal; a decision taken before
        answers 409 naming it."""
        found = ctx.cp.status(thread)
        conflict = ctx.owners.started_by(found.thread_id, principal.name)
        if ctx.settings.separation_of_duties and conflict is not None:
            raise Problem(403, "separation_of_duties", conflict)
        identity = GraphIdentity(name=found.graph_name, version=found.graph_version)
        graph = ctx.served.by_identity.get(identity)
        if graph is None:
            raise Problem(
                409,
                "graph_not_served",
                f"thread {thread!r} belongs to graph {found.graph_name} "
                f"{found.graph_version}, which this service does not run",
            )
        decision: dict[str, Any] = {"approve": body.approve, "approver": principal.name}
        if body.reason is not None:
            decision["reason"] = body.reason
        return jsonable(ctx.cp.resume(graph, found.thread_id, decision))


# --- ledger -----------------------------------------------------------------------------


def _ledger_routes(router: APIRouter, ctx: _Context) -> None:
    need = ctx.auth.require

    @router.get("/ledger/verify", tags=["ledger"])
    def verify(
        caller: Annotated[Principal, Depends(need("ledger:read"))], run: str | None = None
    ) -> Any:
        """Re-derive every hash of one run, or of every run and the Merkle log; the
        report names the first bad entry and why."""
        return jsonable(ctx.cp.ledger.verify(run))

    @router.get("/ledger/checkpoint", tags=["ledger"])
    def checkpoint(caller: Annotated[Principal, Depends(need("ledger:read"))]) -> Any:
        """A signed checkpoint of the Merkle log as it stands (C2SP tlog-checkpoint
        in a signed note); 503 when the server has no signing key."""
        size, root = ctx.cp.ledger.root()
        note = ctx.cp.ledger.checkpoint(ctx.settings.checkpoint_key)
        return {"tree_size": size, "root": root.hex(), "checkpoint": note}

    @router.get("/ledger/entries/{entry_id}/inclusion", tags=["ledger"])
    def inclusion(
        entry_id: str,
        caller: Annotated[Principal, Depends(need("ledger:read"))],
        tree_size: Annotated[int | None, Query(ge=1)] = None,
    ) -> Any:
        """The proof that an entry is a leaf of the log at ``tree_size`` (default: now),
        with the root it is proved against."""
        with _tree_sizes():
            proof = ctx.cp.ledger.inclusion_proof(entry_id, tree_size)
            _, root = ctx.cp.ledger.root(proof.tree_size)
        return {
            "entry_id": proof.entry_id,
            "entry_hash": proof.entry_hash,
            "leaf_index": proof.leaf_index,
            "tree_size": proof.tree_size,
            "hashes": [h.hex() for h in proof.hashes],
            "root": root.hex(),
        }

    @router.get("/ledger/consistency", tags=["ledger"])
    def consistency(
        caller: Annotated[Principal, Depends(need("ledger:read"))],
        old_size: Annotated[int, Query(ge=1)],
        new_size: Annotated[int | None, Query(ge=1)] = None,
    ) -> Any:
        """The proof that the log at ``new_size`` (default: now) extends the log at
        ``old_size`` unchanged, with both roots: what a witness of old checkpoints
        checks."""
        with _tree_sizes():
            size, new_root = ctx.cp.ledger.root(new_size)
            hashes = ctx.cp.ledger.consistency_proof(old_size, size)
            _, old_root = ctx.cp.ledger.root(old_size)
        return {
            "old_size": old_size,
            "new_size": size,
            "old_root": old_root.hex(),
            "new_root": new_root.hex(),
            "hashes": [h.hex() for h in hashes],
        }


@contextmanager
def _tree_sizes() -> Generator[None, None, None]:
    """The ledger refuses a tree size it does not have with a ``ValueError``."""
    try:
        yield
    except ValueError as exc:
        raise Problem(400, "invalid_tree_size", str(exc)) from None


# --- tokens -----------------------------------------------------------------------------


def _token_routes(router: APIRouter, ctx: _Context) -> None:
    need = ctx.auth.require
    tokens = ctx.auth.tokens

    @router.get("/tokens", tags=["tokens"])
    def list_tokens(caller: Annotated[Principal, Depends(need("tokens:manage"))]) -> Any:
        """Every token, the newest first: never a secret."""
        now = _now()
        return [token_view(info, now) for info in tokens.list_all()]

    @router.post("/tokens", status_code=201, tags=["tokens"])
    def create_token(
        body: TokenBody, caller: Annotated[Principal, Depends(need("tokens:manage"))]
    ) -> Any:
        """A new token; its ``secret`` is in this answer only. The name is stored
        written (NFKC, spaces folded, trimmed); one that holds a character a
        terminal hides is 422, another spelling of an existing principal 409."""
        lifetime = parse_duration(body.expires_in) if body.expires_in else None
        name = _token_name(tokens, body.name)
        issued = tokens.create(name=name, role=body.role, expires_in=lifetime)
        return {**token_view(issued.info, _now()), "secret": issued.secret}

    @router.post("/tokens/{token_id}/revoke", tags=["tokens"])
    def revoke(token_id: str, caller: Annotated[Principal, Depends(need("tokens:manage"))]) -> Any:
        """Stop a token from opening the service (revoking twice changes nothing)."""
        try:
            info = tokens.revoke(token_id)
        except UsageError as exc:
            raise Problem(404, "unknown_token", str(exc)) from None
        return token_view(info, _now())


def _token_name(tokens: TokenStore, name: str) -> str:
    """The name a token is made under: ``name`` written, or the problem with it."""
    try:
        written = written_name(name)
    except UsageError as exc:
        raise Problem(422, "invalid_principal_name", str(exc)) from None
    other = tokens.other_spelling(written)
    if other is not None:
        raise Problem(409, "principal_spelling", spelling_conflict(written, other))
    return written
