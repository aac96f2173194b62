import unittest

from textutils import count_vowels, slugify, word_count


class SlugifyTest(unittest.TestCase):
    def test_words(self):
        self.assertEqual(slugify("Hello, World!"), "hello-world")

    def test_numbers(self):
        self.assertEqual(slugify("Top 10 Tips"), "top-10-tips")


class WordCountTest(unittest.TestCase):
    def test_count(self):
        self.assertEqual(word_count("one two  three"), 3)


class CountVowelsTest(unittest.TestCase):
    def test_both_cases(self):
        self.assertEqual(count_vowels("Education"), 5)

    def test_none(self):
        self.assertEqual(count_vowels("rhythm"), 0)


if __name__ == "__main__":
    unittest.main()
