"""Small helpers for the text of blog posts."""

import re


def slugify(title):
    """A URL slug: lowercase words joined by hyphens."""
    words = re.findall(r"[a-z0-9]+", title.lower())
    return "-".join(words)


def word_count(text):
    return len(text.split())
