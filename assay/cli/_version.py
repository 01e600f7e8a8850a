"""What ``assay --version`` prints, read without building the command line."""

from __future__ import annotations

__all__ = ["version_line"]


def version_line() -> str:
    """``assay <version>``, the installed distribution's version (``unknown`` when
    running from a bare checkout)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version("assay")
    except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        found = "unknown"
    return f"assay {found}"
