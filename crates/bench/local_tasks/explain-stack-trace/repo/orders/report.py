"""Prints the day's order report."""

import json
import sys

from orders.totals import average_order


def load_orders(path):
    with open(path) as f:
        return [o for o in json.load(f) if o["status"] == "paid"]


def main(path):
    orders = load_orders(path)
    print(f"average order: {average_order(orders):.2f}")


if __name__ == "__main__":
    main(sys.argv[1])
