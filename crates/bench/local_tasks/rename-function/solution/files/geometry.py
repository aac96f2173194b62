"""Areas of the shapes the drawing tool knows."""

import math


def shape_area(shape):
    """The area of a shape given as a dict with a "kind" and its sizes."""
    if shape["kind"] == "circle":
        return math.pi * shape["radius"] ** 2
    if shape["kind"] == "rect":
        return shape["width"] * shape["height"]
    raise ValueError(f"unknown shape: {shape['kind']}")
