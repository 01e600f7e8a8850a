"""Known ways a tampered database used to crash ``verify`` or a reader, one test each,
on both engines.

Each case edits a small ledger around assay (triggers off, as an attacker would) and
checks that ``verify()`` and ``verify(run)`` report it, with the entry and a reason a
person reads, and that every reader either returns or raises the ledger's own error:
:class:`~assay.errors.LedgerCorrupted` naming the entry, never a ``TypeError``,
``UnicodeDecodeError``, ``RecursionError`` or a driver's error. Where an engine cannot
hold a value (PostgreSQL has no text that is not UTF-8, and a NULL or another type
needs the schema changed first) the case makes the nearest edit it can.

The last cases are edits that earlier versions of ``verify`` passed: metadata or a
time stored in another form of the same value, a dedup key moved, an extra log row,
entries whose run is gone, a column's type changed with its values kept.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import pytest
import sqlalchemy as sa
from typer.testing import CliRunner

from assay import ControlPlane, LedgerCorrupted, LedgerError
from assay.cli import app
from assay.ledger import ChainReport, LedgerEntry, generate_key
from tests.ledger._tamper import raw_engine, tamper


@dataclass(frozen=True)
class _Stored:
    run: str
    other: str
    text: LedgerEntry
    binary: LedgerEntry
    last: LedgerEntry


def _stored(plane: ControlPlane) -> _Stored:
    ledger = plane.ledger
    run = ledger.start_run(metadata={"case": "invoice 7"})
    text = ledger.append(
        run, kind="retrieval", source="letter.md", content="caps at EUR 380", metadata={"p": 2}
    )
    binary = ledger.append(
        run, kind="tool_output", source="scanner", content=b"\x00\xff binary", metadata={"i": 2}
    )
    last = ledger.append(run, kind="verdict", source="verifier", content="entailed")
    other = ledger.start_run()
    ledger.append(other, kind="retrieval", source="other.md", content="another run")
    return _Stored(run=run, other=other, text=text, binary=binary, last=last)


def _sqlite(url: str) -> bool:
    return url.startswith("sqlite")


def _loosen(
    url: str, table: str, column: str, declared: str | None = None, *, null: bool = True
) -> list[str]:
    """Statements that drop a column's NOT NULL, or change its declared type, or both,
    with its values kept: PostgreSQL alters the column; SQLite, which cannot, rebuilds
    the table from its own CREATE statement with the column's definition changed."""
    if not _sqlite(url):
        return [f"ALTER TABLE {table} ALTER COLUMN {column} DROP NOT NULL"]
    engine = raw_engine(url)
    try:
        with engine.connect() as conn:
            sql = conn.execute(
                sa.text("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = :t"),
                {"t": table},
            ).scalar_one()
    finally:
        engine.dispose()
    definition = re.compile(rf"\b{column} ([A-Z]+(?:\(\d+\))?)((?: DEFAULT '[^']*')?) NOT NULL")
    kept = "" if null else " NOT NULL"
    sql = definition.sub(
        lambda m: f"{column} {declared or m.group(1)}{m.group(2)}{kept}", sql, count=1
    )
    return [
        sql.replace(f"CREATE TABLE {table}", "CREATE TABLE _rebuilt", 1),
        f"INSERT INTO _rebuilt SELECT * FROM {table}",
        f"DROP TABLE {table}",
        f"ALTER TABLE _rebuilt RENAME TO {table}",
    ]


Edit = Callable[[str, _Stored], list[str]]
_NO_FOREIGN_KEY = "ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_run_id_fkey"


def _on_postgres(url: str, statement: str) -> list[str]:
    """What PostgreSQL needs first that SQLite (triggers dropped, no foreign keys
    enforced on a plain connection) does not."""
    return [] if _sqlite(url) else [statement]


def _braces(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


def _both(statement: str) -> Edit:
    return lambda url, s: [statement.format(s=s)]


def _per_engine(sqlite: str, postgres: str) -> Edit:
    return lambda url, s: [(sqlite if _sqlite(url) else postgres).format(s=s)]


def _null(table: str, column: str, where: str) -> Edit:
    return lambda url, s: [
        *_loosen(url, table, column),
        f"UPDATE {table} SET {column} = NULL WHERE {where.format(s=s)}",
    ]


def _declared(table: str, column: str, sqlite: str, postgres: str) -> Edit:
    """A column of another type, its values kept (SQLite: only the declared type)."""

    def edit(url: str, s: _Stored) -> list[str]:
        if _sqlite(url):
            return _loosen(url, table, column, sqlite, null=False)
        return [f"ALTER TABLE {table} ALTER COLUMN {column} TYPE {postgres}"]

    return edit


@dataclass(frozen=True)
class Case:
    """An edit; words its report must hold; what the report must name: an entry
    (``binary`` or ``text``), ``run`` for the run's record, ``None`` for the schema or
    the log; whether reading that entry (or run) must raise ``LedgerCorrupted``."""

    edit: Edit
    words: tuple[str, ...]
    names: str | None = "binary"
    unreadable: bool = True


_ROW2 = "entry_id = '{s.binary.id}'"
_CASES: dict[str, Case] = {
    # content of another type, NULL, text that is not UTF-8
    "content as text": Case(
        _per_engine(
            f"UPDATE ledger_entries SET content = 'abc' WHERE {_ROW2}",
            "ALTER TABLE ledger_entries ALTER COLUMN content TYPE text "
            "USING encode(content, 'escape')",
        ),
        ("content",),
    ),
    "content as a real": Case(
        _per_engine(
            f"UPDATE ledger_entries SET content = 1.5 WHERE {_ROW2}",
            "ALTER TABLE ledger_entries ALTER COLUMN content TYPE float8 USING length(content)",
        ),
        ("content",),
    ),
    "content as -1": Case(
        _per_engine(
            f"UPDATE ledger_entries SET content = -1 WHERE {_ROW2}",
            "ALTER TABLE ledger_entries ALTER COLUMN content TYPE integer USING -1",
        ),
        ("content",),
    ),
    "content as 9e18": Case(
        _per_engine(
            f"UPDATE ledger_entries SET content = 9e18 WHERE {_ROW2}",
            "ALTER TABLE ledger_entries ALTER COLUMN content TYPE numeric USING 9e18",
        ),
        ("content",),
    ),
    "content NULL": Case(_null("ledger_entries", "content", _ROW2), ("content", "NULL")),
    "content as text that is not UTF-8": Case(
        _per_engine(
            f"UPDATE ledger_entries SET content = CAST(x'ff00fe' AS TEXT) WHERE {_ROW2}",
            f"UPDATE ledger_entries SET content = '\\xff00fe'::bytea WHERE {_ROW2}",
        ),
        ("content",),
        unreadable=False,
    ),
    "source as a blob": Case(
        _per_engine(
            f"UPDATE ledger_entries SET source = x'0102' WHERE {_ROW2}",
            "ALTER TABLE ledger_entries ALTER COLUMN source TYPE bytea "
            "USING convert_to(source, 'UTF8')",
        ),
        ("source",),
    ),
    "source as text that is not UTF-8": Case(
        _per_engine(
            f"UPDATE ledger_entries SET source = CAST(x'c328' AS TEXT) WHERE {_ROW2}",
            f"UPDATE ledger_entries SET source = 'sc\u00e4nner' WHERE {_ROW2}",
        ),
        ("source",),
        unreadable=False,
    ),
    # metadata that is not a JSON object the ledger could have written
    **{
        f"metadata {label}": Case(
            _both(f"UPDATE ledger_entries SET metadata_json = '{_braces(value)}' WHERE {_ROW2}"),
            ("metadata",),
            unreadable=unreadable,
        )
        for label, value, unreadable in [
            ("5", "5", True),
            ("[1,2]", "[1,2]", True),
            ('"x"', '"x"', True),
            ("NaN", '{"a": NaN}', True),
            ("1e400", '{"a": 1e400}', True),
            ("1e23", '{"a": 1e23}', False),
            ("lone surrogate", '{"a": "\\ud800"}', True),
            ("nested 100k deep", "[" * 100_000 + "]" * 100_000, True),
            ("integer beyond 2**53", '{"a": 9007199254740993}', True),
        ]
    },
    "metadata NULL": Case(_null("ledger_entries", "metadata_json", _ROW2), ("metadata",)),
    "metadata as jsonb": Case(
        _declared("ledger_entries", "metadata_json", "JSON", "jsonb USING metadata_json::jsonb"),
        ("schema", "metadata_json"),
        names=None,
        unreadable=False,
    ),
    # times and numbers
    "creation time garbage": Case(
        _per_engine(
            f"UPDATE ledger_entries SET created_at = 'garbage' WHERE {_ROW2}",
            f"UPDATE ledger_entries SET created_at = 'infinity' WHERE {_ROW2}",
        ),
        ("creation time",),
    ),
    "seq numeric": Case(
        _per_engine(
            f"UPDATE ledger_entries SET seq = 2.5 WHERE {_ROW2}",
            "ALTER TABLE ledger_entries ALTER COLUMN seq TYPE numeric",
        ),
        ("seq",),
    ),
    "seq NULL on row 2": Case(_null("ledger_entries", "seq", _ROW2), ("seq", "NULL")),
    "content type flag flipped": Case(
        _per_engine(
            f"UPDATE ledger_entries SET is_text = 1 WHERE {_ROW2}",
            f"UPDATE ledger_entries SET is_text = true WHERE {_ROW2}",
        ),
        ("type flag",),
    ),
    # the run's row
    "run metadata {": Case(
        _both("UPDATE ledger_runs SET metadata_json = '{{' WHERE run_id = '{s.run}'"),
        ("run", "metadata"),
        names="run",
    ),
    "run metadata NULL": Case(
        _null("ledger_runs", "metadata_json", "run_id = '{s.run}'"), ("run", "metadata"), "run"
    ),
    "run creation time garbage": Case(
        _per_engine(
            "UPDATE ledger_runs SET created_at = 'garbage' WHERE run_id = '{s.run}'",
            "UPDATE ledger_runs SET created_at = '10000-01-01' WHERE run_id = '{s.run}'",
        ),
        ("run", "creation time"),
        names="run",
    ),
    # edits that verify used to pass
    "metadata spaced": Case(
        _both(f"UPDATE ledger_entries SET metadata_json = '{{{{\"i\": 2}}}}' WHERE {_ROW2}"),
        ("metadata",),
        unreadable=False,
    ),
    "metadata as an equal number": Case(
        _both(f"UPDATE ledger_entries SET metadata_json = '{{{{\"i\"\\:2.0}}}}' WHERE {_ROW2}"),
        ("metadata",),
        unreadable=False,
    ),
    "creation time in another form": Case(
        _per_engine(
            f"UPDATE ledger_entries SET created_at = replace(created_at, ' ', 'T') WHERE {_ROW2}",
            "UPDATE ledger_entries SET created_at = created_at + interval '1 microsecond' "
            f"WHERE {_ROW2}",
        ),
        ("creation time",),
        unreadable=False,
    ),
    "dedup keys swapped": Case(
        lambda url, s: [
            "CREATE TEMP TABLE _keys AS SELECT entry_id, dedup_key FROM ledger_entries",
            f"UPDATE ledger_entries SET dedup_key = 'x' WHERE entry_id = '{s.text.id}'",
            f"UPDATE ledger_entries SET dedup_key = (SELECT dedup_key FROM _keys "
            f"WHERE entry_id = '{s.text.id}') WHERE entry_id = '{s.binary.id}'",
            f"UPDATE ledger_entries SET dedup_key = (SELECT dedup_key FROM _keys "
            f"WHERE entry_id = '{s.binary.id}') WHERE entry_id = '{s.text.id}'",
        ],
        ("dedup key",),
        names="text",
        unreadable=False,
    ),
    "a second log row": Case(
        lambda url, s: [
            *_on_postgres(url, "ALTER TABLE ledger_tree DISABLE TRIGGER USER"),
            "INSERT INTO ledger_tree (id, size, frontier) "
            "SELECT 2, size, frontier FROM ledger_tree",
        ],
        ("log",),
        names=None,
        unreadable=False,
    ),
    "entries whose run is gone": Case(
        lambda url, s: [
            *_on_postgres(url, _NO_FOREIGN_KEY),
            f"DELETE FROM ledger_runs WHERE run_id = '{s.other}'",
        ],
        ("no run",),
        names=None,
        unreadable=False,
    ),
    "a run id that is not text": Case(
        lambda url, s: [
            *_on_postgres(url, _NO_FOREIGN_KEY),
            "UPDATE ledger_runs SET run_id = "
            + ("CAST(x'ff' AS TEXT)" if _sqlite(url) else "'run_x'")
            + f" WHERE run_id = '{s.other}'",
        ],
        ("run",),
        names=None,
        unreadable=False,
    ),
    "kind varchar to text": Case(
        _declared("ledger_entries", "kind", "TEXT", "text"),
        ("schema", "kind"),
        names=None,
        unreadable=False,
    ),
    "NOT NULL dropped, nothing else": Case(
        lambda url, s: _loosen(url, "ledger_entries", "source"),
        ("schema", "source", "NULL"),
        names=None,
        unreadable=False,
    ),
    "content type flag as an integer": Case(
        _declared("ledger_entries", "is_text", "INTEGER", "integer USING is_text::int"),
        ("schema", "is_text"),
        names=None,
        unreadable=False,
    ),
}


_VERIFY = "assay ledger verify"
_SIGNER, _ = generate_key("tamper.example.org/ledger")


def _target(stored: _Stored, case: Case) -> LedgerEntry | None:
    return {"binary": stored.binary, "text": stored.text}.get(case.names or "")


def _check_report(report: ChainReport, stored: _Stored, case: Case, *, whole: bool) -> None:
    assert not report.ok, report
    reason = report.reason or ""
    assert all(word in reason for word in case.words), report
    assert "None" not in reason, report  # a NULL is said as such
    if "the ledger's schema was changed" in reason:
        assert report.first_bad_seq is None and report.entry_id is None, report
        return
    entry = _target(stored, case)
    if case.names == "run":
        assert (report.run_id, report.first_bad_seq) == (stored.run, 0), report
    elif entry is not None:
        assert (report.run_id, report.first_bad_seq) == (stored.run, entry.seq), report
        assert report.entry_id == entry.id, report
    elif whole:
        assert report.entry_id or report.run_id or "log" in reason, report


def _check_verify(plane: ControlPlane, stored: _Stored, case: Case) -> None:
    _check_report(plane.ledger.verify(), stored, case, whole=True)
    single = plane.ledger.verify(stored.run)
    assert isinstance(single, ChainReport)
    if case.names is not None:
        _check_report(single, stored, case, whole=False)


def _check_readers(plane: ControlPlane, stored: _Stored, case: Case) -> None:
    ledger = plane.ledger
    ids = [stored.text.id, stored.binary.id, stored.last.id]
    reads: list[Callable[[], object]] = [
        *(lambda i=i: ledger.get(i) for i in ids),
        lambda: ledger.get_many(ids),
        lambda: ledger.entries(stored.run),
        lambda: ledger.evidence(stored.run),
        lambda: ledger.entries(stored.other),
        lambda: ledger.run(stored.run),
        lambda: ledger.run(stored.other),
        ledger.runs,
        lambda: ledger.export_bundle(stored.run, _SIGNER),
    ]
    for read in reads:
        try:
            read()
        except LedgerCorrupted as exc:
            assert _VERIFY in str(exc) and "None" not in str(exc), exc
        except LedgerError:
            pass
    if not case.unreadable:
        return
    if case.names == "run":
        with pytest.raises(LedgerCorrupted, match=_VERIFY):
            ledger.run(stored.run)
        return
    entry = _target(stored, case)
    assert entry is not None
    with pytest.raises(LedgerCorrupted, match=_VERIFY) as raised:
        ledger.get(entry.id)
    assert raised.value.entry_id in (entry.id, None)
    with pytest.raises(LedgerCorrupted):
        ledger.entries(stored.run)


@pytest.mark.parametrize("name", list(_CASES))
def test_a_tampered_row_is_reported_and_read_only_as_a_ledger_error(
    plane: ControlPlane, name: str
) -> None:
    case = _CASES[name]
    stored = _stored(plane)
    assert plane.ledger.verify().ok
    tamper(plane.url, *case.edit(plane.url, stored))
    _check_verify(plane, stored, case)
    _check_readers(plane, stored, case)


def test_an_unreadable_entry_names_itself_and_what_is_wrong(plane: ControlPlane) -> None:
    stored = _stored(plane)
    if _sqlite(plane.url):
        case, problem = "content as text", "its content is stored as text, not bytes"
    else:
        case, problem = (
            "content type flag flipped",
            "its content is marked as text but is not UTF-8",
        )
    tamper(plane.url, *_CASES[case].edit(plane.url, stored))
    with pytest.raises(LedgerCorrupted) as raised:
        plane.ledger.get(stored.binary.id)
    assert raised.value.entry_id == stored.binary.id
    assert str(raised.value) == (
        f"entry {stored.binary.id} cannot be read: {problem}; run `assay ledger verify`"
    )
    assert plane.ledger.get(stored.text.id) == stored.text  # the other rows still read


def test_seq_null_on_row_2_names_the_entry(plane: ControlPlane) -> None:
    stored = _stored(plane)
    tamper(plane.url, *_CASES["seq NULL on row 2"].edit(plane.url, stored))
    report = plane.ledger.verify(stored.run)
    assert (report.first_bad_seq, report.entry_id) == (2, stored.binary.id)
    assert report.reason == "entry seq 2 is out of place: its seq was edited (now NULL)"


runner = CliRunner()


def test_the_command_line_exits_1_for_a_broken_chain_and_3_for_an_unreadable_row(
    plane: ControlPlane,
) -> None:
    stored = _stored(plane)
    ok = runner.invoke(app, ["ledger", "verify", "--db", plane.url])
    assert ok.exit_code == 0, ok.output
    tamper(plane.url, *_CASES["content as text that is not UTF-8"].edit(plane.url, stored))
    broken = runner.invoke(app, ["ledger", "verify", "--db", plane.url])
    assert broken.exit_code == 1, broken.output
    assert "broken" in broken.output and stored.binary.id in broken.output
    assert "Traceback" not in broken.output
    tamper(plane.url, *_CASES["content as text"].edit(plane.url, stored))
    shown = runner.invoke(app, ["ledger", "show", stored.run, "--db", plane.url])
    assert shown.exit_code == 3, shown.output
    assert "cannot be read" in shown.output and _VERIFY in shown.output
    assert "Traceback" not in shown.output
