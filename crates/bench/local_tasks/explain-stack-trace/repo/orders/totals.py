"""Totals over a list of orders."""


def order_total(order):
    return sum(item["price"] * item["qty"] for item in order["items"])


def average_order(orders):
    return sum(order_total(o) for o in orders) / len(orders)


def largest_order(orders):
    return max(orders, key=order_total)
