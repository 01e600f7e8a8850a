"""The reference application's tools: lexical search and exact passages over the
run's documents, an arithmetic check, and the irreversible ``flag_invoice_line``,
which takes the overage with its currency.

Agents reach these only through the bus, so every passage and every computed figure
they cite is a ``tool_output`` entry in the ledger. Arithmetic is a tool on purpose:
a derived amount (EUR 875.00 over the cap) appears in no document, and a claim may
only cite evidence, so the computation itself must be evidence.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any, cast

from assay.apps.reference._index import Bm25Index
from assay.errors import UsageError
from assay.ledger import canonical_json, sha256_hex
from assay.tool_bus import ToolRegistry, ToolSpec

_PARAGRAPH = re.compile(r"\n\s*\n")
CORPUS_PATTERN = "^crp_[0-9a-f]{16}$"


@dataclass(frozen=True, kw_only=True)
class Passage:
    document: str
    index: int
    text: str


class DocumentStore:
    """Corpora of the runs in this process, split into paragraphs, indexed with BM25."""

    def __init__(self) -> None:
        self._corpora: dict[str, list[Passage]] = {}
        self._indexes: dict[str, Bm25Index] = {}
        self._lock = threading.Lock()

    def add(self, documents: Mapping[str, str]) -> str:
        """Index ``documents`` (name -> text) and return their corpus id; documents
        indexed before are not indexed again."""
        corpus_id = corpus_of(documents)
        with self._lock:
            if corpus_id not in self._corpora:
                passages = [
                    Passage(document=name, index=i, text=part.strip())
                    for name, text in sorted(documents.items())
                    for i, part in enumerate(_PARAGRAPH.split(text))
                    if part.strip()
                ]
                self._corpora[corpus_id] = passages
                self._indexes[corpus_id] = Bm25Index([p.text for p in passages])
        return corpus_id

    def search(self, corpus_id: str, query: str, k: int) -> list[dict[str, Any]]:
        passages = self._passages(corpus_id)
        return [
            {
                "document": passages[i].document,
                "passage": passages[i].index,
                "score": round(score, 4),
                "preview": passages[i].text[:120],
            }
            for i, score in self._indexes[corpus_id].search(query, k)
        ]

    def passage(self, corpus_id: str, document: str, index: int) -> str:
        for passage in self._passages(corpus_id):
            if passage.document == document and passage.index == index:
                return passage.text
        raise LookupError(f"{document} has no passage {index}")

    def _passages(self, corpus_id: str) -> list[Passage]:
        if corpus_id not in self._corpora:
            raise LookupError(f"unknown corpus {corpus_id}: documents are indexed per process")
        return self._corpora[corpus_id]


def corpus_of(documents: Mapping[str, str]) -> str:
    """The corpus id of ``documents``: the same documents always get the same id."""
    if not documents:
        raise UsageError("no documents to audit: pass a mapping of name to text or a folder")
    return "crp_" + sha256_hex(canonical_json(dict(documents)))[:16]


def load_documents(source: object) -> dict[str, str]:
    """Documents from a mapping, or every ``.md``/``.txt`` file of a folder (a path)."""
    if isinstance(source, Mapping):
        items = cast(Mapping[object, object], source)
        bad = [k for k, v in items.items() if not isinstance(k, str) or not isinstance(v, str)]
        if bad:
            raise UsageError(f"documents must map names to text; bad entries: {bad[:3]}")
        if not items:
            raise UsageError("no documents to audit: pass a mapping of name to text or a folder")
        return cast(dict[str, str], dict(items))
    if not isinstance(source, str | Path):
        raise UsageError("documents are a mapping of name to text, or the path of a folder")
    folder = Path(source)
    if not folder.is_dir():
        raise UsageError(f"no such folder of documents: {folder}")
    files = sorted(p for p in folder.iterdir() if p.suffix in (".md", ".txt") and p.is_file())
    docs = {p.name: p.read_text(encoding="utf-8") for p in files if p.name != "task.txt"}
    if not docs:
        raise UsageError(f"{folder} holds no .md or .txt documents")
    return docs


class Outbox:
    """Where ``flag_invoice_line`` writes its flags: one JSON line each (the side
    effect a grant protects; a real deployment would call its billing system)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def write(self, record: Mapping[str, Any]) -> None:
        with self._lock, self.path.open("a", encoding="utf-8") as out:
            out.write(json.dumps(dict(record), sort_keys=True) + "\n")

    def read(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        return [json.loads(line) for line in self.path.read_text().splitlines() if line]


#: An ISO 4217 currency code: what ``compute_overage`` and ``flag_invoice_line`` take.
CURRENCY_PATTERN = "^[A-Z]{3}$"
#: The time a rate is charged by, and how a quantity of it is written.
PER = {"hour": ("h", "h"), "day": ("day", "days")}


def _decimal(value: object) -> Decimal:
    # Through str: 412.5 stays 412.5, never 412.49999...
    return Decimal(str(value))


def _money(value: Decimal, currency: str) -> str:
    return f"{currency} {value:,.2f}"


def _rate(value: Decimal, currency: str, per: str = "hour") -> str:
    return f"{currency} {value.normalize():f}/{PER[per][0]}"


def _time(quantity: Decimal, per: str) -> str:
    """``12.5 h``, ``1 day``, ``1.5 days``."""
    unit = PER[per][1] if per == "hour" or quantity != 1 else per
    return f"{quantity.normalize():f} {unit}"


def compute_overage(args: Mapping[str, Any]) -> str:
    """A sentence stating how far a billed line is above its cap, or that it is within,
    in the line's currency (EUR unless ``currency`` says otherwise) and per the time
    the line is charged by (``per``: ``hour``, the default, or ``day``)."""
    line, hours = args["line"], _decimal(args["hours"])
    billed, cap = _decimal(args["billed_rate"]), _decimal(args["cap_rate"])
    cur, per = str(args.get("currency", "EUR")), str(args.get("per", "hour"))
    head = (
        f"Line {line}: {_time(hours, per)} at {_rate(billed, cur, per)} "
        f"against a cap of {_rate(cap, cur, per)}"
    )
    if billed <= cap:
        return f"{head} is within the cap."
    over = billed - cap
    return (
        f"{head} is {_rate(over, cur, per)} above the cap, "
        f"{_money(over * hours, cur)} over the cap in total."
    )


SEARCH = ToolSpec(
    name="search_documents",
    version="1.0.0",
    side_effect="read_only",
    description="BM25 search over the run's documents; returns passage locations.",
    input_schema={
        "type": "object",
        "additionalProperties": False,
        "required": ["corpus", "query"],
        "properties": {
            "corpus": {"type": "string", "pattern": CORPUS_PATTERN},
            "query": {"type": "string", "minLength": 1, "maxLength": 500},
            "k": {"type": "integer", "minimum": 1, "maximum": 20},
        },
    },
    output_schema={
        "type": "object",
        "required": ["hits"],
        "additionalProperties": False,
        "properties": {
            "hits": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["document", "passage", "score", "preview"],
                    "properties": {
                        "document": {"type": "string"},
                        "passage": {"type": "integer"},
                        "score": {"type": "number"},
                        "preview": {"type": "string"},
                    },
                },
            }
        },
    },
)
READ = ToolSpec(
    name="read_passage",
    version="1.0.0",
    side_effect="read_only",
    description="The exact text of one passage of one of the run's documents.",
    input_schema={
        "type": "object",
        "additionalProperties": False,
        "required": ["corpus", "document", "passage"],
        "properties": {
            "corpus": {"type": "string", "pattern": CORPUS_PATTERN},
            "document": {"type": "string", "minLength": 1},
            "passage": {"type": "integer", "minimum": 0},
        },
    },
    output_schema={"type": "string"},
)
OVERAGE = ToolSpec(
    name="compute_overage",
    # 1.2.0: any ISO 4217 currency; rates per day as well as per hour (``per``).
    version="1.2.0",
    side_effect="read_only",
    description="How far an invoice line's rate (per hour or per day) is above its cap, "
    "as a sentence.",
    input_schema={
        "type": "object",
        "additionalProperties": False,
        "required": ["line", "hours", "billed_rate", "cap_rate"],
        "properties": {
            "line": {"type": "integer", "minimum": 1},
            # The quantity billed: hours, or days where ``per`` is "day".
            "hours": {"type": "number", "exclusiveMinimum": 0},
            "billed_rate": {"type": "number", "exclusiveMinimum": 0},
            "cap_rate": {"type": "number", "exclusiveMinimum": 0},
            "currency": {"type": "string", "pattern": CURRENCY_PATTERN},
            "per": {"enum": list(PER)},
        },
    },
    output_schema={"type": "string"},
)
FLAG = ToolSpec(
    name="flag_invoice_line",
    # 1.2.0: one flag per invoice line, in any run (a repeat is refused as
    # duplicate_effect unless a person's grant supersedes the earlier flag).
    # 1.3.0: each argument declares the proposition slot it comes from.
    # 1.4.0: the amount comes with its currency (ISO 4217), in which it is checked.
    version="1.4.0",
    side_effect="irreversible",
    idempotency_key=("/invoice", "/line"),
    description="Flag an invoice line to the billing partner as billed above its cap.",
    input_schema={
        "type": "object",
        "additionalProperties": False,
        "required": ["invoice", "line", "amount_over_cap", "currency", "reason"],
        "properties": {
            # Each fact the flag states comes from a typed proposition of the claims
            # it rests on (x-assay-role): the invoice of invoice(number), the line and
            # its overage of one over_cap(line, amount); a policy approves nothing else.
            "invoice": {
                "type": "string",
                "pattern": "^INV-[0-9]+$",
                "x-assay-role": {"pred": "invoice", "arg": 0},
            },
            "line": {
                "type": "integer",
                "minimum": 1,
                "x-assay-role": {"pred": "over_cap", "arg": 0},
            },
            # In the currency the call names: the gate accepts the figure only where
            # the over_cap proposition the flag rests on writes it as an amount in
            # that currency (USD 600.00 never stands for 600 in EUR).
            "amount_over_cap": {
                "type": "number",
                "exclusiveMinimum": 0,
                "x-assay-unit": {"argument": "currency"},
                "x-assay-role": {"pred": "over_cap", "arg": 1},
            },
            "currency": {"type": "string", "pattern": CURRENCY_PATTERN},
            # The analyst's wording for the billing partner, not a fact a rule tests.
            "reason": {
                "type": "string",
                "minLength": 1,
                "maxLength": 500,
                "x-assay-grounding": "choice",
            },
        },
    },
    output_schema={
        "type": "object",
        "additionalProperties": False,
        "required": ["flag_id", "invoice", "line", "flagged_at"],
        "properties": {
            "flag_id": {"type": "string"},
            "invoice": {"type": "string"},
            "line": {"type": "integer"},
            "flagged_at": {"type": "string"},
        },
    },
)
TOOLS = (SEARCH, READ, OVERAGE, FLAG)


def register_tools(registry: ToolRegistry, store: DocumentStore, outbox: Outbox) -> None:
    """Register the reference tools with handlers bound to ``store`` and ``outbox``."""

    def search(args: Mapping[str, Any]) -> dict[str, Any]:
        return {"hits": store.search(args["corpus"], args["query"], int(args.get("k", 5)))}

    def read(args: Mapping[str, Any]) -> str:
        return store.passage(args["corpus"], args["document"], int(args["passage"]))

    def flag(args: Mapping[str, Any]) -> dict[str, Any]:
        flag_id = "flag_" + sha256_hex(canonical_json(dict(args)))[:12]
        record = {
            "flag_id": flag_id,
            "invoice": args["invoice"],
            "line": args["line"],
            "flagged_at": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        outbox.write(
            {
                **record,
                "amount_over_cap": args["amount_over_cap"],
                "currency": args["currency"],
                "reason": args["reason"],
            }
        )
        return record

    registry.register(SEARCH, search)
    registry.register(READ, read)
    registry.register(OVERAGE, compute_overage)
    registry.register(FLAG, flag)
