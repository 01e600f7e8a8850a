"""Where :func:`load_verifier` and :func:`load_signer` take a key from.

A verifier key given as a str is its text and never a path, even when a file of that
name exists (a key name such as ``example.org/ledger`` is also a relative path); a
file is read only when given as a path object. A signing key file that group or
others may open is refused, as ssh refuses one, unless
``ASSAY_ALLOW_INSECURE_KEY_FILE=1``; the two environment variables of the signing key
are one text and one path, and setting both is refused."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from assay.errors import InvalidKey
from assay.ledger import CheckpointVerifier, Signer, generate_key, load_signer, load_verifier
from assay.ledger._log import MAX_KEY_FILE_BYTES

NAME = "example.org/ledger"
posix_only = pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX")


@pytest.fixture(autouse=True)
def _no_key_in_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("ASSAY_LEDGER_KEY", "ASSAY_LEDGER_KEY_FILE", "ASSAY_ALLOW_INSECURE_KEY_FILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)


def _write(path: Path, text: str, mode: int = 0o600) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n", encoding="utf-8")
    path.chmod(mode)
    return path


# --- verifier keys -----------------------------------------------------------------------


def test_a_verifier_key_text_is_never_read_as_a_path() -> None:
    _, honest = generate_key(NAME)
    _, forger = generate_key(NAME)
    _write(Path(honest), forger)  # planted under the honest key's text
    _write(Path(NAME), forger)  # and under its name
    assert load_verifier(honest).text == honest
    with pytest.raises(InvalidKey, match="fields are missing"):
        load_verifier(NAME)


def test_a_verifier_key_file_is_read_from_a_path() -> None:
    _, text = generate_key(NAME)
    path = _write(Path("keys/ledger.pub"), text, 0o644)
    assert load_verifier(path).text == text
    verifier = CheckpointVerifier.from_text(text)
    assert load_verifier(verifier) is verifier


def _fifo(path: Path) -> None:
    os.mkfifo(path)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: None, "cannot read the verifier key file"),
        (Path.mkdir, "Is a directory|not a regular file"),
        pytest.param(_fifo, "not a regular file", marks=posix_only),  # read, it would block
        (lambda p: p.write_bytes(b"x" * (MAX_KEY_FILE_BYTES + 1)), "too large"),
        (lambda p: p.write_bytes(b"\xff\xfe"), "not UTF-8 text"),
    ],
)
def test_a_verifier_key_file_that_cannot_hold_a_key_is_one_clear_error(
    make: Callable[[Path], object], message: str
) -> None:
    path = Path("ledger.pub")
    make(path)
    with pytest.raises(InvalidKey, match=message) as caught:
        load_verifier(path)
    assert "'ledger.pub'" in str(caught.value)


def test_a_key_of_another_type_is_refused() -> None:
    with pytest.raises(InvalidKey, match="got int"):
        load_verifier(12)  # type: ignore[arg-type]
    with pytest.raises(InvalidKey, match="got bytes"):
        load_signer(b"PRIVATE+KEY+")  # type: ignore[arg-type]


# --- signing key files ---------------------------------------------------------------------


@posix_only
@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o620, 0o602, 0o610, 0o601])
def test_a_signing_key_file_open_to_group_or_others_is_refused(mode: int) -> None:
    signer, _ = generate_key(NAME)
    path = _write(Path("ledger.key"), signer, mode)
    with pytest.raises(InvalidKey) as caught:
        load_signer(path)
    message = str(caught.value)
    assert "'ledger.key'" in message and f"mode {mode:04o}" in message
    assert "chmod 600 ledger.key" in message and "ASSAY_ALLOW_INSECURE_KEY_FILE=1" in message
    assert "PRIVATE" not in message


@posix_only
@pytest.mark.parametrize("mode", [0o600, 0o400, 0o700])
def test_a_signing_key_file_open_to_its_owner_alone_is_read(mode: int) -> None:
    signer, verifier = generate_key(NAME)
    path = _write(Path("ledger.key"), signer, mode)
    assert load_signer(path).verifier_key == verifier
    assert load_signer(str(path)).verifier_key == verifier


@posix_only
def test_allowing_an_insecure_key_file_takes_exactly_1(monkeypatch: pytest.MonkeyPatch) -> None:
    signer, verifier = generate_key(NAME)
    path = _write(Path("ledger.key"), signer, 0o644)
    for value in ("0", "true", "yes", ""):
        monkeypatch.setenv("ASSAY_ALLOW_INSECURE_KEY_FILE", value)
        with pytest.raises(InvalidKey, match="mode 0644"):
            load_signer(path)
    monkeypatch.setenv("ASSAY_ALLOW_INSECURE_KEY_FILE", "1")
    assert load_signer(path).verifier_key == verifier


@posix_only
def test_a_verifier_key_file_may_be_world_readable() -> None:
    _, verifier = generate_key(NAME)
    assert load_verifier(_write(Path("ledger.pub"), verifier, 0o644)).text == verifier


def test_a_signing_key_text_is_not_a_path_even_with_spaces_around() -> None:
    signer, verifier = generate_key(NAME)
    assert load_signer(f"  {signer}\n").verifier_key == verifier
    assert isinstance(load_signer(Signer.from_text(signer)), Signer)


# --- the environment ---------------------------------------------------------------------------


@posix_only
def test_the_key_file_variable_is_a_path_and_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    signer, verifier = generate_key(NAME)
    path = _write(Path("ledger.key"), signer, 0o640)
    monkeypatch.setenv("ASSAY_LEDGER_KEY_FILE", str(path))
    with pytest.raises(InvalidKey, match="mode 0640"):
        load_signer()
    path.chmod(0o600)
    assert load_signer().verifier_key == verifier


def test_the_key_variable_is_text_and_never_a_path(monkeypatch: pytest.MonkeyPatch) -> None:
    signer, verifier = generate_key(NAME)
    path = _write(Path("ledger.key"), signer)
    monkeypatch.setenv("ASSAY_LEDGER_KEY", str(path))
    with pytest.raises(InvalidKey, match="ASSAY_LEDGER_KEY_FILE names a file"):
        load_signer()
    monkeypatch.setenv("ASSAY_LEDGER_KEY", signer)
    assert load_signer().verifier_key == verifier


def test_both_variables_set_is_refused_without_quoting_the_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    signer, _ = generate_key(NAME)
    monkeypatch.setenv("ASSAY_LEDGER_KEY", signer)
    monkeypatch.setenv("ASSAY_LEDGER_KEY_FILE", str(_write(Path("ledger.key"), signer)))
    with pytest.raises(InvalidKey, match="both ASSAY_LEDGER_KEY") as caught:
        load_signer()
    assert "PRIVATE" not in str(caught.value)


def test_no_key_at_all_says_how_to_make_one() -> None:
    with pytest.raises(InvalidKey, match="assay ledger keygen"):
        load_signer()
