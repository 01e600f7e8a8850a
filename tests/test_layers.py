"""The package's layers point one way, and a package's private modules stay its own.

``lint-imports`` checks the layers contract in pyproject.toml (the order
docs/design.md draws: errors, limits, grounding, the contract and storage, ledger,
tool bus, gate, verifier, fence, control plane, evals, training, service, CLI,
applications). The scan below adds what import-linter does not express: a module may
import a private module (``_name``) only from its own package, and an application
uses public names only, as a user's code would.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "assay"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> list[tuple[int, str, list[str]]]:
    """(line, imported module, imported names) for every absolute import in ``path``."""
    found: list[tuple[int, str, list[str]]] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name, []) for a in node.names]
    return found


def _private_part(module: str) -> int | None:
    """Index of the first private component of a dotted module name, if any."""
    for i, part in enumerate(module.split(".")):
        if part.startswith("_") and not part.startswith("__"):
            return i
    return None


def test_import_linter_layers_contract_holds() -> None:
    lint = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    assert lint is not None, "import-linter is part of the dev extra"
    done = subprocess.run([lint], cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]


def test_private_modules_are_imported_only_inside_their_package() -> None:
    offences: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        here = _module_name(path)
        for line, module, names in _imports(path):
            if not module.startswith("assay."):
                continue
            targets = [module] + [f"{module}.{n}" for n in names if n.startswith("_")]
            for target in targets:
                index = _private_part(target)
                if index is None:
                    continue
                owner = ".".join(target.split(".")[:index])
                if owner not in ("assay",) and not (here == owner or here.startswith(owner + ".")):
                    offences.append(f"{path.relative_to(ROOT)}:{line} imports {target}")
                if owner == "assay" and here.startswith("assay.apps."):
                    offences.append(f"{path.relative_to(ROOT)}:{line} imports {target}")
    assert offences == []


def test_presentation_code_lives_only_in_the_cli() -> None:
    offences = [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if not _module_name(path).startswith("assay.cli")
        for line, module, _ in _imports(path)
        if module.split(".")[0] in ("typer", "rich", "click")
    ]
    assert offences == []
