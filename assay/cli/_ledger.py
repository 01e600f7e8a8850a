"""``assay ledger`` commands of the Merkle log: keys, signed checkpoints, offline audit
bundles and witnessing.

A failed proof (a bundle edited, a checkpoint the log no longer extends) exits 1 and
says why, as a broken chain does; a key that cannot be read exits 2; a database
failure exits 3.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from assay.cli._common import DbOption, console, err_console, handles_errors, open_plane
from assay.errors import InvalidProof, UsageError
from assay.ledger import (
    Checkpoint,
    generate_key,
    load_verifier,
    verify_bundle,
    verify_checkpoint,
    verify_consistency,
)

ledger_app = typer.Typer(
    no_args_is_help=True,
    help="Show and verify the ledger; sign checkpoints, export and check audit bundles.",
)

KeyOption = Annotated[
    str | None,
    typer.Option(
        "--key",
        help="Signing key file (default: $ASSAY_LEDGER_KEY, then $ASSAY_LEDGER_KEY_FILE).",
        show_default=False,
    ),
]
VerifierOption = Annotated[
    str,
    typer.Option("--key", help="The log's verifier key (name+id+key) or a file holding it."),
]


@ledger_app.command("keygen")
@handles_errors
def ledger_keygen(
    name: Annotated[str, typer.Argument(help="The log's name, e.g. example.org/assay-ledger.")],
    out: Annotated[
        Path, typer.Option("--out", help="Where to write the signing key (created 0600).")
    ],
) -> None:
    """Make an Ed25519 checkpoint signing key; print its verifier key (C2SP note format)."""
    signer_text, verifier_text = generate_key(name)
    try:
        fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise UsageError(f"{out} exists; a signing key is never overwritten") from None
    except OSError as exc:
        raise UsageError(f"cannot create {out}: {exc.strerror}") from None
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(signer_text + "\n")
    console.print(verifier_text, highlight=False, soft_wrap=True)
    err_console.print(
        f"signing key written to {out}; give auditors the verifier key above", highlight=False
    )


@ledger_app.command("checkpoint")
@handles_errors
def ledger_checkpoint(
    db: DbOption = None,
    key: KeyOption = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Also write it to this file, or into this directory as <size>.checkpoint; "
            "never overwrites.",
        ),
    ] = None,
) -> None:
    """Sign and print a checkpoint of the log as it stands (C2SP tlog-checkpoint)."""
    with open_plane(db) as cp:
        note = cp.ledger.checkpoint(key)
    if out is not None:
        size = Checkpoint.parse(note.split("\n\n", 1)[0] + "\n").size
        target = out / f"{size}.checkpoint" if out.is_dir() else out
        _write_new(target, note)
        err_console.print(f"written to {target}", highlight=False)
    sys.stdout.write(note)


def _write_new(path: Path, text: str) -> None:
    """Write ``text`` to a new file; an existing file with the same text is kept, any
    other existing file is an error (a checkpoint store only grows)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        try:
            same = path.read_text(encoding="utf-8") == text
        except (OSError, UnicodeDecodeError):
            same = False
        if same:
            return
        raise UsageError(
            f"{path} exists with other content; checkpoints are never overwritten"
        ) from None
    except OSError as exc:
        raise UsageError(f"cannot create {path}: {exc.strerror}") from None
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)


@ledger_app.command("export")
@handles_errors
def ledger_export(
    run: Annotated[str, typer.Argument(help="The run id (run_...).")],
    db: DbOption = None,
    key: KeyOption = None,
) -> None:
    """Write an offline audit bundle of RUN to stdout: entries, inclusion proofs and a
    signed checkpoint (check it with ``assay ledger verify-bundle``)."""
    with open_plane(db) as cp:
        bundle = cp.ledger.export_bundle(run, key)
    sys.stdout.write(bundle + "\n")


@ledger_app.command("verify-bundle")
@handles_errors
def ledger_verify_bundle(
    bundle: Annotated[Path, typer.Argument(help="A bundle written by `assay ledger export`.")],
    key: VerifierOption,
) -> None:
    """Check a bundle with no database and no network; print its claims, verdicts and
    evidence spans. Exit 1 and say why when any byte of it was changed."""
    verifier = load_verifier(key)
    try:
        data = bundle.read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read {bundle}: {exc.strerror}") from None
    try:
        verified = verify_bundle(data, verifier)
    except InvalidProof as exc:
        err_console.print(f"[bold red]bundle fails[/]: {exc.reason}", highlight=False)
        raise typer.Exit(1) from None
    cp = verified.checkpoint
    console.print(
        f"[green]ok[/]: run {verified.run.run_id}, {len(verified.entries)} entries, each in "
        f"the log {escape(cp.origin)} at size {cp.size} (signed checkpoint verified)",
        highlight=False,
    )
    claims = verified.claims()
    if not claims:
        console.print("the run recorded no verdicts")
        return
    table = Table(title="claims and the evidence they rest on")
    for column in ("verdict", "proposition", "label", "score", "evidence", "span text"):
        table.add_column(column, overflow="fold")
    for claim in claims:
        table.add_row(
            str(claim["verdict_entry"]),
            escape(str(claim["proposition"])),
            str(claim["label"]),
            str(claim["score"]),
            str(claim["evidence"] or "-"),
            escape(str(claim["quote"])) if claim["quote"] is not None else "-",
        )
    console.print(table)


@ledger_app.command("witness")
@handles_errors
def ledger_witness(
    checkpoint: Annotated[
        Path, typer.Option("--checkpoint", help="An earlier checkpoint, kept elsewhere.")
    ],
    key: VerifierOption,
    db: DbOption = None,
) -> None:
    """Prove that the log as it stands extends an earlier checkpoint unchanged (a
    consistency proof). Exit 1 when it does not: history before that checkpoint was
    rewritten."""
    verifier = load_verifier(key)
    try:
        text = checkpoint.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {checkpoint}: {exc}") from None
    try:
        old = verify_checkpoint(text, verifier)
    except InvalidProof as exc:
        err_console.print(f"[bold red]checkpoint fails[/]: {exc.reason}", highlight=False)
        raise typer.Exit(1) from None
    if old.origin != verifier.name:
        err_console.print(
            f"[bold red]checkpoint fails[/]: it is of the log {old.origin!r}, not "
            f"{verifier.name!r}",
            highlight=False,
        )
        raise typer.Exit(1)
    with open_plane(db) as cp:
        size, root = cp.ledger.root()
        if old.size > size:
            err_console.print(
                f"[bold red]not consistent[/]: the checkpoint has {old.size} leaves, the log "
                f"only {size}: entries were removed",
                highlight=False,
            )
            raise typer.Exit(1)
        proof = cp.ledger.consistency_proof(old.size, size)
    try:
        verify_consistency(old.size, size, old.root, root, proof)
    except InvalidProof as exc:
        err_console.print(
            f"[bold red]not consistent[/]: the log at {size} leaves does not extend the "
            f"checkpoint at {old.size}: {exc.reason}",
            highlight=False,
        )
        raise typer.Exit(1) from None
    console.print(
        f"[green]consistent[/]: the log at {size} leaves extends the checkpoint of "
        f"{escape(old.origin)} at {old.size} leaves",
        highlight=False,
    )
