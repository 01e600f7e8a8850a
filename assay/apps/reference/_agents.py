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
from typing import TYPE_CHECKING, Any

from assay.fence import compose_answer
from assay.gate import ActionIntent, Claim, ClaimType, Handover, OpenQuestion, Proposition
from assay.ledger import canonical_json, sha256_hex

if TYPE_CHECKING:
    from assay.fence import FenceComponents
    from assay.verifier import Unsupported

_LINE = re.compile(
    r"Line (?P<line>\d+): (?P<role>[a-z ]+?), (?P<hours>[\d.]+) h at EUR (?P<rate>[\d,]+)/h"
)
_CAP = re.compile(r"hourly rate for (?P<role>[a-z ]+?)s is capped at EUR (?P<cap>[\d,]+) per hour")
_ENTRIES = re.compile(
    r"Line (?P<line>\d+): (?P<role>[a-z ]+?), \d+ entries, (?P<hours>[\d.]+) h in total"
)
_INVOICE = re.compile(r"Invoice (INV-\d+)")

BASE_QUERIES = (
    "engagement letter between the parties",
    "invoice line hours rate total",
    "hourly rate capped per hour",
    "time entries line hours in total",
)


@dataclass(frozen=True, kw_only=True)
class Evidence:
    """A passage an agent read, and the ledger entry that holds its exact text."""

    ledger_id: str
    document: str
    passage: int
    text: str


@dataclass(kw_only=True)
class Findings:
    """What the analyst parsed from the passages, each fact with its evidence."""

    invoice: str | None = None
    invoice_evidence: str | None = None
    lines: dict[int, tuple[re.Match[str], str]] = field(default_factory=dict)
    caps: dict[str, tuple[int, str]] = field(default_factory=dict)
    entries: dict[int, tuple[re.Match[str], str]] = field(default_factory=dict)
    #: document -> ledger id of its title passage ("# Engagement letter: ...").
    titles: dict[str, str] = field(default_factory=dict)
    #: ledger id -> the document the passage came from.
    documents: dict[str, str] = field(default_factory=dict)

    def with_title(self, ledger_ids: list[str]) -> list[str]:
        """The ids plus the title passages of their documents: a claim that names its
        source ("the engagement letter caps ...") must cite what shows the source."""
        titles = {self.titles.get(self.documents.get(i, "")) for i in ledger_ids}
        return [*ledger_ids, *sorted(t for t in titles if t and t not in ledger_ids)]


def plan(task: str, feedback: list[dict[str, Any]]) -> list[str]:
    """The planner: base queries, plus one per proposition found Unsupported."""
    queries: list[str] = list(BASE_QUERIES)
    for item in feedback:
        if item.get("kind") == "unsupported":
            queries.append(f"{item['proposition']} {item['missing_evidence']}"[:480])
    return queries


def research(cp: FenceComponents, run_id: str, corpus: str, queries: list[str]) -> list[Evidence]:
    """The researcher: search, then read every hit exactly, through the bus."""
    seen: dict[tuple[str, int], Evidence] = {}
    for query in queries:
        args = {"corpus": corpus, "query": query, "k": 10}
        found = cp.bus.call(
            run_id,
            "search_documents",
            args,
            call_id=f"{run_id}/search/{sha256_hex(query.encode())[:16]}",
        )
        if not found.ok:
            continue
        for hit in found.output["hits"]:
            key = (hit["document"], hit["passage"])
            if key in seen:
                continue
            # One call id per passage: a passage read again in a later round is the
            # same ledger entry, never a fresh copy posing as new evidence.
            read = cp.bus.call(
                run_id,
                "read_passage",
                {"corpus": corpus, "document": hit["document"], "passage": hit["passage"]},
                call_id=f"{run_id}/read/{sha256_hex(canonical_json(list(key)))[:16]}",
            )
            if read.ok and read.ledger_id is not None:
                seen[key] = Evidence(
                    ledger_id=read.ledger_id,
                    document=hit["document"],
                    passage=hit["passage"],
                    text=read.output,
                )
    return sorted(seen.values(), key=lambda e: (e.document, e.passage))


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


def parse(evidence: list[Evidence]) -> Findings:
    found = Findings()
    for item in evidence:
        found.documents[item.ledger_id] = item.document
        if item.text.lstrip().startswith("# "):
            found.titles.setdefault(item.document, item.ledger_id)
        if (invoice := _INVOICE.search(item.text)) and found.invoice is None:
            found.invoice, found.invoice_evidence = invoice.group(1), item.ledger_id
        if item.document.startswith("time"):
            for m in _ENTRIES.finditer(item.text):
                found.entries[int(m["line"])] = (m, item.ledger_id)
            continue
        for m in _LINE.finditer(item.text):
            found.lines[int(m["line"])] = (m, item.ledger_id)
        for m in _CAP.finditer(item.text):
            found.caps[m["role"]] = (int(m["cap"].replace(",", "")), item.ledger_id)
    return found


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
    per line above its cap; claims found Unsupported before become open questions."""
    claims: list[Claim] = []
    intents: list[ActionIntent] = []
    if findings.invoice and findings.invoice_evidence:
        claims.append(
            _claim("invoice", f"Invoice {findings.invoice}", [findings.invoice_evidence], "Quote")
        )
    for number in sorted(findings.lines):
        line, line_id = findings.lines[number]
        role, hours, rate = line["role"], float(line["hours"]), int(line["rate"].replace(",", ""))
        claims.append(
            _claim(
                f"line{number}.billed",
                f"Line {number} bills {line['hours']} h at EUR {line['rate']}/h for "
                f"{_article(role)} {role}.",
                [line_id],
                pred="bills",
                args=[f"Line {number}", f"{line['hours']} h", f"EUR {line['rate']}/h", role],
            )
        )
        if number in findings.entries:
            logged, entries_id = findings.entries[number]
            # The time entries are quoted, not paraphrased: a Quote must match them
            # byte for byte (the gate checks), and a verbatim statement needs no model.
            claims.append(_claim(f"line{number}.hours", logged.group(0), [entries_id], "Quote"))
        if role not in findings.caps:
            letter_ids = sorted({lid for _, lid in findings.caps.values()})
            claims.append(
                _claim(
                    f"line{number}.cap",
                    f"Line {number}'s rate of EUR {rate}/h is within the engagement letter's cap "
                    f"for {role}s.",
                    findings.with_title(letter_ids),
                )
            )
            continue
        cap, cap_id = findings.caps[role]
        claims.append(
            _claim(
                f"line{number}.cap",
                f"The engagement letter caps {role}s at EUR {cap} per hour.",
                findings.with_title([cap_id]),
                pred="caps",
                args=[f"{role}s", f"EUR {cap}"],
            )
        )
        verdict = cp.bus.call(
            run_id,
            "compute_overage",
            {"line": number, "hours": hours, "billed_rate": rate, "cap_rate": cap},
        )
        if not verdict.ok or verdict.ledger_id is None:
            continue
        claims.append(_claim(f"line{number}.overage", verdict.output, [verdict.ledger_id]))
        if rate > cap and findings.invoice:
            intents.append(
                ActionIntent(
                    id=f"flag{number}",
                    tool="flag_invoice_line",
                    version="1.1.0",
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
                        "amount_over_cap": round((rate - cap) * hours, 2),
                        "reason": f"{role} billed at EUR {rate}/h against a cap of EUR {cap}/h",
                    },
                )
            )
    return _settle(run_id, claims, intents, dropped)


def _settle(
    run_id: str, claims: list[Claim], intents: list[ActionIntent], dropped: dict[str, str]
) -> Handover:
    """Drop what was found Unsupported (never reword it) and ask about it instead."""
    kept = [c for c in claims if c.id not in dropped]
    questions = [
        OpenQuestion(id=f"open.{cid}", text=reason) for cid, reason in sorted(dropped.items())
    ]
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
    """The writer: an audit note from verified claims only; the rest is Conjecture."""
    over = [c for c in claims if c.id.endswith(".overage") and "above the cap" in c.text]
    if over:
        head = "Lines billed above the engagement letter's caps: " + "; ".join(c.text for c in over)
    elif claims:
        head = "No line is shown to be billed above the engagement letter's caps."
    else:
        head = "No finding could be verified."
    body = compose_answer(claims, unsupported, handover)
    return f"{head}\n{body}"
