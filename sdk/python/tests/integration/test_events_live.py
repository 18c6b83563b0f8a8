"""Events of ``assign``, ``track`` and ``wrap`` are stored with the right fields (read back through the API)."""

import asyncio
import unittest
from typing import Any, Dict, List

from expd._events import parse_rfc3339
from helpers.fake_openai import FakeAsyncOpenAI, FakeOpenAI, ProviderError

from .cases import LiveTestCase
from .recording import Traffic

CHAT = {"model": "gpt-4o-mini", "messages": [{"role": "system", "content": "Be kind."},
                                             {"role": "user", "content": "hi"}]}
# The server's bounds of an event's text fields (ingest/check.go).
MAX_TEXT_BYTES = 64 * 1024
MAX_ERROR_BYTES = 4 * 1024
# Fields a stored event shows as the client sent them (the timestamp is compared as an instant).
SENT_AS_IS = ("type", "experiment_id", "user_id", "variant", "config_version", "model", "latency_ms",
              "input_tokens", "output_tokens", "total_tokens", "cost_usd", "time_to_first_token_ms", "error",
              "business_metric", "value", "prompt", "response")


class EventsLiveTest(LiveTestCase):
    def setUp(self):
        super().setUp()
        self.exp = self.new_experiment("events", prompts={"control": "Be kind.", "treatment": "Be brief."})
        self.traffic = Traffic()
        self.client = self.ready_client(self.traffic)
        self.wait_for_version(self.client, self.exp["config_version"])

    def stored_for(self, user: str, count: int) -> List[Dict[str, Any]]:
        """The user's stored events, after checking each against what the client posted."""
        self.assertTrue(self.client.flush(10.0))
        stored = self.stored_events(self.exp["id"], count, user_id=user)
        self.assertEqual(len(stored), count, stored)
        posted = {e["event_id"]: e for e in self.traffic.posted_events() if e["user_id"] == user}
        self.assertEqual(sorted(posted), sorted(e["event_id"] for e in stored))
        for event in stored:
            sent = posted[event["event_id"]]
            self.assertEqual(parse_rfc3339(event["timestamp"]), parse_rfc3339(sent["timestamp"]))
            self.assertEqual({k: event[k] for k in SENT_AS_IS if k in sent}, {k: sent[k] for k in SENT_AS_IS if k in sent})
        return stored

    def by_type(self, stored: List[Dict[str, Any]]) -> Dict[str, Dict[str, Any]]:
        kinds = {e["type"]: e for e in stored}
        self.assertEqual(len(kinds), len(stored), f"more than one event of a type: {stored}")
        return kinds

    def test_assign_and_track_events_arrive_with_their_fields(self):
        variant = self.client.assign(self.exp["name"], "tracker")
        self.client.track("conversion", {"experiment_id": self.exp["name"], "user_id": "tracker", "value": 2.5})
        self.client.track("model_call", {"experiment_id": self.exp["name"], "user_id": "tracker", "model": "m-1",
                                         "latency_ms": 12.5, "input_tokens": 3, "output_tokens": 4, "cost_usd": 0.001,
                                         "prompt": "question", "response": "answer"})
        self.client.track_business(self.exp["id"], "tracker", "revenue", 9.99)
        stored = self.stored_for("tracker", 4)

        self.assertEqual({e["experiment_id"] for e in stored}, {self.exp["id"]}, "names became the canonical id")
        self.assertEqual({e["variant"] for e in stored}, {variant}, "variants filled from local assignment")
        self.assertEqual({e["source"] for e in stored}, {"api"})
        exposures = [e for e in stored if e["type"] == "exposure"]
        self.assertEqual([e["config_version"] for e in exposures], [self.client.config_version])
        business = sorted((e["business_metric"], e["value"]) for e in stored if e["type"] == "business_event")
        self.assertEqual(business, [("conversion", 2.5), ("revenue", 9.99)])
        (call,) = [e for e in stored if e["type"] == "model_call"]
        self.assertEqual(
            {k: call[k] for k in ("model", "latency_ms", "input_tokens", "output_tokens", "total_tokens", "cost_usd",
                                  "prompt", "response", "error")},
            {"model": "m-1", "latency_ms": 12.5, "input_tokens": 3, "output_tokens": 4, "total_tokens": 7,
             "cost_usd": 0.001, "prompt": "question", "response": "answer", "error": None})

    def test_an_event_the_server_rejects_is_logged_and_counted_as_dropped(self):
        with self.assertLogs("expd", "WARNING") as logs:
            self.client.track("model_call", {"experiment_id": self.exp["id"], "user_id": "sloppy", "model": "m"})
            self.client.track_business(self.exp["id"], "sloppy", "conversion")
            self.assertTrue(self.client.flush(10.0))
        self.assertIn("latency_ms: is required for model_call events", "\n".join(logs.output))
        self.assertEqual(self.client.dropped_events, 1)
        self.assertEqual([e["type"] for e in self.api.events(self.exp["id"], user_id="sloppy")], ["business_event"])

    def test_a_wrapped_chat_call_stores_an_exposure_and_a_measured_model_call(self):
        wrapped = self.client.wrap(FakeOpenAI(reply="Hello there", delay=0.03), self.exp["name"])
        with self.client.as_user("chatter"):
            answer = wrapped.chat.completions.create(**CHAT)
        self.assertEqual(answer.choices[0].message.content, "Hello there")
        events = self.by_type(self.stored_for("chatter", 2))
        variant = self.api.assign(self.exp["id"], "chatter")["variant"]
        self.assertEqual(events["exposure"]["variant"], variant)
        call = events["model_call"]
        self.assertEqual(
            {k: call[k] for k in ("variant", "model", "input_tokens", "output_tokens", "total_tokens", "error",
                                  "response", "time_to_first_token_ms")},
            {"variant": variant, "model": "gpt-4o-mini-2024", "input_tokens": 11, "output_tokens": 7,
             "total_tokens": 18, "error": None, "response": "Hello there", "time_to_first_token_ms": None})
        self.assertGreaterEqual(call["latency_ms"], 30)
        self.assertIn("Be kind.", call["prompt"])

    def test_a_wrapped_stream_stores_its_time_to_first_token(self):
        wrapped = self.client.wrap(FakeOpenAI(reply="one two three", chunk_delay=0.01), self.exp["id"])
        with self.client.as_user("streamer"):
            chunks = list(wrapped.chat.completions.create(stream=True, stream_options={"include_usage": True}, **CHAT))
        self.assertEqual(len(chunks), 5)
        call = self.by_type(self.stored_for("streamer", 2))["model_call"]
        self.assertEqual((call["response"], call["total_tokens"]), ("one two three", 18))
        self.assertGreater(call["time_to_first_token_ms"], 0)
        self.assertGreaterEqual(call["latency_ms"], call["time_to_first_token_ms"] + 30)

    def test_a_failing_wrapped_call_stores_its_error_and_reraises_it(self):
        failure = ProviderError("upstream overloaded")
        wrapped = self.client.wrap(FakeOpenAI(fail=failure), self.exp["name"])
        with self.client.as_user("unlucky"):
            with self.assertRaises(ProviderError) as raised:
                wrapped.chat.completions.create(**CHAT)
        self.assertIs(raised.exception, failure)
        call = self.by_type(self.stored_for("unlucky", 2))["model_call"]
        self.assertEqual((call["error"], call["input_tokens"], call["response"]),
                         ("ProviderError: upstream overloaded", None, None))
        self.assertIsNotNone(call["latency_ms"])

    def test_a_call_with_a_long_prompt_and_error_is_stored_with_its_text_cut_to_the_servers_bounds(self):
        # Long contexts (retrieval, chat history) and HTML error pages exceed what the server takes.
        failure = ProviderError("<html>" + "x" * 10_000)
        wrapped = self.client.wrap(FakeOpenAI(fail=failure), self.exp["name"])
        document = "é" * 50_000  # 100,000 bytes of UTF-8
        with self.client.as_user("reader"):
            with self.assertRaises(ProviderError):
                wrapped.chat.completions.create(model="m", messages=[{"role": "user", "content": document}])
        call = self.by_type(self.stored_for("reader", 2))["model_call"]
        # Cut at a character boundary: up to 3 bytes short of the bound.
        self.assertIn(len(call["prompt"].encode("utf-8")), range(MAX_TEXT_BYTES - 3, MAX_TEXT_BYTES + 1))
        self.assertTrue(call["prompt"].startswith('[{"role": "user", "content": "éé'))
        self.assertEqual(len(call["error"].encode("utf-8")), MAX_ERROR_BYTES)
        self.assertTrue(call["error"].startswith("ProviderError: <html>xx"))

    def test_a_wrapped_async_call_is_stored(self):
        wrapped = self.client.wrap(FakeAsyncOpenAI(reply="async hello"), self.exp["name"])

        async def ask():
            with self.client.as_user("awaiter"):
                return await wrapped.responses.create(model="gpt-4.1", input="hello")

        self.assertEqual(asyncio.run(ask()).output_text, "async hello")
        call = self.by_type(self.stored_for("awaiter", 2))["model_call"]
        self.assertEqual((call["model"], call["total_tokens"], call["response"]), ("gpt-4.1", 8, "async hello"))


if __name__ == "__main__":
    unittest.main()
