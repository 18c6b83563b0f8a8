"""wrap() and intercept_model_call(): measured model calls with a fake OpenAI-style client."""

import asyncio
import threading
import unittest

from helpers.cases import BackendTestCase
from helpers.experiments import experiment
from helpers.fake_openai import FakeAsyncOpenAI, FakeOpenAI, ProviderError

CHAT = {"model": "gpt-x", "messages": [{"role": "user", "content": "hi"}]}


class WrapTestCase(BackendTestCase):
    def setUp(self):
        super().setUp()
        self.exp = experiment("bot", prompts={"control": "Be kind.", "treatment": "Be brief."})
        self.server.put_experiment(self.exp)
        self.client = self.ready_client()

    def events(self, kind):
        self.assertTrue(self.client.flush(5.0))
        return [e for e in self.server.events() if e["type"] == kind]

    def model_call(self):
        (call,) = self.events("model_call")
        return call


class SyncWrapTest(WrapTestCase):
    def test_a_chat_call_records_an_exposure_and_a_model_call(self):
        provider = FakeOpenAI(reply="Hello there", delay=0.02)
        wrapped = self.client.wrap(provider, "bot")
        with self.client.as_user("u1"):
            answer = wrapped.chat.completions.create(**CHAT)
        self.assertEqual(answer.choices[0].message.content, "Hello there")
        variant = self.server.server_assign("bot", "u1")["variant"]
        call = self.model_call()
        self.assertEqual(
            {k: call[k] for k in ("experiment_id", "user_id", "variant", "model", "input_tokens",
                                  "output_tokens", "total_tokens", "error", "response")},
            {"experiment_id": self.exp["id"], "user_id": "u1", "variant": variant, "model": "gpt-x-2024",
             "input_tokens": 11, "output_tokens": 7, "total_tokens": 18, "error": None, "response": "Hello there"},
        )
        self.assertGreaterEqual(call["latency_ms"], 20)
        self.assertIn('"content": "hi"', call["prompt"])
        self.assertEqual([(e["user_id"], e["variant"]) for e in self.events("exposure")], [("u1", variant)])

    def test_every_call_records_its_own_exposure_and_assign_adds_none_that_day(self):
        wrapped = self.client.wrap(FakeOpenAI(reply="ok"), "bot")
        with self.client.as_user("u2"):
            for _ in range(3):
                wrapped.chat.completions.create(**CHAT)
        self.client.assign("bot", "u2")
        self.assertEqual(len(self.events("model_call")), 3)
        self.assertEqual([e["user_id"] for e in self.events("exposure")], ["u2"] * 3)

    def test_responses_completions_and_embeddings_are_measured(self):
        wrapped = self.client.wrap(FakeOpenAI(reply="ok"), "bot")
        with self.client.as_user("u1"):
            wrapped.responses.create(model="r", input="hello")
            wrapped.completions.create(model="c", prompt="once upon")
            wrapped.embeddings.create(model="e", input="text")
        calls = sorted(self.events("model_call"), key=lambda e: e["model"])
        self.assertEqual([(c["model"], c["total_tokens"]) for c in calls], [("c", 6), ("e", 3), ("r", 8)])
        self.assertEqual(calls[2]["response"], "ok")

    def test_an_error_is_recorded_and_reraised_unchanged(self):
        failure = ProviderError("rate limited upstream")
        wrapped = self.client.wrap(FakeOpenAI(fail=failure), "bot")
        with self.client.as_user("u1"):
            with self.assertRaises(ProviderError) as raised:
                wrapped.chat.completions.create(**CHAT)
        self.assertIs(raised.exception, failure)
        self.assertEqual(self.model_call()["error"], "ProviderError: rate limited upstream")

    def test_a_stream_passes_through_and_is_measured_at_its_end(self):
        wrapped = self.client.wrap(FakeOpenAI(reply="one two three", chunk_delay=0.01), "bot")
        with self.client.as_user("u1"):
            stream = wrapped.chat.completions.create(stream=True, stream_options={"include_usage": True}, **CHAT)
            self.assertEqual(stream.response.status_code, 200)
            self.assertEqual(self.events("model_call"), [])
            pieces = [c.choices[0].delta.content for c in stream if c.choices]
        self.assertEqual("".join(pieces), "one two three")
        call = self.model_call()
        self.assertEqual((call["response"], call["total_tokens"]), ("one two three", 18))
        self.assertGreater(call["latency_ms"], call["time_to_first_token_ms"])
        self.assertGreaterEqual(call["time_to_first_token_ms"], 10)

    def test_a_stream_closed_early_is_recorded_once(self):
        wrapped = self.client.wrap(FakeOpenAI(reply="one two three"), "bot")
        with self.client.as_user("u1"):
            with wrapped.chat.completions.create(stream=True, **CHAT) as stream:
                chunks = iter(stream)
                next(chunks), next(chunks)
            stream.close()
        self.assertEqual(self.model_call()["response"], "one")

    def test_a_stream_that_fails_midway_records_the_error(self):
        wrapped = self.client.wrap(FakeOpenAI(fail_mid_stream=ProviderError("connection reset")), "bot")
        with self.client.as_user("u1"):
            with self.assertRaises(ProviderError):
                for _ in wrapped.responses.create(model="r", input="x", stream=True):
                    pass
        call = self.model_call()
        self.assertEqual(call["error"], "ProviderError: connection reset")
        self.assertEqual(call["response"], "Hello there ")

    def test_calls_outside_as_user_pass_through_unrecorded(self):
        provider = FakeOpenAI()
        wrapped = self.client.wrap(provider, "bot")
        wrapped.chat.completions.create(**CHAT)
        self.assertEqual(len(provider.behaviour.calls), 1)
        self.assertEqual(self.events("model_call"), [])

    def test_other_attributes_are_the_providers_own(self):
        provider = FakeOpenAI()
        wrapped = self.client.wrap(provider, "bot")
        self.assertEqual(wrapped.api_key, "sk-provider")
        self.assertIs(wrapped.models, provider.models)

    def test_the_user_binding_is_per_thread(self):
        wrapped = self.client.wrap(FakeOpenAI(delay=0.01), "bot")

        def call_as(user):
            with self.client.as_user(user):
                wrapped.chat.completions.create(**CHAT)

        threads = [threading.Thread(target=call_as, args=(f"t{n}",)) for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        self.assertEqual(sorted(c["user_id"] for c in self.events("model_call")), [f"t{n}" for n in range(8)])


class AsyncWrapTest(WrapTestCase):
    def test_an_async_call_is_measured(self):
        wrapped = self.client.wrap(FakeAsyncOpenAI(delay=0.02), "bot")

        async def main():
            with self.client.as_user("u1"):
                return await wrapped.chat.completions.create(**CHAT)

        answer = asyncio.run(main())
        self.assertEqual(answer.choices[0].message.content, "Hello there")
        call = self.model_call()
        self.assertEqual((call["user_id"], call["total_tokens"]), ("u1", 18))
        self.assertGreaterEqual(call["latency_ms"], 20)

    def test_an_async_stream_passes_through_and_is_measured(self):
        wrapped = self.client.wrap(FakeAsyncOpenAI(reply="a b", chunk_delay=0.01), "bot")

        async def main():
            with self.client.as_user("u1"):
                stream = await wrapped.responses.create(model="r", input="x", stream=True)
                return [event.type async for event in stream]

        kinds = asyncio.run(main())
        self.assertEqual(kinds, ["response.output_text.delta"] * 2 + ["response.completed"])
        call = self.model_call()
        self.assertEqual((call["response"], call["total_tokens"], call["model"]), ("a b ", 8, "r"))
        self.assertIn("time_to_first_token_ms", call)

    def test_an_async_error_is_reraised_unchanged(self):
        failure = ProviderError("boom")
        wrapped = self.client.wrap(FakeAsyncOpenAI(fail=failure), "bot")

        async def main():
            with self.client.as_user("u1"):
                await wrapped.embeddings.create(model="e", input="x")

        with self.assertRaises(ProviderError) as raised:
            asyncio.run(main())
        self.assertIs(raised.exception, failure)
        self.assertEqual(self.model_call()["error"], "ProviderError: boom")

    def test_the_user_binding_is_per_task(self):
        wrapped = self.client.wrap(FakeAsyncOpenAI(delay=0.01), "bot")

        async def call_as(user):
            with self.client.as_user(user):
                await asyncio.sleep(0.005)
                await wrapped.chat.completions.create(**CHAT)

        async def main():
            await asyncio.gather(*(call_as(f"task{n}") for n in range(8)))

        asyncio.run(main())
        self.assertEqual(sorted(c["user_id"] for c in self.events("model_call")), [f"task{n}" for n in range(8)])


class InterceptTest(WrapTestCase):
    def test_the_context_manager_records_what_the_caller_reports(self):
        with self.client.intercept_model_call("bot", "u1", model="claude-x") as call:
            expected = self.server.server_assign("bot", "u1")["variant"]
            self.assertEqual(call.variant, expected)
            call.first_token()
            call.set_usage(input_tokens=3, output_tokens=4)
            call.cost_usd = 0.002
            call.response = "fine"
        event = self.model_call()
        self.assertEqual(
            {k: event[k] for k in ("model", "variant", "input_tokens", "output_tokens", "total_tokens",
                                   "cost_usd", "response", "error")},
            {"model": "claude-x", "variant": expected, "input_tokens": 3, "output_tokens": 4, "total_tokens": 7,
             "cost_usd": 0.002, "response": "fine", "error": None},
        )
        self.assertIn("time_to_first_token_ms", event)

    def test_an_exception_in_the_block_is_recorded_and_propagates(self):
        with self.assertRaises(KeyError):
            with self.client.intercept_model_call("bot", "u1", model="m"):
                raise KeyError("missing")
        self.assertEqual(self.model_call()["error"], "KeyError: 'missing'")

    def test_the_async_form_records_too(self):
        async def main():
            async with self.client.intercept_model_call("bot", "u1", model="m") as call:
                await asyncio.sleep(0.01)
            return call

        asyncio.run(main())
        self.assertGreaterEqual(self.model_call()["latency_ms"], 10)


if __name__ == "__main__":
    unittest.main()
