"""The reviewer page through FastAPI's TestClient, on SQLite and on PostgreSQL: login
and its cookie, the queue with its highlighted evidence, decisions through forms
guarded by CSRF tokens, roles, escaping of untrusted evidence, security headers."""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from assay.fence import DecisionStore
from tests.service.conftest import GRAPH, Service, case

CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self' data:; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
PAYLOAD = "<script>alert(1)</script><img src=x onerror=alert(2)>"
# The passage the line-14 flag rests on, in the engagement letter.


def _csrf(page: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', page)
    assert found is not None, page
    return found.group(1)


def _secret(service: Service, key: str) -> str:
    return service.headers[key]["Authorization"].removeprefix("Bearer ")


def login(service: Service, key: str) -> TestClient:
    """A browser of its own (its own cookie jar), logged in with ``key``'s token."""
    browser = TestClient(service.client.app)
    form = browser.get("/ui/login")
    answer = browser.post(
        "/ui/login",
        data={"token": _secret(service, key), "csrf": _csrf(form.text)},
        follow_redirects=False,
    )
    assert answer.status_code == 303 and answer.headers["location"] == "/ui/", answer.text
    return browser


def decide(browser: TestClient, thread: str, decision: str, reason: str = "") -> Any:
    csrf = _csrf(browser.get("/ui/").text)
    return browser.post(
        f"/ui/runs/{thread}/decide",
        data={"csrf": csrf, "decision": decision, "reason": reason},
        follow_redirects=False,
    )


def _cookie(answer: Any, name: str) -> str:
    [line] = [c for c in answer.headers.get_list("set-cookie") if c.startswith(name + "=")]
    return line


def test_login_keeps_a_session_id_in_a_strict_cookie(service: Service) -> None:
    browser = TestClient(service.client.app)
    form = browser.get("/ui/login")
    assert form.status_code == 200 and 'type="password"' in form.text
    secret = _secret(service, "rita")
    answer = browser.post(
        "/ui/login", data={"token": secret, "csrf": _csrf(form.text)}, follow_redirects=False
    )
    assert answer.status_code == 303
    cookie = _cookie(answer, "assay_session")
    flags = [part.strip().lower() for part in cookie.split(";")]
    assert {"httponly", "samesite=strict", "path=/ui"} <= set(flags)
    assert "secure" not in flags  # plain http: a Secure cookie would never come back
    assert secret not in cookie and secret.split(".")[-1] not in cookie
    assert browser.get("/ui/").status_code == 200

    secure = TestClient(service.client.app, base_url="https://testserver")
    form = secure.get("/ui/login")
    assert "; secure" in _cookie(form, "assay_login").lower()
    answer = secure.post(
        "/ui/login", data={"token": secret, "csrf": _csrf(form.text)}, follow_redirects=False
    )
    assert "; secure" in _cookie(answer, "assay_session").lower()


def test_login_refuses_a_bad_token_and_a_missing_login_csrf(service: Service) -> None:
    browser = TestClient(service.client.app)
    csrf = _csrf(browser.get("/ui/login").text)
    wrong = browser.post("/ui/login", data={"token": "assay.tok_0.nope", "csrf": csrf})
    assert wrong.status_code == 401 and "unknown, expired or revoked" in wrong.text
    assert "assay_session" not in wrong.headers.get("set-cookie", "")
    forged = TestClient(service.client.app).post(
        "/ui/login", data={"token": _secret(service, "rita"), "csrf": csrf}
    )
    assert forged.status_code == 403  # the pre-session token without its cookie
    assert "assay_session" not in forged.headers.get("set-cookie", "")
    assert browser.get("/ui/", follow_redirects=False).headers["location"] == "/ui/login"


def test_the_queue_shows_the_call_and_its_marked_evidence(service: Service) -> None:
    started = service.start("amy")
    [waiting] = started["pending_grants"]
    page = login(service, "rita").get("/ui/")
    assert page.status_code == 200
    assert page.headers["content-security-policy"] == CSP
    assert page.headers["x-content-type-options"] == "nosniff"
    assert page.headers["referrer-policy"] == "no-referrer"
    text = page.text
    assert started["thread_id"] in text and "flag_invoice_line" in text
    assert waiting["version"] in text and waiting["args_sha256"] in text
    assert html.escape(waiting["args"]["reason"], quote=False) in text
    # Each value the proposition states is marked where its entry states it.
    assert "capped at <mark>EUR 380 per hour</mark>" in text
    assert "<mark>INV-4421</mark>" in text and "<mark>EUR 450/h</mark>" in text
    assert text.count('class="decide"') == 1 and 'value="approve"' in text


def test_approving_writes_the_flag_once_as_the_principal(service: Service, outbox: Path) -> None:
    started = service.start("amy")
    thread = started["thread_id"]
    rita = login(service, "rita")
    answer = decide(rita, thread, "approve", "over the cap")
    assert answer.status_code == 303 and answer.headers["location"] == "/ui/"
    after = rita.get("/ui/").text
    assert f"Approved {thread}: flag_invoice_line executed" in after
    assert "No run is waiting for a grant." in after
    assert len(outbox.read_text().splitlines()) == 1
    [stored] = DecisionStore(service.cp.engine).for_run(started["run_id"]).values()
    assert (stored.approver, stored.approve, stored.reason) == ("rita", True, "over the cap")

    again = rita.post(
        f"/ui/runs/{thread}/decide",
        data={"csrf": _csrf(after), "decision": "deny"},
        follow_redirects=False,
    )
    assert again.status_code == 409
    assert "The decision that stands" in again.text and "rita" in again.text
    assert again.headers["content-security-policy"] == CSP
    assert len(outbox.read_text().splitlines()) == 1


def test_a_denial_is_recorded_with_its_reason(service: Service, outbox: Path) -> None:
    started = service.start("amy")
    rita = login(service, "rita")
    assert decide(rita, started["thread_id"], "deny", "client consented").status_code == 303
    [stored] = DecisionStore(service.cp.engine).for_run(started["run_id"]).values()
    assert (stored.approver, stored.approve, stored.reason) == ("rita", False, "client consented")
    assert not outbox.exists()
    assert f"Denied {started['thread_id']}: flag_invoice_line denied" in rita.get("/ui/").text


def test_forged_decisions_are_refused_and_decide_nothing(service: Service, outbox: Path) -> None:
    thread = service.start("amy")["thread_id"]
    otto = login(service, "otto")
    page = otto.get("/ui/")
    assert page.status_code == 200 and thread in page.text
    assert "capped at <mark>EUR 380 per hour</mark>" in page.text
    assert 'class="decide"' not in page.text and "Approve" not in page.text
    rita = login(service, "rita")
    attempts: list[tuple[TestClient, dict[str, Any]]] = [
        (otto, {"csrf": _csrf(page.text), "decision": "approve"}),  # an auditor's own session
        (rita, {"decision": "approve"}),  # no CSRF token
        (rita, {"csrf": "x" * 43, "decision": "approve"}),  # a wrong one
        (rita, {"csrf": _csrf(page.text), "decision": "approve"}),  # another session's
        (TestClient(service.client.app), {"csrf": "x", "decision": "approve"}),  # no session
    ]
    for browser, form in attempts:
        refused = browser.post(f"/ui/runs/{thread}/decide", data=form, follow_redirects=False)
        assert refused.status_code == 403, refused.text
    assert service.cp.status(thread).status == "awaiting_grant"
    assert not outbox.exists()


def test_the_starter_of_a_run_may_not_decide_it(service: Service, outbox: Path) -> None:
    service.token("sam-agent", role="agent", name="sam")
    service.token("sam-reviewer", role="reviewer", name="sam")
    thread = service.start("sam-agent")["thread_id"]
    sam = login(service, "sam-reviewer")
    page = sam.get("/ui/").text
    assert 'class="decide"' not in page and "another reviewer decides it" in page
    forced = sam.post(
        f"/ui/runs/{thread}/decide", data={"csrf": _csrf(page), "decision": "approve"}
    )
    assert forced.status_code == 403 and "Separation of duties" in forced.text
    assert not outbox.exists()


def test_evidence_is_shown_as_text_never_as_markup(service: Service) -> None:
    body = case("over_cap")
    body["documents"]["engagement_letter.md"] = body["documents"]["engagement_letter.md"].replace(
        "EUR 380 per hour.", f"EUR 380 per hour. {PAYLOAD}"
    )
    answer = service.client.post(
        f"/v1/graphs/{GRAPH}/runs", json={"input": body}, headers=service.headers["amy"]
    )
    assert answer.json()["status"] == "awaiting_grant", answer.text
    rita = login(service, "rita")
    for page in (rita.get("/ui/"), rita.get(f"/ui/runs/{answer.json()['run_id']}")):
        assert page.status_code == 200
        assert html.escape(PAYLOAD, quote=False) in page.text
        assert "<script" not in page.text and "<img" not in page.text


def test_roles_outside_review_get_a_forbidden_page(service: Service) -> None:
    for key in ("amy", "ada"):
        page = login(service, key).get("/ui/")
        assert page.status_code == 403 and "text/html" in page.headers["content-type"]
        assert page.headers["content-security-policy"] == CSP
    assert login(service, "rita").get("/ui/ledger").status_code == 403


def test_an_auditor_reads_a_run_and_the_ledger(service: Service) -> None:
    started = service.start("amy", "compliant")
    otto = login(service, "otto")
    for ref in (started["run_id"], started["thread_id"]):
        page = otto.get(f"/ui/runs/{ref}")
        assert page.status_code == 200 and started["run_id"] in page.text
        assert "intact" in page.text and "<mark>" in page.text and "Gate decisions" in page.text
        # Each verdict says what decided it: a check's id, or the model's.
        decided = re.findall(r"decided by <code>([^<]+)</code>", page.text)
        claims = service.cp.manifest(started["run_id"]).verdicts
        assert decided and len(decided) == len(claims)
    assert otto.get("/ui/runs/run_nothing").status_code == 404
    ledger = otto.get("/ui/ledger")
    assert ledger.status_code == 200 and "every hash re-derived" in ledger.text


def test_logout_and_revocation_end_the_session(service: Service) -> None:
    rita = login(service, "rita")
    page = rita.get("/ui/").text
    assert rita.post("/ui/logout", data={"csrf": "wrong"}).status_code == 403
    out = rita.post("/ui/logout", data={"csrf": _csrf(page)}, follow_redirects=False)
    assert out.status_code == 303 and out.headers["location"] == "/ui/login"
    assert rita.get("/ui/", follow_redirects=False).status_code == 303

    otto = login(service, "otto")
    [info] = [t for t in service.tokens.list_all() if t.name == "otto"]
    service.tokens.revoke(info.id)
    assert otto.get("/ui/", follow_redirects=False).headers["location"] == "/ui/login"


@pytest.mark.parametrize("path", ["/ui/page.css", "/ui/nowhere"])
def test_every_ui_response_carries_the_headers(service: Service, path: str) -> None:
    answer = service.client.get(path)
    assert answer.headers["content-security-policy"] == CSP
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert answer.headers["referrer-policy"] == "no-referrer"


def test_a_decision_names_approve_or_deny_on_a_known_thread(service: Service, outbox: Path) -> None:
    thread = service.start("amy")["thread_id"]
    rita = login(service, "rita")
    csrf = _csrf(rita.get("/ui/").text)
    vague = rita.post(f"/ui/runs/{thread}/decide", data={"csrf": csrf, "decision": "maybe"})
    assert vague.status_code == 400 and "approve or deny" in vague.text
    unknown = rita.post("/ui/runs/thr_nobody/decide", data={"csrf": csrf, "decision": "approve"})
    assert unknown.status_code == 404 and "text/html" in unknown.headers["content-type"]
    assert service.cp.status(thread).status == "awaiting_grant" and not outbox.exists()


def _cite_in(service: Service, run: str, prop_id: str) -> str:
    """Verify, in ``run``, a proposition ``prop_id`` that cites a quote holding markup;
    the id of the entry it cites."""
    note = service.cp.ledger.append(
        run, kind="tool_output", source="tool:note", content=f"Line 14 is over the cap. {PAYLOAD}"
    )
    text = "Line 14 is over the cap."
    service.cp.verifier.verify(
        run,
        {
            "run_id": run,
            "from_agent": "auditor",
            "status": "ok",
            "claims": [
                {
                    "id": "c_cited",
                    "type": "Assertion",
                    "text": text,
                    "confidence": 0.9,
                    "propositions": [
                        {
                            "id": prop_id,
                            "text": text,
                            "cites": [
                                {"ledger_id": note.id, "quote": f"over the cap. {PAYLOAD}"},
                                {"ledger_id": note.id, "pointer": "/x"},
                            ],
                        }
                    ],
                }
            ],
        },
    )
    return note.id


def test_the_run_page_and_the_queue_show_each_cited_span_as_text(service: Service) -> None:
    started = service.start("amy")
    [waiting] = started["pending_grants"]
    prop_id = waiting["claims"][0]["propositions"][0]["id"]
    note = _cite_in(service, started["run_id"], prop_id)
    rita, otto = login(service, "rita"), login(service, "otto")
    for page in (otto.get(f"/ui/runs/{started['run_id']}"), rita.get("/ui/")):
        assert page.status_code == 200
        cited = page.text[page.text.index('<ul class="cites">') :]
        assert f"<code>{note}</code>" in cited
        assert f"“over the cap. {html.escape(PAYLOAD, quote=False)}”" in cited
        assert "/x: names nothing in the entry" in cited
        assert "<script" not in page.text and "<img" not in page.text
