"""The refund desk's honest sentences, through the gate and the verifier with the
shipped model, on one ``lookup_order`` result: each is answered (the joined
sentence without a comma before "and", the phrasings of its total), and the same
sentence with a wrong date or amount is refused."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from assay import ControlPlane
from assay.verifier import Verifier
from tests.verifier.test_ledger_verifier import handover

ORDER = json.dumps(
    {
        "order_id": "A-1093",
        "status": "delivered",
        "delivered_on": "2025-03-14",
        "customer": {"name": "Lena Park", "email": "lena.park@example.com"},
        "items": [
            {"sku": "MUG-12", "name": "Stoneware mug", "qty": 2, "price": 18.0},
            {"sku": "TEA-500", "name": "Loose-leaf tea, 500 g", "qty": 1, "price": 48.5},
        ],
        "total": 84.5,
        "currency": "USD",
    }
)


@pytest.fixture(scope="module")
def desk_plane(
    tmp_path_factory: pytest.TempPathFactory, verifier: Verifier
) -> Iterator[ControlPlane]:
    url = f"sqlite:///{tmp_path_factory.mktemp('refund')}/desk.db"
    with ControlPlane.open(url, nli=verifier) as cp:
        yield cp


@pytest.fixture
def desk(desk_plane: ControlPlane) -> tuple[ControlPlane, str, str]:
    """A run of its own for each sentence: a wrong sentence refused in a shared run
    would make its honest twin a restatement of an unsupported proposition."""
    run = desk_plane.ledger.start_run()
    order = desk_plane.ledger.append(run, kind="tool_output", source="lookup_order", content=ORDER)
    return desk_plane, run, order.id


def _answered(desk: tuple[ControlPlane, str, str], sentence: str) -> tuple[bool, str]:
    """Whether the gate accepts ``sentence`` and the verifier entails it, and why not."""
    cp, run, order = desk
    submitted = handover(run, (sentence, [order]))
    decision = cp.gate.check(run, submitted)
    if not decision.accepted:
        return False, f"gate: {[e.message for e in decision.errors]}"
    (verdict,) = cp.verifier.verify(run, submitted).verdicts
    return verdict.verdict.label == "entailment", f"{verdict.verdict.check}: {verdict.reason}"


@pytest.mark.parametrize(
    "sentence",
    [
        "Order A-1093 was delivered on 14 March 2025 and its total was $84.50.",
        "Order A-1093 was delivered on 14 March 2025, and its total was $84.50.",
        "Order A-1093 cost $84.50 in total.",
        "The customer paid $84.50 for order A-1093.",
        "Order A-1093, totalling $84.50, was delivered on 14 March 2025.",
        "Order A-1093 came to $84.50.",
        "The total of order A-1093 is 84.50 US dollars.",
    ],
)
def test_an_honest_sentence_about_the_order_is_answered(
    desk: tuple[ControlPlane, str, str], sentence: str
) -> None:
    answered, why = _answered(desk, sentence)
    assert answered, why


@pytest.mark.parametrize(
    "sentence",
    [
        "Order A-1093 was delivered on 15 March 2025 and its total was $84.50.",
        "Order A-1093 was delivered on 14 March 2025 and its total was $48.50.",
        "Order A-1093 cost $94.50 in total.",
        "The customer paid $84.50 for order A-1039.",
        "Order A-1093, totalling $84.50, was delivered on 4 March 2025.",
        "Order A-1093 was delivered on 14 March 2025 and its total was CAD 84.50.",
    ],
)
def test_a_wrong_date_or_amount_is_refused(
    desk: tuple[ControlPlane, str, str], sentence: str
) -> None:
    answered, why = _answered(desk, sentence)
    assert not answered, why
