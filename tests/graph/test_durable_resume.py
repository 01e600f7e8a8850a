"""Kill the process while a run waits for a grant; resume it from a new process.
The irreversible call runs exactly once, however often the resume is replayed."""

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
        [sys.executable, "-m", "tests.graph._worker", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ},
    )


def test_sigkill_while_paused_then_resume_runs_the_side_effect_once(
    db_url: str, outbox: Path
) -> None:
    thread = "thr_durable"
    with _worker("start", db_url, thread) as first:
        assert first.stdout is not None
        line = first.stdout.readline().strip()
        if line != f"awaiting_grant {thread}":
            first.kill()
            raise AssertionError(f"{line!r}: {first.communicate()[1]}")
        os.kill(first.pid, signal.SIGKILL)
        first.communicate(timeout=30)
    assert first.returncode == -signal.SIGKILL
    assert not outbox.exists()

    for _ in range(2):  # resuming twice must not flag twice
        with _worker("resume", db_url, thread) as second:
            out, err = second.communicate(timeout=300)
        assert second.returncode == 0, err
        assert out.strip() == "answered 1"
    flags = [json.loads(row) for row in outbox.read_text().splitlines()]
    assert [(f["invoice"], f["line"]) for f in flags] == [("INV-4421", 14)]
