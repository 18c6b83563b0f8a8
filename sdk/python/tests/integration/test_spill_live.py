"""The server goes down: events spill to the file and are replayed once after a restart, within 24 h.

Meanwhile the caller's thread never waits on the network (measured).
"""

import collections
import json
import os
import time
import unittest

from expd._events import new_event, parse_rfc3339
from expd._spill import SpillFile

from .cases import LiveTestCase
from .recording import Traffic

HOUR = 3600.0


class SpillLiveTest(LiveTestCase):
    def setUp(self):
        super().setUp()
        self.exp = self.new_experiment("spill")
        self.path = os.path.join(self.tmp, "spill.jsonl")

    def spilled(self):
        if not os.path.exists(self.path):
            return []
        with open(self.path, encoding="utf-8") as handle:
            return [json.loads(line) for line in handle]

    def conversion(self, user, at):
        return new_event("business_event", {"experiment_id": self.exp["id"], "user_id": user, "variant": "control",
                                            "business_metric": "conversion", "value": 1}, now=at)

    def test_events_spill_while_down_and_are_replayed_once_after_a_restart(self):
        first = self.ready_client(spill_path=self.path, max_retries=1, batch_size=10)
        self.wait_for_version(first, self.exp["config_version"])
        self.server.stop()
        self.addCleanup(self.server.ensure_started)
        self.assert_never_blocks(lambda n: first.track(
            "conversion", {"experiment_id": self.exp["name"], "user_id": f"user-{n}", "value": 1}), times=200)
        self.assert_never_blocks(lambda n: first.assign(self.exp["name"], f"user-{n}"), times=200)
        self.eventually(lambda: len(self.spilled()) == 400, timeout=15.0, message="not every event was spilled")
        first.close()
        originals = {e["event_id"]: parse_rfc3339(e["timestamp"]) for e in self.spilled()}
        self.assertEqual(len(originals), 400)

        self.server.restart()
        traffic = Traffic()
        second = self.make_client(traffic, spill_path=self.path)
        stored = self.stored_events(self.exp["id"], 400, timeout=20.0)
        self.assertEqual({e["event_id"]: parse_rfc3339(e["timestamp"]) for e in stored}, originals)
        self.assertEqual(collections.Counter(e["type"] for e in stored), {"business_event": 200, "exposure": 200})
        self.assertTrue(second.flush(5.0))
        sent = collections.Counter(e["event_id"] for e in traffic.posted_events())
        self.assertEqual(sent, collections.Counter(list(originals)), "each spilled event is sent exactly once")
        self.assertFalse(os.path.exists(self.path))
        second.close()

        traffic = Traffic()
        third = self.make_client(traffic, spill_path=self.path)
        self.assertTrue(third.flush(2.0))
        third.close()
        self.assertEqual(traffic.posted_events(), [], "a replayed file is not replayed again")
        self.assertEqual(len(self.api.events(self.exp["id"])), 400)

    def test_spilled_events_older_than_24_hours_are_not_replayed(self):
        now = time.time()
        stale = [self.conversion(f"stale-{n}", now - 25 * HOUR) for n in range(2)]
        fresh = [self.conversion(f"fresh-{n}", now - 23 * HOUR) for n in range(2)]
        SpillFile(self.path).append(stale + fresh)
        traffic = Traffic()
        with self.assertLogs("expd", "WARNING") as logs:
            self.make_client(traffic, spill_path=self.path)
            stored = self.stored_events(self.exp["id"], 2)
        self.assertIn("discarded 2 spilled events older than 24 hours", "\n".join(logs.output))
        fresh_ids = sorted(e["event_id"] for e in fresh)
        self.assertEqual(sorted(e["event_id"] for e in stored), fresh_ids)
        # The recording of a request lands after its answer, and so can trail the stored rows.
        self.eventually(lambda: len(traffic.posted_events()) >= len(fresh), 10.0, "the replay request was not recorded")
        self.assertEqual(sorted(e["event_id"] for e in traffic.posted_events()), fresh_ids, "stale events were sent")
        self.assertEqual(sorted(parse_rfc3339(e["timestamp"]) for e in stored),
                         sorted(parse_rfc3339(e["timestamp"]) for e in fresh))

    def test_track_never_blocks_while_the_server_hangs_and_loses_nothing(self):
        client = self.ready_client(batch_size=10)
        self.wait_for_version(client, self.exp["config_version"])
        self.server.pause()
        self.addCleanup(self.server.resume)
        self.assert_never_blocks(lambda n: client.track(
            "conversion", {"experiment_id": self.exp["name"], "user_id": f"hung-{n}", "value": 1}))
        self.server.resume()
        self.assertTrue(client.flush(20.0))
        self.assertEqual(len(self.api.events(self.exp["id"], type="business_event")), 500)
        self.assertEqual(client.dropped_events, 0)


if __name__ == "__main__":
    unittest.main()
