"""Cost recorded by itself: the embedded price table, the shared vectors, and cost_usd on measured calls."""

import json
import logging
import os
import unittest

from helpers import REPO_ROOT
from helpers.cases import BackendTestCase
from helpers.experiments import experiment
from helpers.fake_openai import FakeOpenAI

from expd import _prices
from expd._prices import PriceTable
from expd._provider_shapes import usage_of

CANONICAL = os.path.join(REPO_ROOT, "sdk", "prices", "model_prices.json")
VECTORS = os.path.join(REPO_ROOT, "testdata", "prices", "vectors.json")
CHAT = {"messages": [{"role": "user", "content": "hi"}]}


def priced(table, case):
    usage = usage_of({"usage": case["usage"]})
    input_tokens, output_tokens, _ = usage if usage is not None else (None, None, None)
    return table.cost(case["model"], input_tokens, output_tokens)


class PriceTableTest(unittest.TestCase):
    def test_the_embedded_copy_is_the_canonical_table_byte_for_byte(self):
        copy = os.path.join(os.path.dirname(_prices.__file__), "model_prices.json")
        with open(CANONICAL, "rb") as canonical, open(copy, "rb") as embedded:
            self.assertEqual(embedded.read(), canonical.read(), "run sdk/prices/sync.sh")

    def test_the_shared_vectors(self):
        with open(VECTORS, encoding="utf-8") as handle:
            vectors = json.load(handle)
        tolerance = vectors["tolerance"]["relative"]
        logging.getLogger("expd").setLevel(logging.CRITICAL)
        self.addCleanup(logging.getLogger("expd").setLevel, logging.NOTSET)
        for section, table in (("cases", PriceTable()), ("override_cases", PriceTable(vectors["overrides"]))):
            for case in vectors[section]:
                with self.subTest(section=section, what=case["what"]):
                    got, want = priced(table, case), case["cost_usd"]
                    if want is None:
                        self.assertIsNone(got)
                    else:
                        self.assertIsNotNone(got)
                        self.assertLessEqual(abs(got - want), tolerance * abs(want))

    def test_an_unknown_model_is_logged_once(self):
        table = PriceTable()
        with self.assertLogs("expd", "INFO") as logs:
            for _ in range(3):
                self.assertIsNone(table.cost("acme-1", 10, 10))
            table.cost("acme-2", 10, 10)
        self.assertEqual(len(logs.output), 2)
        self.assertIn("acme-1", logs.output[0])


class CostOnModelCallsTest(BackendTestCase):
    def setUp(self):
        super().setUp()
        self.server.put_experiment(experiment("bot"))

    def costs(self, client):
        self.assertTrue(client.flush(5.0))
        # In the order the calls were made: the fake keeps events in arrival order.
        return [(e["model"], e.get("cost_usd")) for e in self.server.events() if e["type"] == "model_call"]

    def test_wrap_prices_the_usage_it_reads(self):
        client = self.ready_client()
        wrapped = client.wrap(FakeOpenAI(), "bot")  # 11 prompt and 7 completion tokens
        with client.as_user("u1"):
            wrapped.chat.completions.create(model="gpt-4o-mini", **CHAT)
            wrapped.responses.create(model="claude-haiku-4-5", input="hi")  # input_tokens 5, output_tokens 3
            wrapped.chat.completions.create(model="acme-1", **CHAT)
        (mini, mini_cost), (haiku, haiku_cost), (unknown, unknown_cost) = self.costs(client)
        self.assertEqual(mini, "gpt-4o-mini-2024")
        self.assertAlmostEqual(mini_cost, 11 * 0.15e-6 + 7 * 0.6e-6, places=15)
        self.assertEqual(haiku, "claude-haiku-4-5")
        self.assertAlmostEqual(haiku_cost, 5 * 1e-6 + 3 * 5e-6, places=15)
        self.assertEqual((unknown, unknown_cost), ("acme-1-2024", None))

    def test_client_prices_override_the_table_and_an_explicit_cost_wins(self):
        client = self.ready_client(model_prices={"gpt-4o": {"input": 1e-3, "output": 2e-3}, "acme-1": (1e-6, 1e-6)})
        wrapped = client.wrap(FakeOpenAI(), "bot")
        with client.as_user("u1"):
            wrapped.chat.completions.create(model="gpt-4o", **CHAT)
            wrapped.chat.completions.create(model="acme-1", **CHAT)
        with client.intercept_model_call("bot", "u1", model="gpt-4o") as call:
            call.set_usage(100, 100)
            call.cost_usd = 0.5
        with client.intercept_model_call("bot", "u1", model="gpt-4o", price={"input": 1e-9, "output": 0}) as call:
            call.set_usage(1000, 50)
        got = [cost for _, cost in self.costs(client)]
        self.assertAlmostEqual(got[0], 11e-3 + 14e-3, places=12)
        self.assertAlmostEqual(got[1], 18e-6, places=15)
        self.assertEqual(got[2], 0.5)
        self.assertAlmostEqual(got[3], 1e-6, places=15)


if __name__ == "__main__":
    unittest.main()
