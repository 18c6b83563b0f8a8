"""Config fetch at start, ETag/304 polling, ack-triggered refresh, resilience to a failing server."""

import os
import time
import unittest
from unittest import mock

from helpers.cases import BackendTestCase
from helpers.experiments import experiment
from expd import DEFAULT_BASE_URL, Client, MissingApiKeyError


class ConstructionTest(unittest.TestCase):
    def test_missing_key_raises_at_once(self):
        with mock.patch.dict(os.environ, {}, clear=True):
            with self.assertRaises(MissingApiKeyError):
                Client()

    def test_key_and_base_url_come_from_the_environment(self):
        env = {"SERVICE_API_KEY": "pk_env", "SERVICE_BASE_URL": "http://127.0.0.1:9/"}
        with mock.patch.dict(os.environ, env, clear=True):
            client = Client(poll_interval=60)
        self.addCleanup(client.close, 0.1)
        self.assertEqual(client.base_url, "http://127.0.0.1:9")

    def test_base_url_defaults_to_production(self):
        with mock.patch.dict(os.environ, {"SERVICE_API_KEY": "pk_env"}, clear=True):
            with mock.patch("expd._poller.ConfigPoller.start"), mock.patch("expd._sender.EventSender.start"):
                client = Client()
        self.addCleanup(client.close, 0.1)
        self.assertEqual(client.base_url, DEFAULT_BASE_URL)


class ConfigPollingTest(BackendTestCase):
    def setUp(self):
        super().setUp()
        self.exp = experiment("support-bot-prompt")
        self.server.put_experiment(self.exp)

    def test_start_does_not_block_by_default(self):
        self.server.stop()
        clients = []
        self.assert_never_blocks(lambda n: clients.append(self.make_client()), times=1)
        client = clients[0]
        self.assertIsNone(client.assign("support-bot-prompt", "u1"))

    def test_wait_for_config_returns_with_the_config_loaded(self):
        client = self.make_client(wait_for_config=5.0)
        self.assertEqual(client.config_version, self.server.config_version)
        self.assertIn(client.assign("support-bot-prompt", "u1"), ("control", "treatment"))

    def test_every_request_carries_the_api_key(self):
        client = self.ready_client()
        client.track("conversion", {"experiment_id": "support-bot-prompt", "user_id": "u1", "value": 1})
        self.assertTrue(client.flush(5.0))
        self.assertGreaterEqual(len(self.server.api_keys_seen), 2)
        self.assertEqual(set(self.server.api_keys_seen), {self.server.api_key})

    def test_polls_with_etag_and_a_304_keeps_the_config(self):
        client = self.ready_client()
        self.eventually(lambda: len(self.server.config_requests) >= 2)
        second = self.server.config_requests[1]
        self.assertEqual(second["if_none_match"], f'"{self.server.config_version}"')
        self.assertEqual(second["status"], 304)
        self.assertEqual(client.config_version, self.server.config_version)
        self.assertIsNotNone(client.assign("support-bot-prompt", "u1"))

    def test_polling_picks_up_a_new_experiment(self):
        client = self.ready_client()
        self.server.put_experiment(experiment("new-one"))
        self.eventually(lambda: client.assign("new-one", "u1") is not None)
        self.assertEqual(client.config_version, self.server.config_version)

    def test_a_newer_version_in_an_ingest_ack_refreshes_at_once(self):
        client = self.ready_client(poll_interval=60.0)
        requests_before = len(self.server.config_requests)
        self.server.put_experiment(experiment("launched-later"))
        client.track("conversion", {"experiment_id": "support-bot-prompt", "user_id": "u1", "value": 1})
        self.eventually(lambda: client.assign("launched-later", "u1") is not None, timeout=5.0)
        self.assertEqual(len(self.server.config_requests), requests_before + 1)

    def test_an_ack_with_the_same_version_does_not_refetch(self):
        client = self.ready_client(poll_interval=60.0)
        requests_before = len(self.server.config_requests)
        client.track("conversion", {"experiment_id": "support-bot-prompt", "user_id": "u1", "value": 1})
        self.assertTrue(client.flush(5.0))
        time.sleep(0.3)
        self.assertEqual(len(self.server.config_requests), requests_before)

    def test_a_failing_server_keeps_the_last_good_config(self):
        client = self.ready_client()
        variant = client.assign("support-bot-prompt", "u1")
        self.server.fail_next("/v1/config", 503, times=3, retry_after="0")
        time.sleep(0.5)
        self.server.stop()
        time.sleep(0.3)
        self.assertEqual(client.assign("support-bot-prompt", "u1"), variant)
        self.assertEqual(client.config_version, self.server.config_version)

    def test_the_first_load_is_retried_after_failures(self):
        self.server.fail_next("/v1/config", 503, times=2, retry_after="0")
        client = self.make_client()
        self.assertTrue(client.wait_until_ready(5.0))
        self.assertIsNotNone(client.assign("support-bot-prompt", "u1"))

    def test_an_invalid_key_never_raises_into_the_caller(self):
        client = self.make_client(api_key="pk_wrong", wait_for_config=0.3)
        self.assertFalse(client.ready)
        self.assertIsNone(client.assign("support-bot-prompt", "u1"))
        self.assertEqual(client.get_prompt("support-bot-prompt", "u1", "dflt"), (None, "dflt", True))


if __name__ == "__main__":
    unittest.main()
