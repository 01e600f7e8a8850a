"""``assay verifier calibrate`` on a small data root written here, with a copy of the
shipped model: it refits and saves the calibration, and draws a progress bar of the
items on a terminal only (the bar's ``done/total`` is what the test looks for)."""

from __future__ import annotations

import csv
import json
import shutil
from importlib.resources import files
from pathlib import Path

import pytest
from typer.testing import CliRunner

from assay.cli import app

# (document, claim, supported): each set gets both kinds, in words of its own.
PAIRS = [
    ("The depot in Leeds opens at 7 am on weekdays.", "The Leeds depot opens at 7 am.", 1),
    ("The depot in Leeds opens at 7 am on weekdays.", "The Leeds depot opens at 9 am.", 0),
    ("Invoice 88 was paid on 3 May by bank transfer.", "Invoice 88 was paid by transfer.", 1),
    ("Invoice 88 was paid on 3 May by bank transfer.", "Invoice 88 is still unpaid.", 0),
    ("The pump is rated for 40 litres per minute.", "The pump moves 40 litres a minute.", 1),
    ("The pump is rated for 40 litres per minute.", "The pump is rated for 90 litres.", 0),
]
ITEMS_PER_SET = len(PAIRS)
SETS = 6  # BEGIN wow, cmu, tc; WiCE; SummEdits news, podcast


def _data_root(root: Path) -> Path:
    grounding = root / "grounding-dev"
    grounding.mkdir(parents=True)
    for name in ("wow", "cmu", "tc"):
        with (grounding / f"begin_dev_{name}.tsv").open("w", encoding="utf-8", newline="") as f:
            writer = csv.writer(f, delimiter="\t", quoting=csv.QUOTE_NONE, escapechar="\\")
            writer.writerow(["knowledge", "response", "begin_label"])
            for doc, claim, ok in PAIRS:
                label = "Fully attributable" if ok else "Not fully attributable"
                writer.writerow([doc, claim, label])
    with (grounding / "wice_oracle_claim_dev.jsonl").open("w", encoding="utf-8") as f:
        for doc, claim, ok in PAIRS:
            row = {
                "evidence": [doc],
                "claim": claim,
                "label": "supported" if ok else "not_supported",
            }
            f.write(json.dumps(row) + "\n")
    summedits = root / "nli-extra" / "summedits"
    summedits.mkdir(parents=True)
    for domain in ("news", "podcast"):
        rows = [{"doc": d, "summary": c, "label": ok} for d, c, ok in PAIRS]
        (summedits / f"summedits_{domain}.json").write_text(json.dumps(rows), encoding="utf-8")
    return root


@pytest.fixture
def model_copy(tmp_path: Path) -> Path:
    shipped = Path(str(files("assay"))) / "verifier" / "model"
    return Path(shutil.copytree(shipped, tmp_path / "model"))


def test_calibrate_draws_its_progress_on_a_terminal_only(
    tmp_path: Path, model_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _data_root(tmp_path / "data")
    args = ["verifier", "calibrate", "--model", str(model_copy), "--data", str(data)]
    total = f"{ITEMS_PER_SET * SETS}/{ITEMS_PER_SET * SETS}"

    piped = CliRunner().invoke(app, args)
    assert piped.exit_code == 0, piped.output
    assert total not in piped.stderr
    report = json.loads(piped.stdout)
    saved = json.loads((model_copy / "calibration.json").read_text(encoding="utf-8"))
    assert saved["threshold"] == report["threshold"]
    assert {n: s["n"] for n, s in report["dev"].items()} == {
        "begin_wow": 6,
        "begin_cmu": 6,
        "begin_tc": 6,
        "wice_claim": 6,
        "summedits_news": 6,
        "summedits_podcast": 6,
    }

    monkeypatch.setenv("FORCE_COLOR", "1")  # stderr counts as a terminal
    drawn = CliRunner().invoke(app, args)
    assert drawn.exit_code == 0, drawn.output
    assert total in drawn.stderr and "calibration items" in drawn.stderr
    assert total not in drawn.stdout
    json.loads(drawn.stdout)  # the report on stdout is still one JSON document
