"""The screenshot of the HTML eval report in the docs (``docs/images/eval-report.png``),
from real evaluations of the stock desk in ``tests/evals/_desk.py``.

The desk is evaluated as it should be (that run is the baseline), then a few times
more, the last time with a regression (it never states the documents' last
sentence), each run a point of the trend; the suite adds a case whose agent guesses
beyond its documents, so the page shows an audit with the gate's and the verifier's
refusals. The stand-in NLI model keeps it quick and offline. Headless Chromium draws
the page.

    python benchmarks/eval_report_screenshot.py [--out docs/images/eval-report.png]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from assay import ControlPlane
from assay.control_plane import GraphFactory
from assay.evals import baseline_of, evaluate, load_suite, write_report_dir
from assay.verifier import LexicalNLI
from tests.evals import _desk
from tests.evals.conftest import SUITE, write_suite

ROOT = Path(__file__).resolve().parent.parent
GUESS_CASE = """\
  - id: shipping
    task: How does W-12 ship, and how many units does it hold?
    documents:
      stock.md: {file: docs/stock.md}
    extra: {guess: W-12 ships every order by air freight from Rotterdam.}
    expect:
      status: answered
      facts: [{id: units, text: W-12 holds 120 units, source: stock.md}]
"""
#: The runs of the trend, oldest first: the last one is the report's own.
RUNS: tuple[GraphFactory, ...] = (_desk.graph, _desk.graph, _desk.graph_drops_claim)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images" / "eval-report.png")
    args = parser.parse_args()
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        sys.exit("chromium is not installed (apt-get install chromium)")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        url = f"sqlite:///{folder / 'assay.db'}"
        suite = load_suite(write_suite(folder, SUITE + GUESS_CASE))
        with ControlPlane.open(url, nli=LexicalNLI()) as cp:
            baseline = baseline_of(evaluate(suite, _desk.graph, control_plane=cp, judge=None))
            reports = [evaluate(suite, g, control_plane=cp, judge=None) for g in RUNS]
        start = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
        history = [
            {
                "finished_at": (start + timedelta(days=7 * i)).isoformat(),
                "metrics": r.metrics.gated(),
            }
            for i, r in enumerate(reports)
        ]
        page = write_report_dir(
            reports[-1], folder / "report", baseline=baseline, history=history, database_url=url
        )
        args.out.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
             f"--user-data-dir={folder / 'profile'}", f"--screenshot={args.out.resolve()}",
             "--window-size=1200,1600", page.as_uri()],
            check=True, capture_output=True, timeout=120,
        )  # fmt: skip
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
