"""Scenes for :mod:`assay.training._synthetic`: one made-up piece of agent evidence,
the claim templates an agent would write about it, and per slot the faithful
renderings and the one-slot edits that break the claim.

A :class:`Scene` keeps the premise short: the record, row, log line or sentences a
claim is checked against, sometimes with a neighbouring row or field as distractor
(the wrong-row and wrong-field edits need one). Invoices, logs, listings, tickets,
e-mails and config here; JSON API records, tables, HTTP errors and bookings in
:mod:`assay.training._synthetic_records`.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Callable

from assay.training import _synthetic_pools as pool
from assay.training._synthetic_records import RECORD_SCENES
from assay.training._synthetic_values import (
    Scene,
    Slot,
    choose_format,
    count_forms,
    date,
    date_forms,
    date_wrongs,
    duration_forms,
    handle,
    money_forms,
    money_wrongs,
    near_misses,
    num,
    person,
    pick,
    render_record,
    timestamp,
)


def invoice_line(rng: random.Random) -> Scene:
    vendor, cur = rng.choice(pool.COMPANIES), rng.choice(pool.CURRENCIES)
    prefix = rng.choice(["INV", "IN", "BILL", "F"])
    inv = f"{prefix}-{rng.randint(2021, 2026)}-{rng.randint(100, 9999):04d}"
    services = pick(rng, pool.SERVICES, 2)
    hours = [rng.choice([0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 6.0, 7.5, 8.0, 12.0]) for _ in range(2)]
    rates = [float(rng.randrange(40, 900, 5)) for _ in range(2)]
    idx = rng.randint(1, 9)
    lines = [
        {"description": s, "hours": h, "rate": f"{cur} {r:.0f}/h", "amount": round(h * r, 2)}
        for s, h, r in zip(services, hours, rates, strict=True)
    ]
    filler = [
        {
            "description": rng.choice(pool.SERVICES),
            "hours": 1.0,
            "rate": f"{cur} {rng.randrange(40, 900, 5)}/h",
        }
        for _ in range(idx)
    ]
    record = {"invoice": inv, "vendor": vendor, "currency": cur, "lines": [*filler, *lines]}
    both = round(hours[0] * rates[0] + hours[1] * rates[1], 2)
    prose = (
        f"Invoice {inv} from {vendor}, line {idx + 1}: {services[0]}, {num(hours[0])} h at "
        f"{cur} {rates[0]:.0f}/h = {cur} {hours[0] * rates[0]:,.2f}. Line {idx + 2}: "
        f"{services[1]}, "
        f"{num(hours[1])} h at {cur} {rates[1]:.0f}/h."
    )
    premise = choose_format(
        rng, record, prose, ["invoice", "vendor", f"lines[{idx}]", f"lines[{idx + 1}]"]
    )
    h = hours[0]
    return Scene(
        domain="invoice",
        premise=premise,
        slots={
            "svc": Slot(good=[services[0]], bad=[(services[1], "entity_swap")]),
            "hours": Slot(
                good=duration_forms(h, "h"),
                bad=[(w, "number_swap") for w in duration_forms(hours[1], "h") if hours[1] != h]
                + [(f"{num(h)} days", "unit_error"), (f"{num(h)} minutes", "unit_error")],
            ),
            "rate": Slot(
                good=[f"{m} per hour" for m in money_forms(rates[0], cur)]
                + [f"{m} an hour" for m in money_forms(rates[0], cur)],
                bad=[(f"{m} per hour", p) for m, p in money_wrongs(rates[0], cur, rng)]
                + [
                    (f"{money_forms(rates[0], cur)[0]} per day", "unit_error"),
                    (f"{money_forms(rates[1], cur)[0]} per hour", "entity_swap"),
                ],
            ),
            "amount": Slot(
                good=money_forms(h * rates[0], cur),
                bad=money_wrongs(h * rates[0], cur, rng),
            ),
            "vendor": Slot(good=[vendor], bad=[(rng.choice(pool.COMPANIES), "entity_swap")]),
            "inv": Slot(
                good=[inv], bad=[(inv[:-1] + str((int(inv[-1]) + 3) % 10), "invented_identifier")]
            ),
            "svc2": Slot(good=[services[1]]),
            "sum": Slot(
                good=money_forms(both, cur),
                bad=[
                    (rng.choice(money_forms(float(w), cur)), "bad_arithmetic")
                    for w in near_misses(f"{both:.2f}", rng)[:2]
                ],
            ),
        },
        templates=[
            "{svc} and {svc2} on invoice {inv} come to {sum} together",
            "{vendor} billed {hours} of {svc} at {rate}",
            "invoice {inv} charges {hours} of {svc} at {rate}",
            "the {svc} line of invoice {inv} comes to {amount}",
            "{vendor}'s invoice {inv} includes {svc}: {hours} at {rate}",
            "{svc} was invoiced at {rate} for {hours}",
            "on invoice {inv}, {svc} totals {amount}",
        ],
        additions=[
            (f", under purchase order PO-{rng.randint(10000, 99999)}", "invented_identifier"),
            (", and the invoice has been paid", "invented_detail"),
            (f", approved by {person(rng)}", "invented_detail"),
        ],
    )


def invoice_status(rng: random.Random) -> Scene:
    vendor, cur = rng.choice(pool.COMPANIES), rng.choice(pool.CURRENCIES)
    inv = f"INV-{rng.randint(10000, 99999)}"
    issued = date(rng)
    due = issued + dt.timedelta(days=rng.choice([14, 30, 45, 60]))
    total = round(rng.uniform(80, 95000), 2)
    status, good_st, bad_st = rng.choice(pool.PAYMENT_STATES)
    record = {
        "invoice_id": inv,
        "supplier": vendor,
        "issue_date": issued.isoformat(),
        "due_date": due.isoformat(),
        "total": {"amount": total, "currency": cur},
        "status": status,
    }
    prose = (
        f"Invoice {inv} ({vendor}) was issued on {issued.isoformat()}, is due on "
        f"{due.isoformat()} and totals {total:,.2f} {cur}. Status: {status}."
    )
    return Scene(
        domain="invoice",
        premise=choose_format(
            rng, record, prose, ["invoice_id", "supplier", "due_date", "total", "status"]
        ),
        slots={
            "inv": Slot(good=[inv, f"invoice {inv}"]),
            "vendor": Slot(good=[vendor], bad=[(rng.choice(pool.COMPANIES), "entity_swap")]),
            "due": Slot(
                good=date_forms(due),
                bad=[(d, "date_error") for d in date_wrongs(due, rng)]
                + [(date_forms(issued)[0], "entity_swap")],
            ),
            "issued": Slot(
                good=date_forms(issued),
                bad=[(date_forms(due)[0], "entity_swap")]
                + [(d, "date_error") for d in date_wrongs(issued, rng)],
            ),
            "total": Slot(good=money_forms(total, cur), bad=money_wrongs(total, cur, rng)),
            "st": Slot(good=good_st, bad=bad_st),
            "days": Slot(
                good=[f"{(due - issued).days} days", f"{(due - issued).days}-day"],
                bad=[
                    (f"{(due - issued).days + rng.choice([-2, -1, 1, 7])} days", "bad_arithmetic")
                ],
            ),
        },
        templates=[
            "{inv} from {vendor} was due {days} after it was issued",
            "{vendor}'s {inv} for {total} is due on {due}",
            "{inv} from {vendor} {st}",
            "{inv} was issued on {issued} and {st}",
            "the {total} invoice from {vendor} {st}",
            "{inv} ({total}) falls due on {due}",
        ],
        additions=[
            (f", with a {rng.choice([2, 3, 5])}% early-payment discount", "invented_detail")
        ],
    )


def deploy_log(rng: random.Random) -> Scene:
    svc, env = rng.choice(pool.SERVICES_SW), rng.choice(pool.ENVS)
    ver = f"v{rng.randint(0, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 20)}"
    old = f"v{rng.randint(0, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 20)}"
    stamp = timestamp(rng)
    state, good_st, bad_st = rng.choice(pool.DEPLOY_STATES)
    replicas = rng.randint(2, 24)
    ready = replicas if state == "succeeded" else rng.randint(0, replicas - 1)
    tool = rng.choice(["deployctl", "argo", "helm", "kubectl rollout", "spinnaker", "flux"])
    premise = rng.choice(
        [
            f"{stamp} [{tool}] rollout {svc} {old} -> {ver} env={env} status={state} "
            f"ready={ready}/{replicas}",
            f"{stamp} INFO {tool}: {svc}@{ver} to {env}: {state} ({ready}/{replicas} "
            f"replicas ready, previous {old})",
            f"Deployment of {svc} {ver} to {env}: {state}. Replicas ready: {ready} of "
            f"{replicas}. Previous version: {old}.",
        ]
    )
    return Scene(
        domain="deploy",
        premise=premise,
        slots={
            "svc": Slot(good=[svc, f"the {svc} service"]),
            "ver": Slot(
                good=[ver, ver.lstrip("v"), f"version {ver.lstrip('v')}"],
                bad=[
                    (old, "entity_swap"),
                    *[(f"v{w}", "number_swap") for w in near_misses(ver.lstrip("v"), rng)][:2],
                ],
            ),
            "env": Slot(
                good=[env], bad=[(rng.choice([e for e in pool.ENVS if e != env]), "entity_swap")]
            ),
            "st": Slot(good=good_st, bad=bad_st),
            "ready": Slot(
                good=[f"{ready} of {replicas} replicas", f"{ready}/{replicas} replicas"],
                bad=[(f"{replicas} of {replicas} replicas", "number_swap")]
                if ready != replicas
                else [(f"{replicas - 1} of {replicas} replicas", "number_swap")],
            ),
        },
        templates=[
            "the rollout of {svc} {ver} to {env} {st}",
            "{svc} {ver} {st} in {env}",
            "in {env}, the deployment of {svc} {ver} {st}, with {ready} ready",
            "{ready} are ready for {svc} {ver} in {env}",
        ],
        additions=[
            (", and the previous version was rolled back", "invented_detail"),
            (f" after a canary at {rng.choice([5, 10, 20, 25])}%", "invented_detail"),
        ],
    )


def test_log(rng: random.Random) -> Scene:
    passed, failed, skipped = (
        rng.randint(12, 2400),
        rng.choice([0, 0, 1, 2, 3, 7, 12]),
        rng.randint(0, 40),
    )
    secs = round(rng.uniform(3, 900), 2)
    job = rng.choice(pool.CI_JOBS)
    branch = rng.choice(
        [
            "main",
            "release/2.4",
            "develop",
            f"feature/{rng.choice(pool.WORDS)}-{rng.randint(10, 999)}",
        ]
    )
    runner = rng.choice(["pytest", "jest", "go test", "cargo test", "mvn test", "rspec"])
    verdict = "FAILED" if failed else "PASSED"
    premise = rng.choice(
        [
            f"[{job}] {runner} on {branch}: {passed} passed, {failed} failed, {skipped} "
            f"skipped in {secs}s -- {verdict}",
            f"{job} ({branch}) finished: {verdict}. Tests: {passed} passed, {failed} "
            f"failed, {skipped} skipped. Duration {secs}s.",
        ]
    )
    total = passed + failed + skipped
    slots = {
        "job": Slot(good=[job, f"the {job} job"]),
        "branch": Slot(good=[branch, f"the {branch} branch"]),
        "passed": Slot(
            good=[f"{passed:,} tests passed", f"{passed} tests passed"],
            bad=[(f"{w} tests passed", "number_swap") for w in near_misses(str(passed), rng)],
        ),
        "failed": Slot(
            good=[
                f"{failed} failed" if failed else "none failed",
                f"{failed} failures" if failed else "no failures",
            ],
            bad=[("none failed", "error_as_success")]
            if failed
            else [(f"{rng.randint(1, 4)} failed", "number_swap")],
        ),
        "secs": Slot(good=duration_forms(secs, "s"), bad=[(f"{num(secs)} minutes", "unit_error")]),
        "total": Slot(
            good=[f"{total:,} tests", f"{total} tests in total"],
            bad=[(f"{total + rng.choice([-3, 2, 10])} tests", "bad_count")],
        ),
    }
    whole = (
        [
            (f"All tests passed on {branch}", "error_as_success"),
            (f"The {job} run on {branch} succeeded", "error_as_success"),
        ]
        if failed
        else [(f"The {job} run on {branch} failed", "negation")]
    )
    return Scene(
        domain="ci",
        premise=premise,
        slots=slots,
        templates=[
            "on {branch}, {passed} and {failed}",
            "{job} ran {total} on {branch} and {failed}",
            "{job}: {passed}, {failed}, in {secs}",
            "the {job} suite took {secs}",
        ],
        whole=whole,
        additions=[(f", and coverage reached {rng.randint(60, 95)}%", "invented_detail")],
    )


def file_listing(rng: random.Random) -> Scene:
    rows = []
    for _ in range(rng.randint(2, 3)):
        name = f"{rng.choice(pool.DIRS)}/{rng.choice(pool.FILES)}"
        size = rng.randint(120, 9_800_000)
        rows.append((rng.choice(["-rw-r--r--", "-rwxr-xr-x", "-rw-------"]), name, size, date(rng)))
    perm, name, size, when = rows[0]
    other = rows[1]
    premise = "\n".join(
        f"{p} 1 {rng.choice(['app', 'deploy', 'root'])} staff {s:>9} {d.isoformat()} {n}"
        for p, n, s, d in rows
    )
    kb = size / 1024
    exe = "x" in perm
    biggest = max(rows, key=lambda r: r[2])[1]
    return Scene(
        domain="files",
        premise=premise,
        slots={
            "name": Slot(good=[name, name.rsplit("/", 1)[-1]], bad=[(other[1], "entity_swap")]),
            "size": Slot(
                good=[f"{size:,} bytes", f"{size} bytes"]
                + ([f"about {kb:.0f} KB"] if kb > 20 else []),
                bad=[(f"{w} bytes", "number_swap") for w in near_misses(str(size), rng)]
                + [(f"{size:,} KB", "unit_error"), (f"{other[2]:,} bytes", "entity_swap")],
            ),
            "when": Slot(
                good=date_forms(when), bad=[(d, "date_error") for d in date_wrongs(when, rng)]
            ),
            "exe": Slot(
                good=["is executable" if exe else "is not executable"],
                bad=[("is not executable" if exe else "is executable", "negation")],
            ),
            "n": Slot(
                good=count_forms(len(rows), "file"),
                bad=[(f"{len(rows) + rng.choice([1, 2])} files", "bad_count")],
            ),
            "big": Slot(
                good=[biggest], bad=[(r[1], "entity_swap") for r in rows if r[1] != biggest]
            ),
        },
        templates=[
            "the listing shows {n}, the largest being {big}",
            "{name} is {size}",
            "{name} was last modified on {when}",
            "{name}, {size}, was modified on {when}",
            "the listing shows {name} at {size}",
            "{name} {exe}",
        ],
        additions=[
            (f", and {rng.choice(pool.FILES)} is also in that directory", "invented_detail")
        ],
    )


def ticket(rng: random.Random) -> Scene:
    tid = f"{rng.choice(['#', 'PROJ-', 'OPS-', 'SUP-', 'BUG-'])}{rng.randint(100, 99999)}"
    title = rng.choice(pool.ISSUES)
    assignee, reporter = handle(rng), handle(rng)
    status, good_st, bad_st = rng.choice(pool.TICKET_STATES)
    prio = rng.choice(["P1", "P2", "P3", "P4"])
    opened = date(rng)
    premise = rng.choice(
        [
            f"{tid} [{status}] {title} | assignee: {assignee} | reporter: {reporter} | "
            f"priority: {prio} | opened {opened.isoformat()}",
            render_record(
                {
                    "key": tid,
                    "title": title,
                    "status": status,
                    "assignee": assignee,
                    "reporter": reporter,
                    "priority": prio,
                    "created": opened.isoformat(),
                },
                None,
                rng,
            ),
        ]
    )
    other_prio = rng.choice([p for p in ("P1", "P2", "P3", "P4") if p != prio])
    return Scene(
        domain="tickets",
        premise=premise,
        slots={
            "tid": Slot(good=[tid, f"ticket {tid}"]),
            "title": Slot(good=[f'"{title}"', title]),
            "asg": Slot(good=[assignee], bad=[(reporter, "entity_swap")]),
            "rep": Slot(good=[reporter], bad=[(assignee, "entity_swap")]),
            "st": Slot(good=good_st, bad=bad_st),
            "prio": Slot(good=[prio, f"priority {prio}"], bad=[(other_prio, "entity_swap")]),
            "opened": Slot(
                good=date_forms(opened), bad=[(d, "date_error") for d in date_wrongs(opened, rng)]
            ),
        },
        templates=[
            "{tid} is assigned to {asg}",
            "{tid} was reported by {rep} and {st}",
            "{tid}, {title}, {st}",
            "{asg} owns the {prio} ticket {tid}",
            "{rep} opened {tid} on {opened}",
        ],
        additions=[
            (f", and a fix is in PR #{rng.randint(100, 9999)}", "invented_identifier"),
            (", and it blocks the next release", "invented_detail"),
        ],
    )


def email(rng: random.Random) -> Scene:
    sender, other = person(rng), person(rng)
    thing = rng.choice(pool.DELIVERABLES)
    day = rng.choice(
        ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "the 14th", "end of month"]
    )
    hedge, certain = rng.choice(pool.HEDGES)
    premise = rng.choice(
        [
            f"From: {sender}\nTo: {other}\n{hedge.capitalize()} {thing} by {day}, but I "
            "still need sign-off from finance.",
            f'{sender} wrote to {other}: "{hedge.capitalize()} {thing} by {day}."',
            f"On the thread, {other} asked about {thing}; {sender} replied that {hedge} "
            f"{thing} by {day}.",
        ]
    )
    return Scene(
        domain="email",
        premise=premise,
        slots={
            "who": Slot(good=[sender], bad=[(other, "misattribution")]),
            "will": Slot(good=[certain[0]], bad=[(certain[1], "modality_shift")]),
            "thing": Slot(good=[thing]),
            "day": Slot(
                good=[day],
                bad=[
                    (
                        rng.choice(
                            [d for d in ("Monday", "Tuesday", "Thursday", "next week") if d != day]
                        ),
                        "date_error",
                    )
                ],
            ),
        },
        templates=[
            "{who} said the team {will} {thing} by {day}",
            "according to {who}, the team {will} {thing} by {day}",
        ],
        whole=[(f"{sender} confirmed that {thing} is done", "tense_shift")],
    )


def config(rng: random.Random) -> Scene:
    svc = rng.choice(pool.SERVICES_SW)
    ms = rng.choice([250, 500, 1500, 2500, 3000, 5000, 30000, 45000])
    retries = rng.randint(0, 8)
    flag = rng.choice(pool.FLAGS)
    on = rng.random() < 0.5
    style = rng.randrange(3)
    lines = [f"timeout_ms: {ms}", f"max_retries: {retries}", f"{flag}: {str(on).lower()}"]
    if style == 1:
        lines = [
            f"{svc.upper().replace('-', '_')}_TIMEOUT_MS={ms}",
            f"{svc.upper().replace('-', '_')}_MAX_RETRIES={retries}",
            f"{flag.upper()}={'1' if on else '0'}",
        ]
    elif style == 2:
        lines = [
            f'"timeout_ms": {ms},',
            f'"max_retries": {retries},',
            f'"{flag}": {str(on).lower()}',
        ]
    rng.shuffle(lines)
    premise = f"# {svc} config\n" + "\n".join(
        lines[: rng.randint(2, 3)] if rng.random() < 0.3 else lines
    )
    present = {
        "t" if "TIMEOUT" in ln.upper() else "r" if "RETRIES" in ln.upper() else "f"
        for ln in premise.splitlines()[1:]
    }
    slots = {
        "svc": Slot(good=[svc, f"the {svc} service"]),
        "t": Slot(
            good=[*duration_forms(ms / 1000, "s"), f"{ms} ms", f"{ms:,} milliseconds"],
            bad=[
                (f"{ms} seconds", "unit_error"),
                *[(f"{w} ms", "number_swap") for w in near_misses(str(ms), rng)][:2],
            ],
        ),
        "r": Slot(
            good=[
                f"{retries} retries" if retries != 1 else "1 retry",
                f"at most {retries} retries" if retries != 1 else "at most one retry",
            ],
            bad=[(f"{retries + rng.choice([1, 2])} retries", "number_swap")],
        ),
        "f": Slot(
            good=[
                f"{flag} enabled" if on else f"{flag} disabled",
                f"{flag} turned {'on' if on else 'off'}",
            ],
            bad=[(f"{flag} {'disabled' if on else 'enabled'}", "negation")],
        ),
    }
    templates = [
        t
        for t, need in (
            ("{svc} times out after {t}", "t"),
            ("{svc} is configured with {r}", "r"),
            ("{svc} runs with {f}", "f"),
            ("the config of {svc} sets a timeout of {t}", "t"),
        )
        if need in present
    ]
    return Scene(
        domain="config",
        premise=premise,
        slots=slots,
        templates=templates,
        additions=[(" and logs at debug level", "invented_detail")],
    )


SCENES: list[Callable[[random.Random], Scene]] = [
    invoice_line,
    invoice_status,
    deploy_log,
    test_log,
    file_listing,
    ticket,
    email,
    config,
    *RECORD_SCENES,
]
