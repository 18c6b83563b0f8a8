"""track(): event shape, batching, retries honouring Retry-After, drops, and never blocking the caller."""

import socket
import threading
import time
import unittest

from helpers.cases import BackendTestCase
from helpers.experiments import experiment


class TrackShapeTest(BackendTestCase):
    def setUp(self):
        super().setUp()
        self.exp = experiment("bot")
        self.server.put_experiment(self.exp)
        self.client = self.ready_client()

    def sent(self):
        self.assertTrue(self.client.flush(5.0))
        return [e for e in self.server.events() if e["type"] != "exposure"]

    def test_a_typed_event_gets_an_id_a_timestamp_and_the_canonical_experiment(self):
        self.client.track("model_call", {"experiment_id": "bot", "user_id": "u1", "model": "m", "latency_ms": 12.5})
        (event,) = self.sent()
        self.assertEqual(event["type"], "model_call")
        self.assertEqual(event["experiment_id"], self.exp["id"])
        self.assertEqual(event["variant"], self.server.server_assign("bot", "u1")["variant"])
        self.assertEqual((event["model"], event["latency_ms"]), ("m", 12.5))
        self.assertTrue(event["event_id"] and event["timestamp"].endswith("Z"))

    def test_any_other_name_is_a_business_metric(self):
        self.client.track("purchase", {"experiment_id": "bot", "user_id": "u1", "value": 9.5})
        (event,) = self.sent()
        self.assertEqual((event["type"], event["business_metric"], event["value"]), ("business_event", "purchase", 9.5))

    def test_track_business_sends_a_business_event(self):
        self.client.track_business("bot", "u2", "conversion", 1, variant="treatment")
        (event,) = self.sent()
        self.assertEqual(
            {k: event[k] for k in ("type", "experiment_id", "user_id", "business_metric", "value", "variant")},
            {"type": "business_event", "experiment_id": self.exp["id"], "user_id": "u2",
             "business_metric": "conversion", "value": 1, "variant": "treatment"},
        )

    def test_an_event_id_and_timestamp_from_the_caller_are_kept(self):
        self.client.track("conversion", {"experiment_id": "bot", "user_id": "u1", "value": 1,
                                         "event_id": "fixed-id", "timestamp": "2026-01-01T00:00:00.000Z"})
        (event,) = self.sent()
        self.assertEqual((event["event_id"], event["timestamp"]), ("fixed-id", "2026-01-01T00:00:00.000Z"))

    def test_a_bad_payload_returns_false_instead_of_raising(self):
        self.assertFalse(self.client.track("conversion", None))

    def test_batches_never_exceed_batch_size(self):
        client = self.ready_client(batch_size=10)
        for n in range(35):
            client.track("conversion", {"experiment_id": "bot", "user_id": f"u{n}", "value": 1})
        self.assertTrue(client.flush(5.0))
        counts = [p["count"] for p in self.server.event_posts]
        self.assertTrue(all(c <= 10 for c in counts), counts)
        self.assertEqual(len([e for e in self.server.events() if e["type"] == "business_event"]), 35)


class DeliveryTest(BackendTestCase):
    def track_one(self, client, user="u1"):
        client.track("conversion", {"experiment_id": "bot", "user_id": user, "variant": "control", "value": 1})

    def test_429_is_retried_after_the_servers_retry_after(self):
        client = self.make_client(max_backoff=5.0)
        self.server.fail_next("/v1/events", 429, retry_after="0.4")
        self.track_one(client)
        self.assertTrue(client.flush(5.0))
        first, second = self.server.event_posts[:2]
        self.assertEqual((first["status"], second["status"]), (429, 202))
        self.assertGreaterEqual(second["time"] - first["time"], 0.4)
        self.assertEqual(len(self.server.events()), 1)

    def test_503_is_retried_with_backoff(self):
        client = self.make_client()
        self.server.fail_next("/v1/events", 503, times=2)
        self.track_one(client)
        self.assertTrue(client.flush(5.0))
        self.assertEqual([p["status"] for p in self.server.event_posts], [503, 503, 202])
        self.assertEqual(client.dropped_events, 0)

    def test_a_refused_batch_is_dropped_without_retry(self):
        client = self.make_client()
        self.server.fail_next("/v1/events", 400)
        self.track_one(client)
        self.assertTrue(client.flush(5.0))
        self.assertEqual([p["status"] for p in self.server.event_posts], [400])
        self.assertEqual(client.dropped_events, 1)

    def test_after_the_last_retry_the_batch_is_dropped_without_a_spill_file(self):
        client = self.make_client(max_retries=2)
        self.server.fail_next("/v1/events", 503, times=3)
        self.track_one(client)
        self.assertTrue(client.flush(5.0))
        self.assertEqual([p["status"] for p in self.server.event_posts], [503, 503, 503])
        self.assertEqual(client.dropped_events, 1)
        self.assertEqual(self.server.events(), [])

    def test_while_the_server_keeps_failing_each_batch_gets_one_attempt(self):
        client = self.make_client(max_retries=2)
        self.server.fail_next("/v1/events", 503, times=4)
        self.track_one(client, "u1")
        self.assertTrue(client.flush(5.0))
        self.track_one(client, "u2")
        self.assertTrue(client.flush(5.0))
        self.assertEqual([p["status"] for p in self.server.event_posts], [503] * 4)
        self.server.fail_next("/v1/events", 503, times=1)
        self.track_one(client, "u3")
        self.assertTrue(client.flush(5.0))
        self.assertEqual([p["status"] for p in self.server.event_posts], [503] * 5)
        self.track_one(client, "u4")
        self.assertTrue(client.flush(5.0))
        self.server.fail_next("/v1/events", 503, times=1)
        self.track_one(client, "u5")
        self.assertTrue(client.flush(5.0))
        # After a success the full retry budget is back.
        self.assertEqual([p["status"] for p in self.server.event_posts][5:], [202, 503, 202])
        self.assertEqual(client.dropped_events, 3)

    def test_a_full_queue_drops_and_counts(self):
        self.server.stop()
        client = self.make_client(max_queue_size=5, flush_interval=60.0, batch_size=100)
        results = [client.track("conversion", {"experiment_id": "bot", "user_id": f"u{n}", "value": 1})
                   for n in range(8)]
        self.assertEqual(results, [True] * 5 + [False] * 3)
        self.assertEqual(client.dropped_events, 3)


class NonBlockingTest(BackendTestCase):
    """The caller's thread never waits on the network, whatever the server does."""

    def test_track_and_assign_return_in_milliseconds_with_the_server_down(self):
        self.server.put_experiment(experiment("bot"))
        client = self.ready_client(max_retries=100, batch_size=10)
        self.server.stop()
        self.assert_never_blocks(lambda n: client.track("conversion", {"experiment_id": "bot", "user_id": f"u{n}"}))
        self.assert_never_blocks(lambda n: client.assign("bot", f"u{n}"))

    def test_track_returns_in_milliseconds_while_the_server_hangs(self):
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        self.addCleanup(listener.close)
        accepted = []
        threading.Thread(target=lambda: accepted.append(listener.accept()), daemon=True).start()
        base_url = "http://127.0.0.1:%d" % listener.getsockname()[1]
        client = self.make_client(base_url=base_url, batch_size=1, request_timeout=30.0, close_timeout=0.1)
        self.eventually(lambda: bool(accepted), message="the client never connected")
        self.addCleanup(accepted[0][0].close)
        self.assert_never_blocks(lambda n: client.track("conversion", {"experiment_id": "bot", "user_id": f"u{n}"}))


if __name__ == "__main__":
    unittest.main()
