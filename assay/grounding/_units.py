"""Units: the spellings people use, and what each is worth, by ``pint``.

Two quantities are compared by ``pint``'s dimensional analysis over a small
registry of our own (:data:`DEFINITIONS`), not its default one: the default one
reads ``a`` as a year, ``at`` as an atmosphere and ``in`` as an inch, and takes a
second to load. Every factor here is an exact decimal, so ``1500 ms`` is exactly
``1.5 s``, ``2.1 t`` exactly ``2100 kg`` and ``1536 Mi`` exactly ``1.5 GiB``.

Currencies are dimensions of their own, so euros never convert to pounds and a
sum of the two is refused. ``$`` is its own currency, *some* dollar: it is also the
Australian, Canadian and Hong Kong dollar's sign, so evidence's ``$40`` is not ``USD
40``. A claim's ``$`` is read as a reader reads it, as the US dollar: it is stated by
an amount the evidence says is in USD, never by one in Canadian or Australian
dollars, whose honest forms are ``C$``, ``CAD`` or ``Canadian dollars``
(:func:`dollar_like`). Temperatures in
Celsius and Fahrenheit are separate dimensions too: converting them needs an
offset, and a claim that converts one has done arithmetic, not a unit rewrite.

A spelling that is not listed is not a unit: ``m`` (metres, minutes or, in
Kubernetes, thousandths of a CPU) and ``pounds`` (money or mass) stay words, and a
quantity written with one is only ever the same as the same word.

``pint`` is imported, and the registry built (about 20 ms), on the first unit
compared; a text whose numbers carry no unit never loads it.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from typing import Any

__all__ = [
    "CURRENCY_CODES",
    "CURRENCY_SIGNS",
    "DEFINITIONS",
    "DOLLARS",
    "TIME_UNITS",
    "Measure",
    "currency_of",
    "dollar_like",
    "measure",
    "period_of",
    "unit_of",
]

#: The registry: every unit the spellings below name, each factor exact.
DEFINITIONS = """
second = [time] = s
millisecond = second / 1000
microsecond = millisecond / 1000
minute = 60 * second
hour = 60 * minute
day = 24 * hour
week = 7 * day
year = 365.25 * day
month = year / 12
quarter = year / 4
night = [night]
gram = [mass] = g
milligram = gram / 1000
kilogram = 1000 * gram
tonne = 1000 * kilogram
pound_mass = 453.59237 * gram
metre = [length]
millimetre = metre / 1000
centimetre = metre / 100
kilometre = 1000 * metre
mile = 1609.344 * metre
litre = [volume]
millilitre = litre / 1000
joule = [energy]
kilojoule = 1000 * joule
megajoule = 1000 * kilojoule
watt_hour = 3600 * joule
kilowatt_hour = 1000 * watt_hour
megawatt_hour = 1000 * kilowatt_hour
gigawatt_hour = 1000 * megawatt_hour
watt = joule / second
kilowatt = 1000 * watt
megawatt = 1000 * kilowatt
byte = [information]
bit = byte / 8
kilobit = 1000 * bit
megabit = 1000 * kilobit
gigabit = 1000 * megabit
kilobyte = 1000 * byte
megabyte = 1000 * kilobyte
gigabyte = 1000 * megabyte
terabyte = 1000 * gigabyte
kibibyte = 1024 * byte
mebibyte = 1024 * kibibyte
gibibyte = 1024 * mebibyte
tebibyte = 1024 * gibibyte
volt = [voltage]
millivolt = volt / 1000
ampere = [current]
milliampere = ampere / 1000
hertz = 1 / second
kilohertz = 1000 * hertz
megahertz = 1000 * kilohertz
gigahertz = 1000 * megahertz
pascal = [pressure]
kilopascal = 1000 * pascal
bar = 100000 * pascal
millibar = 100 * pascal
degree_celsius = [celsius]
degree_fahrenheit = [fahrenheit]
dbm = [dbm]
request = [request]
EUR = [currency_EUR]
GBP = [currency_GBP]
penny = GBP / 100
USD = [currency_USD]
CAD = [currency_CAD]
AUD = [currency_AUD]
NZD = [currency_NZD]
HKD = [currency_HKD]
SGD = [currency_SGD]
MXN = [currency_MXN]
dollar = [currency_dollar]
CHF = [currency_CHF]
JPY = [currency_JPY]
CNY = [currency_CNY]
yen_or_yuan = [currency_yen]
INR = [currency_INR]
SEK = [currency_SEK]
NOK = [currency_NOK]
DKK = [currency_DKK]
PLN = [currency_PLN]
CZK = [currency_CZK]
"""

#: The registry's units of time.
TIME_UNITS = frozenset(
    {"microsecond", "millisecond", "second", "minute", "hour", "day", "week", "month", "year"}
)
#: Currency signs and the registry currency each stands for.
CURRENCY_SIGNS = {"€": "EUR", "£": "GBP", "$": "dollar", "¥": "yen_or_yuan", "₹": "INR"}
#: The ISO 4217 codes of the currencies the registry holds.
_CODE_LIST = "EUR GBP USD CAD AUD NZD HKD SGD MXN CHF JPY CNY INR SEK NOK DKK PLN CZK"
CURRENCY_CODES = frozenset(_CODE_LIST.split())
_CODES = CURRENCY_CODES
#: The currencies a ``$`` may stand for, where a code beside it says which
#: (``$12 CAD``).
DOLLARS = frozenset({"USD", "CAD", "AUD", "NZD", "HKD", "SGD", "MXN", "dollar"})
_YEN_OR_YUAN = frozenset({"JPY", "CNY", "yen_or_yuan"})
_CURRENCY_WORDS = {"euro": "EUR", "euros": "EUR", "usd": "USD", "eur": "EUR", "gbp": "GBP"}

# Spellings, matched as written first and then lower-cased. Case matters for a few
# (``MB`` and ``mb``, ``Mi``), so the lower-case table holds only the safe ones.
_EXACT: dict[str, str] = {
    "ms": "millisecond",
    "µs": "microsecond",
    "μs": "microsecond",
    "s": "second",
    "h": "hour",
    "d": "day",
    "g": "gram",
    "mg": "milligram",
    "kg": "kilogram",
    # Capitals, as tickets, manifests and baggage allowances print them (``2PC 23KG``).
    "KG": "kilogram",
    "KGS": "kilogram",
    "LB": "pound_mass",
    "LBS": "pound_mass",
    "t": "tonne",
    "mm": "millimetre",
    "cm": "centimetre",
    "km": "kilometre",
    "l": "litre",
    "L": "litre",
    "ml": "millilitre",
    "mL": "millilitre",
    "J": "joule",
    "kJ": "kilojoule",
    "MJ": "megajoule",
    "Wh": "watt_hour",
    "kWh": "kilowatt_hour",
    "MWh": "megawatt_hour",
    "GWh": "gigawatt_hour",
    "W": "watt",
    "kW": "kilowatt",
    "MW": "megawatt",
    "B": "byte",
    "kB": "kilobyte",
    "KB": "kilobyte",
    "MB": "megabyte",
    "GB": "gigabyte",
    "TB": "terabyte",
    "KiB": "kibibyte",
    "MiB": "mebibyte",
    "GiB": "gibibyte",
    "TiB": "tebibyte",
    "Ki": "kibibyte",
    "Mi": "mebibyte",
    "Gi": "gibibyte",
    "Ti": "tebibyte",
    "kbps": "kilobit / second",
    "Kbps": "kilobit / second",
    "Mbps": "megabit / second",
    "Gbps": "gigabit / second",
    "V": "volt",
    "mV": "millivolt",
    "A": "ampere",
    "mA": "milliampere",
    "Hz": "hertz",
    "kHz": "kilohertz",
    "MHz": "megahertz",
    "GHz": "gigahertz",
    "Pa": "pascal",
    "kPa": "kilopascal",
    "bar": "bar",
    "mbar": "millibar",
    "°C": "degree_celsius",
    "ºC": "degree_celsius",
    "C": "degree_celsius",
    "°F": "degree_fahrenheit",
    "ºF": "degree_fahrenheit",
    "dBm": "dbm",
    "p": "penny",
    "rps": "request / second",
    "qps": "request / second",
    "req/s": "request / second",
    "ops/s": "request / second",
}
_WORDS: dict[str, str] = {
    "msec": "millisecond",
    "millisecond": "millisecond",
    "milliseconds": "millisecond",
    "sec": "second",
    "secs": "second",
    "second": "second",
    "seconds": "second",
    "min": "minute",
    "mins": "minute",
    "minute": "minute",
    "minutes": "minute",
    "hr": "hour",
    "hrs": "hour",
    "hour": "hour",
    "hours": "hour",
    "day": "day",
    "days": "day",
    "wk": "week",
    "wks": "week",
    "week": "week",
    "weeks": "week",
    "month": "month",
    "months": "month",
    "yr": "year",
    "yrs": "year",
    "year": "year",
    "years": "year",
    "night": "night",
    "nights": "night",
    "nts": "night",
    "gram": "gram",
    "grams": "gram",
    "kilo": "kilogram",
    "kilos": "kilogram",
    "kilogram": "kilogram",
    "kilograms": "kilogram",
    "tonne": "tonne",
    "tonnes": "tonne",
    "lb": "pound_mass",
    "lbs": "pound_mass",
    "metre": "metre",
    "metres": "metre",
    "meter": "metre",
    "meters": "metre",
    "kilometre": "kilometre",
    "kilometres": "kilometre",
    "kilometer": "kilometre",
    "kilometers": "kilometre",
    "mi": "mile",
    "mile": "mile",
    "miles": "mile",
    "litre": "litre",
    "litres": "litre",
    "liter": "litre",
    "liters": "litre",
    "byte": "byte",
    "bytes": "byte",
    "volt": "volt",
    "volts": "volt",
    "watt": "watt",
    "watts": "watt",
    "celsius": "degree_celsius",
    "fahrenheit": "degree_fahrenheit",
    "euro": "EUR",
    "euros": "EUR",
    "pence": "penny",
    "request": "request",
    "requests": "request",
}
#: Words for "per period" (``monthly``, ``a year``): the period's unit.
PERIOD_WORDS: dict[str, str] = {
    "hourly": "hour",
    "daily": "day",
    "nightly": "night",
    "weekly": "week",
    "monthly": "month",
    "quarterly": "quarter",
    "quarter": "quarter",
    "yearly": "year",
    "annual": "year",
    "annually": "year",
    "annum": "year",
}


def unit_of(spelling: str) -> str | None:
    """The registry unit a written spelling names, or ``None``: ``kWh`` → kilowatt
    hours, ``€`` → EUR, ``$`` → some dollar, ``m`` → nothing (ambiguous)."""
    if spelling in CURRENCY_SIGNS:
        return CURRENCY_SIGNS[spelling]
    if spelling in _CODES:
        return spelling
    found = _EXACT.get(spelling)
    if found is not None:
        return found
    return _WORDS.get(spelling.lower()) or _CURRENCY_WORDS.get(spelling.lower())


def period_of(word: str) -> str | None:
    """The period a word says a rate is per: ``monthly`` → month, ``hour`` → hour."""
    lowered = word.lower()
    found = PERIOD_WORDS.get(lowered)
    if found is not None:
        return found
    unit = unit_of(word)
    return unit if unit is not None and not is_currency(unit) else None


def currency_of(unit: str | None) -> str | None:
    """The currency of a money unit (``EUR``, ``EUR / hour`` → ``EUR``), else ``None``."""
    if unit is None:
        return None
    head = unit.split("/")[0].strip()
    return head if is_currency(head) else ("GBP" if head == "penny" else None)


def is_currency(unit: str) -> bool:
    return unit in _CODES or unit in ("dollar", "yen_or_yuan")


def dollar_like(stated: str, named: str) -> bool:
    """Whether a claim's currency ``stated`` is consistent with the evidence's
    ``named``: the same, the claim's ``$`` for an amount the evidence says is in US
    dollars, or its ``¥`` for yen or yuan.

    A ``$`` alone reads as the US dollar to whoever reads the claim, so an amount in
    Canadian or Australian dollars does not state it: ``$69.50`` for a record in CAD
    misstates the currency (``C$69.50`` or ``CAD 69.50`` state it)."""
    if stated == named:
        return True
    if stated == "dollar":
        return named == "USD"
    return stated == "yen_or_yuan" and named in _YEN_OR_YUAN


@dataclass(frozen=True, kw_only=True, slots=True)
class Measure:
    """A unit as a factor to its dimension's base unit and the dimension itself."""

    factor: Decimal
    dimension: Any  # pint's UnitsContainer: hashable, multiplies and divides


@lru_cache(maxsize=512)
def measure(unit: str) -> Measure | None:
    """The factor and dimension of ``unit`` (a registry expression such as
    ``EUR / hour``), or ``None`` where the registry does not know it."""
    registry = _registry()
    try:
        quantity = registry.Quantity(Decimal(1), unit).to_base_units()
    except Exception:  # pint raises its own UndefinedUnitError, and parse errors
        return None
    return Measure(factor=Decimal(quantity.magnitude), dimension=quantity.dimensionality)


@lru_cache(maxsize=1)
def _registry() -> Any:
    import pint

    # No default definitions (``filename=None``), and exact decimal magnitudes.
    options: dict[str, Any] = {"filename": None, "non_int_type": Decimal}
    registry = pint.UnitRegistry(**options)
    for line in DEFINITIONS.strip().splitlines():
        registry.define(line)
    return registry
