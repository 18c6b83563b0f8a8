"""Local assignment, exposures, prompts and variables against the backend's config."""

import json
import re
import unittest
import urllib.request
import uuid

from helpers.cases import BackendTestCase
from helpers.experiments import experiment

TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


class AssignTest(BackendTestCase):
    def setUp(self):
        super().setUp()
        self.exp = experiment(
            "support-bot-prompt",
            weights=(("control", 34), ("concise", 33), ("friendly", 33)),
            prompts={"control": "You are helpful.", "concise": "Answer in two sentences."},
            variables={"control": {"temperature": 0.7}, "concise": {"temperature": 0.3, "max_tokens": 200}},
        )
        self.server.put_experiment(self.exp)

    def test_local_assignment_equals_the_server_for_2000_users_by_name_and_id(self):
        client = self.ready_client()
        seen = set()
        for n in range(2000):
            user = f"user-{n}"
            expected = self.server.server_assign(self.exp["id"], user)["variant"]
            self.assertEqual(client.assign("support-bot-prompt", user), expected, user)
            self.assertEqual(client.assign(self.exp["id"], user), expected, user)
            seen.add(expected)
        self.assertEqual(seen, {"control", "concise", "friendly"})

    def test_local_assignment_equals_the_assign_route(self):
        client = self.ready_client()
        for user in ("alice", "bob", "ユーザー", "42"):
            request = urllib.request.Request(
                self.server.base_url + "/v1/assign", method="POST",
                data=json.dumps({"experiment_id": "support-bot-prompt", "user_id": user}).encode(),
                headers={"X-API-Key": self.server.api_key, "Content-Type": "application/json"},
            )
            with urllib.request.urlopen(request) as answer:
                served = json.load(answer)
            self.assertEqual(client.assign("support-bot-prompt", user), served["variant"], user)

    def test_unknown_experiment_assigns_none(self):
        client = self.ready_client()
        self.assertIsNone(client.assign("no-such-experiment", "u1"))

    def test_an_exposure_is_sent_once_per_user_experiment_and_variant(self):
        client = self.ready_client()
        for _ in range(5):
            variant = client.assign("support-bot-prompt", "u1")
            client.assign(self.exp["id"], "u1")
        client.assign("support-bot-prompt", "u2")
        self.assertTrue(client.flush(5.0))
        exposures = [e for e in self.server.events() if e["type"] == "exposure"]
        self.assertEqual(sorted(e["user_id"] for e in exposures), ["u1", "u2"])
        first = next(e for e in exposures if e["user_id"] == "u1")
        self.assertEqual(first["experiment_id"], self.exp["id"])
        self.assertEqual(first["variant"], variant)
        self.assertEqual(first["config_version"], self.server.config_version)
        self.assertEqual(uuid.UUID(first["event_id"]).version, 4)
        self.assertRegex(first["timestamp"], TIMESTAMP)

    def test_the_exposure_memory_is_bounded(self):
        client = self.ready_client(exposure_cache_size=2)
        for user in ("u1", "u2", "u3", "u1"):
            client.assign("support-bot-prompt", user)
        self.assertTrue(client.flush(5.0))
        exposures = [e["user_id"] for e in self.server.events() if e["type"] == "exposure"]
        # u1 was evicted by u3, so its second assignment is reported again.
        self.assertEqual(sorted(exposures), ["u1", "u1", "u2", "u3"])


class PromptAndVariablesTest(BackendTestCase):
    def setUp(self):
        super().setUp()
        self.exp = experiment(
            "bot", weights=(("control", 50), ("concise", 50)),
            prompts={"concise": "Answer in two sentences."},
            variables={"concise": {"temperature": 0.3}},
        )
        self.server.put_experiment(self.exp)
        self.client = self.ready_client()

    def user_in(self, variant):
        return next(u for u in (f"user-{n}" for n in range(1000)) if self.server.server_assign("bot", u)["variant"] == variant)

    def test_the_variant_prompt_is_returned(self):
        user = self.user_in("concise")
        self.assertEqual(self.client.get_prompt("bot", user, "default"), ("concise", "Answer in two sentences.", False))

    def test_a_variant_without_prompt_falls_back_to_the_default(self):
        user = self.user_in("control")
        self.assertEqual(self.client.get_prompt("bot", user, "default"), ("control", "default", True))

    def test_an_unknown_experiment_falls_back_to_the_default(self):
        self.assertEqual(self.client.get_prompt("nope", "u1", "default"), (None, "default", True))

    def test_variables_merge_over_defaults(self):
        user = self.user_in("concise")
        merged = self.client.get_variables("bot", user, {"temperature": 1.0, "model": "m"})
        self.assertEqual(merged, {"temperature": 0.3, "model": "m"})

    def test_variables_without_a_variant_are_the_defaults(self):
        defaults = {"temperature": 1.0}
        merged = self.client.get_variables("nope", "u1", defaults)
        self.assertEqual(merged, defaults)
        self.assertIsNot(merged, defaults)

    def test_prompt_and_variables_log_the_same_single_exposure(self):
        user = self.user_in("concise")
        self.client.get_prompt("bot", user, "d")
        self.client.get_variables("bot", user, {})
        self.client.assign("bot", user)
        self.assertTrue(self.client.flush(5.0))
        exposures = [e for e in self.server.events() if e["type"] == "exposure"]
        self.assertEqual([(e["user_id"], e["variant"]) for e in exposures], [(user, "concise")])


if __name__ == "__main__":
    unittest.main()
