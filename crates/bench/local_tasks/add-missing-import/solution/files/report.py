"""Prints a JSON summary of sales.csv."""

import csv
import json


def summary(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    total = sum(float(row["amount"]) for row in rows)
    return {"sales": len(rows), "total": round(total, 2)}


if __name__ == "__main__":
    print(json.dumps(summary("sales.csv")))
