"""The verifier's check pipeline: what a deterministic check is and what it finds.

A proposition is read once into a :class:`~assay.verifier.PropositionContext` (its
cited entries, their views and readings, its clauses, its values grounded against
the evidence); then each :class:`Check` of an ordered list is asked in turn whether
it applies and what it finds. The first :class:`Finding` decides the verdict and
names the check in it (``check`` in the verdict's ledger entry); a proposition no
check settles goes to the NLI model, and its verdict names ``model``.

A check declares its own :class:`Example` pairs, a proposition and the evidence it
is read against, each with the label it must find (or ``None``: it must find
nothing); one parameterised test runs every registered check's examples.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from assay.contract import VerdictLabel

if TYPE_CHECKING:
    from assay.verifier._context import PropositionContext

#: The ``check`` of a verdict the NLI model decided.
MODEL_CHECK = "model"
#: The ``check`` of a verdict entailed because one record of the cited evidence
#: accounts for every slot of the proposition and the model reads no confident
#: contradiction (:mod:`assay.verifier._accounted`).
ACCOUNTED_CHECK = "accounted"
#: The bar on the model's contradiction probability under which an accounted
#: proposition is entailed. On propositions one record accounts for, the small
#: model reads a contradiction for honest and false ones alike (p >= 0.9 for most of
#: both on the development set); the conflict checks that run before it are what
#: refuse the false ones. Fitted by ``benchmarks/fit_accounted_bar.py``: the highest
#: bar at which the fence still refuses 0.848 of the unsupported claims of the
#: development set's tuning half (the threshold's floor), then judged on the
#: held-out half (results/accounted_bar.json).
ACCOUNTED_BAR = 0.97


@dataclass(frozen=True, kw_only=True)
class Finding:
    """What one check settled about one proposition.

    ``label`` is the verdict (``missing_evidence`` and ``neutral`` both mean "not
    stated": the first where a value or the evidence itself is absent, the second
    where the evidence is there and says something else); ``ledger_id`` and
    ``span`` point at the stored text that decided (``None`` where nothing does:
    a value found nowhere); ``check`` is the deciding check's id.
    """

    label: VerdictLabel
    reason: str
    check: str
    ledger_id: str | None = None
    span: tuple[int, int] | None = None
    computations: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True, kw_only=True)
class Cite:
    """A citation of an :class:`Example`'s proposition: a ``quote`` of, or a
    ``pointer`` into, its evidence text number ``entry``."""

    entry: int
    quote: str | None = None
    pointer: str | None = None


@dataclass(frozen=True, kw_only=True)
class Example:
    """One case a check must settle as declared: ``finds`` is the label it finds for
    ``proposition`` read against ``evidence`` (one stored text per cited entry), or
    ``None`` where it must find nothing. ``pred``/``args`` make it a typed
    proposition; ``cites`` gives it citations, ``derivation`` an ``(expr, result)``
    over them."""

    proposition: str
    evidence: tuple[str, ...]
    finds: VerdictLabel | None
    pred: str | None = None
    args: tuple[str, ...] | None = None
    cites: tuple[Cite, ...] = ()
    derivation: tuple[str, str] | None = None
    why: str = ""


class Check(Protocol):
    """A deterministic check of the verifier.

    ``id`` names it in verdicts, audits and reports (lower case, underscores);
    :meth:`applies` says whether it has anything to say about this kind of
    proposition (a typed one, one with computed values); :meth:`find` returns the
    finding that settles the proposition, or ``None`` to let the next check (and
    finally the model) decide. A check never calls the model and never writes.
    """

    @property
    def id(self) -> str: ...

    @property
    def examples(self) -> Sequence[Example]: ...

    def applies(self, context: PropositionContext) -> bool: ...

    def find(self, context: PropositionContext) -> Finding | None: ...


@dataclass(frozen=True, kw_only=True)
class CheckSpec:
    """A :class:`Check` written as a function (and, where it does not always apply,
    a condition): what every built-in check is. ``summary`` is the line the
    documentation's check table shows."""

    id: str
    summary: str
    finder: Callable[[PropositionContext], Finding | None] = field(repr=False)
    condition: Callable[[PropositionContext], bool] | None = field(default=None, repr=False)
    examples: Sequence[Example] = ()

    def applies(self, context: PropositionContext) -> bool:
        return True if self.condition is None else self.condition(context)

    def find(self, context: PropositionContext) -> Finding | None:
        return self.finder(context)


def first_finding(checks: Sequence[Check], context: PropositionContext) -> Finding | None:
    """The finding of the first check, in order, that applies and settles."""
    for check in checks:
        if check.applies(context):
            found = check.find(context)
            if found is not None:
                return found
    return None


def insert_check(
    checks: Sequence[Check], check: Check, *, before: str | None = None
) -> tuple[Check, ...]:
    """``checks`` with ``check`` added: before the check with id ``before``, or
    last (after every built-in deterministic check, before the model).

    Raises ``ValueError`` for an id already taken or a ``before`` not present:
    a check that silently never ran, or ran twice, would go unnoticed."""
    ids = [c.id for c in checks]
    if check.id in ids:
        raise ValueError(f"a check with id {check.id!r} is already registered")
    if before is None:
        return (*checks, check)
    if before not in ids:
        raise ValueError(f"no check with id {before!r} to insert before (have {ids})")
    at = ids.index(before)
    return (*checks[:at], check, *checks[at:])
