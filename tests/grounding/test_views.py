"""Evidence views: JSON read through its decoded leaves, spans mapped back exactly."""

from __future__ import annotations

import json

import pytest

from assay.grounding import view_of

ORDER = {
    "order": "PO-88120",
    "notes": "rush\nsecond line: “quoted”",
    "lines": [
        {"sku": "KX-9", "qty": 12, "price": "GBP 4.10"},
        {"sku": "KX-11", "qty": 3, "price": "GBP 19.00"},
    ],
    "tags": ["urgent", "fragile"],
    "buyer": {"name": "Mirela Okafor", "site": "Leeds"},
}


def _stored_forms() -> list[str]:
    return [
        json.dumps(ORDER, ensure_ascii=False, sort_keys=True, separators=(",", ":")),
        json.dumps(ORDER, ensure_ascii=True, indent=2),
        json.dumps(ORDER, ensure_ascii=False, indent="\t"),
    ]


@pytest.mark.parametrize("stored", _stored_forms())
def test_each_leaf_is_a_path_value_line(stored: str) -> None:
    view = view_of(stored)
    assert view.is_json
    lines = view.text.split("\n")
    assert "order: PO-88120" in lines
    assert "lines[1].sku: KX-11" in lines
    assert "lines[0].qty: 12" in lines
    assert "buyer.name: Mirela Okafor" in lines
    assert "tags[1]: fragile" in lines
    # A newline inside a string is a real newline in the view, not the two characters.
    assert "second line: “quoted”" in lines
    assert "\\n" not in view.text


@pytest.mark.parametrize("stored", _stored_forms())
@pytest.mark.parametrize("needle", ["KX-11", "Mirela Okafor", "12", "second line: “quoted”", "“"])
def test_a_span_in_a_value_maps_to_the_exact_stored_characters(stored: str, needle: str) -> None:
    view = view_of(stored)
    start = view.text.index(needle)
    a, b = view.to_stored(start, start + len(needle))
    assert json.loads(f'"{stored[a:b]}"') == needle or stored[a:b] == needle


def test_a_span_over_a_path_widens_to_the_value_token() -> None:
    stored = json.dumps(ORDER, sort_keys=True, separators=(",", ":"))
    view = view_of(stored)
    start = view.text.index("lines[1].price")
    a, b = view.to_stored(start, start + 5)
    assert stored[a:b] == '"GBP 19.00"'


def test_records_are_innermost_objects_with_their_own_fields_together() -> None:
    view = view_of(json.dumps(ORDER, sort_keys=True))
    records = {name: view.text[a:b] for name, (a, b) in view.records()}
    assert set(records) == {"", "buyer", "lines[0]", "lines[1]"}
    assert "lines[1].qty: 3" in records["lines[1]"]
    assert "KX-9" not in records["lines[1]"]
    # The root record holds its scalars and its list of scalars in one run of lines.
    assert "order: PO-88120" in records[""] and "tags[0]: urgent" in records[""]


def test_sentences_render_one_record_each() -> None:
    view = view_of(json.dumps(ORDER, sort_keys=True))
    sentences = view.sentences()
    assert "lines[0].price: GBP 4.10. lines[0].qty: 12. lines[0].sku: KX-9." in sentences
    assert len(sentences) == len(view.records())


@pytest.mark.parametrize(
    "text",
    [
        "Invoice INV-7 was paid on 2024-03-01.",
        '{"a": 1} and then prose',
        '{"a": [1, 2}',
        "[not json",
        '"just a JSON string"',
        "",
    ],
)
def test_text_that_is_not_one_json_object_or_array_is_viewed_as_it_is(text: str) -> None:
    view = view_of(text)
    assert not view.is_json
    assert view.text == text
    assert view.to_stored(0, len(text)) == (0, len(text))


def test_json_nested_deeper_than_the_limit_is_viewed_as_text() -> None:
    deep = "[" * 200 + "]" * 200
    view = view_of(deep)
    assert not view.is_json and view.text == deep


def test_text_records_are_lines_and_long_lines_are_sentences() -> None:
    text = "GET /v1/orders 200\n\nGET /v1/orders/7 404\n" + " ".join(
        f"Sentence number {i} says something." for i in range(20)
    )
    names = [name for name, _ in view_of(text).records()]
    assert names[:2] == ["line 1", "line 3"]
    assert names[2].startswith("line 4, sentence 1") and len(names) == 22


def test_empty_containers_are_leaves() -> None:
    view = view_of('{"items": [], "meta": {}}')
    assert view.text.split("\n") == ["items: []", "meta: {}"]
