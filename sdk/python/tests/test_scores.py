"""Call ids of measured model calls, and score()/ascore() through the event queue to POST /v1/scores."""

import asyncio
import json
import math
import os
import time
import unittest

from expd._events import rfc3339_ms


from expd import Client
from helpers.cases import FAST, BackendTestCase
from helpers.fake_server import FakeExpdServer
from helpers.experiments import experiment
from helpers.fake_openai import FakeAsyncOpenAI, FakeOpenAI

CHAT = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}
SCORE_FIELDS = {"call_id", "name", "value", "timestamp", "source"}


class ScoreTestCase(BackendTestCase):
    def setUp(self):
        super().setUp()
        self.server.put_experiment(experiment("bot"))
        self.client = self.ready_client()

    def flushed(self):
        self.assertTrue(self.client.flush(5.0))

    def model_calls(self):
        self.flushed()
        return [e for e in self.server.events() if e["type"] == "model_call"]


class CallIdTest(ScoreTestCase):
    def test_a_wrapped_call_names_its_model_call_event(self):
        wrapped = self.client.wrap(FakeOpenAI(reply="ok"), "bot")
        self.assertIsNone(self.client.last_call_id, "outside as_user there is no call")
        with self.client.as_user("u1"):
            self.assertIsNone(self.client.last_call_id)
            wrapped.chat.completions.create(**CHAT)
            first = self.client.last_call_id
            wrapped.chat.completions.create(**CHAT)
            second = self.client.last_call_id
        self.assertIsNone(self.client.last_call_id)
        self.assertEqual([c["event_id"] for c in self.model_calls()], [first, second])
        self.assertNotEqual(first, second)

    def test_a_streams_id_is_known_before_its_first_chunk(self):
        wrapped = self.client.wrap(FakeOpenAI(reply="a b c"), "bot")
        with self.client.as_user("u1"):
            stream = wrapped.chat.completions.create(stream=True, **CHAT)
            call_id = self.client.last_call_id
            self.assertIsNotNone(call_id)
            "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
        (call,) = self.model_calls()
        self.assertEqual(call["event_id"], call_id)

    def test_each_as_user_block_has_its_own_last_call_and_tasks_inside_count(self):
        wrapped = self.client.wrap(FakeAsyncOpenAI(reply="ok"), "bot")

        async def request(user):
            with self.client.as_user(user):
                # The call runs in a task of its own, on a copy of the context.
                await asyncio.create_task(wrapped.chat.completions.create(**CHAT))
                await asyncio.sleep(0.01)
                return user, self.client.last_call_id

        async def main():
            return await asyncio.gather(*(request(f"u{i}") for i in range(5)))

        seen = dict(asyncio.run(main()))
        by_user = {c["user_id"]: c["event_id"] for c in self.model_calls()}
        self.assertEqual(seen, by_user)

    def test_intercept_model_call_exposes_call_id(self):
        with self.client.intercept_model_call("bot", "u3", model="my-model") as call:
            pass
        (recorded,) = self.model_calls()
        self.assertEqual(recorded["event_id"], call.call_id)


class ScoreWireTest(ScoreTestCase):
    def test_a_thumbs_up_on_a_wrapped_call_reaches_v1_scores(self):
        wrapped = self.client.wrap(FakeOpenAI(reply="ok"), "bot")
        with self.client.as_user("u1"):
            wrapped.chat.completions.create(**CHAT)
            self.assertTrue(self.client.score(self.client.last_call_id, "thumbs_up", True))
        self.flushed()
        (call,) = self.model_calls()
        (body,) = self.server.score_bodies
        self.assertEqual(list(body), ["scores"])
        (score,) = body["scores"]
        self.assertEqual(set(score), SCORE_FIELDS)
        self.assertEqual((score["call_id"], score["name"], score["value"], score["source"]),
                         (call["event_id"], "thumbs_up", 1.0, "human"))
        self.assertRegex(score["timestamp"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
        self.assertNotIn("type", score)
        self.assertTrue(all(key == self.server.api_key for key in self.server.api_keys_seen))

    def test_every_optional_field_goes_on_the_wire(self):
        secret = FakeExpdServer(api_key="sk_test_fake").start()  # judge scores need a secret key
        self.addCleanup(secret.stop)
        client = self.track(Client(**dict(FAST, api_key=secret.api_key, base_url=secret.base_url)))
        at = rfc3339_ms(time.time() - 3600)
        client.score("call-1", "helpfulness", 4, source="judge", comment="clear and short",
                     evaluator="helpfulness-v2", evaluator_version="7", judge_model="gpt-4.1", timestamp=at)
        client.score("call-1", "thumbs_up", False)
        self.assertTrue(client.flush(5.0))
        first, second = secret.scores()
        self.assertEqual(first, {"call_id": "call-1", "name": "helpfulness", "value": 4.0, "source": "judge",
                                 "comment": "clear and short", "evaluator": "helpfulness-v2",
                                 "evaluator_version": "7", "judge_model": "gpt-4.1", "timestamp": at})
        self.assertEqual((second["value"], second["source"]), (0.0, "human"))

    def test_a_long_comment_is_cut_to_4_kib_and_the_rating_kept(self):
        self.assertTrue(self.client.score("call-2", "rating", 3, comment="é" * 3000))
        self.flushed()
        (score,) = self.server.scores()
        self.assertEqual(len(score["comment"].encode("utf-8")), 4096)

    def test_ascore_queues_like_score(self):
        async def main():
            return await self.client.ascore("call-3", "rating", 5, comment="great")

        self.assertTrue(asyncio.run(main()))
        self.flushed()
        self.assertEqual([(s["call_id"], s["value"]) for s in self.server.scores()], [("call-3", 5.0)])

    def test_invalid_scores_are_dropped_with_a_log_line_and_never_raise(self):
        bad = [
            ((None, "thumbs_up", 1), "call_id"),
            (("", "thumbs_up", 1), "call_id"),
            (("call 4", "thumbs_up", 1), "call_id"),
            (("call-4", "thumbs up", 1), "name"),
            (("call-4", "rating", math.nan), "finite"),
            (("call-4", "rating", math.inf), "finite"),
            (("call-4", "rating", "5"), "value"),
            (("call-4", "rating", None), "value"),
        ]
        for args, field in bad:
            with self.subTest(args=args), self.assertLogs("expd", "WARNING") as logs:
                self.assertFalse(self.client.score(*args))
            self.assertIn(field, logs.output[0])
        for kwargs in ({"source": "robot"}, {"comment": "a\x00b"}, {"timestamp": "yesterday"}, {"judge_model": "gpt-4.1"},
                       {"timestamp": time.time() - 25 * 3600}, {"timestamp": "2099-01-01T00:00:00Z"},
                       {"evaluator_version": "v" * 129}, {"source": "judge"}):
            with self.subTest(kwargs=kwargs), self.assertLogs("expd", "WARNING"):
                self.assertFalse(self.client.score("call-4", "rating", 1, **kwargs))
        self.client.score("call-5", "rating", 2)
        self.flushed()
        self.assertEqual([s["call_id"] for s in self.server.scores()], ["call-5"])


class ScoreDeliveryTest(BackendTestCase):
    def setUp(self):
        super().setUp()
        self.server.put_experiment(experiment("bot"))

    def test_scores_and_events_share_the_queue_and_its_retries(self):
        client = self.ready_client(batch_size=10)
        self.server.fail_next("/v1/scores", 503, times=2, retry_after="0")
        for i in range(25):
            client.track("purchase", {"experiment_id": "bot", "user_id": f"u{i}", "value": 1})
            client.score(f"call-{i}", "rating", i)
        self.assertTrue(client.flush(5.0))
        self.assertEqual(sorted(s["value"] for s in self.server.scores()), [float(i) for i in range(25)])
        self.assertEqual(len([e for e in self.server.events() if e["type"] == "business_event"]), 25)
        self.assertTrue(all(len(body["scores"]) <= 10 for body in self.server.score_bodies))
        self.assertEqual(client.dropped_events, 0)

    def test_undeliverable_scores_are_spilled_and_replayed_to_v1_scores(self):
        spill = os.path.join(self.tmp, "spill.jsonl")
        first = self.make_client(spill_path=spill, max_retries=0)
        self.server.fail_next("/v1/scores", 503, times=1)
        first.score("call-6", "thumbs_up", True, comment="kept")
        first.close(timeout=2.0)
        self.assertEqual(self.server.scores(), [])
        with open(spill, encoding="utf-8") as handle:
            (line,) = [json.loads(text) for text in handle]
        self.assertEqual((line["type"], line["call_id"]), ("score", "call-6"))
        second = self.make_client(spill_path=spill)
        self.assertTrue(second.flush(5.0))
        self.eventually(lambda: len(self.server.scores()) == 1)
        (score,) = self.server.scores()
        self.assertEqual((score["call_id"], score["comment"], score["timestamp"]),
                         ("call-6", "kept", line["timestamp"]))
        self.assertNotIn("type", score)

    def test_publishable_keys_are_known_by_their_prefix(self):
        for key, publishable in (("expd_pk_abc", True), ("pk_abc", True), ("expd_sk_abc", False), ("sk_abc", False)):
            client = self.make_client(api_key=key)
            with self.subTest(key=key):
                self.assertEqual(client.score("call-7", "rating", 1, source="code"), not publishable)

    def test_score_never_opens_a_connection_on_the_callers_thread(self):
        client = self.make_client()
        self.assert_never_blocks(lambda n: client.score(f"call-{n}", "rating", n))


if __name__ == "__main__":
    unittest.main()
