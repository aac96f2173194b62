import unittest

from pricing import add_tax, apply_discount


class PricingTest(unittest.TestCase):
    def test_discount(self):
        self.assertEqual(apply_discount(200, 10), 180.0)

    def test_no_discount(self):
        self.assertEqual(apply_discount(19.99, 0), 19.99)

    def test_tax(self):
        self.assertEqual(add_tax(100, 20), 120.0)


if __name__ == "__main__":
    unittest.main()
