"""The reviewer page in a real browser (headless chromium): log in with a token, read
the pending flag with its evidence spans, approve or deny through the forms; an
auditor sees no buttons; hostile evidence stays text.

``ASSAY_UPDATE_SCREENSHOTS=1`` also saves the queue and a run's audit as the
screenshots in ``docs/images``; otherwise nothing under ``docs`` is written."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import httpx
import pytest

from assay.fence import DecisionStore
from tests.browser.conftest import GRAPH, Live, require_selenium
from tests.service.conftest import case

require_selenium()

from selenium import webdriver  # noqa: E402
from selenium.common.exceptions import (  # noqa: E402
    NoAlertPresentException,
    WebDriverException,
)
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.remote.webelement import WebElement  # noqa: E402
from selenium.webdriver.support.wait import WebDriverWait  # noqa: E402

DOCS_IMAGES = Path(__file__).resolve().parents[2] / "docs" / "images"
#: What the page marks of the capped-rate sentence: the value, where its entry states it.
CAP = "EUR 380 per hour"
PAYLOAD = "<script>alert(1)</script><img src=x onerror=alert(2)>"


def start(live: Live, body: dict[str, Any] | None = None) -> dict[str, Any]:
    answer = httpx.post(
        f"{live.base}/v1/graphs/{GRAPH}/runs",
        json={"input": body or case("over_cap")},
        headers={"Authorization": f"Bearer {live.secrets['amy']}"},
        timeout=60,
    )
    assert answer.status_code == 201, answer.text
    started = answer.json()
    assert started["status"] == "awaiting_grant"
    return started


def submit(driver: webdriver.Chrome, button: WebElement) -> None:
    """Click a form's button and wait until the next page has replaced this one.

    The old page is marked with a window property, and the wait is for a fully loaded
    document without it. Waiting on an element of the old page to go stale instead
    races the navigation: chromium may answer "Node with given id does not belong to
    the document" rather than a stale reference, while the old page is torn down."""
    driver.execute_script("window.assayOldPage = true;")
    button.click()
    WebDriverWait(driver, 30, ignored_exceptions=[WebDriverException]).until(
        lambda d: d.execute_script(
            "return document.readyState === 'complete' && !window.assayOldPage;"
        )
    )


def log_in(driver: webdriver.Chrome, live: Live, key: str) -> None:
    driver.delete_all_cookies()
    driver.get(f"{live.base}/ui/login")
    driver.find_element(By.ID, "token").send_keys(live.secrets[key])
    submit(driver, driver.find_element(By.ID, "login"))
    assert driver.current_url == f"{live.base}/ui/"
    assert driver.find_element(By.TAG_NAME, "h1").text == "Pending grants"


def no_alert(driver: webdriver.Chrome) -> None:
    with pytest.raises(NoAlertPresentException):
        _ = driver.switch_to.alert


def screenshot(driver: webdriver.Chrome, name: str) -> None:
    """Save the page's full height as ``docs/images/name`` when asked to."""
    if os.environ.get("ASSAY_UPDATE_SCREENSHOTS") != "1":
        return
    height = int(driver.execute_script("return document.documentElement.scrollHeight"))
    driver.set_window_size(1280, min(max(height, 800), 2400))
    DOCS_IMAGES.mkdir(parents=True, exist_ok=True)
    assert driver.save_screenshot(str(DOCS_IMAGES / name))
    driver.set_window_size(1280, 1500)


def test_a_reviewer_approves_and_the_flag_is_written_once(
    driver: webdriver.Chrome, live: Live
) -> None:
    started = start(live)
    log_in(driver, live, "rita")
    section = driver.find_element(By.ID, started["thread_id"])
    assert "flag_invoice_line" in section.text
    assert started["pending_grants"][0]["args_sha256"] in section.text
    marks = [m.text for m in section.find_elements(By.TAG_NAME, "mark")]
    assert CAP in marks and "INV-4421" in marks
    screenshot(driver, "reviewer-queue.png")

    section.find_element(By.NAME, "reason").send_keys("over the cap")
    submit(driver, section.find_element(By.CSS_SELECTOR, "button.approve"))
    flash = driver.find_element(By.CLASS_NAME, "flash").text
    assert f"Approved {started['thread_id']}: flag_invoice_line executed" in flash
    assert not driver.find_elements(By.ID, started["thread_id"])
    [line] = live.outbox.read_text().splitlines()
    assert json.loads(line)["line"] == 14
    [stored] = DecisionStore(live.cp.engine).for_run(started["run_id"]).values()
    assert (stored.approver, stored.approve, stored.reason) == ("rita", True, "over the cap")

    driver.get(f"{live.base}/ui/runs/{started['run_id']}")
    assert "intact" in driver.find_element(By.CLASS_NAME, "facts").text
    assert CAP in [m.text for m in driver.find_elements(By.TAG_NAME, "mark")]
    screenshot(driver, "reviewer-audit.png")


def test_a_denial_is_recorded_with_its_reason(driver: webdriver.Chrome, live: Live) -> None:
    started = start(live)
    log_in(driver, live, "rita")
    section = driver.find_element(By.ID, started["thread_id"])
    section.find_element(By.NAME, "reason").send_keys("client consented in writing")
    submit(driver, section.find_element(By.CSS_SELECTOR, "button.deny"))
    flash = driver.find_element(By.CLASS_NAME, "flash").text
    assert f"Denied {started['thread_id']}: flag_invoice_line denied" in flash
    [stored] = DecisionStore(live.cp.engine).for_run(started["run_id"]).values()
    assert (stored.approver, stored.approve) == ("rita", False)
    assert stored.reason == "client consented in writing"
    assert not live.outbox.exists()


def test_an_auditor_sees_the_queue_without_buttons(driver: webdriver.Chrome, live: Live) -> None:
    started = start(live)
    log_in(driver, live, "otto")
    section = driver.find_element(By.ID, started["thread_id"])
    assert CAP in [m.text for m in section.find_elements(By.TAG_NAME, "mark")]
    assert not driver.find_elements(By.CSS_SELECTOR, "form.decide")
    assert not driver.find_elements(By.CSS_SELECTOR, "button.approve, button.deny")
    assert [b.text for b in driver.find_elements(By.TAG_NAME, "button")] == ["Log out"]


def test_hostile_evidence_renders_as_text(driver: webdriver.Chrome, live: Live) -> None:
    body = case("over_cap")
    letter = body["documents"]["engagement_letter.md"]
    body["documents"]["engagement_letter.md"] = letter.replace(
        "EUR 380 per hour.", f"EUR 380 per hour. {PAYLOAD}"
    )
    started = start(live, body)
    log_in(driver, live, "rita")
    no_alert(driver)
    section = driver.find_element(By.ID, started["thread_id"])
    assert PAYLOAD in section.text
    assert not driver.find_elements(By.CSS_SELECTOR, "main script, main img")
    driver.get(f"{live.base}/ui/runs/{started['run_id']}")
    no_alert(driver)
    assert PAYLOAD in driver.find_element(By.TAG_NAME, "main").text
