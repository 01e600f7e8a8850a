"""``assay ledger`` commands of the Merkle log: keys, signed checkpoints, offline audit
bundles and witnessing.

Keys come in one explicit way each, never guessed. A verifier key is ``--key TEXT``
(its ``name+id+key`` text, never a path: a key name such as ``example.org/ledger`` is
also a relative path, and a file planted under it must not stand in for the log's
key) or ``--key-file PATH``, one of the two; the output names the key that verified
and the file it came from. A signing key is ``--key-file PATH`` or the environment
(:func:`assay.ledger.load_signer`), never a command-line argument, which other users
of the machine can read; a signing key file open to group or others is refused.

A failed proof (a bundle edited, a checkpoint the log no longer extends) exits 1 and
says why, as a broken chain does; a key that cannot be read exits 2; a database
failure exits 3.
"""

from __future__ import annotations

import base64
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from assay import ledger as log
from assay.cli._common import (
    EXIT_FAILED_CHECK,
    DbOption,
    JsonOption,
    console,
    emit_json,
    err_console,
    fit_line,
    handles_errors,
    jsonable,
    open_ledger,
    shown,
    styled,
)
from assay.cli._progress import progress_bar
from assay.cli._render import evidence_text
from assay.errors import InvalidKey, InvalidProof, UsageError

if TYPE_CHECKING:
    from assay.ledger import CheckpointVerifier, LedgerEntry, RunInfo

ledger_app = typer.Typer(
    no_args_is_help=True,
    rich_markup_mode=None,
    help="Show and verify the ledger; sign checkpoints, export and check audit bundles.",
)

KeyOption = Annotated[
    Path | None,
    typer.Option(
        "--key-file",
        help="Signing key file, open to its owner alone (chmod 600). Default: the key's "
        "text in $ASSAY_LEDGER_KEY, or the file named by $ASSAY_LEDGER_KEY_FILE (set one, "
        "not both). $ASSAY_ALLOW_INSECURE_KEY_FILE=1 accepts a file others may read.",
        show_default=False,
    ),
]
VerifierOption = Annotated[
    str | None,
    typer.Option(
        "--key",
        help="The log's verifier key as text (name+id+key); never read as a path.",
        show_default=False,
    ),
]
VerifierFileOption = Annotated[
    Path | None,
    typer.Option("--key-file", help="A file holding the log's verifier key.", show_default=False),
]


@dataclass(frozen=True, kw_only=True)
class _VerifierKey:
    """The verifier key a check ran with, and the file it was read from (None when it
    was given as text), so the output can say which key it trusted."""

    verifier: CheckpointVerifier
    file: Path | None

    def json(self) -> dict[str, str | None]:
        return {
            "name": self.verifier.name,
            "key_id": self.verifier.key_id.hex(),
            "file": None if self.file is None else str(self.file),
        }

    def said(self) -> str:
        """``verified with key NAME+ID``, and the file it was read from."""
        label = f"{self.verifier.name}+{self.verifier.key_id.hex()}"
        source = "" if self.file is None else f", read from {self.file}"
        return f"verified with key {label}{source}"


def _verifier_key(text: str | None, file: Path | None) -> _VerifierKey:
    """The verifier key of ``--key`` or ``--key-file``: exactly one must be given."""
    if text is not None and file is not None:
        raise UsageError("give the verifier key as --key TEXT or --key-file PATH, not both")
    if file is not None:
        return _VerifierKey(verifier=log.load_verifier(file), file=file)
    if text is None:
        raise UsageError(
            "a verifier key is needed: --key TEXT (its name+id+key text) or --key-file PATH"
        )
    try:
        return _VerifierKey(verifier=log.load_verifier(text), file=None)
    except InvalidKey as exc:
        raise InvalidKey(f"{exc} (--key takes the key's text; for a file, --key-file)") from None


@ledger_app.command("keygen")
@handles_errors
def ledger_keygen(
    name: Annotated[str, typer.Argument(help="The log's name, e.g. example.org/assay-ledger.")],
    out: Annotated[
        Path, typer.Option("--out", help="Where to write the signing key (created 0600).")
    ],
) -> None:
    """Make an Ed25519 checkpoint signing key; print its verifier key (C2SP note format)."""
    signer_text, verifier_text = log.generate_key(name)
    try:
        fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise UsageError(f"{out} exists; a signing key is never overwritten") from None
    except OSError as exc:
        raise UsageError(f"cannot create {out}: {exc.strerror}") from None
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(signer_text + "\n")
    console().print(verifier_text, soft_wrap=True)
    err_console().print(
        f"signing key written to {shown(str(out))}; give auditors the verifier key above",
        soft_wrap=True,
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
    with open_ledger(db) as cp:
        note = cp.ledger.checkpoint(key)
    if out is not None:
        size = log.Checkpoint.parse(note.split("\n\n", 1)[0] + "\n").size
        target = out / f"{size}.checkpoint" if out.is_dir() else out
        _write_new(target, note)
        err_console().print(f"written to {shown(str(target))}", soft_wrap=True)
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
    with open_ledger(db) as cp:
        bundle = cp.ledger.export_bundle(run, key)
    sys.stdout.write(bundle + "\n")


@ledger_app.command("verify-bundle")
@handles_errors
def ledger_verify_bundle(
    bundle: Annotated[Path, typer.Argument(help="A bundle written by `assay ledger export`.")],
    key: VerifierOption = None,
    key_file: VerifierFileOption = None,
    as_json: JsonOption = False,
) -> None:
    """Check a bundle with no database and no network; print its claims, verdicts and
    evidence spans. Exit 1 and say why when any byte of it was changed."""
    used = _verifier_key(key, key_file)
    try:
        data = bundle.read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read {bundle}: {exc.strerror}") from None
    try:
        verified = log.verify_bundle(data, used.verifier)
    except InvalidProof as exc:
        _check_fails("bundle fails", exc.reason)
    cp = verified.checkpoint
    claims = verified.claims()
    if as_json:
        emit_json(
            {
                "ok": True,
                "run_id": verified.run.run_id,
                "entries": len(verified.entries),
                "origin": cp.origin,
                "size": cp.size,
                "claims": claims,
                "key": used.json(),
            }
        )
        return
    console().print(
        styled(
            ("ok", "green"),
            f": run {shown(verified.run.run_id)}, complete: {len(verified.entries)} of "
            f"{verified.run.head_seq} entries up to the checkpoint, each in "
            f"the log {shown(cp.origin)} at size {cp.size} (signed checkpoint "
            f"{shown(used.said())})",
        )
    )
    if not claims:
        console().print("the run recorded no verdicts")
        return
    table = Table(title="claims and the evidence they rest on")
    for column in ("verdict", "proposition", "label", "score", "evidence: where it states it"):
        table.add_column(column, overflow="fold")
    texts = {entry.id: entry.text for entry in verified.entries}
    for claim in claims:
        table.add_row(
            shown(str(claim["verdict_entry"])),
            shown(str(claim["proposition"])),
            shown(str(claim["label"])),
            shown(str(claim["score"])),
            _bundle_evidence(claim, texts),
        )
    console().print(table)


def _bundle_evidence(claim: dict[str, Any], texts: dict[str, str]) -> Text | str:
    """The evidence entry with its values marked (the verdict's span when it states
    none of them), or its id alone when the bundle does not hold its text."""
    ledger_id, span = claim["evidence"], claim["span"]
    text = texts.get(str(ledger_id))
    if text is None or claim["quote"] is None:
        return shown(str(ledger_id or "-"))
    return evidence_text(str(ledger_id), text, span, str(claim["proposition"]))


def _check_fails(what: str, reason: str) -> NoReturn:
    """Report a check that failed (one line on stderr) and exit 1."""
    err_console().print(
        styled((what, "bold red"), f": {shown(reason, one_line=True)}"), soft_wrap=True
    )
    raise typer.Exit(EXIT_FAILED_CHECK)


@ledger_app.command("witness")
@handles_errors
def ledger_witness(
    checkpoint: Annotated[
        Path, typer.Option("--checkpoint", help="An earlier checkpoint, kept elsewhere.")
    ],
    key: VerifierOption = None,
    key_file: VerifierFileOption = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Prove that the log as it stands extends an earlier checkpoint unchanged (a
    consistency proof). Exit 1 when it does not: history before that checkpoint was
    rewritten."""
    used = _verifier_key(key, key_file)
    verifier = used.verifier
    try:
        text = checkpoint.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {checkpoint}: {exc}") from None
    try:
        old = log.verify_checkpoint(text, verifier)
    except InvalidProof as exc:
        _check_fails("checkpoint fails", exc.reason)
    if old.origin != verifier.name:
        _check_fails("checkpoint fails", f"it is of the log {old.origin!r}, not {verifier.name!r}")
    with open_ledger(db) as cp:
        size, root = cp.ledger.root()
        if old.size > size:
            _check_fails(
                "not consistent",
                f"the checkpoint has {old.size} leaves, the log only {size}: entries were removed",
            )
        proof = cp.ledger.consistency_proof(old.size, size)
    try:
        log.verify_consistency(old.size, size, old.root, root, proof)
    except InvalidProof as exc:
        _check_fails(
            "not consistent",
            f"the log at {size} leaves does not extend the checkpoint at {old.size}: {exc.reason}",
        )
    if as_json:
        emit_json(
            {
                "consistent": True,
                "origin": old.origin,
                "checkpoint_size": old.size,
                "size": size,
                "key": used.json(),
            }
        )
        return
    console().print(
        styled(
            ("consistent", "green"),
            f": the log at {size} leaves extends the checkpoint of "
            f"{shown(old.origin)} at {old.size} leaves (checkpoint {shown(used.said())})",
        )
    )


@ledger_app.command("show")
@handles_errors
def ledger_show(
    run: Annotated[str, typer.Argument(help="The run id (run_...).")],
    db: DbOption = None,
    width: Annotated[int, typer.Option(help="Characters of content to show.", min=1)] = 60,
    as_json: JsonOption = False,
) -> None:
    """Show a run's entries in chain order."""
    with open_ledger(db) as cp:
        info = cp.ledger.run(run)
        entries = cp.ledger.entries(run)
    if as_json:
        emit_json({"run": info, "entries": [_entry_json(entry) for entry in entries]})
        return
    render_entries(info, entries, console(), width)


@ledger_app.command("verify")
@handles_errors
def ledger_verify(
    run: Annotated[str | None, typer.Option("--run", help="Verify only this run.")] = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Re-derive every hash of the chain; exit 1 and name the first bad entry if broken."""
    with open_ledger(db) as cp, progress_bar(shown_if=not as_json) as update:
        report = cp.ledger.verify(run, progress=update)
    if as_json:
        emit_json(report)
    elif report.ok:
        console().print(
            styled(("ok", "green"), f": {report.checked} entries in {report.runs} run(s) verified")
        )
    else:
        err_console().print(
            styled(
                ("broken", "bold red"),
                f": run {shown(report.run_id or '-')} entry seq {report.first_bad_seq}"
                f" ({shown(report.entry_id or 'absent')}): "
                f"{shown(report.reason or '', one_line=True)}",
            ),
            soft_wrap=True,
        )
    if not report.ok:
        raise typer.Exit(EXIT_FAILED_CHECK)


def render_entries(
    info: RunInfo, entries: Sequence[LedgerEntry], console: Console, width: int
) -> None:
    """Two lines an entry, cut to the console's width: seq, id, kind, hash and source,
    then the start of its content (``width`` characters at most)."""
    fit_line(
        console,
        Text.assemble(
            (shown(info.run_id), "bold"), f"  {len(entries)} entries  head {info.head_hash[:16]}"
        ),
    )
    if not entries:
        return
    seq_w = max(3, *(len(str(e.seq)) for e in entries))
    id_w = max(2, *(len(shown(e.id)) for e in entries))
    kind_w = max(4, *(len(shown(e.kind)) for e in entries))
    header = (
        f"{'SEQ'.rjust(seq_w)}  {'ID'.ljust(id_w)}  {'KIND'.ljust(kind_w)}  SHA256        SOURCE"
    )
    fit_line(console, Text(header, style="bold"))
    for entry in entries:
        fit_line(
            console,
            Text(
                f"{str(entry.seq).rjust(seq_w)}  {shown(entry.id).ljust(id_w)}  "
                f"{shown(entry.kind).ljust(kind_w)}  {entry.sha256[:12]}  "
                f"{shown(entry.source, one_line=True)}"
            ),
        )
        fit_line(console, Text(" " * (seq_w + 2) + _preview(entry, width), style="dim"))


def _preview(entry: LedgerEntry, width: int) -> str:
    if isinstance(entry.content, bytes):
        return f"<{len(entry.content)} bytes>"
    return shown(entry.content.replace("\n", " ").replace("\t", " "), width)


def _entry_json(entry: LedgerEntry) -> dict[str, Any]:
    """An entry with its content as text (``utf-8``) or, for bytes, ``base64``."""
    binary = isinstance(entry.content, bytes)
    return {
        "id": entry.id,
        "run_id": entry.run_id,
        "seq": entry.seq,
        "kind": entry.kind,
        "source": entry.source,
        "content": base64.b64encode(entry.content_bytes).decode() if binary else entry.content,
        "encoding": "base64" if binary else "utf-8",
        "sha256": entry.sha256,
        "metadata": entry.metadata,
        "prev_hash": entry.prev_hash,
        "entry_hash": entry.entry_hash,
        "created_at": jsonable(entry.created_at),
        "leaf_index": entry.leaf_index,
    }
