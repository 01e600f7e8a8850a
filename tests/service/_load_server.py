"""A real ``assay serve`` in a subprocess, on a free port, for the load tests: uvicorn
workers are separate processes with their own control planes, so what is proved
here holds across processes, not only across threads of one."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Generator
from contextlib import contextmanager
from pathlib import Path

import httpx

#: The graph name runs are started by, and the factory every worker builds it with.
GRAPH = "invoices"
FACTORY = "tests.service._load_graph:served_graph"

_ROOT = Path(__file__).resolve().parents[2]
_READY = "Application startup complete"


def bearer(secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _command() -> list[str]:
    script = shutil.which("assay", path=str(Path(sys.executable).parent))
    if script is not None:
        return [script]
    return [sys.executable, "-c", "from assay.cli import main; main()"]


@contextmanager
def served(
    db_url: str,
    *,
    workers: int,
    outbox: Path,
    log: Path,
    factory: str = FACTORY,
    startup_s: float = 90.0,
) -> Generator[str, None, None]:
    """``assay serve`` of ``factory`` (default :data:`FACTORY`) on ``db_url`` with
    ``workers`` processes, flags written to ``outbox``; yields the base URL once every
    worker has started, and stops the server (its whole process group) on exit.
    Per-token rate limits are raised out of the way: the buckets are not what is
    loaded here."""
    port = free_port()
    env = {
        **os.environ,
        "ASSAY_OUTBOX": str(outbox),
        "ASSAY_SERVICE_RATE": "100000",
        "ASSAY_SERVICE_BURST": "100000",
    }
    args = [
        *_command(),
        "serve",
        "--graph",
        f"{GRAPH}={factory}",
        "--workers",
        str(workers),
        "--port",
        str(port),
        "--db",
        db_url,
    ]
    with log.open("wb") as sink:
        process = subprocess.Popen(
            args, cwd=_ROOT, env=env, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        _wait_ready(process, log, workers, f"http://127.0.0.1:{port}", startup_s)
        yield f"http://127.0.0.1:{port}"
    finally:
        _stop(process)


def _wait_ready(
    process: subprocess.Popen[bytes], log: Path, workers: int, base: str, limit_s: float
) -> None:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"assay serve exited ({process.returncode}):\n{_tail(log)}")
        if log.read_text(errors="replace").count(_READY) >= workers:
            try:
                if httpx.get(f"{base}/openapi.json", timeout=5).status_code == 200:
                    return
            except httpx.TransportError:
                pass
        time.sleep(0.2)
    raise RuntimeError(f"assay serve did not start within {limit_s:.0f} s:\n{_tail(log)}")


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def _tail(log: Path, chars: int = 4000) -> str:
    return log.read_text(errors="replace")[-chars:]


def log_errors(log: Path) -> list[str]:
    """The lines of the server's log that report an unhandled exception."""
    text = log.read_text(errors="replace")
    return [line for line in text.splitlines() if "Traceback" in line or "Exception in" in line]
