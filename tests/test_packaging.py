"""The wheel ships every package, the migrations included."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _tree_packages() -> set[str]:
    found = {
        ".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "assay").rglob("__init__.py")
    }
    found |= {
        "assay." + ".".join(p.parent.relative_to(ROOT).parts)
        for p in (ROOT / "migrations").rglob("__init__.py")
    }
    return found


def test_pyproject_lists_every_package() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    listed = set(config["tool"]["setuptools"]["packages"])
    assert listed == _tree_packages()


def test_migrations_are_importable_from_the_package() -> None:
    from importlib.resources import files

    versions = files("assay.migrations") / "versions"
    assert any(p.name.startswith("0001_") for p in versions.iterdir())
    assert (files("assay.migrations") / "env.py").is_file()
