"""Polarity: which negations make two statements about the same thing opposite, and
which only bound, add or require (contract and policy wording), in both directions.

``polarity_conflict`` is what the ledger verifier uses to call a cited sentence the
opposite of a proposition without the model; a wrong answer there is a false
contradiction (honest work refused) or a missed one (a false claim let through).
"""

from __future__ import annotations

import pytest

from assay.verifier import LexicalNLI
from assay.verifier._polarity import (
    negated,
    negation_about_shared_words,
    opposite_polarity,
    polarity_conflict,
)

OPPOSITE = [
    # Plain negation, in either statement.
    (
        "The engagement letter sets no cap on the hourly rate of senior associates.",
        "The engagement letter caps the hourly rate of senior associates.",
    ),
    ("The order is no longer available.", "The order is available."),
    # Contractions and "cannot" negate as "not" does.
    (
        "The March invoice wasn't paid by the customer.",
        "The March invoice was paid by the customer.",
    ),
    (
        "The replica can't reach the primary database.",
        "The replica can reach the primary database.",
    ),
    ("The tenant cannot sublet the flat.", "The tenant can sublet the flat."),
    ("Nothing was shipped from the Leeds depot.", "Something was shipped from the Leeds depot."),
    # A bound is a negation where the other statement is about that comparison.
    (
        "The Supplier's total liability under this Agreement shall not exceed EUR 250,000.",
        "The Supplier's total liability under this Agreement may exceed EUR 250,000.",
    ),
    (
        "Delivery is due no later than 21 days after the order date.",
        "Delivery is due later than 21 days after the order date.",
    ),
    # Without an amount before it, the comparative is the bound's comparison,
    # also where a number stands elsewhere in the sentence.
    (
        "No more than 6 credits graded Pass/Fail may count toward the degree.",
        "More than 6 credits graded Pass/Fail may count toward the degree.",
    ),
    (
        "Refunds are paid no later than 14 days after the return.",
        "For 2 items, refunds are paid later than 14 days after the return.",
    ),
    # A bound without a negation word: going past it at its value is the opposite.
    (
        "The service charge is capped at 12.5% of the annual rent.",
        "The service charge may exceed 12.5% of the annual rent.",
    ),
    (
        "Applicants need at least 40 credits at the 3000 level.",
        "Applicants may have fewer than 40 credits at the 3000 level.",
    ),
    # A negated phrase both write decides nothing: the bound still does.
    (
        "A single trip may last no longer than 21 days without director approval.",
        "A trip may last longer than 21 days without director approval.",
    ),
    (
        "The refund is paid without delay once the goods are back.",
        "The refund is not paid without delay once the goods are back.",
    ),
    # An exclusion negates what it excludes.
    ("Cover for accidental damage is excluded.", "Accidental damage is covered."),
    ("The policy excludes flood damage.", "The policy covers flood damage."),
    # A double negative is a requirement: it contradicts doing without.
    (
        "The Customer may not assign this Agreement without the Supplier's written consent.",
        "The Customer may assign this Agreement without the Supplier's written consent.",
    ),
    # A negation beside a bound still negates.
    (
        "The deployment was not rolled back, and no more than 2 pods restarted.",
        "The deployment was rolled back, and at most 2 pods restarted.",
    ),
]

SAME = [
    # Bounds state limits, as "within", "at most" and "capped at" do.
    (
        "Payment is due no later than 30 days after the invoice date.",
        "Payment is due within 30 days of the invoice date.",
    ),
    (
        "Fees for the engagement are not to exceed EUR 5,000 per month.",
        "Fees for the engagement are capped at EUR 5,000 per month.",
    ),
    (
        "Each claimant may file no more than two appeals in a calendar year.",
        "Each claimant may file at most two appeals in a calendar year.",
    ),
    # "not only" adds.
    (
        "The policy covers not only fire but also flood damage.",
        "The policy covers fire and flood damage.",
    ),
    # A double negative agrees with the requirement it states.
    (
        "The Customer may not assign this Agreement without the Supplier's written consent.",
        "The Customer needs the Supplier's written consent to assign this Agreement.",
    ),
    # Both negated.
    ("The build did not pass on main.", "The build didn't pass on main."),
    # An exclusion said as what is not covered; an exclusion denied.
    ("Cover for accidental damage is excluded.", "Accidental damage is not covered."),
    ("Flood damage is not excluded under section 5.", "Flood damage is covered under section 5."),
    # A bound written two ways.
    (
        "The service charge is capped at 12.5% of the annual rent.",
        "The service charge cannot exceed 12.5% of the annual rent.",
    ),
    (
        "Notice must be given at least six months before the break date.",
        "Notice must be given no less than six months before the break date.",
    ),
    # Going past a cap in fact reports a breach of it; it does not deny it.
    (
        "Partners are capped at EUR 380 per hour.",
        "Line 4 bills a partner at EUR 410 per hour, which exceeds the EUR 380 cap.",
    ),
    # Going past another value than the bound's is no opposite of it.
    ("Fees are capped at EUR 5,000 per month.", "Fees exceed EUR 4,000 per month."),
    # The same negated phrase in both.
    (
        "Hotel costs may not exceed EUR 160 per night without prior approval.",
        "Without prior approval, hotel costs may not exceed EUR 160 per night.",
    ),
    # A comparative after an amount states a difference from the bound, not the
    # bound's own comparison.
    (
        "No more than 6 credits graded Pass/Fail may count toward the degree.",
        "Oskar has 9 pass/fail credits, 3 more than the 6 that can count toward the degree.",
    ),
    (
        "The notice period may be no longer than 90 days.",
        "The notice period of 120 days is thirty days longer than the 90 days allowed.",
    ),
]


@pytest.mark.parametrize(("document", "claim"), OPPOSITE)
def test_opposite_statements_are_found_both_ways(document: str, claim: str) -> None:
    assert polarity_conflict(document, claim) is not None
    assert polarity_conflict(claim, document) is not None


@pytest.mark.parametrize(("document", "claim"), SAME)
def test_bounds_additions_and_requirements_are_not_the_opposite(document: str, claim: str) -> None:
    assert polarity_conflict(document, claim) is None
    assert polarity_conflict(claim, document) is None


@pytest.mark.parametrize(
    ("document", "claim", "opposite"),
    [
        # A negation in another clause of the sentence is not about the claim.
        ("The claim was not paid because the policy had lapsed.", "The policy had lapsed.", False),
        ("The order was not shipped since the card was declined.", "The card was declined.", False),
        # A relative clause after a comma adds a statement of its own.
        (
            "The Tenant may sublet only with the Landlord's prior written consent, "
            "which shall not be unreasonably withheld.",
            "Subletting requires the landlord's prior written consent.",
            False,
        ),
        (
            "The Tenant may sublet only with the Landlord's prior written consent, "
            "which shall not be unreasonably withheld.",
            "The tenant may sublet without the landlord's consent.",
            True,
        ),
        # The clause the claim is about, or the whole sentence it spans.
        ("The claim was not paid because the policy had lapsed.", "The claim was paid.", True),
        (
            "The claim was not paid because the policy had lapsed.",
            "The claim was paid because the policy had lapsed.",
            True,
        ),
    ],
)
def test_polarity_is_read_in_the_clause_the_claim_is_about(
    document: str, claim: str, opposite: bool
) -> None:
    assert (polarity_conflict(document, claim) is not None) is opposite


@pytest.mark.parametrize(
    ("first", "second", "opposite"),
    [
        ("The account is inactive.", "The account is active.", True),
        ("The booking deposit is non-refundable.", "The booking deposit is refundable.", True),
        ("The figures in row 4 are incorrect.", "The figures in row 4 are correct.", True),
        (
            "Units shipped after 3 May are unaffected.",
            "Units shipped after 3 May are not affected.",
            False,
        ),
        (
            "The export is unavailable on the free plan.",
            "The export is not available on the free plan.",
            False,
        ),
        # "in" before a word of four letters is no prefix ("income", "inform").
        ("The income was declared.", "The come was declared.", False),
    ],
)
def test_a_word_negated_by_its_prefix(first: str, second: str, opposite: bool) -> None:
    assert opposite_polarity(first, second) is opposite
    assert opposite_polarity(second, first) is opposite


@pytest.mark.parametrize(
    ("first", "second", "bears"),
    [
        ("Boosters need an appointment.", "Boosters are given without an appointment.", True),
        ("Taxi receipts are still needed.", "Taxi receipts are no longer needed.", True),
        ("The course ends with a written exam.", "There is no written final examination.", True),
        # What the negation denies is not in the other statement.
        ("The room has no whiteboard.", "room: Lovelace", False),
        ("The van is not insured.", "The van was serviced in May.", False),
    ],
)
def test_a_negation_bears_on_a_word_both_write(first: str, second: str, bears: bool) -> None:
    assert negation_about_shared_words(first, second) is bears
    assert negation_about_shared_words(second, first) is bears


def test_a_bound_counts_only_beside_its_own_comparison() -> None:
    bound = "Liability shall not exceed EUR 250,000."
    assert not negated(bound, other="Liability is capped at EUR 250,000.")
    assert negated(bound, other="Liability may exceed EUR 250,000.")
    assert opposite_polarity(bound, "Liability may exceed EUR 250,000.")


def test_the_stand_in_reads_polarity_the_same_way() -> None:
    nli = LexicalNLI()
    document, claim = SAME[0]
    assert nli.check(document, claim).label != "contradiction"
    document, claim = OPPOSITE[6]
    assert nli.check(document, claim).label == "contradiction"
