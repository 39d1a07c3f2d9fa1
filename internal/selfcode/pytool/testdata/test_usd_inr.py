from decimal import Decimal

from usd_inr import RATE, ConversionError, run


def test_default_rate():
    assert run("10") == "10 USD = 832.50 INR (at 83.25 INR/USD)"


def test_explicit_rate_and_thousands():
    assert run("1,000.00", rate="80") == "1000.00 USD = 80,000.00 INR (at 80 INR/USD)"


def test_rounds_to_paisa():
    assert run("0.015", rate="1").startswith("0.015 USD = 0.02 INR")


def test_rate_is_a_decimal_string():
    assert Decimal(RATE) > 0


def test_refuses_garbage():
    try:
        run("ten")
    except ConversionError as e:
        assert "not a number" in str(e)
    else:
        assert False, "expected ConversionError"
