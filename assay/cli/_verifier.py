"""``assay verifier``: train and evaluate the default NLI model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(help="Train and evaluate the NLI verifier model.", no_args_is_help=True)

_REPO_ROOT = Path(__file__).resolve().parents[2]
_DEFAULT_DATA = _REPO_ROOT.parent / "shared" / "data"
_DEFAULT_OUT = Path(__file__).resolve().parent / "model"


@app.command()
def train(
    data: Annotated[Path, typer.Option(help="Root of the NLI/grounding data.")] = _DEFAULT_DATA,
    out: Annotated[Path, typer.Option(help="Where the model is written.")] = _DEFAULT_OUT,
    scale: Annotated[float, typer.Option(help="Multiplier on every set's pair count.")] = 1.0,
    commercial_safe: Annotated[
        bool, typer.Option("--commercial-safe", help="Drop non-commercial sets (ANLI, SICK, ...).")
    ] = False,
    base_model: Annotated[
        Path | None,
        typer.Option(help="Start from this checkpoint (default: all-MiniLM-L6-v2)."),
    ] = None,
    seed: Annotated[int, typer.Option()] = 13,
    batch_size: Annotated[int, typer.Option()] = 32,
    lr: Annotated[float, typer.Option()] = 5e-5,
    max_length: Annotated[int, typer.Option()] = 256,
    threads: Annotated[int, typer.Option()] = 2,
    time_budget_min: Annotated[
        float, typer.Option(help="Stop training after this many minutes (0: no limit).")
    ] = 0.0,
    eval_limit: Annotated[
        int | None, typer.Option(help="Cap items per calibration set (quick runs).")
    ] = None,
) -> None:
    """Fine-tune MiniLM-L6 as a 3-way NLI cross-encoder, save it fp16, calibrate it."""
    from assay.verifier._train import TrainConfig, base_model_dir
    from assay.verifier._train import train as run_training

    cfg = TrainConfig(
        data_root=data,
        out_dir=out,
        base_model=base_model or base_model_dir(),
        scale=scale,
        commercial_safe=commercial_safe,
        seed=seed,
        batch_size=batch_size,
        lr=lr,
        max_length=max_length,
        threads=threads,
        time_budget_min=time_budget_min,
        eval_limit=eval_limit,
    )
    report = run_training(cfg, log=lambda line: typer.echo(line, err=True))
    typer.echo(json.dumps(report, indent=2))


@app.command()
def calibrate(
    model: Annotated[Path, typer.Option(help="Saved model directory.")] = _DEFAULT_OUT,
    data: Annotated[Path, typer.Option(help="Root of the grounding data.")] = _DEFAULT_DATA,
    eval_limit: Annotated[int | None, typer.Option()] = None,
) -> None:
    """Refit calibration.json (Platt scaling and threshold) for a saved model."""
    from assay.verifier._calibrate import calibrate as run_calibration

    report = run_calibration(
        model, data, limit=eval_limit, log=lambda line: typer.echo(line, err=True)
    )
    typer.echo(json.dumps(report, indent=2))


if __name__ == "__main__":  # pragma: no cover
    app()
