"""The ``assay`` command line: the only home of typer and rich in the package.

``assay --version`` is answered before the command line is built (no typer, no rich,
no command module); every other invocation runs :data:`app`, loaded on first use.
"""

import sys
import typing

from assay._lazy import exports as _exports

if typing.TYPE_CHECKING:
    from assay.cli._main import app

__all__ = ["app", "main"]


def main() -> None:
    """Console-script entry point."""
    if sys.argv[1:] == ["--version"]:
        from assay.cli._version import version_line

        print(version_line())
        return
    from assay.cli._main import main as run

    run()


# The typer application is imported from its home when first used (PEP 562).
__getattr__, __dir__ = _exports(__name__, {"app": "assay.cli._main"})
