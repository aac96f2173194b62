"""A text report of a drawing's shapes."""

from geometry import shape_area


def report(shapes):
    lines = []
    for shape in shapes:
        lines.append(f"{shape['kind']}: {shape_area(shape):.2f}")
    total = sum(shape_area(s) for s in shapes)
    lines.append(f"total: {total:.2f}")
    return "\n".join(lines)
