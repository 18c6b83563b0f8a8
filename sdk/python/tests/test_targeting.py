"""The shared targeting vectors (``testdata/targeting/vectors.json``), as the server runs them."""

import json
import os
import unittest

from helpers import SDK_ROOT  # noqa: F401 - puts the package on the path

from expd._targeting import ConditionError, compile_condition, compile_regex

VECTORS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "testdata", "targeting", "vectors.json")


class TargetingVectorsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(VECTORS, encoding="utf-8") as f:
            cls.vectors = json.load(f)

    def test_cases(self):
        self.assertGreater(len(self.vectors["cases"]), 100)
        for case in self.vectors["cases"]:
            with self.subTest(case["name"]):
                self.assertEqual(compile_condition(case["condition"])(case["attributes"]), case["match"])

    def test_invalid_conditions_are_refused(self):
        for case in self.vectors["invalid"]:
            with self.subTest(case["name"]), self.assertRaises(ConditionError):
                compile_condition(case["condition"])

    def test_regexes(self):
        for case in self.vectors["regex"]:
            with self.subTest(case["pattern"]):
                if not case["valid"]:
                    with self.assertRaises(ValueError):
                        compile_regex(case["pattern"])
                    continue
                rx = compile_regex(case["pattern"])
                for text, want in case["matches"].items():
                    self.assertEqual(rx.search(text) is not None, want, text)


if __name__ == "__main__":
    unittest.main()
