"""The public names of assay are exactly its ``__all__``, each is documented, and each
has one home: the package that defines it, re-exported by the top-level ``assay``
package only.

``python -m tests.test_exported_members`` lists the names exported from more than one
package.
"""

from __future__ import annotations
import __future__

import importlib
import inspect
import pkgutil
import sys
from collections import defaultdict

import pytest

import assay

PUBLIC_MODULES = [
    "assay",
    "assay.errors",
    "assay.contract",
    "assay.gate",
    "assay.fence",
    "assay.apps.reference",
    "assay.cli",
    "assay.evals",
    "assay.ledger",
    "assay.service",
    "assay.testing",
    "assay.tool_bus",
    "assay.verifier",
]


@pytest.mark.parametrize("module_name", PUBLIC_MODULES)
def test_all_matches_public_names(module_name: str) -> None:
    module = importlib.import_module(module_name)
    exported = set(module.__all__)
    for name in exported:  # a package imports its names when first used (PEP 562)
        getattr(module, name)
    public = {
        name
        for name, value in vars(module).items()
        if not name.startswith("_")
        and not inspect.ismodule(value)
        and not isinstance(value, type(__future__.annotations))
    }
    assert exported - {"__version__"} == public
    assert list(module.__all__) == sorted(module.__all__, key=lambda n: (n.upper() != n, n))


def test_every_exported_class_and_function_has_a_docstring() -> None:
    missing = [
        name
        for name in assay.__all__
        if (inspect.isclass(getattr(assay, name)) or inspect.isfunction(getattr(assay, name)))
        and not (getattr(assay, name).__doc__ or "").strip()
    ]
    assert missing == []


def test_error_tree() -> None:
    assert issubclass(assay.UsageError, assay.AssayError)
    assert issubclass(assay.RunError, assay.AssayError)
    assert issubclass(assay.UnknownRun, assay.LedgerError)
    assert issubclass(assay.UnknownRun, assay.UsageError)
    assert issubclass(assay.LedgerWriteRefused, assay.RunError)
    assert not issubclass(assay.LedgerWriteRefused, assay.UsageError)


# --- one home per name ----------------------------------------------------------------


def public_packages() -> list[str]:
    """Every public module of assay (no component of its name private), ``assay`` first."""
    found = ["assay"]
    for info in pkgutil.walk_packages(assay.__path__, "assay."):
        if info.name.startswith("assay.migrations"):
            continue
        if not any(part.startswith("_") for part in info.name.split(".")):
            found.append(info.name)
    return found


def homes() -> dict[str, list[str]]:
    """Each public name, and the public modules whose ``__all__`` exports it."""
    exported: dict[str, list[str]] = defaultdict(list)
    for name in public_packages():
        module = importlib.import_module(name)
        for public in getattr(module, "__all__", ()):
            exported[public].append(name)
    return dict(exported)


def multiply_exported() -> dict[str, list[str]]:
    """Names exported by more than one public module other than ``assay`` itself."""
    return {
        name: modules
        for name, modules in homes().items()
        if len([m for m in modules if m != "assay"]) > 1
    }


def test_each_public_name_has_one_home() -> None:
    assert multiply_exported() == {}


def test_each_public_class_and_function_has_one_home() -> None:
    """No class or function is exported by two packages, under any name."""
    seen: dict[int, set[str]] = defaultdict(set)
    for name in public_packages()[1:]:
        module = importlib.import_module(name)
        for public in getattr(module, "__all__", ()):
            value = getattr(module, public)
            if inspect.isclass(value) or inspect.isfunction(value):
                seen[id(value)].add(f"{name}.{public}")
    shared = [
        sorted(names) for names in seen.values() if len({n.rsplit(".", 1)[0] for n in names}) > 1
    ]
    assert shared == []


def test_the_top_level_re_exports_each_name_from_its_home() -> None:
    for name in assay.__all__:
        if name == "__version__":
            continue
        others = [m for m in homes()[name] if m != "assay"]
        assert others, f"assay.{name} has no home but the top level"
        home = importlib.import_module(others[0])
        assert getattr(assay, name) is getattr(home, name)


def test_import_assay_fence_is_the_fence_package() -> None:
    module = importlib.import_module("assay.fence")
    assert inspect.ismodule(module) and module.__name__ == "assay.fence"
    import assay.fence

    assert assay.fence is module
    assert callable(assay.fence.fence) and assay.fence.FenceState is module.FenceState
    from assay import fence as named

    assert named is module


if __name__ == "__main__":
    found = multiply_exported()
    print(f"{len(found)} of {len(homes())} public names are exported by more than one package")
    for name, modules in sorted(found.items()):
        print(f"  {name}: {', '.join(modules)}")
    sys.exit(1 if found else 0)
