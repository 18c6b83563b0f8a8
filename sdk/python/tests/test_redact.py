"""Redaction: every case of the shared corpus (testdata/redaction/cases.json,
rules in testdata/redaction/README.md), and the client option that applies it
to model calls before they leave the process."""

import json
import os
import unittest

import expd
from expd._redact import compile_patterns
from helpers import REPO_ROOT
from helpers.cases import BackendTestCase
from helpers.experiments import experiment
from helpers.fake_openai import FakeOpenAI

with open(os.path.join(REPO_ROOT, "testdata", "redaction", "cases.json"), encoding="utf-8") as _f:
    CASES = json.load(_f)["cases"]

EMAIL = "ann.lee@example.com"
CARD = "4111 1111 1111 1111"


class CorpusTest(unittest.TestCase):
    def test_the_corpus_is_the_shared_one(self):
        self.assertGreaterEqual(len(CASES), 200)

    def test_every_case(self):
        for case in CASES:
            with self.subTest(case["name"]):
                patterns = compile_patterns(case.get("custom_patterns"))
                self.assertEqual(expd.redact(case["input"], patterns), case["expected"], case["input"])

    def test_redacting_twice_changes_nothing(self):
        for case in CASES:
            if case.get("custom_patterns"):
                continue
            with self.subTest(case["name"]):
                self.assertEqual(expd.redact(case["expected"]), case["expected"])

    def test_a_bad_custom_regex_is_refused_at_construction(self):
        with self.assertRaisesRegex(ValueError, r"redact_patterns\[0\]\.regex"):
            compile_patterns([{"name": "bad", "regex": "(", "placeholder": "[X]"}])


class ClientRedactionTest(BackendTestCase):
    def setUp(self):
        super().setUp()
        self.exp = experiment("bot", prompts={"control": "Be kind.", "treatment": "Be brief."})
        self.server.put_experiment(self.exp)

    def calls(self, client):
        self.assertTrue(client.flush(5.0))
        return [e for e in self.server.events() if e["type"] == "model_call"]

    def record(self, client, prompt, response):
        with client.intercept_model_call("bot", "u1", model="gpt-x", prompt=prompt) as call:
            call.response = response

    def test_off_by_default(self):
        client = self.ready_client()
        self.record(client, f"mail {EMAIL}", f"card {CARD}")
        (call,) = self.calls(client)
        self.assertEqual((call["prompt"], call["response"]), (f"mail {EMAIL}", f"card {CARD}"))

    def test_built_ins_on_prompt_and_response_of_manual_and_wrapped_calls(self):
        client = self.ready_client(redact=True)
        self.record(client, f"mail {EMAIL}", f"card {CARD}, key sk-abcdefghijklmnopqrstuvwx")
        wrapped = client.wrap(FakeOpenAI(reply=f"write to {EMAIL}"), "bot")
        with client.as_user("u2"):
            wrapped.chat.completions.create(model="gpt-x", messages=[{"role": "user", "content": f"I am {EMAIL}"}])
        manual, wrap = self.calls(client)
        self.assertEqual((manual["prompt"], manual["response"]), ("mail [EMAIL]", "card [CARD], key [SECRET]"))
        self.assertIn("I am [EMAIL]", wrap["prompt"])
        self.assertEqual(wrap["response"], "write to [EMAIL]")
        for call in (manual, wrap):
            self.assertNotIn(EMAIL, json.dumps(call))

    def test_the_error_of_a_failed_call_is_redacted_too(self):
        client = self.ready_client(redact=True)
        with self.assertRaises(RuntimeError):
            with client.intercept_model_call("bot", "u1", model="gpt-x", prompt="hi"):
                raise RuntimeError(f"invalid api key sk-abcdefghijklmnopqrstuvwx for {EMAIL}")
        (call,) = self.calls(client)
        self.assertEqual(call["error"], "RuntimeError: invalid api key [SECRET] for [EMAIL]")

    def test_custom_patterns_run_first_and_turn_redaction_on(self):
        client = self.ready_client(redact_patterns=[{"name": "employee", "regex": "EMP-[0-9]{6}", "placeholder": "[EMPLOYEE]"}])
        self.record(client, f"EMP-123456 {EMAIL}", "fine")
        (call,) = self.calls(client)
        self.assertEqual(call["prompt"], "[EMPLOYEE] [EMAIL]")

    def test_a_hook_runs_after_the_built_ins(self):
        seen = []

        def hook(text):
            seen.append(text)
            return text.replace("Ann", "[NAME]")

        client = self.ready_client(redact=hook)
        self.record(client, f"Ann is {EMAIL}", "ok")
        (call,) = self.calls(client)
        self.assertEqual(call["prompt"], "[NAME] is [EMAIL]")
        self.assertIn("Ann is [EMAIL]", seen)  # the hook never sees what the built-ins removed

    def test_a_failing_hook_fails_closed(self):
        def hook(text):
            raise RuntimeError("boom")

        client = self.ready_client(redact=hook)
        # Logged where the event is built: on the sender thread, by the time calls() has flushed.
        with self.assertLogs("expd", "ERROR"):
            self.record(client, f"Ann is {EMAIL}", "ok")
            (call,) = self.calls(client)
        self.assertEqual((call["prompt"], call["response"]), ("[REDACTED]", "[REDACTED]"))


if __name__ == "__main__":
    unittest.main()
