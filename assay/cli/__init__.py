"""The ``assay`` command line: the only home of typer and rich in the package."""

from assay.cli._main import app, main

__all__ = ["app", "main"]
