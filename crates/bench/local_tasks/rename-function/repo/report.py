"""A text report of a drawing's shapes."""

from geometry import area_of


def report(shapes):
    lines = []
    for shape in shapes:
        lines.append(f"{shape['kind']}: {area_of(shape):.2f}")
    total = sum(area_of(s) for s in shapes)
    lines.append(f"total: {total:.2f}")
    return "\n".join(lines)
