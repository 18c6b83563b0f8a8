"""Bucketing against the project's shared vector file (testdata/bucketing/vectors.json)."""

import json
import os
import unittest

from helpers import REPO_ROOT
from expd._bucketing import BucketMap, bucket_of
from expd._config import Experiment

VECTORS = os.path.join(REPO_ROOT, "testdata", "bucketing", "vectors.json")


def load_vectors():
    with open(VECTORS, encoding="utf-8") as handle:
        return json.load(handle)


class SharedVectorTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.vectors = load_vectors()

    def test_every_bucket_case(self):
        cases = self.vectors["bucket_cases"]
        self.assertGreater(len(cases), 0)
        for case in cases:
            with self.subTest(case=case):
                got = bucket_of(case["experiment_id"], case["salt"], case["bucket_count"], case["user_id"])
                self.assertEqual(got, case["bucket"])

    def test_every_bucket_case_through_the_config_fast_path(self):
        for case in self.vectors["bucket_cases"]:
            experiment = Experiment({
                "id": case["experiment_id"], "name": "n", "salt": case["salt"],
                "bucket_count": case["bucket_count"],
                "bucket_map": [{"variant": "only", "start": 0, "end": case["bucket_count"]}],
            })
            with self.subTest(case=case):
                self.assertEqual(experiment.bucket(case["user_id"]), case["bucket"])

    def test_every_lookup_case(self):
        cases = self.vectors["lookup_cases"]
        self.assertGreater(len(cases), 0)
        for case in cases:
            with self.subTest(case=case):
                self.assertEqual(BucketMap(case["map"]).variant_for(case["bucket"]), case["variant"])


class BucketMapTest(unittest.TestCase):
    def test_range_start_is_inclusive_and_end_exclusive(self):
        ranges = [{"variant": "a", "start": 0, "end": 3}, {"variant": "b", "start": 3, "end": 10}]
        buckets = BucketMap(ranges)
        self.assertEqual([buckets.variant_for(b) for b in (0, 2, 3, 9)], ["a", "a", "b", "b"])

    def test_unsorted_ranges_are_accepted(self):
        ranges = [{"variant": "b", "start": 5, "end": 10}, {"variant": "a", "start": 0, "end": 5}]
        self.assertEqual(BucketMap(ranges).variant_for(4), "a")

    def test_buckets_outside_every_range_have_no_variant(self):
        buckets = BucketMap([{"variant": "a", "start": 2, "end": 4}, {"variant": "b", "start": 6, "end": 8}])
        self.assertEqual([buckets.variant_for(b) for b in (-1, 0, 4, 5, 8, 100)], [None] * 6)


if __name__ == "__main__":
    unittest.main()
