"""What every request passes before a route: a body size limit and a per-token rate.

:class:`BodyLimit` is plain ASGI middleware: a ``Content-Length`` over the limit is
answered 413 before the body is read, and a body sent without one (chunked) is
counted as it arrives and refused with 413 at the first byte over. Nothing past the
limit is ever buffered.

:class:`TokenBuckets` is an in-memory token bucket per bearer token: ``burst``
requests at once, refilled at ``rate`` per second. It lives in one process, so with
several uvicorn workers each keeps its own buckets (a client may get up to
``workers`` times the rate); a shared limit belongs in the reverse proxy.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

from fastapi import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from assay.service._problems import problem_response

__all__ = ["BodyLimit", "BodyTooLarge", "TokenBuckets"]


class BodyTooLarge(HTTPException):
    """A request body over the limit, found while it was being read."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"the request body is larger than {limit} bytes")


class BodyLimit:
    """Refuse request bodies over ``max_bytes`` with 413 problem details."""

    def __init__(self, app: ASGIApp, *, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.max_bytes:
            response = problem_response(
                413,
                "body_too_large",
                f"the request body is larger than {self.max_bytes} bytes",
                instance=str(scope.get("path", "")),
            )
            await response(scope, receive, send)
            return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise BodyTooLarge(self.max_bytes)
            return message

        await self.app(scope, counted, send)


def _content_length(scope: Scope) -> int | None:
    headers: list[tuple[bytes, bytes]] = scope.get("headers", [])
    for name, value in headers:
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


class TokenBuckets:
    """One token bucket per key: take one token per request, or learn how many
    seconds until the next one is there."""

    def __init__(
        self, *, rate: float, burst: int, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._rate = rate
        self._burst = float(burst)
        self._clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def take(self, key: str) -> int | None:
        """Take a token for ``key``: ``None`` when taken, else the whole seconds to
        wait (for ``Retry-After``)."""
        with self._lock:
            now = self._clock()
            tokens, then = self._buckets.get(key, (self._burst, now))
            tokens = min(self._burst, tokens + (now - then) * self._rate)
            if tokens >= 1.0:
                self._buckets[key] = (tokens - 1.0, now)
                return None
            self._buckets[key] = (tokens, now)
            return max(1, math.ceil((1.0 - tokens) / self._rate))

    def __repr__(self) -> str:
        return f"TokenBuckets(rate={self._rate}, burst={int(self._burst)})"
