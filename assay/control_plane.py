"""The control plane: one database, one engine, and the components built on them."""

from __future__ import annotations

from types import TracebackType
from typing import Self

from sqlalchemy.engine import Engine

from assay import _db
from assay.errors import ConfigurationError
from assay.ledger import DEFAULT_MAX_CONTENT_BYTES, Ledger


class ControlPlane:
    """Everything a fenced graph needs, bound to one database.

    Open it once per process (it is safe to share between threads) and close it when
    done, or use it as a context manager::

        with ControlPlane.open("sqlite:///./assay.db") as cp:
            run_id = cp.ledger.start_run()
    """

    def __init__(self, engine: Engine, *, url: str, max_content_bytes: int) -> None:
        self.url = url
        self.engine = engine
        self.ledger = Ledger(engine, max_content_bytes=max_content_bytes)

    @classmethod
    def open(
        cls,
        url: str | None = None,
        *,
        migrate: bool = True,
        max_content_bytes: int = DEFAULT_MAX_CONTENT_BYTES,
    ) -> Self:
        """Connect to ``url`` (default ``ASSAY_DATABASE_URL`` or ``sqlite:///./assay.db``).

        With ``migrate`` the schema is brought to the newest revision first; without
        it, a database that is not at that revision is refused with a hint to run
        ``assay db upgrade``.
        """
        resolved = _db.resolve_url(url)
        engine = _db.create_engine(resolved)
        try:
            if migrate:
                _db.upgrade(engine)
            else:
                _require_head(engine)
            return cls(engine, url=resolved, max_content_bytes=max_content_bytes)
        except BaseException:
            engine.dispose()
            raise

    def close(self) -> None:
        """Release every database connection."""
        self.engine.dispose()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ControlPlane(url={self.engine.url.render_as_string(hide_password=True)!r})"


def _require_head(engine: Engine) -> None:
    current, head = _db.current_revision(engine), _db.head_revision()
    if current != head:
        raise ConfigurationError(
            f"the database schema is at {current or 'nothing'}, not {head}: "
            "run `assay db upgrade` or open with migrate=True"
        )
