"""The reviewer pages mark where the evidence states each value of a proposition (the
verifier's span only when it states none), rendered as data."""

from __future__ import annotations

from assay.service._pages import _span, _templates  # pyright: ignore[reportPrivateUsage]

STORED = '{"currency":"USD","order":"D-4410","placed":"2025-03-02","total":29.97}'
TOTAL = "The total of order D-4410 was $29.97."


def _html(statement: str | None) -> str:
    span = _span(STORED, 27, 33, "D-4410", statement)
    return _templates().get_template("_evidence.html").render(span=span)


def test_the_amount_is_marked_not_the_order_id_the_verifier_read() -> None:
    html = _html(TOTAL)
    assert "<mark>29.97</mark>" in html and "<mark>D-4410</mark>" not in html


def test_a_date_is_marked_alone() -> None:
    html = _html("Order D-4410 was placed on 2 March 2025.")
    assert html.count("<mark>") == 1 and "<mark>2025-03-02</mark>" in html


def test_without_a_value_the_verifiers_span_is_marked() -> None:
    assert "<mark>D-4410</mark>" in _html("The order exists.")
    assert "<mark>D-4410</mark>" in _html(None)
