"""``assay verifier``: train and calibrate the NLI model.

Both commands take explicit paths: the data is read from where you say, and a model
is written to a new directory you name, never into the installed package (ship a
new model by copying it into ``assay/verifier/model`` deliberately, with its card).
The training code itself lives in :mod:`assay.training`, off the runtime import path.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from assay.cli._common import handles_errors
from assay.cli._progress import progress_bar

app = typer.Typer(
    help="Train and evaluate the NLI verifier model.", no_args_is_help=True, rich_markup_mode=None
)


@app.command()
@handles_errors
def train(
    data: Annotated[Path, typer.Option(help="Root of the NLI/grounding data sets (read only).")],
    out: Annotated[
        Path,
        typer.Option(help="A new directory for the trained model (never the installed package)."),
    ],
    scale: Annotated[float, typer.Option(help="Multiplier on every set's pair count.")] = 1.0,
    commercial_safe: Annotated[
        bool, typer.Option("--commercial-safe", help="Drop non-commercial sets (ANLI, SICK, ...).")
    ] = False,
    mix: Annotated[
        str,
        typer.Option(
            help="Training mix: commercial (the shipped model), full or commercial+anli+sick."
        ),
    ] = "commercial",
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
    from assay.training import TrainConfig, base_model_dir
    from assay.training import train as run_training

    cfg = TrainConfig(
        data_root=data,
        out_dir=out,
        base_model=base_model or base_model_dir(),
        scale=scale,
        commercial_safe=commercial_safe,
        mix=mix,
        seed=seed,
        batch_size=batch_size,
        lr=lr,
        max_length=max_length,
        threads=threads,
        time_budget_min=time_budget_min,
        eval_limit=eval_limit,
    )
    with progress_bar() as update:
        report = run_training(cfg, log=lambda line: typer.echo(line, err=True), progress=update)
    typer.echo(json.dumps(report, indent=2))


@app.command()
@handles_errors
def calibrate(
    model: Annotated[Path, typer.Option(help="Saved model directory.")],
    data: Annotated[Path, typer.Option(help="Root of the grounding data (read only).")],
    eval_limit: Annotated[int | None, typer.Option()] = None,
) -> None:
    """Refit calibration.json (Platt scaling and threshold) for a saved model."""
    from assay.training import calibrate as run_calibration

    with progress_bar() as update:
        report = run_calibration(
            model,
            data,
            limit=eval_limit,
            log=lambda line: typer.echo(line, err=True),
            progress=update,
        )
    typer.echo(json.dumps(report, indent=2))


if __name__ == "__main__":  # pragma: no cover
    app()
