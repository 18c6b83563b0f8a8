"""Scores against a real ``expd dev``: the call id a client exposes is the stored model_call's event_id,
and POST /v1/scores takes what ``score`` sends (202, nothing rejected or dropped)."""

import unittest

from helpers.fake_openai import FakeOpenAI

from .cases import LiveTestCase
from .recording import Traffic

CHAT = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}


class ScoresLiveTest(LiveTestCase):
    def setUp(self):
        super().setUp()
        self.exp = self.new_experiment("scores")
        self.traffic = Traffic()
        self.client = self.ready_client(self.traffic)
        self.wait_for_version(self.client, self.exp["config_version"])

    def test_a_wrapped_calls_id_is_stored_and_its_scores_are_accepted(self):
        wrapped = self.client.wrap(FakeOpenAI(reply="ok"), self.exp["name"])  # 11 prompt, 7 completion tokens
        with self.client.as_user("rater"):
            wrapped.chat.completions.create(**CHAT)
            call_id = self.client.last_call_id
        self.assertTrue(self.client.score(call_id, "thumbs_up", True))
        self.assertTrue(self.client.score(call_id, "rating", 4, comment="clear", evaluator="in-app", evaluator_version="2"))
        self.assertTrue(self.client.score("call-not-yet-arrived", "thumbs_up", False))  # an orphan is accepted too
        self.assertTrue(self.client.flush(10.0))

        (call,) = [e for e in self.stored_events(self.exp["id"], 2, user_id="rater") if e["type"] == "model_call"]
        self.assertEqual(call["event_id"], call_id)
        self.assertAlmostEqual(call["cost_usd"], 11 * 0.15e-6 + 7 * 0.6e-6, places=12)
        posts = self.traffic.exchanges("/v1/scores")
        self.assertEqual([p.status for p in posts], [202])
        self.assertEqual([s["call_id"] for s in posts[0].body["scores"]], [call_id, call_id, "call-not-yet-arrived"])
        self.assertEqual((posts[0].answer["accepted"], posts[0].answer.get("rejected") or []), (3, []))
        self.assertEqual(self.client.dropped_events, 0)

    def test_a_judge_score_with_the_publishable_key_never_leaves_the_client(self):
        with self.assertLogs("expd", "WARNING") as logs:
            self.assertFalse(self.client.score("some-call", "helpfulness", 0.5, source="judge"))
        self.assertIn("secret key", logs.output[0])
        self.assertTrue(self.client.score("some-call", "thumbs_up", 1))
        self.assertTrue(self.client.flush(10.0))
        (post,) = self.traffic.exchanges("/v1/scores")
        self.assertEqual((post.status, [s["source"] for s in post.body["scores"]]), (202, ["human"]))


if __name__ == "__main__":
    unittest.main()
