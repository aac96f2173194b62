"""Rolling statistics over a list of readings."""


def window_sums(values, width):
    """The sum of every run of `width` consecutive values, in order."""
    return [sum(values[i:i + width]) for i in range(len(values) - width)]


def window_means(values, width):
    return [s / width for s in window_sums(values, width)]
