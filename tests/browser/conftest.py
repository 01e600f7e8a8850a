"""A real browser against a real server: uvicorn on a free port in a background
thread, serving the invoice audit on a SQLite file (the deterministic stand-in NLI
model: the model is not the subject), and Debian's chromium driven headless through
Debian's chromedriver. Nothing is downloaded: both paths are given to Selenium, so
Selenium Manager never runs.

Where chromium or chromedriver is missing the tests skip, unless
``ASSAY_REQUIRE_CHROMIUM=1`` (set by ``.ci/run``, which installs them): then they fail.
"""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from assay import ControlPlane
from assay.apps import reference
from assay.service import ServiceSettings, TokenStore, create_app
from assay.verifier import LexicalNLI

if TYPE_CHECKING:
    from selenium import webdriver

GRAPH = "invoices"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver") or (
    "/usr/bin/chromedriver" if Path("/usr/bin/chromedriver").exists() else None
)


def _missing(what: str) -> None:
    if os.environ.get("ASSAY_REQUIRE_CHROMIUM") == "1":
        pytest.fail(f"ASSAY_REQUIRE_CHROMIUM=1 but {what} is not installed")
    pytest.skip(f"the browser tests need {what} (apt-get install chromium chromium-driver)")


def require_selenium() -> None:
    """Skip the calling test module without selenium (the dev extra), or fail it
    where the browser tests are required."""
    try:
        import selenium
    except ImportError:
        if os.environ.get("ASSAY_REQUIRE_CHROMIUM") == "1":
            pytest.fail("ASSAY_REQUIRE_CHROMIUM=1 but selenium is not installed", pytrace=False)
        pytest.skip("the browser tests need selenium (the dev extra)", allow_module_level=True)
    assert selenium.__version__


@pytest.fixture(scope="session")
def browser_paths() -> tuple[str, str]:
    if CHROMIUM is None:
        _missing("chromium")
    if CHROMEDRIVER is None:
        _missing("chromedriver")
    assert CHROMIUM is not None and CHROMEDRIVER is not None
    return CHROMIUM, CHROMEDRIVER


@pytest.fixture(scope="session")
def driver(
    browser_paths: tuple[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[webdriver.Chrome]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service as DriverService

    chromium, chromedriver = browser_paths
    os.environ.setdefault("SE_OFFLINE", "true")  # never let Selenium Manager fetch anything
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--hide-scrollbars",
        "--window-size=1280,1500",
        f"--user-data-dir={tmp_path_factory.mktemp('chromium')}",
    ):
        options.add_argument(arg)
    browser = webdriver.Chrome(service=DriverService(executable_path=chromedriver), options=options)
    try:
        yield browser
    finally:
        browser.quit()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Live:
    """The served control plane, its address and its tokens' secrets by key."""

    cp: ControlPlane
    base: str
    tokens: TokenStore
    outbox: Path
    secrets: dict[str, str]

    def token(self, key: str, *, role: str) -> str:
        self.secrets[key] = self.tokens.create(name=key, role=role).secret
        return self.secrets[key]


@pytest.fixture
def live(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Live]:
    """The service on a free port, with an agent (amy), a reviewer (rita) and an
    auditor (otto)."""
    import uvicorn

    outbox = tmp_path / "outbox.jsonl"
    monkeypatch.setenv("ASSAY_OUTBOX", str(outbox))
    with ControlPlane.open(f"sqlite:///{tmp_path / 'assay.db'}", nli=LexicalNLI()) as cp:
        app = create_app(cp, {GRAPH: reference.served_graph}, settings=ServiceSettings())
        port = _free_port()
        config: Any = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
        server: Any = uvicorn.Server(config)
        runner = threading.Thread(target=server.run, daemon=True)
        runner.start()
        deadline = time.monotonic() + 30
        while not server.started:
            assert runner.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.05)
        served = Live(
            cp=cp, base=f"http://127.0.0.1:{port}", tokens=TokenStore(cp.engine),
            outbox=outbox, secrets={},
        )  # fmt: skip
        for key, role in (("amy", "agent"), ("rita", "reviewer"), ("otto", "auditor")):
            served.token(key, role=role)
        try:
            yield served
        finally:
            server.should_exit = True
            runner.join(timeout=30)
