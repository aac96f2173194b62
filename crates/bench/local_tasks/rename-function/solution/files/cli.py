"""Prints the report of a sample drawing."""

import geometry
from report import report

SHAPES = [
    {"kind": "circle", "radius": 1.5},
    {"kind": "rect", "width": 2, "height": 3},
]

if __name__ == "__main__":
    print(report(SHAPES))
    print(f"largest: {max(geometry.shape_area(s) for s in SHAPES):.2f}")
