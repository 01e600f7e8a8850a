"""One exception tree, in one module, all of it exported; data records are not
named like exceptions."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import assay
import assay.errors


def _package_modules() -> list[str]:
    names = ["assay"]
    for info in pkgutil.walk_packages(assay.__path__, "assay."):
        if info.name.startswith(("assay.apps", "assay.training", "assay.migrations")):
            continue  # applications and the training extra are not the library
        names.append(info.name)
    return names


def _classes() -> list[tuple[str, type]]:
    found: dict[str, type] = {}
    for name in _package_modules():
        module = importlib.import_module(name)
        for _, value in inspect.getmembers(module, inspect.isclass):
            if value.__module__.startswith("assay"):
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return sorted(found.items())


#: Exceptions that are HTTP answers inside the service: raised by its routes and
#: middleware and turned into problem details there, they never reach a caller of the
#: library (and the errors module cannot depend on the web framework).
HTTP_ANSWERS = {
    "assay.service._problems.Problem": "a route's problem-details answer",
    "assay.service._guards.BodyTooLarge": "a 413 found while the body is read",
    # Not an HTTP answer: a mistake in a user's test script, raised by the scripted
    # chat model as an AssertionError so that pytest reports it as a failed test.
    "assay.testing._script.ScriptError": "a test's script that cannot go on",
}


def test_every_exception_is_defined_in_assay_errors() -> None:
    # A private exception (``_Raced``) is control flow inside one module; it never
    # reaches a caller, so it is not part of the tree.
    elsewhere = [
        name
        for name, cls in _classes()
        if issubclass(cls, BaseException)
        and cls.__module__ != "assay.errors"
        and not cls.__name__.startswith("_")
        and name not in HTTP_ANSWERS
    ]
    assert elsewhere == []
    found = {name for name, _ in _classes()}
    assert set(HTTP_ANSWERS) <= found  # the list names nothing that is gone


def test_every_exception_is_exported_from_the_package() -> None:
    defined = {
        name
        for name, cls in vars(assay.errors).items()
        if inspect.isclass(cls)
        and issubclass(cls, BaseException)
        and cls.__module__ == "assay.errors"
    }
    assert defined == set(assay.errors.__all__)
    assert defined <= set(assay.__all__)
    assert all(getattr(assay, name) is getattr(assay.errors, name) for name in defined)


def test_every_exception_derives_from_one_root_and_names_its_branch() -> None:
    for name in assay.errors.__all__:
        cls = getattr(assay.errors, name)
        assert issubclass(cls, assay.AssayError), name
        assert name in (assay.errors.__doc__ or ""), f"{name} is not drawn in the tree"
        if cls not in (
            assay.AssayError,
            assay.LedgerError,
            assay.ToolBusError,
            assay.VerifierError,
        ):
            assert issubclass(cls, (assay.UsageError, assay.RunError)), name


def test_no_data_record_is_named_like_an_exception() -> None:
    misnamed = [
        name
        for name, cls in _classes()
        if name.endswith(("Error", "Exception")) and not issubclass(cls, BaseException)
    ]
    assert misnamed == []
