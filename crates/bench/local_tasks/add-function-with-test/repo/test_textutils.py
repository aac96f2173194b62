import unittest

from textutils import slugify, word_count


class SlugifyTest(unittest.TestCase):
    def test_words(self):
        self.assertEqual(slugify("Hello, World!"), "hello-world")

    def test_numbers(self):
        self.assertEqual(slugify("Top 10 Tips"), "top-10-tips")


class WordCountTest(unittest.TestCase):
    def test_count(self):
        self.assertEqual(word_count("one two  three"), 3)


if __name__ == "__main__":
    unittest.main()
