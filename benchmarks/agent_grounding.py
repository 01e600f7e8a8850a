"""Grounding of agent claims, run through ``fence()`` exactly as a user's agent would.

Each item of the agent-grounding set (tool outputs with one claim, half supported,
half not) becomes one fenced run: the agent calls one read-only tool per evidence
entry through the bus, cites every entry, and hands over one ``Assertion`` with one
plain-text proposition (no ``pred``/``args``: most agents will not send them). The
run's status is the outcome: ``answered`` accepts the claim, anything else refuses
it.

Reported: the share of supported claims answered, the share of unsupported claims
not answered, both per phenomenon, and the ROC AUC of the verifier's score (the
first verification's score; a proposition the gate refused scores 0).

    python benchmarks/agent_grounding.py [--data PATH] [--limit N] [--nli standin]

The data set is read from ``../shared/data/agent-grounding-dev`` (or ``--data``);
it is a development set, so its figures are development figures.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from assay import ControlPlane, ToolSpec
from assay.fence import fence
from assay.verifier._pipeline import ACCOUNTED_BAR
from benchmarks._cites import cites_for, derivation_for
from benchmarks._common import write_result

DEFAULT_DATA = (
    Path(__file__).resolve().parents[2]
    / "shared"
    / "data"
    / "agent-grounding-dev"
    / "agent_grounding_dev.jsonl"
)

ANY_OUTPUT: dict[str, Any] = {"type": ["string", "object", "array"]}


def load_items(path: Path, limit: int | None) -> list[dict[str, Any]]:
    items = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return items[:limit] if limit else items


def tool_name(source: str) -> str:
    """A registry name for an evidence source (``loans_api.get_loan`` → ``loans_api-get_loan``)."""
    name = re.sub(r"[^A-Za-z0-9_-]+", "-", source).strip("-") or "source"
    return name[:64]


def register_sources(cp: ControlPlane, items: Sequence[Mapping[str, Any]]) -> None:
    """One read-only tool per distinct source; its handler returns the item's content."""
    for name in sorted({tool_name(e["source"]) for item in items for e in item["evidence"]}):
        cp.registry.register(
            ToolSpec(
                name=name,
                version="1.0.0",
                side_effect="read_only",
                description=f"Evidence source {name}.",
                input_schema={
                    "type": "object",
                    "required": ["content"],
                    "properties": {"content": {}},
                },
                output_schema=ANY_OUTPUT,
            ),
            lambda args: args["content"],
        )


def agent_for(
    cp: ControlPlane, item: Mapping[str, Any], *, cites: bool = False
) -> Callable[[dict[str, Any]], Any]:
    """The agent: one bus call per evidence entry, every entry cited, one proposition;
    with ``cites``, the proposition also points at the fields and sentences that hold
    its values (:func:`benchmarks._cites.cites_for`) and, where it states a computed
    value, writes its derivation (:func:`benchmarks._cites.derivation_for`)."""

    def agent(state: dict[str, Any]) -> dict[str, Any]:
        ids = []
        for entry in item["evidence"]:
            out = cp.bus.call(
                state["run_id"], tool_name(entry["source"]), {"content": entry["content"]}
            )
            if out.ledger_id is not None:
                ids.append(out.ledger_id)
        claim = item["claim"]
        proposition: dict[str, Any] = {"id": "c1.p1", "text": claim, "ledger_ids": ids}
        if cites:
            entries = [(i, cp.ledger.get(i).text) for i in ids]
            written = cites_for(claim, entries)
            derivation = derivation_for(claim, entries, written)
            if written:
                proposition["cites"] = written
            if derivation is not None:
                proposition["derivation"] = derivation
        return {
            "handover": {
                "run_id": state["run_id"],
                "from_agent": "grounding-agent",
                "status": "ok",
                "claims": [
                    {
                        "id": "c1",
                        "type": "Assertion",
                        "text": claim,
                        "confidence": 0.9,
                        "propositions": [proposition],
                    }
                ],
                "action_intents": [],
            }
        }

    return agent


def first_score(cp: ControlPlane, run_id: str) -> tuple[float, str, str, str, Any]:
    """The first verification's score, label, reason, deciding check and, where one
    record accounted for the proposition but the model's doubt kept it out, that
    record and the doubt; a gate refusal scores 0 and is decided by ``gate``."""
    manifest = cp.manifest(run_id)
    if manifest.verdicts:
        body: Any = manifest.verdicts[0].content
        return (
            float(body["score"]),
            str(body["label"]),
            str(body.get("reason", "")),
            str(body.get("check") or "unnamed"),
            body.get("accounted"),
        )
    codes = [code for d in manifest.gate_decisions for code in d.codes]
    return 0.0, "gate", ", ".join(dict.fromkeys(codes)), "gate", None


def roc_auc(scores: Sequence[float], labels: Sequence[bool]) -> float:
    """Probability that a random positive outscores a random negative (ties count half)."""
    pos = [s for s, y in zip(scores, labels, strict=True) if y]
    neg = [s for s, y in zip(scores, labels, strict=True) if not y]
    if not pos or not neg:
        return float("nan")
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def run(
    items: Sequence[Mapping[str, Any]],
    *,
    nli: str,
    cites: bool = False,
    accounted_bar: float | None = None,
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        options: dict[str, Any] = {}
        if nli == "standin":
            from assay.verifier import LexicalNLI

            options["nli"] = LexicalNLI()
        cp = ControlPlane.open(f"sqlite:///{tmp}/grounding.db", **options)
        try:
            if accounted_bar is not None:
                cp.verifier.accounted_bar = accounted_bar
            register_sources(cp, items)
            outcomes: list[dict[str, Any]] = []
            started = time.perf_counter()
            for item in items:
                agent = agent_for(cp, item, cites=cites)
                graph = fence(agent, control_plane=cp, name="agent-grounding")
                result = cp.run(graph, {"task": f"Report on {item['domain']}."})
                score, label, reason, check, accounted = first_score(cp, result.run_id)
                outcomes.append(
                    {
                        "id": item["id"],
                        "label": item["label"],
                        "phenomenon": item["phenomenon"],
                        "domain": item["domain"],
                        "status": result.status,
                        "answered": result.status == "answered",
                        "score": round(score, 4),
                        "verdict": label,
                        "check": check,
                        "reason": reason,
                        "unsupported": [u.missing_evidence for u in result.unsupported][:3],
                        "errors": [str(e.get("message", e))[:300] for e in result.errors][:3],
                        "accounted": accounted,
                    }
                )
            elapsed = time.perf_counter() - started
        finally:
            cp.close()
    return summarise(outcomes, elapsed)


def summarise(outcomes: Sequence[Mapping[str, Any]], elapsed: float) -> dict[str, Any]:
    by_phenomenon: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for o in outcomes:
        by_phenomenon[(o["label"], o["phenomenon"])].append(o)  # type: ignore[index]
    supported = [o for o in outcomes if o["label"] == "supported"]
    unsupported = [o for o in outcomes if o["label"] != "supported"]
    table = [
        {
            "label": label,
            "phenomenon": phenomenon,
            "items": len(group),
            "correct": sum(o["answered"] == (label == "supported") for o in group),
            "rate": round(
                sum(o["answered"] == (label == "supported") for o in group) / len(group), 3
            ),
        }
        for (label, phenomenon), group in sorted(by_phenomenon.items())  # type: ignore[misc]
    ]
    return {
        "items": len(outcomes),
        "supported_answered": _rate([o["answered"] for o in supported]),
        "unsupported_refused": _rate([not o["answered"] for o in unsupported]),
        "halves": _halves(outcomes),
        # Feedback: a supported claim refused as a contradiction sends its author to
        # look for an error that is not there.
        "supported_called_contradicted": _rate(
            [o["verdict"] == "contradiction" for o in supported]
        ),
        "unsupported_called_contradicted": _rate(
            [o["verdict"] == "contradiction" for o in unsupported]
        ),
        "roc_auc": round(
            roc_auc([o["score"] for o in outcomes], [o["label"] == "supported" for o in outcomes]),
            4,
        ),
        "seconds": round(elapsed, 1),
        "per_phenomenon": table,
        "per_check": per_check(outcomes),
        "outcomes": list(outcomes),
    }


def per_check(outcomes: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per check that decided an item's first verdict (``gate`` where the gate
    refused it): how many items it decided, how many it entailed and refused, and
    its precision (an entailment right on a supported item, a refusal on an
    unsupported one)."""
    groups: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for o in outcomes:
        groups[str(o["check"])].append(o)
    rows: list[dict[str, Any]] = []
    for check, group in groups.items():
        entailed = [o for o in group if o["verdict"] == "entailment"]
        refused = [o for o in group if o["verdict"] != "entailment"]
        right = sum(o["label"] == "supported" for o in entailed) + sum(
            o["label"] != "supported" for o in refused
        )
        rows.append(
            {
                "check": check,
                "decided": len(group),
                "entailed": len(entailed),
                "refused": len(refused),
                "precision": round(right / len(group), 3),
            }
        )
    return sorted(rows, key=lambda r: (-r["decided"], r["check"]))


def tuning_domains(outcomes: Sequence[Mapping[str, Any]]) -> set[str]:
    """The tuning half of the domains: in alphabetical order, the 1st, 3rd, ...; the
    others are held out. A change to the verifier is chosen on the tuning half and
    judged on the held-out one."""
    return set(sorted({str(o["domain"]) for o in outcomes})[::2])


def _halves(outcomes: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """The two rates on each half of the domains (:func:`tuning_domains`)."""
    tuning = tuning_domains(outcomes)
    halves: dict[str, dict[str, Any]] = {}
    for name, chosen in (("tuning", True), ("held_out", False)):
        group = [o for o in outcomes if (o["domain"] in tuning) == chosen]
        halves[name] = {
            "domains": sorted({str(o["domain"]) for o in group}),
            "items": len(group),
            "supported_answered": _rate(
                [o["answered"] for o in group if o["label"] == "supported"]
            ),
            "unsupported_refused": _rate(
                [not o["answered"] for o in group if o["label"] != "supported"]
            ),
        }
    return halves


def _rate(values: Sequence[bool]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--nli", choices=["model", "standin"], default="model")
    parser.add_argument("--out", default="agent_grounding", help="result name under results/")
    parser.add_argument(
        "--accounted-bar",
        type=float,
        default=None,
        help="run with this accounted bar instead of the shipped one (to fit it: "
        "benchmarks/fit_accounted_bar.py)",
    )
    parser.add_argument(
        "--cites",
        action="store_true",
        help="run the set twice, plain and with citations, and write both to "
        "results/agent_grounding_cites.json",
    )
    args = parser.parse_args(argv)
    if not args.data.is_file():
        print(f"no data set at {args.data}; pass --data", file=sys.stderr)
        return 2
    if args.cites:
        return _both_modes(args.data, args.limit, args.nli)
    payload = {
        "data": args.data.name,
        "nli": args.nli,
        "accounted_bar": ACCOUNTED_BAR if args.accounted_bar is None else args.accounted_bar,
        **run(load_items(args.data, args.limit), nli=args.nli, accounted_bar=args.accounted_bar),
    }
    write_result(args.out, payload)
    return 0


def _both_modes(data: Path, limit: int | None, nli: str) -> int:
    """Each item plain and with citations; the figures of both, each mode's outcomes."""
    items = load_items(data, limit)
    modes = {name: run(items, nli=nli, cites=name == "cites") for name in ("plain", "cites")}
    write_result(
        "agent_grounding_cites",
        {
            "data": data.name,
            "nli": nli,
            "items": len(items),
            "modes": {
                name: {k: v for k, v in result.items() if k != "outcomes"}
                for name, result in modes.items()
            },
            "outcomes": {name: result["outcomes"] for name, result in modes.items()},
        },
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
