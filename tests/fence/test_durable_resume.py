"""Kill the process while a run waits for a grant; resume it from a new process.
The irreversible call runs exactly once, however often the resume is replayed: a
second decision is refused naming the first, and of two processes deciding at once
one decision takes effect and the other process is told whose."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _worker(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.fence._worker", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ},
    )


def _paused(db_url: str, thread: str) -> int:
    """Start the over-cap case on ``thread`` until it pauses, then SIGKILL the process;
    its exit status."""
    with _worker("start", db_url, thread) as first:
        assert first.stdout is not None
        line = first.stdout.readline().strip()
        if line != f"awaiting_grant {thread}":
            first.kill()
            raise AssertionError(f"{line!r}: {first.communicate()[1]}")
        os.kill(first.pid, signal.SIGKILL)
        first.communicate(timeout=30)
    return first.returncode


def test_sigkill_while_paused_then_resume_runs_the_side_effect_once(
    db_url: str, outbox: Path
) -> None:
    thread = "thr_durable"
    assert _paused(db_url, thread) == -signal.SIGKILL
    assert not outbox.exists()

    outputs = []
    for _ in range(2):  # resuming twice must not flag twice
        with _worker("resume", db_url, thread) as second:
            out, err = second.communicate(timeout=300)
        assert second.returncode == 0, err
        outputs.append(out.strip())
    assert outputs == ["answered 1", "already_decided alice"]
    flags = [json.loads(row) for row in outbox.read_text().splitlines()]
    assert [(f["invoice"], f["line"]) for f in flags] == [("INV-4421", 14)]


def test_two_processes_resuming_at_once_leave_one_grant_and_agree_on_it(
    db_url: str, outbox: Path
) -> None:
    """Both approve at the same moment: one decision stands, one grant is issued, the
    flag is written once; the winner reports its executed call and the other process
    is told whose decision stood, not its own."""
    import sqlalchemy as sa

    thread = "thr_race"
    _paused(db_url, thread)
    workers = [_worker("resume-as", db_url, thread, name) for name in ("alice", "bob")]
    outputs, errors = [], []
    for worker in workers:
        out, err = worker.communicate(timeout=300)
        assert worker.returncode == 0, err
        outputs.append(out.strip())
        errors.append(err[-2000:])
    flags = [json.loads(row) for row in outbox.read_text().splitlines()]
    assert len(flags) == 1
    engine = sa.create_engine(db_url)
    try:
        with engine.connect() as conn:
            grants = conn.execute(sa.text("SELECT approver, call_id FROM tool_grants")).all()
            used = conn.execute(sa.text("SELECT count(*) FROM tool_grant_uses")).scalar()
    finally:
        engine.dispose()
    assert len(grants) == 1 and used == 1, grants
    winner = grants[0].approver
    expected = [f"already_decided {winner}", f"answered [('executed', '{winner}')]"]
    assert sorted(outputs) == expected, (outputs, errors)
