"""Principals that look alike are one principal: a token's name is refused when it
holds a character a terminal hides, stored in one written form, and compared by its
key, so ``bob ``, ``Bob`` and fullwidth ``bob`` may not decide a run bob started
(over HTTP and on the reviewer page, on SQLite and on PostgreSQL), while another
reviewer still may."""

from __future__ import annotations

import hashlib
import secrets
from datetime import UTC, datetime
from pathlib import Path

import pytest
import sqlalchemy as sa
from typer.testing import CliRunner

from assay import ControlPlane
from assay.cli import app
from assay.errors import UsageError
from assay.service import TokenStore
from assay.service._principals import (
    principal_key,
    principal_problem,
    same_principal,
    written_principal,
)
from tests.service.conftest import Service
from tests.service.test_pages import decide, login

FULLWIDTH_BOB = "\uff42\uff4f\uff42"

#: Names a terminal shows other than as they are, and the code point each refusal names.
HIDDEN = {
    "bob\u200b": "U+200B ZERO WIDTH SPACE (a format character)",
    "bob\u202eevil": "U+202E RIGHT-TO-LEFT OVERRIDE (a format character)",
    "\u2066bob": "U+2066 LEFT-TO-RIGHT ISOLATE (a format character)",
    "bob\u00ad": "U+00AD SOFT HYPHEN (a format character)",
    "bob\x07": "U+0007 (a control character)",
    "bob\tsmith": "U+0009 (a control character)",
    "bob\x85": "U+0085 (a control character)",
    "bob\u2028": "U+2028 LINE SEPARATOR (a line separator)",
    "bob\u3164": "U+3164 HANGUL FILLER (an invisible character)",
    "bob\ufe0f": "U+FE0F VARIATION SELECTOR-16 (an invisible character)",
    "bob\ue000": "U+E000 (a private-use character)",
}


# --- the three forms ----------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(HIDDEN))
def test_a_name_with_a_hidden_character_is_refused_naming_it(name: str) -> None:
    problem = principal_problem(name, field="token name")
    assert problem is not None and HIDDEN[name] in problem
    assert problem.startswith("token name must show as it is written")


@pytest.mark.parametrize("name", ["", "   ", "\u3000", "\u00a0 \u2003"])
def test_a_blank_name_is_refused(name: str) -> None:
    assert principal_problem(name) == "name must not be empty or blank"


def test_a_name_too_long_once_written_is_refused() -> None:
    assert principal_problem("b" * 200) is None
    assert principal_problem("b" * 201) == "name is longer than 200 characters"
    # NFKC writes U+FDFA as 18 characters: 12 of them are 216 stored characters.
    assert principal_problem("\ufdfa" * 12) == "name is longer than 200 characters"


@pytest.mark.parametrize(
    ("given", "written"),
    [
        ("bob", "bob"),
        ("bob ", "bob"),
        ("  Bob\u00a0 Smith\u3000", "Bob Smith"),
        (FULLWIDTH_BOB, "bob"),
        ("Jos\u0065\u0301", "Jos\u00e9"),
    ],
)
def test_the_written_form_is_nfkc_with_one_space_and_its_case(given: str, written: str) -> None:
    assert principal_problem(given) is None
    assert written_principal(given) == written


def test_names_that_differ_in_case_width_or_spacing_are_one_principal() -> None:
    for alike in ("bob ", " bob", "Bob", "BOB", FULLWIDTH_BOB, "\uff22\uff2f\uff22"):
        assert same_principal(alike, "bob"), alike
    assert same_principal("Stra\u00dfe", "STRASSE")
    assert same_principal("bob\u200b", "bob")  # a name stored before the check
    assert same_principal("Bob  Smith", "bob smith")
    for other in ("bobby", "rob", "bo b", "b\u043eb"):  # the last: a Cyrillic o
        assert not same_principal(other, "bob"), other
    assert not same_principal(None, "bob") and not same_principal("bob", None)
    assert principal_key(FULLWIDTH_BOB) == "bob"


# --- token creation ---------------------------------------------------------------------


def _names(cp: ControlPlane) -> list[str]:
    with cp.engine.connect() as conn:
        return list(conn.execute(sa.text("SELECT name FROM service_tokens")).scalars())


def test_making_a_token_refuses_hidden_characters_and_writes_nothing(plane: ControlPlane) -> None:
    store = TokenStore(plane.engine)
    for name, named in HIDDEN.items():
        with pytest.raises(UsageError, match="must show as it is written") as refused:
            store.create(name=name, role="reviewer")
        assert named in str(refused.value)
    with pytest.raises(UsageError, match="empty or blank"):
        store.create(name=" \u00a0 ", role="reviewer")
    assert _names(plane) == []


def test_a_token_stores_the_written_name_and_one_spelling_per_principal(
    plane: ControlPlane,
) -> None:
    store = TokenStore(plane.engine)
    assert store.create(name="bob", role="agent").info.name == "bob"
    assert store.create(name="bob ", role="reviewer").info.name == "bob"
    assert store.create(name=FULLWIDTH_BOB, role="auditor").info.name == "bob"
    for other in ("Bob", "BOB", "\uff22ob"):
        with pytest.raises(UsageError, match="spelled another way") as refused:
            store.create(name=other, role="reviewer")
        assert "name the token 'bob'" in str(refused.value)
    assert store.other_spelling("Bob") == "bob" and store.other_spelling("bob") is None
    assert store.create(name="Rita", role="reviewer").info.name == "Rita"
    assert sorted(_names(plane)) == ["Rita", "bob", "bob", "bob"]


def test_the_command_line_refuses_a_hidden_character_and_another_spelling(
    sqlite_url: str,
) -> None:
    runner = CliRunner()
    base = ["tokens", "create", "--role", "reviewer", "--db", sqlite_url, "--name"]
    hidden = runner.invoke(app, [*base, "bob\u202eevil"])
    assert hidden.exit_code == 2, hidden.output
    assert "U+202E" in hidden.output and "Traceback" not in hidden.output
    assert runner.invoke(app, [*base, "bob "]).exit_code == 0
    other = runner.invoke(app, [*base, "BOB"])
    assert other.exit_code == 2 and "spelled another way" in other.output
    with ControlPlane.open(sqlite_url) as cp:
        assert _names(cp) == ["bob"]


def test_the_http_api_refuses_a_hidden_character_and_another_spelling(service: Service) -> None:
    client, admin = service.client, service.headers["ada"]
    hidden = client.post(
        "/v1/tokens", json={"name": "bob\u200b", "role": "reviewer"}, headers=admin
    )
    assert hidden.status_code == 422, hidden.text
    assert hidden.json()["code"] == "invalid_principal_name"
    assert "U+200B ZERO WIDTH SPACE" in hidden.json()["detail"]
    made = client.post("/v1/tokens", json={"name": "\uff41my", "role": "reviewer"}, headers=admin)
    assert made.status_code == 201 and made.json()["name"] == "amy"
    other = client.post("/v1/tokens", json={"name": "Amy", "role": "reviewer"}, headers=admin)
    assert other.status_code == 409 and other.json()["code"] == "principal_spelling"
    assert "name the token 'amy'" in other.json()["detail"]


# --- separation of duties --------------------------------------------------------------


def _legacy_token(service: Service, key: str, *, name: str, role: str) -> None:
    """A token row as one made before names were checked holds it: its name as given."""
    token_id = "tok_" + secrets.token_hex(8)
    secret = f"assay.{token_id}.{secrets.token_urlsafe(32)}"
    row = {
        "id": token_id,
        "name": name,
        "role": role,
        "sha": hashlib.sha256(secret.encode()).hexdigest(),
        "at": datetime.now(UTC),
    }
    with service.cp.engine.begin() as conn:
        conn.execute(
            sa.text(
                "INSERT INTO service_tokens (id, name, role, secret_sha256, created_at) "
                "VALUES (:id, :name, :role, :sha, :at)"
            ),
            row,
        )
    service.headers[key] = {"Authorization": f"Bearer {secret}"}


#: Reviewers whose names are bob's spelled otherwise, as rows made before the check.
LEGACY_BOBS = {
    "trailing": "bob ",
    "capital": "Bob",
    "fullwidth": FULLWIDTH_BOB,
    "zero-width": "bob\u200b",
    "override": "\u202ebob",
}


def test_no_spelling_of_the_starter_decides_the_run(service: Service, outbox: Path) -> None:
    service.token("bob-agent", role="agent", name="bob")
    service.token("bob-trailing", role="reviewer", name="bob ")
    service.token("bob-fullwidth", role="reviewer", name=FULLWIDTH_BOB)
    for key, name in LEGACY_BOBS.items():
        _legacy_token(service, f"legacy-{key}", name=name, role="reviewer")
    thread = service.start("bob-agent")["thread_id"]
    impostors = ["bob-trailing", "bob-fullwidth", *(f"legacy-{k}" for k in LEGACY_BOBS)]
    details: dict[str, str] = {}
    for key in impostors:
        refused = service.client.post(
            f"/v1/runs/{thread}/decisions", json={"approve": True}, headers=service.headers[key]
        )
        assert refused.status_code == 403, (key, refused.text)
        assert refused.json()["code"] == "separation_of_duties"
        details[key] = refused.json()["detail"]
    assert details["bob-fullwidth"] == "'bob' started this run and may not decide its calls"
    assert details["legacy-zero-width"] == (
        "'bob\\u200b' is the principal 'bob', who started this run, and may not decide its calls"
    )
    assert service.cp.status(thread).status == "awaiting_grant" and not outbox.exists()

    for key in ("bob-fullwidth", "legacy-capital", "legacy-zero-width"):
        browser = login(service, key)
        assert 'class="decide"' not in browser.get("/ui/").text, key
        forced = decide(browser, thread, "approve")
        assert forced.status_code == 403 and "Separation of duties" in forced.text, key
    assert not outbox.exists()

    allowed = service.client.post(
        f"/v1/runs/{thread}/decisions", json={"approve": True}, headers=service.headers["rita"]
    )
    assert allowed.status_code == 200, allowed.text
    assert allowed.json()["actions"][0]["approver"] == "rita"
    assert len(outbox.read_text().splitlines()) == 1


def test_an_agent_reads_the_runs_of_its_principal_however_spelled(service: Service) -> None:
    service.token("bob-agent", role="agent", name="bob")
    _legacy_token(service, "bob-capital", name="Bob", role="agent")
    service.token("bobby", role="agent")
    thread = service.start("bob-agent", "compliant")["thread_id"]
    read = service.client.get(f"/v1/runs/{thread}", headers=service.headers["bob-capital"])
    assert read.status_code == 200 and read.json()["started_by"] == "bob"
    other = service.client.get(f"/v1/runs/{thread}", headers=service.headers["bobby"])
    assert other.status_code == 403 and other.json()["code"] == "not_your_run"
