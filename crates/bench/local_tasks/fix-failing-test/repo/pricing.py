"""Prices for the shop's checkout."""


def apply_discount(price, percent):
    """The price after taking `percent` percent off, rounded to cents."""
    return round(price - price * percent / 10, 2)


def add_tax(price, rate):
    """The price with `rate` percent of tax added, rounded to cents."""
    return round(price * (1 + rate / 100), 2)
