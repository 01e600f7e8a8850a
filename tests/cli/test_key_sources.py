"""Where ``assay ledger`` takes its keys from.

A verifier key given with ``--key`` is text and never a path: a key name such as
``example.org/ledger`` is also a relative path, so a file planted under the key's
text (shipped, say, in the archive next to a bundle) could stand in for the log's
key. Files are read only through ``--key-file``, and the output names the key that
verified. A signing key file open to group or others is refused unless
``ASSAY_ALLOW_INSECURE_KEY_FILE=1`` allows it."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from assay import ControlPlane
from assay.ledger import Checkpoint, Signer, generate_key, sign_checkpoint, verify_checkpoint
from tests.cli.conftest import cli, one_error_line

NAME = "example.org/ledger"
posix_only = pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX")


@dataclass(frozen=True, kw_only=True)
class _Log:
    """A ledger with one run, its honest key pair, and a forger's pair of the same name."""

    db: str
    run: str
    signer: str
    verifier: str
    forger_signer: str
    forger_verifier: str

    @property
    def key_label(self) -> str:
        """``name+key id`` of the honest verifier key (its base64 may hold ``+`` too)."""
        return "+".join(self.verifier.split("+", 2)[:2])


@pytest.fixture
def log(sqlite_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[_Log]:
    """The log, with the working directory an empty folder (where files get planted)
    and no signing key in the environment."""
    for name in ("ASSAY_LEDGER_KEY", "ASSAY_LEDGER_KEY_FILE", "ASSAY_ALLOW_INSECURE_KEY_FILE"):
        monkeypatch.delenv(name, raising=False)
    folder = tmp_path / "work"
    folder.mkdir()
    monkeypatch.chdir(folder)
    with ControlPlane.open(sqlite_url) as cp:
        run = cp.ledger.start_run()
        cp.ledger.append(run, kind="retrieval", source="doc", content="passage")
    signer, verifier = generate_key(NAME)
    forger_signer, forger_verifier = generate_key(NAME)
    yield _Log(
        db=sqlite_url,
        run=run,
        signer=signer,
        verifier=verifier,
        forger_signer=forger_signer,
        forger_verifier=forger_verifier,
    )


def _plant(relative: str, text: str) -> Path:
    """A file at ``relative`` (folders made as needed) holding ``text``."""
    path = Path(relative)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n", encoding="utf-8")
    return path


def _bundle(log: _Log, signer: str) -> Path:
    with ControlPlane.open(log.db) as cp:
        text = cp.ledger.export_bundle(log.run, signer)
    path = Path("run.bundle")
    path.write_text(text, encoding="utf-8")
    return path


# --- a verifier key's text is never a path ------------------------------------------


def test_a_forged_bundle_fails_though_a_file_named_as_the_key_holds_the_forgers_key(
    log: _Log,
) -> None:
    bundle = _bundle(log, log.forger_signer)
    planted = _plant(log.verifier, log.forger_verifier)
    assert planted.is_file() and str(planted) == log.verifier
    out = cli("ledger", "verify-bundle", str(bundle), "--key", log.verifier)
    assert out.exit_code == 1, out.output
    assert out.stdout == ""
    assert "bundle fails" in out.stderr
    assert log.key_label.split("+")[1] in out.stderr  # the honest key id was asked for
    # the honest bundle verifies with the same text, planted file or not
    _bundle(log, log.signer)
    ok = cli("ledger", "verify-bundle", str(bundle), "--key", log.verifier, columns=250)
    assert ok.exit_code == 0, ok.output
    assert f"verified with key {log.key_label}" in ok.stdout


def test_a_key_name_alone_is_not_a_key_even_when_a_file_has_that_name(log: _Log) -> None:
    bundle = _bundle(log, log.forger_signer)
    _plant(NAME, log.forger_verifier)
    line = one_error_line(cli("ledger", "verify-bundle", str(bundle), "--key", NAME), 2)
    assert "--key-file" in line


def test_witness_does_not_read_a_file_named_as_the_key(log: _Log) -> None:
    with ControlPlane.open(log.db) as cp:
        size, root = cp.ledger.root()
    forged = sign_checkpoint(Checkpoint(NAME, size, root), Signer.from_text(log.forger_signer))
    Path("kept.checkpoint").write_text(forged, encoding="utf-8")
    _plant(log.verifier, log.forger_verifier)
    out = cli(
        "ledger", "witness", "--checkpoint", "kept.checkpoint", "--key", log.verifier,
        "--db", log.db,
    )  # fmt: skip
    assert out.exit_code == 1, out.output
    assert "checkpoint fails" in out.stderr and "consistent" not in out.stdout


# --- --key-file ---------------------------------------------------------------------------


def test_key_file_reads_a_verifier_key_and_the_output_names_it(log: _Log) -> None:
    bundle = _bundle(log, log.signer)
    key_file = Path("keys") / "ledger.pub"
    _plant(str(key_file), log.verifier)
    key_file.chmod(0o644)  # a verifier key is public
    out = cli("ledger", "verify-bundle", str(bundle), "--key-file", str(key_file), columns=250)
    assert out.exit_code == 0, out.output
    assert f"verified with key {log.key_label}" in out.stdout
    assert f"read from {key_file}" in out.stdout
    as_json = cli("ledger", "verify-bundle", str(bundle), "--key-file", str(key_file), "--json")
    assert as_json.exit_code == 0, as_json.output
    name, key_id = log.key_label.split("+")
    assert json.loads(as_json.stdout)["key"] == {
        "name": name, "key_id": key_id, "file": str(key_file)
    }  # fmt: skip


def test_witness_takes_a_key_file_and_names_the_key(log: _Log) -> None:
    with ControlPlane.open(log.db) as cp:
        Path("kept.checkpoint").write_text(cp.ledger.checkpoint(log.signer), encoding="utf-8")
    _plant("ledger.pub", log.verifier)
    args = ("ledger", "witness", "--checkpoint", "kept.checkpoint", "--db", log.db)
    out = cli(*args, "--key-file", "ledger.pub", columns=250)
    assert out.exit_code == 0, out.output
    assert f"verified with key {log.key_label}" in out.stdout
    as_json = cli(*args, "--key", log.verifier, "--json")
    assert as_json.exit_code == 0, as_json.output
    assert json.loads(as_json.stdout)["key"] == {
        "name": NAME, "key_id": log.key_label.split("+")[1], "file": None
    }  # fmt: skip


@pytest.mark.parametrize("command", ["verify-bundle", "witness"])
def test_key_and_key_file_are_one_or_the_other(log: _Log, command: str) -> None:
    _plant("ledger.pub", log.verifier)
    Path("run.bundle").write_text("{}", encoding="utf-8")
    head = (
        ("ledger", "verify-bundle", "run.bundle")
        if command == "verify-bundle"
        else ("ledger", "witness", "--checkpoint", "run.bundle", "--db", log.db)
    )
    both = one_error_line(cli(*head, "--key", log.verifier, "--key-file", "ledger.pub"), 2)
    assert "not both" in both
    neither = one_error_line(cli(*head), 2)
    assert "--key" in neither and "--key-file" in neither


def test_an_unreadable_key_file_is_one_error_line(log: _Log) -> None:
    bundle = _bundle(log, log.signer)
    line = one_error_line(cli("ledger", "verify-bundle", str(bundle), "--key-file", "absent"), 2)
    assert "'absent'" in line


# --- signing key files ----------------------------------------------------------------------


def _signing_key_file(log: _Log, mode: int) -> Path:
    path = Path("ledger.key")
    path.write_text(log.signer + "\n", encoding="utf-8")
    path.chmod(mode)
    return path


@posix_only
@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o660, 0o601])
def test_a_signing_key_file_open_to_others_is_refused(log: _Log, mode: int) -> None:
    key_file = _signing_key_file(log, mode)
    signed = cli("ledger", "checkpoint", "--key-file", str(key_file), "--db", log.db)
    line = one_error_line(signed, 2)
    assert "'ledger.key'" in line and f"mode {mode:04o}" in line
    assert "chmod 600 ledger.key" in line and "ASSAY_ALLOW_INSECURE_KEY_FILE=1" in line
    exported = cli("ledger", "export", log.run, "--key-file", str(key_file), "--db", log.db)
    assert one_error_line(exported, 2) == line


@posix_only
def test_the_key_file_named_by_the_environment_is_checked_too(
    log: _Log, monkeypatch: pytest.MonkeyPatch
) -> None:
    key_file = _signing_key_file(log, 0o644)
    monkeypatch.setenv("ASSAY_LEDGER_KEY_FILE", str(key_file))
    line = one_error_line(cli("ledger", "checkpoint", "--db", log.db), 2)
    assert "mode 0644" in line and "chmod 600" in line


@posix_only
def test_an_insecure_signing_key_file_is_used_when_explicitly_allowed(
    log: _Log, monkeypatch: pytest.MonkeyPatch
) -> None:
    key_file = _signing_key_file(log, 0o644)
    monkeypatch.setenv("ASSAY_ALLOW_INSECURE_KEY_FILE", "1")
    out = cli("ledger", "checkpoint", "--key-file", str(key_file), "--db", log.db)
    assert out.exit_code == 0, out.output
    assert verify_checkpoint(out.stdout, log.verifier).size == 1


@posix_only
@pytest.mark.parametrize("mode", [0o600, 0o400])
def test_a_private_signing_key_file_signs(log: _Log, mode: int) -> None:
    key_file = _signing_key_file(log, mode)
    out = cli("ledger", "checkpoint", "--key-file", str(key_file), "--db", log.db)
    assert out.exit_code == 0, out.output
    assert verify_checkpoint(out.stdout, log.verifier).size == 1


def test_a_signing_key_is_never_taken_from_the_command_line(log: _Log) -> None:
    line = one_error_line(cli("ledger", "checkpoint", "--key", log.signer, "--db", log.db), 2)
    assert "--key-file" in line and "PRIVATE" not in line


def test_both_signing_key_variables_set_is_refused(
    log: _Log, monkeypatch: pytest.MonkeyPatch
) -> None:
    key_file = _signing_key_file(log, 0o600)
    monkeypatch.setenv("ASSAY_LEDGER_KEY_FILE", str(key_file))
    monkeypatch.setenv("ASSAY_LEDGER_KEY", log.signer)
    line = one_error_line(cli("ledger", "checkpoint", "--db", log.db), 2)
    assert "ASSAY_LEDGER_KEY" in line and "ASSAY_LEDGER_KEY_FILE" in line and "PRIVATE" not in line
