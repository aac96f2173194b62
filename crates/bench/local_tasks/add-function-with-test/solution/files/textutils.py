"""Small helpers for the text of blog posts."""

import re


def slugify(title):
    """A URL slug: lowercase words joined by hyphens."""
    words = re.findall(r"[a-z0-9]+", title.lower())
    return "-".join(words)


def word_count(text):
    return len(text.split())


def count_vowels(text):
    """How many of the letters in `text` are vowels (a, e, i, o, u), in either case."""
    return sum(1 for c in text.lower() if c in "aeiou")
