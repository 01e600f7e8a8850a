"""The identifier extractor on a table of true and false positives, and the matching
rule it shares with the verifier."""

from __future__ import annotations

import itertools
import json

import pytest

from assay import Identifier, extract_identifiers, identifier_in_evidence
from assay.grounding import view_of

SHA = "9fceb02d0ae598e95dc970b74767f19372d61af8"

TRUE_POSITIVES = [
    ("Deployed commit 1a2b3c4 to prod", "hash", "1a2b3c4"),
    ("after the revert of sha 4e5f6a7b the build passed", "hash", "4e5f6a7b"),
    ("the fix is at revision 0c1d2e3f4", "hash", "0c1d2e3f4"),
    ("hash=ab12cd3", "hash", "ab12cd3"),
    ("range a1b2c3d..e4f5a6b", "hash", "a1b2c3d"),
    ("range a1b2c3d..e4f5a6b", "hash", "e4f5a6b"),
    ("pinned to actions/checkout@b4ffde6 now", "hash", "b4ffde6"),
    ("a1b2c3d Fix the parser", "hash", "a1b2c3d"),
    (f"full {SHA}", "hash", SHA),
    ("blob 0123456789ab", "hash", "0123456789ab"),
    ("an unprompted 10-digit run 3f9a1c0b7e", "hash", "3f9a1c0b7e"),
    ("id 123e4567-e89b-12d3-a456-426614174000", "uuid", "123e4567-e89b-12d3-a456-426614174000"),
    ("see https://example.com/a/b?c=1.", "url", "https://example.com/a/b?c=1"),
    ("edit /etc/hosts now", "path", "/etc/hosts"),
    ("in src/app/main.py,", "path", "src/app/main.py"),
    ("run ./scripts/run.sh", "path", "./scripts/run.sh"),
    ("in ~/notes", "path", "~/notes"),
    (r"open C:\Users\dana\report.xlsx", "path", r"C:\Users\dana\report.xlsx"),
    ("closes #123.", "ticket", "#123"),
    ("invoice INV-4421 is late", "ticket", "INV-4421"),
    ("tracked as PROJ-7", "ticket", "PROJ-7"),
    ("CVE-2024-12345 applies", "ticket", "CVE-2024-12345"),
    ("total EUR 1,200.50 due", "amount", "EUR 1,200.50"),
    ("it costs €380.", "amount", "€380"),
    ("it costs 380 EUR.", "amount", "380 EUR"),
    ("refund $5", "amount", "$5"),
    ("due 2024-03-01", "date", "2024-03-01"),
    ("at 2024-03-01T10:15:00Z", "date", "2024-03-01T10:15:00Z"),
    ("signed 3 March 2024", "date", "3 March 2024"),
    ("signed March 3, 2024", "date", "March 3, 2024"),
    ("signed 03/01/2024", "date", "03/01/2024"),
    ("p99 latency 250 ms", "quantity", "250 ms"),
    ("uptime 99.9%", "quantity", "99.9%"),
    ("image is 12.5 GB", "quantity", "12.5 GB"),
    ("retried for 3 days", "quantity", "3 days"),
    ("1/2 of the 3 items", "quantity", "3 items"),  # a count of something is checked too
    ("Eleven groups came", "quantity", "Eleven groups"),
    ("billed EUR 610/h", "amount", "EUR 610/h"),
    ("about 9.8 tonnes of fuel", "quantity", "about 9.8 tonnes"),
    ("closes at 2 p.m. today", "date", "2 p.m."),
    # An e-mail domain is not a hash: the whole address is one identifier.
    ("mail bob@abc1234.com", "email", "bob@abc1234.com"),
    ("cc Ana.Ruiz@mail.eu-west.example.co.uk.", "email", "Ana.Ruiz@mail.eu-west.example.co.uk"),
    ("host 10.0.3.17 is down", "ip", "10.0.3.17"),
    ("gateway 192.168.1.1.", "ip", "192.168.1.1"),
]

FALSE_POSITIVES = [
    "colour #ff00aa and #a1b2c3 and rgba #ff00aa80",
    "color #123456 for the header",
    "version 1.2.3, v2.10.0-rc.1 and 1.0.0+abc1234",
    "error 0x80070005 and E0308 and ERR_CONNECTION_REFUSED and HTTP 404",
    "exit code 1234567 from the job",
    "the facade decade is acceded",
    "UTF-8, SHA-256 and ISO-8601 are standards",
    "read and/or write at 24/7 speeds of km/h",
    "version 10.0.3.256 is not an address",
    "1.234.567.890 is a number",
    "the handle @ana.ruiz and the pair a@b",
    "word deadbeef alone",
    "1/2 of the way, a 3 of them",
    "the 0c1d2e3 string without context",
]


@pytest.mark.parametrize(("text", "kind", "value"), TRUE_POSITIVES)
def test_true_positives(text: str, kind: str, value: str) -> None:
    found = extract_identifiers(text)
    assert (kind, value) in [(i.kind, i.value) for i in found], found
    match = next(i for i in found if i.value == value)
    assert text[match.start : match.end] == value


@pytest.mark.parametrize("text", FALSE_POSITIVES)
def test_false_positives(text: str) -> None:
    assert extract_identifiers(text) == []


def test_identifiers_do_not_overlap_and_keep_order() -> None:
    text = f"see https://git.example/x/commit/{SHA} and commit 1a2b3c4 on 2024-03-01"
    found = extract_identifiers(text)
    assert [i.kind for i in found] == ["url", "hash", "date"]
    assert all(a.end <= b.start for a, b in itertools.pairwise(found))


def test_identifier_is_frozen() -> None:
    ident = extract_identifiers("INV-4421")[0]
    with pytest.raises(AttributeError):
        ident.value = "INV-1"  # type: ignore[misc]


EVIDENCE = (
    f"commit {SHA}\nInvoice INV-4421, total EUR 1.200,50, due 1 March 2024, "
    "p99 250ms, ticket #1234, disk 1,200 GB, sent to ana.ruiz@example.com from 10.0.3.17"
)

MATCHES = [
    ("9fceb02", True),  # a prefix of the full hash
    ("9fceb02d0ae598e95dc970b74767f19372d61af8aa", True),  # an extension of it
    ("9FCEB02D0A", True),  # hex case does not matter
    ("9fceb03", False),
    ("INV-4421", True),
    ("INV-442", False),  # glued to a longer token
    ("#123", False),
    ("#1234", True),
    ("EUR 1,200.50", True),  # unambiguous grouping, both sides
    ("€1200.50", True),
    ("EUR 1,200.51", False),
    ("GBP 1,200.50", False),
    ("2024-03-01", True),  # the written-month date
    ("2024-03-02", False),
    ("250 ms", True),  # spacing between number and unit
    ("250 s", False),
    ("1,200 GB", True),  # verbatim
    ("1200 GB", False),  # 1,200 alone is ambiguous: only its own spelling matches
    ("ana.ruiz@example.com", True),
    ("Ana.Ruiz@Example.COM", True),  # an address is compared without case
    ("bob.ruiz@example.com", False),
    ("ana.ruiz@example.co", False),
    ("10.0.3.17", True),
    ("10.0.3.1", False),  # glued to a longer address
    ("10.0.3.18", False),
]


@pytest.mark.parametrize(("token", "expected"), MATCHES)
def test_identifier_in_evidence(token: str, expected: bool) -> None:
    assert identifier_in_evidence(token, EVIDENCE) is expected


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        ({"linked_pull_requests": [4190]}, True),
        ({"number": 4190, "title": "storage: retry uploads"}, True),
        ({"pull": {"id": "4190"}}, True),
        ({"issue_no": 4190}, True),
        ({"amount": 4190}, False),  # a sum of money is not a number of a record
        ({"number": 41900}, False),
        ({"number": 4190.5}, False),
        ({"notes": "about 4190 of them"}, False),
    ],
)
def test_a_ticket_number_matches_a_json_field_that_numbers_something(
    record: dict[str, object], expected: bool
) -> None:
    """ "#4190" in a claim is the PR a tool returned as ``"linked_pull_requests":
    [4190]``: the evidence view's field line holds exactly its number, under a name
    that says it numbers something."""
    assert identifier_in_evidence("#4190", view_of(json.dumps(record)).text) is expected
    assert not identifier_in_evidence("#4190", "See PR 4190 for details.")


def test_dollar_is_not_assumed_to_be_usd() -> None:
    """``$`` is the sign of several dollars: evidence that says USD supports it, and
    evidence that says nothing, or another currency, does not; a claim's ``USD`` is
    never supported by a bare ``$``."""
    (amount,) = extract_identifiers("paid $40")
    assert identifier_in_evidence(amount, "paid $40 today")
    assert identifier_in_evidence(amount, "paid USD 40 today")
    assert not identifier_in_evidence(amount, "paid 40 today")
    assert not identifier_in_evidence(amount, "paid GBP 40 today")
    (usd,) = extract_identifiers("paid USD 40")
    assert not identifier_in_evidence(usd, "paid $40 today")


def test_an_identifier_object_and_a_string_agree() -> None:
    (ident,) = extract_identifiers("deployed commit 9fceb02")
    assert isinstance(ident, Identifier)
    assert identifier_in_evidence(ident, EVIDENCE) == identifier_in_evidence("9fceb02", EVIDENCE)
