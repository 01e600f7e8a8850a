"""The reviewer page: pending grants, run audits and the ledger's state as plain HTML.

Server-rendered with Jinja2 (autoescape on: evidence is untrusted text, so every
value is escaped and a ``<script>`` in a tool output is shown, never run), with
plain forms and no script at all, so the Content-Security-Policy can forbid every
script. A reviewer pastes a token once; the browser then holds only a random
session id (an HttpOnly, SameSite=Strict cookie scoped to ``/ui``) that maps, in
this process's memory, to the token's principal, never the token itself. Every
form carries a per-session CSRF token (the login form a pre-session one,
double-submitted in a cookie), compared with :func:`hmac.compare_digest`.

The page asks the same questions the API asks: the same permission table
(:data:`~assay.service._auth.PERMISSIONS`), the same separation of duties, and the
control plane decides; the approver written on a grant is the session's principal.
"""

from __future__ import annotations

import hmac
import json
import secrets
import threading
import time
import unicodedata
from collections.abc import Callable, Generator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from importlib import resources
from typing import Annotated, Any, cast

from fastapi import APIRouter, FastAPI, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from jinja2 import Environment, PackageLoader, StrictUndefined
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from assay.control_plane import ControlPlane
from assay.errors import (
    AlreadyDecided,
    RunError,
    UnknownEntry,
    UnknownRun,
    UnknownThread,
    UsageError,
)
from assay.fence import FencedGraph, GraphIdentity, ThreadStatus
from assay.grounding import marked_excerpt, value_spans
from assay.ledger import LedgerEntry
from assay.service._auth import PERMISSIONS, Authenticator, Permission
from assay.service._principals import same_principal
from assay.service._problems import Problem
from assay.service._settings import ServiceSettings
from assay.service._tokens import Principal, RunOwners
from assay.service._views import audit_view
from assay.verifier import audited_verdicts

__all__ = ["PAGE_HEADERS", "SESSION_COOKIE", "SessionStore", "install_pages"]

_UI = "/ui"
SESSION_COOKIE = "assay_session"
_LOGIN_COOKIE = "assay_login"
#: How long a session lives after login, and a login form after it was served.
SESSION_SECONDS = 8 * 3_600
_LOGIN_SECONDS = 600
#: Characters of an evidence entry shown either side of the cited span.
_CONTEXT = 400
_MAX_REASON = 2_000

#: Sent with every response under ``/ui``: no script may run, nothing is framed,
#: styles and images come from this origin only, forms post only here.
PAGE_HEADERS: dict[str, str] = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'self'; img-src 'self' data:; "
        "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}


# --- sessions ---------------------------------------------------------------------------


@dataclass
class _Session:
    principal: Principal
    csrf: str
    expires: float
    flash: list[str] = field(default_factory=list[str])


class SessionStore:
    """Browser sessions by random id, in this process's memory.

    The cookie holds the id only; a stolen database or log holds no session, and a
    restart (or another worker) forgets them all: the reviewer logs in again.
    """

    def __init__(
        self, *, lifetime_s: float = SESSION_SECONDS, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.lifetime_s = lifetime_s
        self._clock = clock
        self._lock = threading.Lock()
        self._sessions: dict[str, _Session] = {}

    def open(self, principal: Principal) -> str:
        """A new session for ``principal`` (never a reused id: no fixation)."""
        sid = secrets.token_urlsafe(32)
        now = self._clock()
        with self._lock:
            for stale in [k for k, s in self._sessions.items() if s.expires <= now]:
                del self._sessions[stale]
            self._sessions[sid] = _Session(
                principal=principal, csrf=secrets.token_urlsafe(32), expires=now + self.lifetime_s
            )
        return sid

    def get(self, sid: str | None) -> _Session | None:
        """The live session ``sid``, or ``None`` (unknown or expired)."""
        if not sid:
            return None
        with self._lock:
            found = self._sessions.get(sid)
            if found is not None and found.expires <= self._clock():
                del self._sessions[sid]
                return None
            return found

    def close(self, sid: str | None) -> None:
        """End the session ``sid`` (closing an unknown one changes nothing)."""
        if sid:
            with self._lock:
                self._sessions.pop(sid, None)


def _same(given: str, expected: str) -> bool:
    """A CSRF check: both present, equal, compared in constant time."""
    return bool(given) and bool(expected) and hmac.compare_digest(given.encode(), expected.encode())


# --- headers ----------------------------------------------------------------------------


class _PageHeaders:
    """ASGI middleware adding :data:`PAGE_HEADERS` to every response under ``/ui``
    (error pages and 404s included)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = str(scope.get("path", ""))
        if scope["type"] != "http" or not (path == _UI or path.startswith(_UI + "/")):
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                own = {k.lower().encode("latin-1") for k in PAGE_HEADERS}
                kept = [(k, v) for k, v in message.get("headers", []) if k.lower() not in own]
                added = [(k.lower().encode("latin-1"), v.encode()) for k, v in PAGE_HEADERS.items()]
                message = {**message, "headers": kept + added}
            await send(message)

        await self.app(scope, receive, with_headers)


# --- rendering --------------------------------------------------------------------------


def _visible(value: object) -> str:
    """Text with invisible format characters (bidi overrides, zero-width spaces)
    written out as ``\\uXXXX``, so evidence cannot reorder or hide what it says."""
    text = "" if value is None else str(value)
    return "".join(f"\\u{ord(c):04x}" if unicodedata.category(c) == "Cf" else c for c in text)


def _pretty(value: object) -> str:
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, default=str)


@cache
def _templates() -> Environment:
    env = Environment(
        loader=PackageLoader("assay.service", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["visible"] = _visible
    env.filters["pretty"] = _pretty
    return env


@cache
def _stylesheet() -> bytes:
    return resources.files("assay.service").joinpath("templates/page.css").read_bytes()


def _render(name: str, status: int = 200, **values: Any) -> HTMLResponse:
    return HTMLResponse(_templates().get_template(name).render(**values), status_code=status)


@dataclass(frozen=True)
class _Span:
    """Evidence inside its ledger entry: pieces of text, each marked or not (the
    values the statement states, else the verifier's span), ``…`` where cut."""

    parts: tuple[tuple[str, bool], ...]
    found: bool


def _span(
    text: str | None, start: object, end: object, quote: str | None, statement: object = None
) -> _Span | None:
    """Where the entry states the statement's values, each marked, with their context;
    else ``text[start:end]`` marked; or the quote alone when the entry is not at hand
    (``found`` is then false, and the page says so)."""
    ints = all(isinstance(v, int) and not isinstance(v, bool) for v in (start, end))
    if text is not None and ints:
        s, e = cast(int, start), cast(int, end)
        if 0 <= s <= e <= len(text):
            marks = value_spans(statement, text) if isinstance(statement, str) else []
            pieces = marked_excerpt(text, marks or [(s, e)], context=_CONTEXT)
            return _Span(tuple(pieces), True)
    if quote is None:
        return None
    return _Span(((quote, True),), False)


class _PageError(Exception):
    """An error answered as an HTML page."""

    def __init__(self, status: int, title: str, detail: str, **extra: Any) -> None:
        super().__init__(detail)
        self.status = status
        self.title = title
        self.detail = detail
        self.extra = extra


class _LoginNeeded(Exception):
    """A page asked for without a live session: off to the login form."""


@contextmanager
def _as_page() -> Generator[None]:
    """assay's errors (and the API's problems) as error pages."""
    try:
        yield
    except AlreadyDecided as exc:
        raise _PageError(
            409, "Already decided", str(exc), decision=_decision_view(exc.decision)
        ) from None
    except (UnknownRun, UnknownThread, UnknownEntry) as exc:
        raise _PageError(404, "Not found", str(exc)) from None
    except UsageError as exc:
        raise _PageError(409, "Refused", str(exc)) from None
    except Problem as exc:
        raise _PageError(exc.status, "Refused", exc.detail) from None
    except RunError as exc:
        raise _PageError(503, "Unavailable", type(exc).__name__) from None


def _decision_view(decision: Mapping[str, Any]) -> list[tuple[str, str]]:
    return [(str(k), _pretty(v) if not isinstance(v, str) else v) for k, v in decision.items()]


# --- views ------------------------------------------------------------------------------


def _queue_items(
    cp: ControlPlane, found: list[ThreadStatus], owners: RunOwners
) -> list[dict[str, Any]]:
    """Each paused thread as the queue shows it: its calls, the claims they rest on
    with the evidence spans inside their ledger entries, and what is unsupported."""
    wanted: list[str] = []
    for thread in found:
        for grant in thread.result.pending_grants if thread.result else ():
            for claim in grant.claims:
                for prop in claim.get("propositions", []):
                    evidence = prop.get("evidence") or {}
                    if isinstance(evidence.get("ledger_id"), str):
                        wanted.append(evidence["ledger_id"])
    entries = cp.ledger.get_many(wanted)
    items: list[dict[str, Any]] = []
    for thread in found:
        result = thread.result
        owner = owners.get(thread.thread_id)
        calls: list[dict[str, Any]] = []
        cites = (
            _cites_by_proposition(cp, thread.run_id)
            if thread.run_id and result and result.pending_grants
            else {}
        )
        for grant in result.pending_grants if result else ():
            claims = [
                {
                    "id": claim.get("id"),
                    "type": claim.get("type"),
                    "text": claim.get("text"),
                    "propositions": [
                        {**_proposition(p, entries), "cites": cites.get(p.get("id"), [])}
                        for p in claim.get("propositions", [])
                    ],
                }
                for claim in grant.claims
            ]
            calls.append(
                {
                    "intent_id": grant.intent_id,
                    "tool": grant.tool,
                    "version": grant.version,
                    "args": grant.args,
                    "args_sha256": grant.args_sha256,
                    "depends_on": list(grant.depends_on),
                    "claims": claims,
                    "policy": list(grant.policy),
                }
            )
        items.append(
            {
                "thread_id": thread.thread_id,
                "run_id": thread.run_id,
                "graph": f"{thread.graph_name} {thread.graph_version}",
                "updated_at": thread.updated_at,
                "started_by": owner.principal if owner else None,
                "calls": calls,
                "unsupported": list(result.unsupported) if result else [],
            }
        )
    return items


def _cites_by_proposition(cp: ControlPlane, run_id: str) -> dict[object, list[dict[str, Any]]]:
    """Each proposition's citations, from its latest verdict in the run."""
    return {v.record.get("proposition_id"): v.cites for v in audited_verdicts(cp.ledger, run_id)}


def _proposition(prop: Mapping[str, Any], entries: Mapping[str, LedgerEntry]) -> dict[str, Any]:
    verdict: Mapping[str, Any] = prop.get("verdict") or {}
    evidence: Mapping[str, Any] = prop.get("evidence") or {}
    cited = evidence.get("ledger_id")
    entry = entries.get(cited) if isinstance(cited, str) else None
    return {
        "id": prop.get("id"),
        "text": prop.get("text"),
        "label": verdict.get("label"),
        "score": verdict.get("score"),
        "model": verdict.get("model"),
        "check": verdict.get("check"),
        "ledger_id": evidence.get("ledger_id"),
        "source": evidence.get("source"),
        "span": _span(
            entry.text if entry is not None else None,
            evidence.get("start"),
            evidence.get("end"),
            evidence.get("text"),
            prop.get("text"),
        ),
    }


def _audit_claims(cp: ControlPlane, claims: list[dict[str, Any]]) -> list[dict[str, Any]]:
    entries = cp.ledger.get_many(c["ledger_id"] for c in claims if c.get("ledger_id"))
    rows: list[dict[str, Any]] = []
    for claim in claims:
        entry = entries.get(claim["ledger_id"]) if claim.get("ledger_id") else None
        span = claim.get("span") or [None, None]
        text = entry.text if entry is not None else None
        mark = _span(text, span[0], span[1], claim.get("quote"), claim.get("proposition"))
        rows.append({**claim, "mark": mark})
    return rows


# --- routes -----------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class _Pages:
    cp: ControlPlane
    graphs: Mapping[GraphIdentity, FencedGraph]
    settings: ServiceSettings
    auth: Authenticator
    owners: RunOwners
    sessions: SessionStore

    def session(self, request: Request) -> tuple[str, _Session] | None:
        """The request's live session; a session whose token was revoked or has
        expired since login ends here too."""
        sid = request.cookies.get(SESSION_COOKIE)
        found = self.sessions.get(sid)
        if sid is None or found is None:
            return None
        try:
            live = self.auth.tokens.get(found.principal.token_id).active(datetime.now(UTC))
        except UsageError:
            live = False
        if not live:
            self.sessions.close(sid)
            return None
        wait = self.auth.buckets.take(found.principal.token_id)
        if wait is not None:
            raise _PageError(429, "Too many requests", f"retry in {wait} s")
        return sid, found

    def page(self, request: Request, permission: Permission) -> _Session:
        """A GET's session holding ``permission``: the login form without one."""
        found = self.session(request)
        if found is None:
            raise _LoginNeeded
        _allowed(found[1], permission)
        return found[1]

    def form(self, request: Request, csrf: str, permission: Permission | None) -> _Session:
        """A form POST's session: refused unless it carries the session's CSRF token."""
        found = self.session(request)
        if found is None:
            raise _PageError(403, "Forbidden", "no live session: log in again")
        if not _same(csrf, found[1].csrf):
            raise _PageError(403, "Forbidden", "the form's CSRF token is missing or wrong")
        if permission is not None:
            _allowed(found[1], permission)
        return found[1]


def _allowed(session: _Session, permission: Permission) -> None:
    role = session.principal.role
    if role not in PERMISSIONS[permission]:
        raise _PageError(403, "Forbidden", f"the role {role!r} may not {permission}")


def _nav(session: _Session) -> dict[str, Any]:
    role = session.principal.role
    return {
        "me": session.principal,
        "csrf": session.csrf,
        "can_queue": role in PERMISSIONS["grants:read"],
        "can_ledger": role in PERMISSIONS["ledger:read"],
    }


def _cookie(response: Response, request: Request, key: str, value: str, max_age: int) -> None:
    response.set_cookie(
        key,
        value,
        max_age=max_age,
        path=_UI,
        secure=request.url.scheme == "https",
        httponly=True,
        samesite="strict",
    )


def _forget(response: Response, request: Request, key: str) -> None:
    response.delete_cookie(
        key, path=_UI, secure=request.url.scheme == "https", httponly=True, samesite="strict"
    )


def install_pages(
    app: FastAPI,
    *,
    cp: ControlPlane,
    graphs: Mapping[GraphIdentity, FencedGraph],
    settings: ServiceSettings,
    auth: Authenticator,
    owners: RunOwners,
    sessions: SessionStore | None = None,
) -> None:
    """Mount the reviewer page under ``/ui`` on ``app``."""
    ctx = _Pages(
        cp=cp,
        graphs=graphs,
        settings=settings,
        auth=auth,
        owners=owners,
        sessions=sessions or SessionStore(),
    )
    app.add_middleware(_PageHeaders)

    async def on_page_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, _PageError)
        return _render("error.html", exc.status, title=exc.title, detail=exc.detail, **exc.extra)

    async def on_login_needed(request: Request, exc: Exception) -> Response:
        return RedirectResponse(f"{_UI}/login", status_code=303)

    app.add_exception_handler(_PageError, on_page_error)
    app.add_exception_handler(_LoginNeeded, on_login_needed)
    router = APIRouter(prefix=_UI, include_in_schema=False)
    _login_routes(router, ctx)
    _review_routes(router, ctx)
    app.include_router(router)


def _login_routes(router: APIRouter, ctx: _Pages) -> None:
    @router.get("/page.css")
    def stylesheet() -> Response:
        return Response(_stylesheet(), media_type="text/css")

    @router.get("/login")
    def login_form(request: Request) -> Response:
        pre = secrets.token_urlsafe(32)
        response = _render("login.html", csrf=pre, error=None)
        _cookie(response, request, _LOGIN_COOKIE, pre, _LOGIN_SECONDS)
        return response

    @router.post("/login")
    def login(
        request: Request,
        token: Annotated[str, Form(max_length=500)] = "",
        csrf: Annotated[str, Form(max_length=200)] = "",
    ) -> Response:
        if not _same(csrf, request.cookies.get(_LOGIN_COOKIE, "")):
            raise _PageError(403, "Forbidden", "the login form expired: load it again")
        principal = ctx.auth.tokens.authenticate(token.strip())
        if principal is None:
            return _render(
                "login.html", 401, csrf=csrf, error="the token is unknown, expired or revoked"
            )
        if ctx.auth.buckets.take(principal.token_id) is not None:
            raise _PageError(429, "Too many requests", "too many requests for this token")
        ctx.sessions.close(request.cookies.get(SESSION_COOKIE))
        response = RedirectResponse(f"{_UI}/", status_code=303)
        sid = ctx.sessions.open(principal)
        _cookie(response, request, SESSION_COOKIE, sid, int(ctx.sessions.lifetime_s))
        _forget(response, request, _LOGIN_COOKIE)
        return response

    @router.post("/logout")
    def logout(request: Request, csrf: Annotated[str, Form(max_length=200)] = "") -> Response:
        ctx.form(request, csrf, None)
        ctx.sessions.close(request.cookies.get(SESSION_COOKIE))
        response = RedirectResponse(f"{_UI}/login", status_code=303)
        _forget(response, request, SESSION_COOKIE)
        return response


def _review_routes(router: APIRouter, ctx: _Pages) -> None:
    @router.get("/")
    def queue(request: Request) -> Response:
        session = ctx.page(request, "grants:read")
        flash, session.flash = session.flash, []
        with _as_page():
            items = _queue_items(ctx.cp, ctx.cp.paused(limit=100), ctx.owners)
        may_decide = session.principal.role in PERMISSIONS["grants:decide"]
        for item in items:
            own = same_principal(item["started_by"], session.principal.name)
            item["may_decide"] = may_decide and not (ctx.settings.separation_of_duties and own)
            item["own"] = own
        return _render("queue.html", items=items, flash=flash, **_nav(session))

    @router.post("/runs/{thread}/decide")
    def decide(
        request: Request,
        thread: str,
        csrf: Annotated[str, Form(max_length=200)] = "",
        decision: Annotated[str, Form(max_length=10)] = "",
        reason: Annotated[str, Form(max_length=_MAX_REASON)] = "",
    ) -> Response:
        session = ctx.form(request, csrf, "grants:decide")
        if decision not in ("approve", "deny"):
            raise _PageError(400, "Bad request", "decide approve or deny")
        principal = session.principal
        with _as_page():
            found = ctx.cp.status(thread)
            conflict = ctx.owners.started_by(found.thread_id, principal.name)
            if ctx.settings.separation_of_duties and conflict is not None:
                raise _PageError(403, "Separation of duties", conflict)
            graph = ctx.graphs.get(
                GraphIdentity(name=found.graph_name, version=found.graph_version)
            )
            if graph is None:
                raise _PageError(
                    409,
                    "Graph not served",
                    f"thread {thread!r} belongs to graph {found.graph_name} "
                    f"{found.graph_version}, which this service does not run",
                )
            chosen: dict[str, Any] = {"approve": decision == "approve", "approver": principal.name}
            if reason.strip():
                chosen["reason"] = reason.strip()
            result = ctx.cp.resume(graph, found.thread_id, chosen)
        done = ", ".join(f"{a.tool} {a.status}" for a in result.actions) or "nothing ran"
        session.flash.append(
            f"{'Approved' if chosen['approve'] else 'Denied'} {found.thread_id}: {done}; "
            f"the run is {result.status}."
        )
        return RedirectResponse(f"{_UI}/", status_code=303)

    @router.get("/runs/{ref}")
    def audit(request: Request, ref: str) -> Response:
        session = ctx.page(request, "audit:read")
        with _as_page():
            thread: ThreadStatus | None = None
            run_id: str | None = ref if ref.startswith("run_") else None
            if run_id is None:
                thread = ctx.cp.status(ref)
                run_id = thread.run_id
            else:
                named = ctx.cp.ledger.run(run_id).metadata.get("thread_id")
                thread = ctx.cp.status(named) if isinstance(named, str) else None
            if run_id is None:
                raise _PageError(404, "Not found", f"thread {ref!r} has no run yet")
            view = audit_view(ctx.cp, run_id)
            claims = _audit_claims(ctx.cp, view["claims"])
        return _render("run.html", run=view, claims=claims, thread=thread, ref=ref, **_nav(session))

    @router.get("/ledger")
    def ledger(request: Request) -> Response:
        session = ctx.page(request, "ledger:read")
        with _as_page():
            report = ctx.cp.ledger.verify(None)
            size, root = ctx.cp.ledger.root()
        return _render("ledger.html", report=report, size=size, root=root.hex(), **_nav(session))
