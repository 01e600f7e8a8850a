"""Deterministic, rule-based agents for the invoice audit: planner, researcher,
analyst, writer. They run offline and exactly the same every time, which is what the
demo and the tests need; ``inject=`` makes the analyst hallucinate on purpose.

The agents see documents only through the bus (``search_documents``,
``read_passage``), cite the ledger ids those calls return, and compute derived
figures with ``compute_overage`` so that every number they state is evidence.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from assay.apps.reference._reading import Cap, Evidence, Findings, Line
from assay.apps.reference._tools import FLAG
from assay.contract import ActionIntent, Claim, ClaimType, Handover, OpenQuestion, Proposition
from assay.fence import compose_answer
from assay.ledger import canonical_json, sha256_hex

if TYPE_CHECKING:
    from assay.contract import Unsupported
    from assay.fence import FenceComponents

BASE_QUERIES = (
    "engagement letter between the parties",
    "invoice line hours rate total",
    "hourly rate capped per hour",
    "time entries line hours in total",
    "rate charged an hour no more than",
    "amendment replaces the engagement letter with effect from",
)


def plan(task: str, feedback: list[dict[str, Any]]) -> list[str]:
    """The planner: base queries, plus one per proposition found Unsupported."""
    queries: list[str] = list(BASE_QUERIES)
    for item in feedback:
        if item.get("kind") == "unsupported":
            queries.append(f"{item['proposition']} {item['missing_evidence']}"[:480])
    return queries


#: The most passages the researcher reads of one document.
MAX_PASSAGES = 200


def research(cp: FenceComponents, run_id: str, corpus: str, queries: list[str]) -> list[Evidence]:
    """The researcher: search, then read, through the bus, every passage of each
    document a search names, in order: a line the searches did not rank must still be
    read, or the audit would give a clean bill for an invoice it did not see whole."""
    seen: dict[tuple[str, int], Evidence] = {}
    documents: list[str] = []
    for query in queries:
        args = {"corpus": corpus, "query": query, "k": 10}
        found = cp.bus.call(
            run_id,
            "search_documents",
            args,
            call_id=f"{run_id}/search/{sha256_hex(query.encode())[:16]}",
        )
        if found.ok:
            documents += [h["document"] for h in found.output["hits"]]
    for document in dict.fromkeys(documents):
        for passage in range(MAX_PASSAGES):
            read = _read(cp, run_id, corpus, document, passage)
            if read is None:
                break
            seen[(document, passage)] = read
    return sorted(seen.values(), key=lambda e: (e.document, e.passage))


def _read(
    cp: FenceComponents, run_id: str, corpus: str, document: str, passage: int
) -> Evidence | None:
    """One passage, exactly; ``None`` past the document's last passage."""
    key = [document, passage]
    # One call id per passage: a passage read again in a later round is the same
    # ledger entry, never a fresh copy posing as new evidence.
    read = cp.bus.call(
        run_id,
        "read_passage",
        {"corpus": corpus, "document": document, "passage": passage},
        call_id=f"{run_id}/read/{sha256_hex(canonical_json(key))[:16]}",
    )
    if not read.ok or read.ledger_id is None:
        return None
    return Evidence(ledger_id=read.ledger_id, document=document, passage=passage, text=read.output)


def research_handover(run_id: str, evidence: list[Evidence]) -> Handover:
    """What the researcher hands on: each passage as a verbatim Quote of its entry."""
    claims = [
        Claim(
            id=f"q{i}",
            type="Quote",
            text=e.text,
            confidence=1.0,
            propositions=[Proposition(id=f"q{i}.p", text=e.text, ledger_ids=[e.ledger_id])],
        )
        for i, e in enumerate(evidence)
    ]
    return Handover(run_id=run_id, from_agent="researcher", status="ok", claims=claims)


def _article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"


def _claim(
    cid: str,
    text: str,
    ledger_ids: list[str],
    kind: ClaimType = "Assertion",
    *,
    pred: str | None = None,
    args: list[str] | None = None,
) -> Claim:
    """One claim with one proposition; ``pred``/``args`` type it, so that the verifier
    checks that every argument stands in one record of the cited evidence."""
    return Claim(
        id=cid,
        type=kind,
        text=text,
        confidence=0.9,  # type: ignore[arg-type]
        propositions=[
            Proposition(id=f"{cid}.p", text=text, pred=pred, args=args, ledger_ids=ledger_ids)
        ],
    )


def analyse(
    cp: FenceComponents, run_id: str, findings: Findings, dropped: dict[str, str]
) -> Handover:
    """The analyst: one claim per fact, computed figures from the bus, a flag intent
    per line above its cap; claims found Unsupported before become open questions, and
    so does every line that could not be read or checked: a clean bill is only ever
    given for lines that were all compared with their caps."""
    work = _Work()
    if findings.invoice and findings.invoice_evidence:
        work.claims.append(
            _claim(
                "invoice",
                f"Invoice {findings.invoice}",
                [findings.invoice_evidence],
                "Quote",
                pred="invoice",
                args=[findings.invoice],
            )
        )
    if not findings.lines:
        work.ask("open.lines", "No invoice line could be read, so no line was checked.")
    for number in sorted(findings.lines):
        _analyse_line(cp, run_id, findings, findings.lines[number], work)
    for number, why in sorted(findings.unread.items()):
        work.ask(f"open.line{number}.unread", why)
    return _settle(run_id, work.claims, work.intents, dropped, work.questions)


@dataclass(kw_only=True)
class _Work:
    """The analyst's hand-over as it is written."""

    claims: list[Claim] = field(default_factory=list[Claim])
    intents: list[ActionIntent] = field(default_factory=list[ActionIntent])
    questions: list[OpenQuestion] = field(default_factory=list[OpenQuestion])

    def ask(self, qid: str, text: str) -> None:
        self.questions.append(OpenQuestion(id=qid, text=text))


def _analyse_line(
    cp: FenceComponents, run_id: str, findings: Findings, line: Line, work: _Work
) -> None:
    number, role, cur = line.number, line.role, line.currency
    work.claims.append(_billed_claim(line))
    if number in findings.entries:
        logged, entries_id = findings.entries[number]
        # The time entries are quoted, not paraphrased: a Quote must match them
        # byte for byte (the gate checks), and a verbatim statement needs no model.
        work.claims.append(_claim(f"line{number}.hours", logged.group(0), [entries_id], "Quote"))
    cap = findings.cap_for(line)
    if isinstance(cap, str):
        work.ask(
            f"open.line{number}.cap",
            f"Line {number} bills a {role}, but {cap}: it was not checked.",
        )
        return
    if cap is None:
        if findings.unplaced:
            shown = "; ".join(sorted({c.sentence or c.amount for c in findings.unplaced}))
            work.ask(
                f"open.line{number}.role",
                f"Line {number} bills a {role}; the letter sets a cap without naming the "
                f"role it holds ({shown[:300]!r}), so the line was not checked.",
            )
            return
        letter_ids = sorted({c.ledger_id for c in findings.caps})
        # Put to the verifier, which finds no cap for the role: the claim comes back
        # Unsupported and the next round asks about it instead.
        work.claims.append(
            _claim(
                f"line{number}.cap",
                f"Line {number}'s rate of {cur} {line.rate}/{_unit(line.per)} is within the "
                f"engagement letter's cap for {role}s.",
                findings.with_title(letter_ids),
            )
        )
        return
    work.claims.append(_cap_claim(f"line{number}.cap", cap, findings))
    if cap.currency != cur:
        work.ask(
            f"open.line{number}.currency",
            f"Line {number} is billed in {cur}, but the engagement letter caps {role}s "
            f"in {cap.currency}: the line was not checked against its cap.",
        )
        return
    _overage(cp, run_id, findings, line, cap, work)


def _unit(per: str) -> str:
    return "h" if per == "hour" else per


def _billed_claim(line: Line) -> Claim:
    """The line, restated in the set phrasing, or quoted where it is written otherwise."""
    number, role, cur = line.number, line.role, line.currency
    if line.text is not None:
        return _claim(f"line{number}.billed", line.text, [line.ledger_id], "Quote")
    return _claim(
        f"line{number}.billed",
        f"Line {number} bills {line.hours} h at {cur} {line.rate}/h for {_article(role)} {role}.",
        [line.ledger_id],
        pred="bills",
        args=[f"Line {number}", f"{line.hours} h", f"{cur} {line.rate}/h", role],
    )


def _cap_claim(cid: str, cap: Cap, findings: Findings) -> Claim:
    """The cap, restated in the letter's set phrasing, or quoted where it is prose."""
    if cap.sentence is not None:
        return _claim(cid, cap.sentence, [cap.ledger_id], "Quote")
    source = "The amended engagement letter" if cap.amended else "The engagement letter"
    return _claim(
        cid,
        f"{source} caps {cap.role}s at {cap.currency} {cap.amount} per hour.",
        findings.with_title([cap.ledger_id]),
        pred="caps",
        args=[f"{cap.role}s", f"{cap.currency} {cap.amount}"],
    )


def _overage(
    cp: FenceComponents, run_id: str, findings: Findings, line: Line, cap: Cap, work: _Work
) -> None:
    """The line against its cap, computed by the bus; a flag intent, in the line's
    currency, when it is above."""
    number, role, cur = line.number, line.role, line.currency
    verdict = cp.bus.call(
        run_id,
        "compute_overage",
        {
            "line": number,
            "hours": float(line.hours),
            "billed_rate": float(line.rate_value),
            "cap_rate": float(cap.value),
            "currency": cur,
            "per": line.per,
        },
    )
    if not verdict.ok or verdict.ledger_id is None:
        work.ask(
            f"open.line{number}.overage",
            f"Line {number} could not be compared with its cap: the computation failed.",
        )
        return
    over = (line.rate_value - cap.value) * Decimal(line.hours)
    # Typed when the line is above its cap: the flag's line and amount are read from
    # this over_cap(line, amount) proposition, as the flag's schema declares.
    typed = {"pred": "over_cap", "args": [f"Line {number}", f"{cur} {over:,.2f}"]}
    work.claims.append(
        _claim(
            f"line{number}.overage",
            verdict.output,
            [verdict.ledger_id],
            **(typed if line.rate_value > cap.value else {}),  # type: ignore[arg-type]
        )
    )
    if line.rate_value <= cap.value:
        return
    if not findings.invoice:
        work.ask(
            f"open.line{number}.flag",
            f"Line {number} is {cur} {over:,.2f} over its cap, but the invoice number "
            "could not be read: it is not flagged.",
        )
        return
    unit = _unit(line.per)
    rate, cap_rate = _plain(line.rate_value), _plain(cap.value)
    work.intents.append(
        ActionIntent(
            id=f"flag{number}",
            tool="flag_invoice_line",
            version=FLAG.version,
            requires_grant=True,
            depends_on=[
                "invoice",
                f"line{number}.billed",
                f"line{number}.cap",
                f"line{number}.overage",
            ],
            args={
                "invoice": findings.invoice,
                "line": number,
                "amount_over_cap": float(round(over, 2)),
                "currency": cur,
                "reason": f"{role} billed at {cur} {rate}/{unit} against a cap of "
                f"{cur} {cap_rate}/{unit}",
            },
        )
    )


def _plain(value: Decimal) -> str:
    """A rate as the reason states it: ``450``, ``412.5``."""
    return f"{value.normalize():f}"


def _settle(
    run_id: str,
    claims: list[Claim],
    intents: list[ActionIntent],
    dropped: dict[str, str],
    asked: list[OpenQuestion],
) -> Handover:
    """Drop what was found Unsupported (never reword it) and ask about it instead."""
    kept = [c for c in claims if c.id not in dropped]
    questions = [
        OpenQuestion(id=f"open.{cid}", text=reason) for cid, reason in sorted(dropped.items())
    ] + asked
    kept_ids = {c.id for c in kept}
    live = [i for i in intents if set(i.depends_on) <= kept_ids]
    return Handover(
        run_id=run_id,
        from_agent="analyst",
        status="ok",
        claims=kept,
        open_questions=questions,
        action_intents=live,
    )


def dropped_claims(feedback: list[dict[str, Any]], previous: Handover | None) -> dict[str, str]:
    """Claim ids the previous round could not support, with the reason: those found
    Unsupported by the verifier, and those the gate rejected (located by the error's
    path into the previous hand-over)."""
    dropped: dict[str, str] = {}
    for item in feedback:
        if item.get("kind") == "unsupported":
            dropped[item["claim_id"]] = f"{item['proposition']} ({item['missing_evidence']})"
            continue
        index = _claim_index(str(item.get("path", "")))
        if previous is not None and index is not None and index < len(previous.claims):
            claim = previous.claims[index]
            dropped.setdefault(claim.id, f"{claim.text} ({item.get('message', '')})")
    return dropped


def _claim_index(path: str) -> int | None:
    match = re.match(r"\$\.claims\[(\d+)\]", path)
    return int(match.group(1)) if match else None


def write(
    claims: Sequence[Claim], unsupported: Sequence[Unsupported], handover: Handover | None
) -> str:
    """The writer: an audit note from verified claims only; the rest is Conjecture.

    "No line is above its cap" is said only when nothing is left open: a line that
    could not be read or checked keeps the note from reading as a clean bill."""
    over = [c for c in claims if c.id.endswith(".overage") and "above the cap" in c.text]
    open_questions = handover is not None and any(
        q.status == "open" for q in handover.open_questions
    )
    if over:
        head = "Lines billed above the engagement letter's caps: " + "; ".join(c.text for c in over)
    elif claims and not unsupported and not open_questions:
        head = "No line is shown to be billed above the engagement letter's caps."
    elif claims:
        head = (
            "No line is shown to be billed above its cap, but not every line could be "
            "checked: see what is not established."
        )
    else:
        head = "No finding could be verified."
    body = compose_answer(claims, unsupported, handover)
    return f"{head}\n{body}"
