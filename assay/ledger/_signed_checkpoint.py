"""Signed checkpoints of the ledger's Merkle tree: C2SP tlog-checkpoint in a C2SP
signed note, signed with Ed25519.

A checkpoint commits the log to one tree head; because the format is the one Go's
checksum database, Sigstore and the witness network use, any of their tools can check
it, and a witness can cosign it. The body (https://c2sp.org/tlog-checkpoint)::

    <origin>\\n
    <tree size, decimal, no leading zeros>\\n
    <base64 of the 32-byte root hash>\\n
    [<extension line>\\n ...]

and the signed note (https://c2sp.org/signed-note) is the body, a blank line, then
one line per signature, ``— <key name> <base64(4-byte key id || signature)>``. An
Ed25519 key id is the first four bytes of ``SHA-256(name || 0x0A || 0x01 || public
key)``. Keys travel as text in the Go ``golang.org/x/mod/sumdb/note`` formats::

    verifier key   <name>+<key id, 8 hex digits>+<base64(0x01 || public key)>
    signer key     PRIVATE+KEY+<name>+<key id, 8 hex digits>+<base64(0x01 || seed)>

Parsing is strict: base64 must be canonical (so no edit of a signed note can leave its
meaning intact), sizes decimal without leading zeros, names non-empty without ``+``,
spaces or control characters. A key text that cannot be read raises
:class:`~assay.errors.InvalidKey`; a note or checkpoint that does not parse or verify
raises :class:`~assay.errors.InvalidProof` with the reason. Asking a signer to sign a
body that is not a note text is the caller's mistake and raises :class:`ValueError`.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from dataclasses import dataclass

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)

from assay.errors import InvalidKey, InvalidProof
from assay.ledger._merkle import HASH_SIZE, MAX_TREE_SIZE

__all__ = [
    "MAX_KEY_NAME_CHARS",
    "MAX_NOTE_BYTES",
    "MAX_NOTE_SIGNATURES",
    "Checkpoint",
    "CheckpointVerifier",
    "Signer",
    "generate_key",
    "open_note",
    "sign_checkpoint",
    "verify_checkpoint",
]

#: The largest signed note read (body and signatures, UTF-8): a checkpoint is a few
#: hundred bytes, so anything near this is not one.
MAX_NOTE_BYTES = 1_000_000
#: The most signature lines a note may carry (the spec asks for at least 16; Go's
#: reader stops at 100).
MAX_NOTE_SIGNATURES = 100
#: The longest key name accepted (names are schema-less URLs such as
#: ``example.org/log``).
MAX_KEY_NAME_CHARS = 512

#: The signature type byte of Ed25519 in signed notes.
_ALG_ED25519 = 0x01
_ED25519_SIGNATURE_SIZE = 64
_PRIVATE_PREFIX = "PRIVATE+KEY+"
_SIGNATURE_PREFIX = "\u2014 "  # em dash, space
_KEY_ID_RE = re.compile(r"[0-9a-f]{8}")
_SIZE_RE = re.compile(r"0|[1-9][0-9]*")
_BASE64_RE = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")
#: Signed notes may hold no ASCII control character but newline.
_CONTROL_RE = re.compile(r"[\x00-\x09\x0b-\x1f]")


# --- checkpoint bodies -------------------------------------------------------------------


@dataclass(frozen=True)
class Checkpoint:
    """One tree head as a log states it: origin (the log's identity), size, root hash
    and optional opaque extension lines. Constructing one with fields that would not
    write a parseable body raises :class:`ValueError`."""

    origin: str
    size: int
    root: bytes
    extensions: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        problem = _checkpoint_problem(self.origin, self.size, self.root, self.extensions)
        if problem is not None:
            raise ValueError(f"invalid checkpoint: {problem}")

    def body(self) -> str:
        """The note text of this checkpoint, every line ending in a newline."""
        root = base64.b64encode(self.root).decode("ascii")
        lines = [self.origin, str(self.size), root, *self.extensions]
        return "".join(line + "\n" for line in lines)

    @classmethod
    def parse(cls, body: str) -> Checkpoint:
        """Read a checkpoint body (the text of an opened note); anything that is not
        exactly what :meth:`body` would write raises :class:`~assay.errors.InvalidProof`."""
        if not isinstance(body, str):
            raise InvalidProof(f"a checkpoint body must be text (str), got {type(body).__name__}")
        if len(body) > MAX_NOTE_BYTES:
            raise InvalidProof(f"a checkpoint body longer than {MAX_NOTE_BYTES} characters")
        if not body.endswith("\n"):
            raise InvalidProof("a checkpoint body must end in a newline")
        lines = body[:-1].split("\n")
        if len(lines) < 3:
            raise InvalidProof(
                f"a checkpoint body has at least 3 lines (origin, size, root), this has "
                f"{len(lines)}"
            )
        origin, size_text, root_text, *extensions = lines
        if len(size_text) > 20 or not _SIZE_RE.fullmatch(size_text):
            raise InvalidProof(
                f"checkpoint tree size {size_text[:40]!r} is not a decimal number without "
                "leading zeros"
            )
        size = int(size_text)
        root = _b64decode(root_text)
        if root is None or len(root) != HASH_SIZE:
            raise InvalidProof(
                f"checkpoint root {root_text[:60]!r} is not the base64 of a {HASH_SIZE}-byte hash"
            )
        problem = _checkpoint_problem(origin, size, root, tuple(extensions))
        if problem is not None:
            raise InvalidProof(f"malformed checkpoint: {problem}")
        return cls(origin, size, root, tuple(extensions))


def _checkpoint_problem(
    origin: object, size: object, root: object, extensions: object
) -> str | None:
    """What makes these fields not a checkpoint, or None."""
    if not isinstance(origin, str) or not origin:
        return "the origin must be a non-empty str"
    if (problem := _line_problem(origin, "the origin")) is not None:
        return problem
    if type(size) is not int or not 0 <= size <= MAX_TREE_SIZE:
        return f"the tree size must be an int between 0 and {MAX_TREE_SIZE}, got {size!r}"
    if type(root) is not bytes or len(root) != HASH_SIZE:
        return f"the root must be {HASH_SIZE} bytes"
    if not isinstance(extensions, tuple):
        return "the extensions must be a tuple of str"
    for i, line in enumerate(extensions):
        if not isinstance(line, str) or not line:
            return f"extension line {i + 1} must be a non-empty str"
        if (problem := _line_problem(line, f"extension line {i + 1}")) is not None:
            return problem
    return None


def _line_problem(line: str, what: str) -> str | None:
    if "\n" in line or _CONTROL_RE.search(line):
        return f"{what} contains a newline or control character"
    if not _utf8_ok(line):
        return f"{what} is not valid Unicode text (a lone surrogate)"
    return None


# --- keys ------------------------------------------------------------------------------


def _key_id(name: str, public_key: bytes) -> bytes:
    """The signed-note key id of an Ed25519 key: SHA-256(name || LF || 0x01 || key)[:4]."""
    material = name.encode("utf-8") + b"\n" + bytes([_ALG_ED25519]) + public_key
    return hashlib.sha256(material).digest()[:4]


def _name_problem(name: object) -> str | None:
    """Why ``name`` cannot name a key, or None: names are non-empty, hold no ``+``,
    no Unicode space and no control character, and are valid Unicode."""
    if not isinstance(name, str):
        return f"a key name must be text (str), got {type(name).__name__}"
    if not name:
        return "the key name is empty"
    if len(name) > MAX_KEY_NAME_CHARS:
        return f"the key name is longer than {MAX_KEY_NAME_CHARS} characters"
    if "+" in name:
        return "the key name contains '+'"
    if any(c.isspace() or c < "\x20" or c == "\x7f" for c in name):
        return "the key name contains a space or control character"
    if not _utf8_ok(name):
        return "the key name is not valid Unicode text (a lone surrogate)"
    return None


def _verifier_text(name: str, key_id: bytes, public_key: bytes) -> str:
    encoded = base64.b64encode(bytes([_ALG_ED25519]) + public_key).decode("ascii")
    return f"{name}+{key_id.hex()}+{encoded}"


def _split_key_text(rest: str, kind: str) -> tuple[str, str, bytes]:
    """``<name>+<key id>+<base64>`` → (name, key id hex, decoded key material).

    The name holds no ``+`` and the key id is hex, so the first two ``+`` separate the
    fields; the base64 may contain more. A signer key's messages quote nothing of it:
    in a mangled text the "name" may be a piece of the secret."""
    parts = rest.split("+", 2)
    if len(parts) != 3:
        raise InvalidKey(f"a {kind} key reads <name>+<key id>+<base64 key>; fields are missing")
    name, key_id_hex, encoded = parts
    if (problem := _name_problem(name)) is not None:
        raise InvalidKey(f"{kind} key: {problem}")
    label = f"{kind} key" if kind == "signer" else f"{kind} key {name!r}"
    if not _KEY_ID_RE.fullmatch(key_id_hex):
        raise InvalidKey(f"{label}: the key id must be 8 lowercase hex digits")
    material = _b64decode(encoded)
    if material is None or not material:
        raise InvalidKey(f"{label}: the key is not canonical base64")
    if material[0] != _ALG_ED25519:
        raise InvalidKey(
            f"{label}: unsupported signature type 0x{material[0]:02x} "
            "(only Ed25519, 0x01, is supported)"
        )
    if len(material) != 33:
        raise InvalidKey(f"{label}: an Ed25519 key is 32 bytes, this one is {len(material) - 1}")
    return name, key_id_hex, material[1:]


def _text_or_fail(text: object, kind: str) -> str:
    if not isinstance(text, str):
        raise InvalidKey(f"a {kind} key must be text (str), got {type(text).__name__}")
    if len(text) > MAX_KEY_NAME_CHARS + 200:
        raise InvalidKey(f"a {kind} key text is too long to be one")
    if text != text.strip():
        raise InvalidKey(f"a {kind} key text has leading or trailing whitespace")
    return text


class CheckpointVerifier:
    """An Ed25519 verifier key: checks signature lines by one (name, key id)."""

    __slots__ = ("_key", "_key_id", "_name", "_public")

    def __init__(self, name: str, public_key: bytes) -> None:
        problem = _name_problem(name)
        if problem is not None:
            raise InvalidKey(problem)
        if type(public_key) is not bytes or len(public_key) != 32:
            raise InvalidKey("an Ed25519 public key is 32 bytes")
        try:
            self._key = Ed25519PublicKey.from_public_bytes(public_key)
        except ValueError as exc:
            raise InvalidKey(f"verifier key {name!r}: not an Ed25519 public key") from exc
        self._name = name
        self._public = public_key
        self._key_id = _key_id(name, public_key)

    @classmethod
    def from_text(cls, text: str) -> CheckpointVerifier:
        """Read ``<name>+<key id>+<base64(0x01 || public key)>``; the key id must be
        the one the name and key give, so a key text cannot name another key."""
        text = _text_or_fail(text, "verifier")
        name, key_id_hex, public = _split_key_text(text, "verifier")
        verifier = cls(name, public)
        if verifier.key_id.hex() != key_id_hex:
            raise InvalidKey(
                f"verifier key {name!r}: key id {key_id_hex} does not match the name and "
                f"key (they give {verifier.key_id.hex()})"
            )
        return verifier

    @property
    def name(self) -> str:
        """The key name signature lines carry."""
        return self._name

    @property
    def key_id(self) -> bytes:
        """The 4-byte key id that starts each of this key's signatures."""
        return self._key_id

    @property
    def text(self) -> str:
        """The verifier key text, as :meth:`from_text` reads it."""
        return _verifier_text(self._name, self._key_id, self._public)

    def verify(self, message: bytes, signature: bytes) -> bool:
        """Whether ``signature`` (without the key id) is this key's over ``message``."""
        if len(signature) != _ED25519_SIGNATURE_SIZE:
            return False
        try:
            self._key.verify(signature, message)
        except (InvalidSignature, ValueError):
            return False
        return True

    def __repr__(self) -> str:
        return f"CheckpointVerifier({self.text!r})"


class Signer:
    """An Ed25519 signer key: signs note texts as one (name, key id)."""

    __slots__ = ("_key", "_verifier")

    def __init__(self, name: str, seed: bytes) -> None:
        if type(seed) is not bytes or len(seed) != 32:
            raise InvalidKey("an Ed25519 seed is 32 bytes")
        try:
            self._key = Ed25519PrivateKey.from_private_bytes(seed)
        except ValueError as exc:  # pragma: no cover - every 32-byte seed is a key
            raise InvalidKey("not an Ed25519 private key") from exc
        self._verifier = CheckpointVerifier(name, self._key.public_key().public_bytes_raw())

    @classmethod
    def from_text(cls, text: str) -> Signer:
        """Read ``PRIVATE+KEY+<name>+<key id>+<base64(0x01 || seed)>``; the key id
        must be the one of the public key the seed gives. Errors never quote the key."""
        text = _text_or_fail(text, "signer")
        if not text.startswith(_PRIVATE_PREFIX):
            raise InvalidKey("a signer key starts with 'PRIVATE+KEY+'")
        name, key_id_hex, seed = _split_key_text(text[len(_PRIVATE_PREFIX) :], "signer")
        signer = cls(name, seed)
        if signer.key_id.hex() != key_id_hex:
            raise InvalidKey(
                f"signer key for {signer.name!r}: its key id does not match the name and "
                "the public key of its seed"
            )
        return signer

    @property
    def name(self) -> str:
        """The key name written on signature lines."""
        return self._verifier.name

    @property
    def key_id(self) -> bytes:
        """The 4-byte key id that starts each signature."""
        return self._verifier.key_id

    @property
    def verifier(self) -> CheckpointVerifier:
        """The matching verifier."""
        return self._verifier

    @property
    def verifier_key(self) -> str:
        """The matching verifier key text, to publish."""
        return self._verifier.text

    def sign(self, body: str) -> str:
        """The signed note: ``body``, a blank line, and this key's signature line.

        ``body`` must be a note text: a str ending in a newline, with no control
        character but newline, at most :data:`MAX_NOTE_BYTES` long; anything else is
        the caller's mistake (:class:`ValueError`)."""
        if not isinstance(body, str):
            raise ValueError(f"a note text must be a str, got {type(body).__name__}")
        if not body.endswith("\n"):
            raise ValueError("a note text must end in a newline")
        if _CONTROL_RE.search(body):
            raise ValueError("a note text may contain no control character but newline")
        if not _utf8_ok(body):
            raise ValueError("a note text must be valid Unicode text (no lone surrogate)")
        message = body.encode("utf-8")
        if len(message) > MAX_NOTE_BYTES:
            raise ValueError(f"a note text is at most {MAX_NOTE_BYTES} bytes")
        signature = self._key.sign(message)
        encoded = base64.b64encode(self.key_id + signature).decode("ascii")
        return f"{body}\n{_SIGNATURE_PREFIX}{self.name} {encoded}\n"

    def __repr__(self) -> str:
        return f"Signer(name={self.name!r}, key_id={self.key_id.hex()!r})"


def generate_key(name: str) -> tuple[str, str]:
    """A new Ed25519 key pair for ``name``: (signer key text, verifier key text).
    Keep the first secret; publish the second."""
    problem = _name_problem(name)
    if problem is not None:
        raise InvalidKey(problem)
    key = Ed25519PrivateKey.generate()
    seed = key.private_bytes_raw()
    public = key.public_key().public_bytes_raw()
    key_id = _key_id(name, public)
    encoded_seed = base64.b64encode(bytes([_ALG_ED25519]) + seed).decode("ascii")
    signer_text = f"{_PRIVATE_PREFIX}{name}+{key_id.hex()}+{encoded_seed}"
    return signer_text, _verifier_text(name, key_id, public)


# --- signed notes ----------------------------------------------------------------------


def sign_checkpoint(checkpoint: Checkpoint, signer: Signer) -> str:
    """The signed note of ``checkpoint`` by ``signer``."""
    if not isinstance(checkpoint, Checkpoint):
        raise ValueError(f"expected a Checkpoint, got {type(checkpoint).__name__}")
    if not isinstance(signer, Signer):
        raise ValueError(f"expected a Signer, got {type(signer).__name__}")
    return signer.sign(checkpoint.body())


def open_note(text: str, verifier: CheckpointVerifier) -> str:
    """The body of the signed note ``text`` once a signature by ``verifier`` (same key
    name and key id) verifies over it.

    Signatures by other keys are ignored (a checkpoint may be cosigned by witnesses),
    but every signature line must be well formed, and every line by this key must
    verify. Anything else raises :class:`~assay.errors.InvalidProof`; a ``verifier``
    that is not a :class:`CheckpointVerifier` is the caller's mistake
    (:class:`~assay.errors.InvalidKey`)."""
    if not isinstance(verifier, CheckpointVerifier):
        raise InvalidKey(f"expected a CheckpointVerifier, got {type(verifier).__name__}")
    body, lines = _split_note(text)
    message = body.encode("utf-8")
    verified = 0
    other_ids: list[str] = []
    for name, key_id, signature in lines:
        if name != verifier.name:
            continue
        if key_id != verifier.key_id:
            other_ids.append(key_id.hex())
            continue
        if not verifier.verify(message, signature):
            raise InvalidProof(
                f"signature by key {verifier.name!r} ({verifier.key_id.hex()}) does not verify"
            )
        verified += 1
    if verified:
        return body
    detail = (
        f"; signatures under that name have key ids {', '.join(other_ids)}, not this key's"
        if other_ids
        else ""
    )
    raise InvalidProof(
        f"the note carries no signature by key {verifier.name!r} ({verifier.key_id.hex()}){detail}"
    )


def _split_note(text: object) -> tuple[str, list[tuple[str, bytes, bytes]]]:
    """A signed note → (body, [(key name, key id, signature)]), checking its syntax."""
    if not isinstance(text, str):
        raise InvalidProof(f"a signed note must be text (str), got {type(text).__name__}")
    if len(text) > MAX_NOTE_BYTES:
        raise InvalidProof(f"a signed note is at most {MAX_NOTE_BYTES} bytes")
    if not _utf8_ok(text):
        raise InvalidProof("a signed note must be valid Unicode text (it has a lone surrogate)")
    if len(text.encode("utf-8")) > MAX_NOTE_BYTES:
        raise InvalidProof(f"a signed note is at most {MAX_NOTE_BYTES} bytes")
    if _CONTROL_RE.search(text):
        raise InvalidProof("a signed note may contain no control character but newline")
    split = text.rfind("\n\n")
    if split < 0:
        raise InvalidProof("a signed note has a blank line between its text and its signatures")
    body, block = text[: split + 1], text[split + 2 :]
    if not block.endswith("\n"):
        raise InvalidProof("a signed note ends with a signature line and a newline")
    raw_lines = block[:-1].split("\n")
    if len(raw_lines) > MAX_NOTE_SIGNATURES:
        raise InvalidProof(f"a signed note carries more than {MAX_NOTE_SIGNATURES} signatures")
    return body, [_signature_line(line, i + 1) for i, line in enumerate(raw_lines)]


def _signature_line(line: str, number: int) -> tuple[str, bytes, bytes]:
    if not line.startswith(_SIGNATURE_PREFIX):
        raise InvalidProof(f"signature line {number} does not start with an em dash and a space")
    name, _, encoded = line[len(_SIGNATURE_PREFIX) :].partition(" ")
    if (problem := _name_problem(name)) is not None:
        raise InvalidProof(f"signature line {number}: {problem}")
    raw = _b64decode(encoded)
    if raw is None or len(raw) < 5:
        raise InvalidProof(
            f"signature line {number} ({name!r}): the signature is not canonical base64 of "
            "a key id and a signature"
        )
    return name, raw[:4], raw[4:]


def verify_checkpoint(text: str, verifier_key: str | CheckpointVerifier) -> Checkpoint:
    """The checkpoint in the signed note ``text``, once ``verifier_key`` (a verifier key
    text or a :class:`CheckpointVerifier`) has verified its signature: :func:`open_note` then
    :meth:`Checkpoint.parse`."""
    if isinstance(verifier_key, CheckpointVerifier):
        verifier = verifier_key
    elif isinstance(verifier_key, str):
        verifier = CheckpointVerifier.from_text(verifier_key)
    else:
        raise InvalidKey(
            "a verifier key must be text (str) or a CheckpointVerifier, "
            f"got {type(verifier_key).__name__}"
        )
    return Checkpoint.parse(open_note(text, verifier))


# --- helpers -------------------------------------------------------------------------------


def _b64decode(text: str) -> bytes | None:
    """Standard base64 with padding, canonical only (the unused bits of the last
    character zero), else None: two spellings of one value would let a note be edited
    without changing what it says."""
    if not _BASE64_RE.fullmatch(text):
        return None
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):  # pragma: no cover - the pattern already checked
        return None
    if base64.b64encode(raw).decode("ascii") != text:
        return None
    return raw


def _utf8_ok(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
