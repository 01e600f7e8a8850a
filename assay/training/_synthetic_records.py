"""Scenes over JSON API records (orders, shipments, loans, meter readings, payroll),
small tables, HTTP error responses and bookings; see
:mod:`assay.training._synthetic_scenes`.
"""

from __future__ import annotations

import datetime as dt
import random

from assay.training import _synthetic_pools as pool
from assay.training._synthetic_values import (
    TABLES,
    Scene,
    Slot,
    choose_format,
    count_forms,
    date,
    date_forms,
    date_wrongs,
    money_forms,
    money_wrongs,
    near_misses,
    person,
    pick,
    render_record,
    timestamp,
)


def api_record(rng: random.Random) -> Scene:
    """Orders, shipments, loans, meter readings, payroll: one JSON record each."""
    return rng.choice([_order, _shipment, _loan, _meter, _payroll])(rng)


def _order(rng: random.Random) -> Scene:
    oid, cust = f"ORD-{rng.randint(100000, 999999)}", person(rng)
    items, cur = rng.randint(1, 14), rng.choice(pool.CURRENCIES)
    total = round(rng.uniform(9, 4800), 2)
    status, good_st, bad_st = rng.choice(pool.ORDER_STATES)
    eta = date(rng)
    method = rng.choice(["standard", "express", "next-day", "freight", "click-and-collect"])
    record = {
        "order": {
            "id": oid,
            "customer": cust,
            "items": items,
            "total": total,
            "currency": cur,
            "status": status,
            "shipping": {"method": method, "eta": eta.isoformat()},
        }
    }
    prose = (
        f"Order {oid} for {cust}: {items} items, total {total:.2f} {cur}, status {status}, "
        f"{method} shipping, ETA {eta.isoformat()}."
    )
    return Scene(
        domain="orders",
        premise=choose_format(
            rng,
            record,
            prose,
            [
                "order.id",
                "order.customer",
                "order.items",
                "order.total",
                "order.currency",
                "order.status",
                "order.shipping",
            ],
        ),
        slots={
            "oid": Slot(good=[oid, f"order {oid}"]),
            "cust": Slot(good=[cust], bad=[(person(rng), "entity_swap")]),
            "items": Slot(
                good=count_forms(items, "item"),
                bad=[
                    (
                        f"{items + rng.choice([1, 2, -1]) if items > 1 else items + 1} items",
                        "bad_count",
                    )
                ],
            ),
            "total": Slot(good=money_forms(total, cur), bad=money_wrongs(total, cur, rng)),
            "st": Slot(good=good_st, bad=bad_st),
            "eta": Slot(
                good=date_forms(eta), bad=[(d, "date_error") for d in date_wrongs(eta, rng)]
            ),
            "method": Slot(
                good=[method],
                bad=[
                    (
                        rng.choice(
                            [
                                m
                                for m in ("standard", "express", "next-day", "freight")
                                if m != method
                            ]
                        ),
                        "entity_swap",
                    )
                ],
            ),
        },
        templates=[
            "{oid} for {cust} {st}",
            "{cust}'s order of {items} totals {total}",
            "{oid} ({items}, {total}) {st}",
            "{oid} ships by {method} delivery and is expected on {eta}",
            "{cust} ordered {items} for {total}",
        ],
        additions=[
            (", and a refund has been issued", "invented_detail"),
            (
                ", with tracking number "
                f"{rng.choice(['1Z', 'JD', 'TBA'])}{rng.randint(10**8, 10**9)}",
                "invented_identifier",
            ),
        ],
    )


def _shipment(rng: random.Random) -> Scene:
    sid = f"SHP-{rng.randint(10000, 99999)}"
    a, b = pick(rng, pool.CITIES, 2)
    kg = rng.choice([rng.randint(120, 980), rng.randint(1000, 24000)])
    status, good_st, bad_st = rng.choice(pool.SHIP_STATES)
    eta = date(rng)
    pallets = rng.randint(1, 40)
    record = {
        "shipment_id": sid,
        "origin": a,
        "destination": b,
        "weight_kg": kg,
        "pallets": pallets,
        "status": status,
        "eta": eta.isoformat(),
    }
    prose = (
        f"Shipment {sid} ({pallets} pallets, {kg} kg) from {a} to {b} is "
        f"{status.replace('_', ' ')}; ETA {eta.isoformat()}."
    )
    weight_good = [f"{kg:,} kg", f"{kg} kilograms"] + (
        [f"{kg / 1000:g} tonnes"] if kg >= 1000 else []
    )
    return Scene(
        domain="logistics",
        premise=choose_format(rng, record, prose, list(record)),
        slots={
            "sid": Slot(good=[sid, f"shipment {sid}"]),
            "a": Slot(good=[a], bad=[(b, "entity_swap")]),
            "b": Slot(good=[b], bad=[(a, "entity_swap"), (rng.choice(pool.CITIES), "entity_swap")]),
            "kg": Slot(
                good=weight_good,
                bad=[(f"{kg:,} tonnes", "unit_error"), (f"{kg:,} lb", "unit_error")]
                + [(f"{w} kg", "number_swap") for w in near_misses(str(kg), rng)],
            ),
            "st": Slot(good=good_st, bad=bad_st),
            "eta": Slot(
                good=date_forms(eta), bad=[(d, "date_error") for d in date_wrongs(eta, rng)]
            ),
            "pallets": Slot(
                good=count_forms(pallets, "pallet"),
                bad=[(f"{pallets + rng.choice([1, 2, 10])} pallets", "bad_count")],
            ),
        },
        templates=[
            "{sid} from {a} to {b} {st}",
            "the {kg} shipment to {b} is expected on {eta}",
            "{sid}, {pallets} weighing {kg}, {st}",
            "{sid} travels from {a} to {b} and weighs {kg}",
        ],
        additions=[(", and customs clearance is complete", "invented_detail")],
    )


def _loan(rng: random.Random) -> Scene:
    lid, who = f"LN-{rng.randint(100000, 999999)}", person(rng)
    principal, cur = float(rng.randrange(2000, 900000, 500)), rng.choice(pool.CURRENCIES)
    rate = rng.choice([0.035, 0.0425, 0.049, 0.055, 0.061, 0.0675, 0.072, 0.085, 0.0999, 0.12])
    months = rng.choice([12, 24, 36, 48, 60, 84, 120, 240, 360])
    status, good_st, bad_st = rng.choice(pool.LOAN_STATES)
    record = {
        "loan": {
            "id": lid,
            "borrower": who,
            "principal": principal,
            "currency": cur,
            "annual_rate": rate,
            "term_months": months,
            "status": status,
        }
    }
    prose = (
        f"Loan {lid} to {who}: principal {principal:,.2f} {cur} at {rate * 100:g}% a year "
        f"over {months} months; status {status}."
    )
    years = f"{months // 12} years" if months % 12 == 0 else f"{months} months"
    return Scene(
        domain="loans",
        premise=choose_format(
            rng,
            record,
            prose,
            [
                "loan.id",
                "loan.borrower",
                "loan.principal",
                "loan.currency",
                "loan.annual_rate",
                "loan.term_months",
                "loan.status",
            ],
        ),
        slots={
            "lid": Slot(good=[lid, f"loan {lid}"]),
            "who": Slot(good=[who], bad=[(person(rng), "entity_swap")]),
            "p": Slot(good=money_forms(principal, cur), bad=money_wrongs(principal, cur, rng)),
            "rate": Slot(
                good=[
                    f"{rate * 100:g}% a year",
                    f"an annual rate of {rate * 100:g}%",
                    f"{rate * 100:g}% per annum",
                ],
                bad=[
                    (f"{rate * 100:g}% a month", "unit_error"),
                    (f"{rate:g}% a year", "unit_error"),
                    (
                        f"{(rate + rng.choice([0.005, -0.005, 0.01])) * 100:g}% a year",
                        "number_swap",
                    ),
                ],
            ),
            "term": Slot(
                good=[f"{months} months", years],
                bad=[(f"{months} years", "unit_error"), (f"{months + 12} months", "number_swap")],
            ),
            "st": Slot(good=good_st, bad=bad_st),
        },
        templates=[
            "{who} borrowed {p} at {rate} over {term}",
            "{lid} carries {rate} for {term}",
            "{lid} for {p} {st}",
            "{who}'s loan of {p} runs for {term}",
        ],
        additions=[
            (", secured against the borrower's property", "invented_detail"),
            (", with no early-repayment fee", "invented_detail"),
        ],
    )


def _meter(rng: random.Random) -> Scene:
    mid = f"MTR-{rng.randint(1000, 99999)}"
    prev, cons = rng.randint(1000, 90000), rng.randint(40, 4200)
    start = date(rng)
    end = start + dt.timedelta(days=rng.choice([7, 28, 30, 31, 90]))
    unit = rng.choice(["kWh", "m3", "MWh"])
    estimated = rng.random() < 0.35
    record = {
        "meter_id": mid,
        "period": {"from": start.isoformat(), "to": end.isoformat()},
        "previous_reading": prev,
        "current_reading": prev + cons,
        "unit": unit,
        "estimated": estimated,
    }
    prose = (
        f"Meter {mid}, {start.isoformat()} to {end.isoformat()}: reading {prev + cons} {unit} "
        f"(previous {prev} {unit}){', estimated' if estimated else ''}."
    )
    other_unit = {"kWh": "MWh", "MWh": "kWh", "m3": "litres"}[unit]
    return Scene(
        domain="metering",
        premise=choose_format(rng, record, prose, list(record)),
        slots={
            "mid": Slot(good=[mid, f"meter {mid}"]),
            "cons": Slot(
                good=[f"{cons:,} {unit}", f"{cons} {unit}"],
                bad=[
                    (f"{cons:,} {other_unit}", "unit_error"),
                    *[(f"{w} {unit}", "bad_arithmetic") for w in near_misses(str(cons), rng)][:2],
                ],
            ),
            "cur": Slot(
                good=[f"{prev + cons:,} {unit}", f"{prev + cons} {unit}"],
                bad=[(f"{prev:,} {unit}", "entity_swap")],
            ),
            "end": Slot(
                good=date_forms(end), bad=[(d, "date_error") for d in date_wrongs(end, rng)]
            ),
            "est": Slot(
                good=["an estimated" if estimated else "an actual"],
                bad=[("an actual" if estimated else "an estimated", "negation")],
            ),
        },
        templates=[
            "{mid} used {cons} in the period ending {end}",
            "{mid} read {cur} on {end}",
            "consumption on {mid} was {cons} up to {end}",
            "{mid}'s reading of {cur} is {est} reading",
        ],
        additions=[(", which is above the regional average", "invented_detail")],
    )


def _payroll(rng: random.Random) -> Scene:
    emp, cur = person(rng), rng.choice(pool.CURRENCIES)
    gross = round(rng.uniform(1800, 14000), 2)
    tax = round(gross * rng.uniform(0.12, 0.38), 2)
    period = rng.choice(["monthly", "weekly", "biweekly"])
    month = date(rng)
    record = {
        "employee": emp,
        "pay_period": month.strftime("%Y-%m"),
        "frequency": period,
        "gross": gross,
        "deductions": tax,
        "net": round(gross - tax, 2),
        "currency": cur,
    }
    prose = (
        f"Payslip {month.strftime('%Y-%m')} for {emp} ({period}): gross {gross:.2f} {cur}, "
        f"deductions {tax:.2f}, net {gross - tax:.2f} {cur}."
    )
    other_period = {"monthly": "annual", "weekly": "monthly", "biweekly": "weekly"}[period]
    return Scene(
        domain="payroll",
        premise=choose_format(rng, record, prose, list(record)),
        slots={
            "emp": Slot(good=[emp], bad=[(person(rng), "entity_swap")]),
            "gross": Slot(
                good=money_forms(gross, cur),
                bad=[
                    *money_wrongs(gross, cur, rng),
                    (money_forms(gross - tax, cur)[0], "entity_swap"),
                ],
            ),
            "net": Slot(
                good=money_forms(gross - tax, cur),
                bad=[
                    (money_forms(gross, cur)[0], "entity_swap"),
                    *money_wrongs(gross - tax, cur, rng),
                ],
            ),
            "per": Slot(
                good=[
                    period,
                    {"monthly": "per-month", "weekly": "weekly", "biweekly": "fortnightly"}[period],
                ],
                bad=[(other_period, "unit_error")],
            ),
            "month": Slot(
                good=[month.strftime("%B %Y"), month.strftime("%Y-%m")],
                bad=[((month + dt.timedelta(days=31)).strftime("%B %Y"), "date_error")],
            ),
        },
        templates=[
            "{emp}'s {per} gross pay for {month} was {gross}",
            "{emp} took home {net} for {month}",
            "for {month}, {emp} earned {gross} before deductions and {net} after",
            "the {per} payslip of {emp} shows a net pay of {net}",
        ],
        additions=[
            (", including a performance bonus", "invented_detail"),
            (", paid by bank transfer on the 25th", "invented_detail"),
        ],
    )


def table(rng: random.Random) -> Scene:
    kind = rng.choice(TABLES)
    cols, rows = kind(rng)
    target, other = rng.sample(range(len(rows)), 2)
    sep = rng.choice([" | ", ",", "\t", "  "])
    premise = "\n".join(sep.join(str(c) for c in r) for r in [cols, *rows])
    key, val = cols[0], cols[-1]
    name, value, other_name, other_value = (
        rows[target][0],
        rows[target][-1],
        rows[other][0],
        rows[other][-1],
    )
    values = [r[-1] for r in rows]
    is_num = isinstance(value, int | float)
    top = max(rows, key=lambda r: r[-1])[0] if is_num else None
    slots: dict[str, Slot] = {
        "name": Slot(good=[str(name)], bad=[(str(other_name), "entity_swap")]),
        "value": Slot(
            good=[f"{value:,}" if isinstance(value, int) else str(value)],
            bad=[(str(other_value), "entity_swap")]
            + ([(w, "number_swap") for w in near_misses(str(value), rng)][:2] if is_num else []),
        ),
        "n": Slot(good=count_forms(len(rows), "row"), bad=[(f"{len(rows) + 1} rows", "bad_count")]),
    }
    templates = [
        f"the {val} for {{name}} is {{value}}",
        f"{{name}} has a {val} of {{value}}",
        f"{{name}} ({key}) shows {{value}} {val}",
        "the table lists {n}, including {name}",
    ]
    whole: list[tuple[str, str]] = []
    if top is not None:
        slots["top"] = Slot(
            good=[str(top)], bad=[(str(r[0]), "entity_swap") for r in rows if r[0] != top][:2]
        )
        templates.append(f"{{top}} has the highest {val}")
        total = sum(int(v) for v in values)
        slots["sum"] = Slot(
            good=[f"{total:,}", str(total)],
            bad=[(w, "bad_arithmetic") for w in near_misses(str(total), rng)[:2]],
        )
        templates.append(f"the {val} of all {len(rows)} rows adds up to {{sum}}")
        whole.append((f"Every {key} has a {val} above {min(values)}", "overgeneralisation"))
    return Scene(domain="table", premise=premise, slots=slots, templates=templates, whole=whole)


def http_error(rng: random.Random) -> Scene:
    code, reason, phrase = rng.choice(pool.HTTP_ERRORS)
    obj = rng.choice(["order", "user", "invoice", "shipment", "reservation", "package", "account"])
    oid = f"{obj[:3].upper()}-{rng.randint(1000, 99999)}"
    endpoint = f"/{rng.choice(['api', 'v1', 'v2'])}/{obj}s/{oid}"
    premise = rng.choice(
        [
            f"{rng.choice(['GET', 'PUT', 'POST', 'DELETE'])} {endpoint} -> HTTP {code} "
            f'{reason} {{"error": "{phrase}", "id": "{oid}"}}',
            f"HTTP/1.1 {code} {reason}\ncontent-type: "
            f'application/json\n{{"code": {code}, "message": "{phrase}"}}',
            f"{timestamp(rng)} ERROR request to {endpoint} failed: {code} {reason} ({phrase})",
        ]
    )
    named = [f"the {obj} request", f"the call for {oid}" if oid in premise else f"the {obj} call"]
    return Scene(
        domain="http",
        premise=premise,
        slots={
            "code": Slot(
                good=[f"HTTP {code}", f"a {code} error", f"status {code}"],
                bad=[(f"HTTP {code + rng.choice([1, -1, 100])}", "number_swap")],
            ),
            "obj": Slot(good=named if obj in premise else ["the request", "the call"]),
            "fail": Slot(
                good=["failed", "did not succeed", "returned an error"],
                bad=[
                    ("succeeded", "error_as_success"),
                    ("completed successfully", "error_as_success"),
                ],
            ),
        },
        templates=["the request {fail} with {code}", "{obj} {fail} ({code})"],
        additions=[(", and a retry is scheduled", "invented_detail")],
    )


def booking(rng: random.Random) -> Scene:
    who, place = person(rng), rng.choice(pool.VENUES)
    day = date(rng)
    hour = rng.choice([8, 9, 11, 12, 13, 14, 17, 18, 19, 20])
    minute = rng.choice([0, 15, 30, 45])
    guests = rng.randint(1, 14)
    status, good_st, bad_st = rng.choice(pool.BOOKING_STATES)
    hhmm = f"{hour:02d}:{minute:02d}"
    mins = f":{minute:02d}" if minute else ""
    twelve = f"{hour % 12 or 12}{mins} {'a.m.' if hour < 12 else 'p.m.'}"
    wrong_twelve = f"{hour % 12 or 12}{mins} {'p.m.' if hour < 12 else 'a.m.'}"
    premise = rng.choice(
        [
            f"Reservation for {who} at {place}: {day.isoformat()} {hhmm}, party of "
            f"{guests}, status: {status}.",
            render_record(
                {
                    "booking": {
                        "name": who,
                        "venue": place,
                        "date": day.isoformat(),
                        "time": hhmm,
                        "party_size": guests,
                        "status": status,
                    }
                },
                None,
                rng,
            ),
        ]
    )
    return Scene(
        domain="booking",
        premise=premise,
        slots={
            "who": Slot(good=[who], bad=[(person(rng), "entity_swap")]),
            "place": Slot(good=[place]),
            "day": Slot(
                good=date_forms(day), bad=[(d, "date_error") for d in date_wrongs(day, rng)]
            ),
            "time": Slot(
                good=[hhmm, twelve],
                bad=[
                    (wrong_twelve, "unit_error"),
                    (f"{(hour + 1) % 24:02d}:{minute:02d}", "number_swap"),
                ],
            ),
            "n": Slot(
                good=count_forms(guests, "guest"),
                bad=[(f"{guests + rng.choice([1, 2])} guests", "number_swap")],
            ),
            "st": Slot(good=good_st, bad=bad_st),
        },
        templates=[
            "{who}'s table at {place} for {n} on {day} at {time} {st}",
            "{who} booked {place} for {day} at {time}",
            "the reservation at {place} is for {n} at {time}",
            "the {place} booking for {who} {st}",
        ],
        additions=[
            (", with a window seat", "invented_detail"),
            (
                f", confirmation code {rng.choice('ABCDEFGHJK')}{rng.randint(10000, 99999)}",
                "invented_identifier",
            ),
        ],
    )


RECORD_SCENES = (api_record, api_record, table, http_error, booking)
