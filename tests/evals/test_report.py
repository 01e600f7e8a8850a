"""The HTML report of an evaluation: one self-contained file, valid HTML, every
untrusted text escaped, a bar per gated metric, a trend point per past run, and the
audit of each failed case read from its run's ledger; and the page as a browser
draws it."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import zlib
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import pytest
from typer.testing import CliRunner

from assay import ControlPlane
from assay.cli._eval import eval_app
from assay.control_plane import GraphFactory
from assay.evals import (
    GATED_METRICS,
    REPORT_FILE,
    AuditedRound,
    CaseAudit,
    EvalReport,
    Suite,
    audit_run,
    baseline_of,
    check_precision,
    evaluate,
    load_suite,
    write_html_report,
    write_report_dir,
)
from assay.verifier import LexicalNLI, Verifier
from tests.evals import _desk
from tests.evals.conftest import REQUEST, STOCK, SUITE, write_suite

HOSTILE = '<script>alert("owned")</script> W-12 ships by air on 2031-09-09.'
HOSTILE_CASE = f"""\
  - id: hostile
    task: How does W-12 ship?
    documents:
      stock.md: {{file: docs/stock.md}}
    extra: {{guess: '{HOSTILE}'}}
    expect:
      status: answered
      facts: [{{id: units, text: W-12 holds 120 units, source: stock.md}}]
"""
VOID = {"meta", "br", "rect", "line", "polyline", "hr", "img", "input", "link"}
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


class _Page(HTMLParser):
    """Checks that tags nest and close, and collects what the tests look at."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.problems: list[str] = []
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {k: v or "" for k, v in attrs}))
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {k: v or "" for k, v in attrs}))

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
            return
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def having(self, tag: str, css: str) -> list[dict[str, str]]:
        return [a for t, a in self.tags if t == tag and css in a.get("class", "").split()]


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    page.close()
    assert page.problems == [] and page.stack == [], (page.problems, page.stack)
    return page


@pytest.fixture
def plane(sqlite_url: str) -> Iterator[ControlPlane]:
    with ControlPlane.open(sqlite_url, nli=LexicalNLI()) as cp:
        yield cp


@pytest.fixture
def engine_plane(db_url: str) -> Iterator[ControlPlane]:
    """On each engine: the audit is read back from the ledger."""
    with ControlPlane.open(db_url, nli=LexicalNLI()) as cp:
        yield cp


@pytest.fixture
def suite(tmp_path: Path) -> Suite:
    return load_suite(write_suite(tmp_path, SUITE + HOSTILE_CASE))


def _evaluate(cp: ControlPlane, suite: Suite, graph: GraphFactory) -> EvalReport:
    return evaluate(suite, graph, control_plane=cp, judge=None)


HISTORY = [
    {"finished_at": "2026-11-01T10:00:00", "metrics": dict.fromkeys(GATED_METRICS, 1.0)},
    {"finished_at": "2026-11-08T10:00:00", "metrics": dict.fromkeys(GATED_METRICS, 0.9)},
    {"finished_at": "2026-11-15T10:00:00", "metrics": dict.fromkeys(GATED_METRICS, 0.75)},
]


def test_the_report_is_one_valid_page_with_bars_trend_and_audits(
    engine_plane: ControlPlane, suite: Suite, db_url: str, tmp_path: Path
) -> None:
    baseline = baseline_of(_evaluate(engine_plane, suite, _desk.graph))
    report = _evaluate(engine_plane, suite, _desk.graph_drops_claim)
    path = write_report_dir(
        report, tmp_path / "out", baseline=baseline, history=HISTORY, database_url=db_url
    )
    assert path == tmp_path / "out" / REPORT_FILE
    source = path.read_text(encoding="utf-8")
    page = _parse(path)

    # Self-contained: nothing is fetched, nothing runs.
    assert not [t for t, _ in page.tags if t in ("script", "link", "img", "iframe")]
    assert "http://" not in source.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "https://" not in source
    # The hostile claim is shown as text, never as markup.
    assert "&lt;script&gt;alert(&#34;owned&#34;)&lt;/script&gt;" in source
    assert any('<script>alert("owned")</script>' in t for t in page.text)

    bars = page.having("rect", "current")
    assert [b["data-metric"] for b in bars] == list(GATED_METRICS)
    assert len(page.having("line", "baseline")) == sum(
        v is not None for v in baseline.metrics.values()
    )
    assert page.having("rect", "regressed")[0]["data-metric"] == "coverage"
    lines = page.having("polyline", "trend-line")
    assert [line["data-metric"] for line in lines] == list(GATED_METRICS)
    assert all(len(line["points"].split()) == len(HISTORY) for line in lines)

    text = "".join(page.text)
    failed = {c.case_id for c in report.cases if c.case_id in text and "expected" in text}
    assert {"stock", "hostile"} <= failed
    assert "required fact not established" in text  # the dropped claim
    # The hostile case's audit: the gate's refusal, Unsupported or verdicts, and spans.
    assert page.having("td", "gate-error") or page.having("tr", "unsupported")
    spans = _span_texts(source)
    assert spans and all(s in STOCK or s in REQUEST for s in spans)

    # What decided the verdicts: per check, as many verdicts as the runs recorded.
    tally = check_precision(report.cases)
    assert sum(c.decided for c in tally) == sum(len(c.decisions) for c in report.cases) > 0
    rows = page.having("table", "checks")
    assert rows and all(f"<code>{c.check}</code>" in source for c in tally)
    assert "decided by" in text


def _span_texts(source: str) -> list[str]:
    """The exact evidence spans the page shows."""
    collected: list[str] = []

    class Spans(HTMLParser):
        inside = False

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            self.inside = tag == "pre" and ("class", "span") in attrs

        def handle_endtag(self, tag: str) -> None:
            self.inside = False

        def handle_data(self, data: str) -> None:
            if self.inside:
                collected.append(data)

    Spans(convert_charrefs=True).feed(source)
    return collected


def test_an_irreversible_call_and_its_grant_are_in_the_audit(
    plane: ControlPlane, suite: Suite, tmp_path: Path
) -> None:
    """A case that orders twice shows both grants and both calls."""
    report = _evaluate(plane, suite, _desk.graph_orders_twice)
    order = report.case("order")
    assert order.run_id is not None and order.hygiene_violations
    audits = {"order": audit_run(plane.ledger, order.run_id)}
    path = write_html_report(report, tmp_path / "r.html", audits=audits)
    page = _parse(path)
    grants = page.having("tr", "grant")
    calls = page.having("tr", "call")
    assert len(grants) >= 2 and len(calls) >= 2
    assert "place_order" in "".join(page.text)
    assert [tool for tool, _, _ in audits["order"].grants].count("place_order") == 2


def test_without_history_or_baseline_the_page_says_so(
    plane: ControlPlane, suite: Suite, tmp_path: Path
) -> None:
    report = _evaluate(plane, suite, _desk.graph)
    page = _parse(write_html_report(report, tmp_path / "r.html"))
    assert page.having("polyline", "trend-line") == []
    assert page.having("line", "baseline") == []
    assert len(page.having("rect", "current")) == len(GATED_METRICS)
    assert "No past runs were given." in "".join(page.text)


def test_the_cli_writes_the_report(
    sqlite_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(Verifier, "default", lambda *_, **__: LexicalNLI())
    suite_file = write_suite(tmp_path, SUITE + HOSTILE_CASE)
    out = tmp_path / "report"
    graph = "tests.evals._desk:graph"
    args = [str(suite_file), "--db", sqlite_url, "--graph", graph, "--report", str(out)]
    result = CliRunner().invoke(eval_app, args)
    # No baseline: the gate passes on its absolute checks; the report still lists
    # the case that missed its gold, with its audit.
    assert result.exit_code == 0, result.output
    assert "report written to" in result.output
    page = _parse(out / REPORT_FILE)
    assert [d["id"] for d in page.having("div", "case")] == ["case-hostile"]
    assert page.having("td", "claim")


# --- the page in a browser --------------------------------------------------------------


def _png_pixels(data: bytes) -> tuple[int, int, int, list[bytes]]:
    """Width, height, bytes per pixel and the unfiltered rows of an 8-bit RGB or RGBA
    PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        header = body if kind == b"IHDR" else header
        idat += body if kind == b"IDAT" else b""
        pos += 12 + length
    width, height, depth, colour = struct.unpack(">IIBB", header[:10])
    assert depth == 8 and colour in (2, 6)
    bpp = 3 if colour == 2 else 4
    raw, stride, rows, prev = zlib.decompress(idat), width * bpp, [], bytes(width * bpp)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + a) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + b) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + pred) & 0xFF
        rows.append(bytes(line))
        prev = bytes(line)
    return width, height, bpp, rows


@pytest.fixture
def chromium() -> str:
    """Debian's chromium; a skip where it is missing, a failure where CI requires it
    (``ASSAY_REQUIRE_CHROMIUM=1``, set by ``.ci/run``, which installs it)."""
    if CHROMIUM is not None:
        return CHROMIUM
    if os.environ.get("ASSAY_REQUIRE_CHROMIUM") == "1":
        pytest.fail("ASSAY_REQUIRE_CHROMIUM=1 but chromium is not installed")
    pytest.skip("the browser test needs chromium (apt-get install chromium; .ci/run does)")


def test_a_browser_draws_the_report(
    chromium: str, plane: ControlPlane, suite: Suite, tmp_path: Path
) -> None:
    baseline = baseline_of(_evaluate(plane, suite, _desk.graph))
    report = _evaluate(plane, suite, _desk.graph_drops_claim)
    page = write_html_report(report, tmp_path / "r.html", baseline=baseline, history=HISTORY)
    shot = tmp_path / "shot.png"
    subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         f"--user-data-dir={tmp_path / 'profile'}", f"--screenshot={shot}",
         "--window-size=1200,1600", page.as_uri()],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    assert shot.exists() and shot.stat().st_size > 10_000
    width, height, bpp, rows = _png_pixels(shot.read_bytes())
    assert (width, height) == (1200, 1600)
    colours = {row[i : i + 3] for row in rows[::20] for i in range(0, len(row), bpp * 7)}
    assert len(colours) > 8  # text, bars and lines drawn, not one flat colour


def test_control_and_format_characters_are_shown_not_obeyed(
    plane: ControlPlane, suite: Suite, tmp_path: Path
) -> None:
    report = _evaluate(plane, suite, _desk.graph_drops_claim)
    sneaky = "pay\u202eevil\u200b <b>bold</b>"
    audit = CaseAudit(
        run_id="run_x",
        rounds=(
            AuditedRound(
                handover_id="led_x",
                claims=(("c1", "Assertion", sneaky),),
                propositions=(),
                accepted=False,
                gate_errors=(("unverified_identifier", "$.claims[0]", sneaky),),
                unsupported=(),
            ),
        ),
    )
    path = write_html_report(report, tmp_path / "r.html", audits={"stock": audit})
    source = path.read_text(encoding="utf-8")
    _parse(path)
    assert "\u202e" not in source and "\u200b" not in source
    assert "pay\\u202eevil\\u200b &lt;b&gt;bold&lt;/b&gt;" in source
    assert "<b>" not in source
