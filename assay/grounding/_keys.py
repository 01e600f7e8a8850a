"""The unit a field's or a column's name gives its values: ``gross_weight_kg`` is in
kilograms, ``PRICE_GBP`` in pounds, ``temp_c`` in degrees Celsius, ``per_minute`` a
rate per minute, ``hourly_rate`` a price per hour, ``km_driven`` in kilometres.

A name is split into its words (``grossWeightKg`` and ``gross-weight-kg`` alike), and
a word names a unit only where no other reading of it is usual: ``min_order`` is no
number of minutes, ``bar_code`` no pressure and ``day_of_week`` no duration.
"""

from __future__ import annotations

from assay.grounding._units import CURRENCY_CODES, PERIOD_WORDS, period_of

__all__ = ["key_unit"]

#: Key and column-name endings that name a unit (``gross_weight_kg``, ``PRICE_GBP``).
_KEY_UNITS: dict[str, str] = {
    "ms": "millisecond",
    "s": "second",
    "sec": "second",
    "secs": "second",
    "seconds": "second",
    "min": "minute",
    "mins": "minute",
    "minutes": "minute",
    "h": "hour",
    "hours": "hour",
    "days": "day",
    "nights": "night",
    "weeks": "week",
    "months": "month",
    "years": "year",
    "kg": "kilogram",
    "g": "gram",
    "t": "tonne",
    "km": "kilometre",
    "mm": "millimetre",
    "kwh": "kilowatt_hour",
    "wh": "watt_hour",
    "mwh": "megawatt_hour",
    "mv": "millivolt",
    "v": "volt",
    "mb": "megabyte",
    "gb": "gigabyte",
    "mib": "mebibyte",
    "gib": "gibibyte",
    "dbm": "dbm",
    "pa": "pascal",
    "kpa": "kilopascal",
    "bar": "bar",
    "mbar": "millibar",
    "hz": "hertz",
    "w": "watt",
    "kw": "kilowatt",
    "mw": "megawatt",
    "kj": "kilojoule",
    "mg": "milligram",
    "lb": "pound_mass",
    "lbs": "pound_mass",
    "mi": "mile",
    "cm": "centimetre",
    "ma": "milliampere",
    "l": "litre",
    "ml": "millilitre",
    # Every currency code of the registry (``price_eur``, ``revenue_aud``); none is
    # an English word, as ``ALL`` or ``TRY`` would be.
    **{code.lower(): code for code in CURRENCY_CODES},
    "celsius": "degree_celsius",
    "degc": "degree_celsius",
    "fahrenheit": "degree_fahrenheit",
    "degf": "degree_fahrenheit",
}
#: Words of a field that make a last ``c`` or ``f`` a temperature scale
#: (``temp_c``, ``ambient_temperature_f``); alone, ``c`` and ``f`` name nothing.
_TEMPERATURE_KEYS = frozenset({"temp", "temperature", "setpoint", "ambient", "dewpoint"})
_TEMPERATURE_SCALES = {"c": "degree_celsius", "f": "degree_fahrenheit"}
#: Nouns of a price that a period word before them makes a rate (``hourly_rate``).
_PRICE_NOUNS = frozenset({"rate", "rent", "fee", "wage", "salary", "price", "charge", "cost"})


#: Units that name a field's unit from its first part (``km_driven``, ``days_left``):
#: short symbols, currency codes and plurals of time, not words a field may begin
#: with for another reason (``day_of_week``, ``min_order``, ``bar_code``).
_LEADING_UNITS = frozenset(
    k for k in _KEY_UNITS if 2 <= len(k) <= 3 and k not in {"bar", "min", "sec", "ma", "pa"}
) | {
    # A plural of time counts what follows it (``days_taken``, ``hours_worked``);
    # the singular usually names a part of a date (``day_of_week``, ``year_built``).
    p
    for p in ("seconds", "minutes", "hours", "days", "weeks", "months", "years")
    if p in _KEY_UNITS
}


def key_unit(key: str) -> str | None:
    """The unit a field or column name ends with: ``voltage_mv`` → millivolts,
    ``flow_l_per_s`` → litres per second, ``price_gbp`` → GBP, ``rent_monthly`` →
    per month (``/month``), ``requests_per_minute`` and ``per_minute`` → per minute,
    ``fuel_surcharge_pct`` → percent, ``temp_c`` → degrees Celsius, ``km_driven`` →
    kilometres."""
    parts = [p for p in _split_key(key) if p]
    if not parts:
        return None
    if len(parts) >= 2 and parts[-2] == "per":
        return _per(parts)
    last = parts[-1]
    if last in ("pct", "percent"):
        return "percent"
    if last in _TEMPERATURE_SCALES and _TEMPERATURE_KEYS.intersection(parts[:-1]):
        return _TEMPERATURE_SCALES[last]
    if last in PERIOD_WORDS:
        return "/ " + PERIOD_WORDS[last]
    if parts[0] in PERIOD_WORDS and _PRICE_NOUNS.intersection(parts[1:]):
        return _priced(parts)
    if len(parts) == 1:
        return _KEY_UNITS.get(last) if len(last) > 2 else None
    # ``lease_years_remaining``: the last part that names a unit, after the first.
    named = next((_KEY_UNITS[p] for p in reversed(parts[1:]) if p in _KEY_UNITS), None)
    if named is None and parts[0] in _LEADING_UNITS:
        # ``km_driven``, ``kwh_used``, ``eur_total``: a unit's symbol first.
        return _KEY_UNITS[parts[0]]
    return named


def _per(parts: list[str]) -> str | None:
    """``flow_l_per_s``, ``price_eur_per_day``, ``per_minute``: a unit per another."""
    head = _KEY_UNITS.get(parts[-3]) if len(parts) >= 3 else None
    tail = _KEY_UNITS.get(parts[-1])
    if head and tail:
        return f"{head} / {tail}"
    period = period_of(parts[-1])
    if period is None:
        return None
    # ``price_eur_per_day``: an amount per period; ``per_minute``,
    # ``errors_per_hour``: a count of what the field names, per period.
    return f"{head} / {period}" if head is not None else f"/ {period}"


def _priced(parts: list[str]) -> str:
    """``hourly_rate``, ``nightly_rate_cad``, ``monthly_rent``: a price per period (in
    the currency the name writes, else in the one its record states)."""
    code = next((_KEY_UNITS[p] for p in parts[1:] if p.upper() in CURRENCY_CODES), None)
    period = PERIOD_WORDS[parts[0]]
    return f"{code} / {period}" if code else f"/ {period}"


def _split_key(key: str) -> list[str]:
    out: list[str] = []
    word = ""
    for c in key:
        if c.isalnum():
            if c.isupper() and word and word[-1].islower():
                out.append(word.lower())
                word = ""
            word += c
        else:
            if word:
                out.append(word.lower())
            word = ""
    if word:
        out.append(word.lower())
    return out
