"""Convert US dollars to Indian rupees at a fixed, owner-approved rate."""

from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation

DESCRIPTION = "Convert an amount in US dollars to Indian rupees (fixed rate, updated by the owner)."
PARAMS_SCHEMA = {
    "type": "object",
    "properties": {
        "amount": {"type": "string", "description": "USD amount, e.g. \"12.50\""},
        "rate": {"type": "string", "description": "INR per USD; defaults to the fixed rate"},
    },
    "required": ["amount"],
}
CAPABILITIES = {}

RATE = "83.25"
PAISA = "0.01"


class ConversionError(ValueError):
    """The amount or rate is not a number."""


def parse(text: str, what: str) -> Decimal:
    try:
        value = Decimal(text.strip().replace(",", ""))
    except (InvalidOperation, AttributeError):
        raise ConversionError("%s is not a number: %r" % (what, text))
    if not value.is_finite() or value < 0:
        raise ConversionError("%s must be a non-negative number" % what)
    return value


def run(amount, rate=None):
    usd = parse(amount, "amount")
    per_usd = parse(rate if rate is not None else RATE, "rate")
    inr = (usd * per_usd).quantize(Decimal(PAISA), rounding=ROUND_HALF_EVEN)
    return "%s USD = %s INR (at %s INR/USD)" % (usd, f"{inr:,}", per_usd)
