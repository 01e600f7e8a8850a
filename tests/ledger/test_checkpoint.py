"""Signed checkpoints: C2SP tlog-checkpoint bodies in C2SP signed notes.

Known answers come from the reference implementation of signed notes
(golang.org/x/mod/sumdb/note, note_test.go: the PeterNeumann and EnochRoot keys and
notes) and from the signed-note specification's example key and note; a key built
here by hand from ``cryptography`` primitives and ``hashlib`` checks the key id and
key text rules independently of the module."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import re
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.errors import InvalidKey, InvalidProof
from assay.ledger._signed_checkpoint import (
    MAX_NOTE_BYTES,
    Checkpoint,
    CheckpointVerifier,
    Signer,
    generate_key,
    open_note,
    sign_checkpoint,
    verify_checkpoint,
)

# golang.org/x/mod/sumdb/note, note_test.go.
PETER_SKEY = "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz"
PETER_VKEY = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW"
ENOCH_VKEY = "EnochRoot+af0cfe78+ATtqJ7zOtqQtYqOo0CpvDXNlMhV3HeJDpjrASKGLWdop"
GO_TEXT = (
    "If you think cryptography is the answer to your problem,\n"
    "then you don't know what your problem is.\n"
)
PETER_SIG = (
    "— PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngot"
    "pRZb6KE6RyyBwJnAM=\n"
)
ENOCH_SIG = (
    "— EnochRoot rwz+eBzmZa0SO3NbfRGzPCpDckykFXSdeX+MNtCOXm2/5n2tiOHp+vAF1aGrQ5ovTG01oOTGwnWL"
    "ox33WWd1RvMc+QQ=\n"
)
# c2sp.org/signed-note, "Verifier keys", its example.
SPEC_VKEY = "example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k"
SPEC_NOTE = (
    "This is an example message.\n\n— example.com/foo Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXppzi2O"
    "NncAlTgK7Ztg1ERYNZXsYjOBH3mFXmRKuwHjG1Yu72IneyaQM=\n"
)

ORIGIN = "example.org/log"
ROOT = hashlib.sha256(b"a root").digest()
SKEY, VKEY = generate_key(ORIGIN)
SIGNER = Signer.from_text(SKEY)
CHECKPOINT = Checkpoint(ORIGIN, 1234, ROOT)
NOTE = sign_checkpoint(CHECKPOINT, SIGNER)


# --- known answers --------------------------------------------------------------------


def test_go_reference_key_signs_byte_for_byte() -> None:
    signer = Signer.from_text(PETER_SKEY)
    assert signer.name == "PeterNeumann"
    assert signer.key_id == bytes.fromhex("c74f20a3")
    assert signer.verifier_key == PETER_VKEY
    # Ed25519 is deterministic: the same key and text give the published note.
    assert signer.sign(GO_TEXT) == GO_TEXT + "\n" + PETER_SIG


def test_go_reference_notes_open() -> None:
    peter, enoch = (
        CheckpointVerifier.from_text(PETER_VKEY),
        CheckpointVerifier.from_text(ENOCH_VKEY),
    )
    assert (peter.name, peter.key_id.hex()) == ("PeterNeumann", "c74f20a3")
    assert (enoch.name, enoch.key_id.hex()) == ("EnochRoot", "af0cfe78")
    assert peter.text == PETER_VKEY and enoch.text == ENOCH_VKEY
    cosigned = GO_TEXT + "\n" + PETER_SIG + ENOCH_SIG
    assert open_note(cosigned, peter) == GO_TEXT
    assert open_note(cosigned, enoch) == GO_TEXT
    assert open_note(GO_TEXT + "\n" + PETER_SIG + PETER_SIG + ENOCH_SIG, peter) == GO_TEXT
    with pytest.raises(InvalidProof, match="no signature by key 'EnochRoot'"):
        open_note(GO_TEXT + "\n" + PETER_SIG, enoch)


def test_go_reference_bad_notes_fail() -> None:
    peter = CheckpointVerifier.from_text(PETER_VKEY)
    bad = [
        GO_TEXT,
        GO_TEXT + "\n",
        GO_TEXT + "\n" + PETER_SIG[:-1],
        "\x01" + GO_TEXT + "\n" + PETER_SIG,
        "\udcff" + GO_TEXT + "\n" + PETER_SIG,  # the byte 0xff, as surrogateescape reads it
        GO_TEXT + "\n" + "— Bad Name " + PETER_SIG.split(" ")[2],
        GO_TEXT + "\n" + PETER_SIG + "Unexpected line.\n",
        GO_TEXT + "\n" + PETER_SIG * 101,
        GO_TEXT + "\n" + PETER_SIG[:60] + "ABCD" + PETER_SIG[60:],
        GO_TEXT + "\n" + PETER_SIG.replace("PeterNeumann", "CarmenSandiego"),
        GO_TEXT + "\n" + PETER_SIG.replace("x08g", "xxxx"),
        GO_TEXT.replace("answer", "Answer") + "\n" + PETER_SIG,
    ]
    for note in bad:
        with pytest.raises(InvalidProof):
            open_note(note, peter)


def test_signed_note_specification_example_opens() -> None:
    verifier = CheckpointVerifier.from_text(SPEC_VKEY)
    assert verifier.name == "example.com/foo"
    assert verifier.key_id.hex() == "530d903a"
    assert open_note(SPEC_NOTE, verifier) == "This is an example message.\n"


# --- a key made by hand ------------------------------------------------------------------


def _hand_made_key(name: str) -> tuple[Ed25519PrivateKey, str, str]:
    """A key pair and its texts, built from the specification, not from the module."""
    private = Ed25519PrivateKey.generate()
    seed = private.private_bytes_raw()
    public = private.public_key().public_bytes_raw()
    key_id = hashlib.sha256(name.encode() + b"\x0a" + b"\x01" + public).digest()[:4]
    encoded_public = base64.b64encode(bytes([1]) + public).decode()
    encoded_seed = base64.b64encode(bytes([1]) + seed).decode()
    vkey = f"{name}+{key_id.hex()}+{encoded_public}"
    skey = f"PRIVATE+KEY+{name}+{key_id.hex()}+{encoded_seed}"
    return private, skey, vkey


def test_checkpoint_signed_by_hand_verifies() -> None:
    name = "witness.example/w1"
    private, _, vkey = _hand_made_key(name)
    public = private.public_key().public_bytes_raw()
    key_id = hashlib.sha256(name.encode() + b"\n\x01" + public).digest()[:4]
    body = f"{ORIGIN}\n42\n{base64.b64encode(ROOT).decode()}\nextension one\n"
    signature = private.sign(body.encode())
    note = f"{body}\n\u2014 {name} {base64.b64encode(key_id + signature).decode()}\n"
    verifier = CheckpointVerifier.from_text(vkey)
    assert verifier.key_id == key_id
    assert verify_checkpoint(note, vkey) == Checkpoint(ORIGIN, 42, ROOT, ("extension one",))
    assert verify_checkpoint(note, verifier).size == 42


def test_a_validly_signed_note_with_a_control_character_is_refused() -> None:
    """Signed notes may hold no control character but newline, even when signed."""
    name = "log.example/ctl"
    private, _, vkey = _hand_made_key(name)
    public = private.public_key().public_bytes_raw()
    key_id = hashlib.sha256(name.encode() + b"\n\x01" + public).digest()[:4]
    for body in (
        f"{ORIGIN}\n1\n{base64.b64encode(ROOT).decode()}\nx\ty\n",
        f"{ORIGIN}\r\n1\n{base64.b64encode(ROOT).decode()}\n",
    ):
        signature = base64.b64encode(key_id + private.sign(body.encode())).decode()
        with pytest.raises(InvalidProof, match="control character"):
            verify_checkpoint(f"{body}\n\u2014 {name} {signature}\n", vkey)


def test_module_signatures_verify_by_hand() -> None:
    name = "log.example/hand"
    private, skey, vkey = _hand_made_key(name)
    signer = Signer.from_text(skey)
    assert signer.verifier_key == vkey
    note = sign_checkpoint(CHECKPOINT, signer)
    body, signature_line = note.split("\n\n")
    body += "\n"
    assert body == f"{ORIGIN}\n1234\n{base64.b64encode(ROOT).decode()}\n"
    dash, signed_name, encoded = signature_line.rstrip("\n").split(" ")
    assert (dash, signed_name) == ("\u2014", name)
    raw = base64.b64decode(encoded)
    assert raw[:4] == signer.key_id
    public: Ed25519PublicKey = private.public_key()
    public.verify(raw[4:], body.encode())  # raises if the signature is wrong


# --- round trips and keys ----------------------------------------------------------------


def test_round_trip() -> None:
    assert NOTE.startswith(CHECKPOINT.body() + "\n\u2014 " + ORIGIN + " ")
    assert verify_checkpoint(NOTE, VKEY) == CHECKPOINT
    with_ext = Checkpoint(ORIGIN, 0, ROOT, ("a: b", "Ünïcode ✓"))
    assert verify_checkpoint(sign_checkpoint(with_ext, SIGNER), SIGNER.verifier) == with_ext
    big = Checkpoint(ORIGIN, 2**64 - 1, ROOT)
    assert verify_checkpoint(sign_checkpoint(big, SIGNER), VKEY) == big


def test_generated_keys_are_consistent() -> None:
    skey, vkey = generate_key("a.example/k")
    signer, verifier = Signer.from_text(skey), CheckpointVerifier.from_text(vkey)
    assert signer.name == verifier.name == "a.example/k"
    assert signer.key_id == verifier.key_id and len(signer.key_id) == 4
    assert signer.verifier_key == vkey == verifier.text
    assert skey.startswith("PRIVATE+KEY+a.example/k+" + signer.key_id.hex() + "+")
    assert generate_key("a.example/k") != (skey, vkey)
    seed_text = skey.split("+", 4)[4]
    assert seed_text not in repr(signer)


def test_wrong_key_fails() -> None:
    _, other_vkey = generate_key("other.example/log")
    _, same_name_vkey = generate_key(ORIGIN)
    with pytest.raises(InvalidProof, match=re.escape("no signature by key 'other.example/log'")):
        verify_checkpoint(NOTE, other_vkey)
    with pytest.raises(InvalidProof, match="key ids"):
        verify_checkpoint(NOTE, same_name_vkey)


def test_cosigned_note_verifies_with_either_key() -> None:
    witness_skey, witness_vkey = generate_key("witness.example/w")
    witness = Signer.from_text(witness_skey)
    cosignature = witness.sign(CHECKPOINT.body()).split("\n\n", 1)[1]
    cosigned = NOTE + cosignature
    assert verify_checkpoint(cosigned, VKEY) == CHECKPOINT
    assert verify_checkpoint(cosigned, witness_vkey) == CHECKPOINT
    reordered = CHECKPOINT.body() + "\n" + cosignature + NOTE.split("\n\n", 1)[1]
    assert verify_checkpoint(reordered, VKEY) == CHECKPOINT
    # A broken signature by a known key sinks the note even beside a good one.
    broken = cosigned.replace(cosignature, _corrupt_signature(cosignature))
    with pytest.raises(InvalidProof, match="does not verify"):
        verify_checkpoint(broken, witness_vkey)
    assert verify_checkpoint(broken, VKEY) == CHECKPOINT  # not this verifier's key


def _corrupt_signature(line: str) -> str:
    prefix, encoded = line.rstrip("\n").rsplit(" ", 1)
    raw = bytearray(base64.b64decode(encoded))
    raw[10] ^= 1
    return f"{prefix} {base64.b64encode(bytes(raw)).decode()}\n"


def _flips(note: str) -> list[tuple[int, str]]:
    """Every single-bit edit of the note's UTF-8 bytes, as the text a reader would get
    (bytes that are no longer UTF-8 become lone surrogates)."""
    data = note.encode("utf-8")
    out: list[tuple[int, str]] = []
    for position in range(len(data)):
        for bit in range(8):
            edited = bytearray(data)
            edited[position] ^= 1 << bit
            out.append((position, bytes(edited).decode("utf-8", "surrogateescape")))
    return out


def test_every_single_bit_edit_of_a_signed_note_fails() -> None:
    for position, edited in _flips(NOTE):
        with pytest.raises(InvalidProof):
            verify_checkpoint(edited, VKEY)
        assert 0 <= position < len(NOTE.encode())


def test_edits_of_a_cosigned_note_fail_unless_outside_what_the_key_signed() -> None:
    """Only the other key's signature line is outside what this key signed: an edit
    there may leave the note readable (then this key still verifies the very same
    checkpoint); an edit anywhere else must fail."""
    witness = Signer.from_text(generate_key("witness.example/w")[0])
    cosignature = witness.sign(CHECKPOINT.body()).split("\n\n", 1)[1]
    cosigned = NOTE + cosignature
    outside_from = len(NOTE.encode("utf-8"))
    still_verified = 0
    for position, edited in _flips(cosigned):
        if position < outside_from or position == len(cosigned.encode()) - 1:
            with pytest.raises(InvalidProof):
                verify_checkpoint(edited, VKEY)
            continue
        try:
            assert verify_checkpoint(edited, VKEY) == CHECKPOINT
            still_verified += 1
        except InvalidProof:
            pass
    # Edits inside the other key's signature (not its syntax) leave it unknown or
    # wrong, and this key's verdict alone stands.
    assert still_verified > 0


# --- malformed keys ------------------------------------------------------------------------


def test_every_mangling_of_a_verifier_key_is_refused() -> None:
    """As note_test.go's TestNewVerifier: every proper substring, every byte bumped."""
    for i in range(len(PETER_VKEY) + 1):
        for j in range(i + 1, len(PETER_VKEY) + 1):
            if (i, j) != (0, len(PETER_VKEY)):
                with pytest.raises(InvalidKey):
                    CheckpointVerifier.from_text(PETER_VKEY[i:j])
    for i in range(len(PETER_VKEY)):
        bumped = PETER_VKEY[:i] + chr(ord(PETER_VKEY[i]) + 1) + PETER_VKEY[i + 1 :]
        with pytest.raises(InvalidKey):
            CheckpointVerifier.from_text(bumped)


def test_every_mangling_of_a_signer_key_is_refused() -> None:
    for i in range(len(PETER_SKEY) + 1):
        for j in range(i + 1, len(PETER_SKEY) + 1, 3):
            if (i, j) != (0, len(PETER_SKEY)):
                with pytest.raises(InvalidKey) as caught:
                    Signer.from_text(PETER_SKEY[i:j])
                assert "FALVFGyNhPJEMzD1QIDr" not in str(caught.value)  # never quotes the seed
    for i in range(len(PETER_SKEY)):
        bumped = PETER_SKEY[:i] + chr(ord(PETER_SKEY[i]) + 1) + PETER_SKEY[i + 1 :]
        with pytest.raises(InvalidKey) as caught:
            Signer.from_text(bumped)
        assert "FALVFGyNhPJEMzD1QIDr" not in str(caught.value)


def _vkey(name: str, material: bytes) -> str:
    key_id = hashlib.sha256(name.encode() + b"\n" + material).digest()[:4]
    return f"{name}+{key_id.hex()}+{base64.b64encode(material).decode()}"


PUBLIC = base64.b64decode(PETER_VKEY.rsplit("+", 1)[1])[1:]

BAD_VERIFIER_KEYS: list[Any] = [
    PETER_VKEY.encode(),
    None,
    42,
    "",
    PETER_VKEY + "\n",
    " " + PETER_VKEY,
    PETER_VKEY.replace("c74f20a3", "C74F20A3"),
    PETER_VKEY.replace("c74f20a3", "c74f20a"),
    PETER_VKEY.replace("c74f20a3", "c74f20a30"),
    PETER_VKEY.replace("PeterNeumann", ""),
    "PeterNeumann+c74f20a3",
    "PeterNeumann",
    # Go's: wrong length key and unknown algorithm, each with a matching key id.
    "PeterNeumann+cc469956+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TWBADKEY==",
    "PeterNeumann+173116ae+ZRpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",
    _vkey("PeterNeumann", b"\x02" + PUBLIC),
    _vkey("PeterNeumann", b"\x01" + PUBLIC[:31]),
    _vkey("PeterNeumann", b"\x01"),
    _vkey("Peter Neumann", b"\x01" + PUBLIC),
    _vkey("Peter\u00a0Neumann", b"\x01" + PUBLIC),
    _vkey("Peter\tNeumann", b"\x01" + PUBLIC),
    _vkey("Peter\x7fNeumann", b"\x01" + PUBLIC),
    _vkey("x" * 600, b"\x01" + PUBLIC),
    PETER_VKEY[:-1] + "X",  # the last character's unused bits set: not canonical
    PETER_VKEY.rstrip("=") if PETER_VKEY.endswith("=") else PETER_VKEY + "=",
]


@pytest.mark.parametrize("bad", BAD_VERIFIER_KEYS, ids=range(len(BAD_VERIFIER_KEYS)))
def test_malformed_verifier_keys_are_invalid_keys(bad: Any) -> None:
    with pytest.raises(InvalidKey):
        CheckpointVerifier.from_text(bad)
    with pytest.raises(InvalidKey):
        verify_checkpoint(NOTE, bad)


def test_the_hand_made_verifier_key_helper_makes_good_keys() -> None:
    assert _vkey("PeterNeumann", b"\x01" + PUBLIC) == PETER_VKEY


BAD_SIGNER_KEYS: list[Any] = [
    PETER_SKEY.encode(),
    None,
    PETER_SKEY[len("PRIVATE+KEY+") :],
    PETER_SKEY.replace("PRIVATE+KEY", "private+key"),
    PETER_SKEY.replace("PRIVATE+KEY", "PRIVATE+KEYS"),
    PETER_SKEY + "\n",
    PETER_SKEY.replace("c74f20a3", "c74f20a4"),
    PETER_SKEY.replace("PeterNeumann", "PeterNeumanm"),
    "PRIVATE+KEY+PeterNeumann+c74f20a3+" + base64.b64encode(b"\x01" + bytes(31)).decode(),
    "PRIVATE+KEY+PeterNeumann+c74f20a3+" + base64.b64encode(b"\x02" + bytes(32)).decode(),
    PETER_VKEY,
]


@pytest.mark.parametrize("bad", BAD_SIGNER_KEYS, ids=range(len(BAD_SIGNER_KEYS)))
def test_malformed_signer_keys_are_invalid_keys(bad: Any) -> None:
    with pytest.raises(InvalidKey):
        Signer.from_text(bad)


@pytest.mark.parametrize("name", ["", "a+b", "a b", "a\nb", "a\u2003b", "\udc80", 7, None])
def test_generate_key_refuses_bad_names(name: Any) -> None:
    with pytest.raises(InvalidKey):
        generate_key(name)


@settings(max_examples=400, deadline=None)
@given(text=st.text(max_size=120) | st.sampled_from([PETER_VKEY[:-2], PETER_SKEY[:-2]]))
def test_arbitrary_key_texts_raise_only_invalid_key(text: str) -> None:
    for reader in (CheckpointVerifier.from_text, Signer.from_text):
        with contextlib.suppress(InvalidKey):
            reader(text)


# --- checkpoint bodies ---------------------------------------------------------------------

GOOD_ROOT_B64 = base64.b64encode(ROOT).decode()
BAD_BODIES: list[Any] = [
    b"example.org/log\n1\n" + GOOD_ROOT_B64.encode() + b"\n",
    None,
    "",
    "\n",
    f"{ORIGIN}\n1\n",
    f"{ORIGIN}\n1\n{GOOD_ROOT_B64}",
    f"\n1\n{GOOD_ROOT_B64}\n",
    f"{ORIGIN}\n01\n{GOOD_ROOT_B64}\n",
    f"{ORIGIN}\n-1\n{GOOD_ROOT_B64}\n",
    f"{ORIGIN}\n+1\n{GOOD_ROOT_B64}\n",
    f"{ORIGIN}\n 1\n{GOOD_ROOT_B64}\n",
    f"{ORIGIN}\n1.0\n{GOOD_ROOT_B64}\n",
    f"{ORIGIN}\n1e3\n{GOOD_ROOT_B64}\n",
    f"{ORIGIN}\n\u0661\n{GOOD_ROOT_B64}\n",  # ARABIC-INDIC DIGIT ONE
    f"{ORIGIN}\n1_000\n{GOOD_ROOT_B64}\n",
    f"{ORIGIN}\n{2**64}\n{GOOD_ROOT_B64}\n",
    f"{ORIGIN}\n{'9' * 5000}\n{GOOD_ROOT_B64}\n",
    f"{ORIGIN}\n\n{GOOD_ROOT_B64}\n",
    f"{ORIGIN}\n1\n{base64.b64encode(ROOT[:31]).decode()}\n",
    f"{ORIGIN}\n1\n{base64.b64encode(ROOT + b'x').decode()}\n",
    f"{ORIGIN}\n1\n{ROOT.hex()}\n",
    f"{ORIGIN}\n1\n{GOOD_ROOT_B64.rstrip('=')}\n",
    f"{ORIGIN}\n1\n{base64.urlsafe_b64encode(bytes([255]) * 32).decode()}\n",
    f"{ORIGIN}\n1\n{GOOD_ROOT_B64}\n\n",
    f"{ORIGIN}\n1\n{GOOD_ROOT_B64}\nok\n\nafter blank\n",
    f"{ORIGIN}\n1\n{GOOD_ROOT_B64}\ntab\there\n",
    f"ori\x00gin\n1\n{GOOD_ROOT_B64}\n",
    f"origin\udc80\n1\n{GOOD_ROOT_B64}\n",
    "x" * (MAX_NOTE_BYTES + 1),
]


@pytest.mark.parametrize("body", BAD_BODIES, ids=range(len(BAD_BODIES)))
def test_malformed_bodies_are_invalid_proofs(body: Any) -> None:
    with pytest.raises(InvalidProof):
        Checkpoint.parse(body)


def test_a_body_with_a_non_canonical_root_is_refused() -> None:
    """The root's last base64 character carries two unused bits; setting one spells
    the same 32 bytes differently, which would let a body change and mean the same."""
    last = GOOD_ROOT_B64[-2]
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    value = alphabet.index(last)
    assert value & 0b11 == 0
    odd = GOOD_ROOT_B64[:-2] + alphabet[value | 1] + "="
    assert base64.b64decode(odd) == ROOT
    with pytest.raises(InvalidProof, match="base64"):
        Checkpoint.parse(f"{ORIGIN}\n1\n{odd}\n")


@pytest.mark.parametrize(
    "fields",
    [
        ("", 1, ROOT),
        ("a\nb", 1, ROOT),
        (ORIGIN, -1, ROOT),
        (ORIGIN, True, ROOT),
        (ORIGIN, 2**64, ROOT),
        (ORIGIN, 1, ROOT[:31]),
        (ORIGIN, 1, bytearray(ROOT)),
        (ORIGIN, 1, ROOT, ("",)),
        (ORIGIN, 1, ROOT, ("a\nb",)),
        (ORIGIN, 1, ROOT, ["list"]),
    ],
)
def test_checkpoint_fields_that_cannot_be_written_are_value_errors(fields: Any) -> None:
    with pytest.raises(ValueError):
        Checkpoint(*fields)


@settings(max_examples=300, deadline=None)
@given(
    origin=st.text(
        st.characters(codec="utf-8", exclude_categories=("Cc",)), min_size=1, max_size=40
    ),
    size=st.integers(min_value=0, max_value=2**64 - 1),
    root_hash=st.binary(min_size=32, max_size=32),
    extensions=st.lists(
        st.text(st.characters(codec="utf-8", exclude_categories=("Cc",)), min_size=1),
        max_size=3,
    ),
)
def test_bodies_round_trip(origin: str, size: int, root_hash: bytes, extensions: list[str]) -> None:
    checkpoint = Checkpoint(origin, size, root_hash, tuple(extensions))
    assert Checkpoint.parse(checkpoint.body()) == checkpoint


# --- opening notes: bad input --------------------------------------------------------------


def test_notes_of_the_wrong_type_or_shape_are_invalid_proofs() -> None:
    verifier = SIGNER.verifier
    bad_notes: list[Any] = [
        NOTE.encode(),
        None,
        12,
        NOTE[:-1],
        NOTE.replace("\n\n", "\n"),
        NOTE.replace("\u2014", "-"),
        NOTE.replace("\u2014 ", "\u2014  "),
        NOTE + "\n",
        NOTE + "trailing\n",
        NOTE.replace(" ", "\t", 1),
        CHECKPOINT.body() + "x" * MAX_NOTE_BYTES + "\n\n" + NOTE.split("\n\n")[1],
        CHECKPOINT.body() + "\n\u2014 " + ORIGIN + " AAAA\n",
        CHECKPOINT.body() + "\n\u2014 " + ORIGIN + " \n",
        CHECKPOINT.body() + "\n\u2014 " + ORIGIN + "\n",
    ]
    for bad in bad_notes:
        with pytest.raises(InvalidProof):
            open_note(bad, verifier)


def test_a_verifier_that_is_not_one_is_an_invalid_key() -> None:
    with pytest.raises(InvalidKey):
        open_note(NOTE, VKEY)  # type: ignore[arg-type]
    with pytest.raises(InvalidKey):
        verify_checkpoint(NOTE, VKEY.encode())  # type: ignore[arg-type]


def test_a_signed_note_that_is_not_a_checkpoint_fails() -> None:
    note = SIGNER.sign("just a message\n")
    assert open_note(note, SIGNER.verifier) == "just a message\n"
    with pytest.raises(InvalidProof, match="at least 3 lines"):
        verify_checkpoint(note, VKEY)


@settings(max_examples=400, deadline=None)
@given(text=st.text(max_size=300), cut=st.integers(min_value=0, max_value=len(NOTE)))
def test_arbitrary_notes_raise_only_invalid_proof(text: str, cut: int) -> None:
    for candidate in (text, NOTE[:cut] + text + NOTE[cut:]):
        with contextlib.suppress(InvalidProof):
            assert verify_checkpoint(candidate, VKEY) == CHECKPOINT


@pytest.mark.parametrize(
    "body", ["no newline", "control \x01\n", "lone \udc80\n", b"bytes\n", None, "x" * 1_000_001]
)
def test_signing_what_is_not_a_note_text_is_a_value_error(body: Any) -> None:
    with pytest.raises(ValueError):
        SIGNER.sign(body)
