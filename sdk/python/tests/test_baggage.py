"""as_user sets W3C baggage where the OpenTelemetry API is present (docs/ingest.md, "OTLP traces").

The real ``opentelemetry-api`` is not installable here (no PyPI), so the
test puts a stand-in of its context and baggage modules on the path
(tests/otel_standin) and reloads the client's bridge against it; the
client's end-to-end behaviour with the real JavaScript API is tested in
sdk/js-otlp-test.
"""

import asyncio
import importlib
import os
import sys
import unittest

from helpers.cases import BackendTestCase
from helpers.experiments import experiment

import expd._baggage

STANDIN = os.path.join(os.path.dirname(__file__), "otel_standin")


def _forget_otel():
    for name in [n for n in sys.modules if n == "opentelemetry" or n.startswith("opentelemetry.")]:
        del sys.modules[name]


class BaggageTest(BackendTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        sys.path.insert(0, STANDIN)
        _forget_otel()
        importlib.reload(expd._baggage)
        from opentelemetry import baggage

        cls.baggage = baggage

    @classmethod
    def tearDownClass(cls):
        sys.path.remove(STANDIN)
        _forget_otel()
        importlib.reload(expd._baggage)
        super().tearDownClass()

    def setUp(self):
        super().setUp()
        self.exp = experiment("bot")
        targeted = experiment("pro-only")
        targeted["targeting"] = {"plan": "pro"}
        self.server.put_experiment(self.exp)
        self.server.put_experiment(targeted)
        self.client = self.ready_client()

    def entries(self):
        return dict(self.baggage.get_all())

    def test_the_block_carries_the_user_experiment_and_variant(self):
        self.assertTrue(expd._baggage.available())
        for user in ("u1", "u2", "u3", "u4"):
            with self.client.as_user(user, experiment="bot"):
                self.assertEqual(self.entries(), {
                    "expd.user": user, "expd.experiment": "bot", "expd.variant": self.client.assign("bot", user)})
            self.assertEqual(self.entries(), {})

    def test_the_variant_is_decided_without_an_exposure(self):
        with self.client.as_user("u1", experiment="bot"):
            pass
        self.assertTrue(self.client.flush(5.0))
        self.assertEqual([e for e in self.server.events() if e["type"] == "exposure"], [])

    def test_without_an_experiment_only_the_user(self):
        with self.client.as_user(42):
            self.assertEqual(self.entries(), {"expd.user": "42"})

    def test_a_user_outside_the_targeting_carries_no_experiment(self):
        with self.client.as_user("u1", {"plan": "free"}, experiment="pro-only"):
            self.assertEqual(self.entries(), {"expd.user": "u1"})
        with self.client.as_user("u1", {"plan": "pro"}, experiment="pro-only"):
            self.assertEqual(self.entries()["expd.experiment"], "pro-only")

    def test_an_unknown_experiment_carries_only_the_user(self):
        with self.client.as_user("u1", experiment="no-such"):
            self.assertEqual(self.entries(), {"expd.user": "u1"})

    def test_nested_blocks_restore_the_outer_baggage(self):
        with self.client.as_user("outer", experiment="bot"):
            with self.client.as_user("inner"):
                self.assertEqual(self.entries()["expd.user"], "inner")
                self.assertEqual(self.entries()["expd.experiment"], "bot")  # baggage adds, as OpenTelemetry's does
            self.assertEqual(self.entries()["expd.user"], "outer")
        self.assertEqual(self.entries(), {})

    def test_asyncio_tasks_see_their_own_blocks(self):
        async def one(user):
            with self.client.as_user(user, experiment="bot"):
                await asyncio.sleep(0.01)
                return self.entries()["expd.user"]

        async def both():
            return await asyncio.gather(one("a"), one("b"))

        self.assertEqual(asyncio.run(both()), ["a", "b"])


class WithoutOpenTelemetryTest(BackendTestCase):
    def test_as_user_works_without_the_api(self):
        self.assertFalse(expd._baggage.available())
        self.server.put_experiment(experiment("bot"))
        client = self.ready_client()
        with client.as_user("u1", experiment="bot"):
            self.assertEqual(client.assign("bot", "u1"), client.assign("bot", "u1"))


if __name__ == "__main__":
    unittest.main()
