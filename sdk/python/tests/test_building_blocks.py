"""Small pieces: Retry-After parsing, backoff, timestamps, the exposure LRU, config parsing."""

import random
import time
import unittest
import uuid
from email.utils import formatdate

from helpers import SDK_ROOT  # noqa: F401 - puts the package on the path
from expd._backoff import Backoff
from expd._config import ConfigError, ConfigSnapshot
from expd._decision import Decision
from expd._events import new_event, parse_rfc3339, rfc3339_ms
from expd._exposures import EXPOSE_ALWAYS, EXPOSE_DAILY, EXPOSE_NONE, ExposureLog
from expd._http import parse_retry_after
from helpers.experiments import experiment


class RetryAfterTest(unittest.TestCase):
    def test_seconds(self):
        self.assertEqual(parse_retry_after("7"), 7.0)

    def test_http_date(self):
        self.assertAlmostEqual(parse_retry_after(formatdate(time.time() + 30, usegmt=True)), 30, delta=2)

    def test_absent_or_garbage(self):
        self.assertEqual([parse_retry_after(v) for v in (None, "", "soon")], [None, None, None])


class BackoffTest(unittest.TestCase):
    def test_delays_grow_and_stay_under_the_cap(self):
        backoff = Backoff(0.5, 4.0, random.Random(1))
        delays = [backoff.delay(n) for n in range(6)]
        self.assertTrue(0.25 <= delays[0] <= 0.5)
        self.assertTrue(2.0 <= delays[5] <= 4.0)

    def test_retry_after_wins_but_is_capped(self):
        backoff = Backoff(0.5, 30.0)
        self.assertEqual((backoff.delay(0, 12.0), backoff.delay(0, 3600.0)), (12.0, 30.0))


class TimestampTest(unittest.TestCase):
    def test_rfc3339_with_milliseconds_round_trips(self):
        self.assertEqual(rfc3339_ms(1795255200.123), "2026-11-21T10:00:00.123Z")
        self.assertAlmostEqual(parse_rfc3339("2026-11-21T10:00:00.123Z"), 1795255200.123, places=3)
        self.assertAlmostEqual(parse_rfc3339("2026-11-21T11:00:00.123+01:00"), 1795255200.123, places=3)

    def test_new_event_ids_are_unique_rfc4122_version_4_uuids(self):
        ids = {new_event("exposure", {})["event_id"] for _ in range(100)}
        self.assertEqual(len(ids), 100)
        parsed = [uuid.UUID(i) for i in ids]
        self.assertEqual({(u.version, u.variant) for u in parsed}, {(4, uuid.RFC_4122)})
        self.assertEqual({str(u) for u in parsed}, ids)


class _FakeExperiment:
    def __init__(self):
        self.id, self.gen, self.answer, self.hashed = "e", 1, "a", 0

    def decide(self, user_id, attributes=None):
        self.hashed += 1
        return _bucketed(self.answer)


def _bucketed(variant):
    return Decision(variant, True, "bucketed")


class ExposureLogTest(unittest.TestCase):
    def test_reports_each_pair_once_and_evicts_the_least_recent(self):
        log, exp = ExposureLog(2), _FakeExperiment()
        # "a" was used after "b", so "c" evicts "b": "a" stays known, "b" is new again.
        self.assertEqual([log.resolve(exp, u, EXPOSE_DAILY)[1] for u in ("a", "b", "a", "c", "a", "b")],
                         [True, True, False, True, False, True])
        self.assertEqual(len(log), 2)

    def test_one_exposure_per_utc_day(self):
        log, exp = ExposureLog(10), _FakeExperiment()
        day = 1_795_000_000 - 1_795_000_000 % 86_400  # a UTC midnight
        steps = [(EXPOSE_NONE, day + 5), (EXPOSE_DAILY, day + 10), (EXPOSE_DAILY, day + 86_399),
                 (EXPOSE_ALWAYS, day + 86_399), (EXPOSE_NONE, day + 86_400), (EXPOSE_DAILY, day + 86_400),
                 (EXPOSE_DAILY, day + 90_000)]
        self.assertEqual([log.resolve(exp, "k", mode, now)[1] for mode, now in steps],
                         [False, True, False, True, False, True, False])
        self.assertEqual(exp.hashed, 1, "track and a warm assign do not hash again")

    def test_a_new_config_recomputes_and_a_new_variant_is_exposed(self):
        log, exp = ExposureLog(10), _FakeExperiment()
        now = 1_795_000_000
        self.assertEqual(log.resolve(exp, "k", EXPOSE_DAILY, now), (_bucketed("a"), True))
        exp.gen = 2
        self.assertEqual(log.resolve(exp, "k", EXPOSE_NONE, now), (_bucketed("a"), False))
        self.assertEqual(log.resolve(exp, "k", EXPOSE_DAILY, now), (_bucketed("a"), False))
        exp.gen, exp.answer = 3, "b"
        self.assertEqual(log.resolve(exp, "k", EXPOSE_NONE, now), (_bucketed("b"), False), "track caches the new variant")
        self.assertEqual(log.resolve(exp, "k", EXPOSE_DAILY, now), (_bucketed("b"), True))
        self.assertEqual(exp.hashed, 3)


class ConfigParseTest(unittest.TestCase):
    def test_experiments_are_found_by_name_and_id(self):
        raw = experiment("bot")
        snapshot = ConfigSnapshot.parse({"config_version": 3, "experiments": [raw]}, '"3"')
        self.assertIs(snapshot.find("bot"), snapshot.find(raw["id"]))
        self.assertEqual((snapshot.version, snapshot.etag, snapshot.find("bot").control), (3, '"3"', "control"))

    def test_malformed_bodies_raise_config_error(self):
        broken = experiment("bot")
        del broken["bucket_map"]
        for body in ({}, {"config_version": "x"}, {"config_version": 1, "experiments": [broken]}):
            with self.subTest(body=body):
                with self.assertRaises(ConfigError):
                    ConfigSnapshot.parse(body, None)


class ImportGraphTest(unittest.TestCase):
    def test_the_package_modules_import_each_other_without_a_circle(self):
        import ast
        import pathlib

        package = pathlib.Path(__file__).resolve().parent.parent / "expd"
        graph = {}
        for path in package.glob("*.py"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            graph[path.stem] = {node.module for node in ast.walk(tree)
                                if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module}
        self.assertIn("_client", graph["__init__"])

        def visit(module, trail):
            self.assertNotIn(module, trail, f"import circle: {' -> '.join(trail + [module])}")
            for imported in graph.get(module, ()):
                visit(imported, trail + [module])

        for module in graph:
            visit(module, [])
