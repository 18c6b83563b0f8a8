"""The offline spill file: written when the server is down, replayed once on the next start within 24 h."""

import json
import os
import shutil
import tempfile
import time
import unittest

from helpers.cases import BackendTestCase
from expd._events import new_event
from expd._spill import SpillFile


def conversion(user, at=None):
    return new_event("business_event", {"experiment_id": "bot", "user_id": user, "variant": "control",
                                        "business_metric": "conversion", "value": 1}, now=at)


class SpillFileTest(unittest.TestCase):
    def setUp(self):
        self.path = os.path.join(self._tmpdir(), "nested", "spill.jsonl")

    def _tmpdir(self):
        directory = tempfile.mkdtemp(prefix="expd-spill-")
        self.addCleanup(shutil.rmtree, directory, True)
        return directory

    def test_events_round_trip_with_their_ids_and_timestamps(self):
        spill = SpillFile(self.path)
        events = [conversion("u1"), conversion("u2")]
        self.assertTrue(spill.append(events))
        self.assertEqual(spill.take_replayable(), events)

    def test_a_claimed_file_is_gone_so_nothing_replays_twice(self):
        spill = SpillFile(self.path)
        spill.append([conversion("u1")])
        self.assertEqual(len(spill.take_replayable()), 1)
        self.assertEqual(spill.take_replayable(), [])
        self.assertEqual(os.listdir(os.path.dirname(self.path)), [])

    def test_events_older_than_the_window_are_discarded_with_a_log_line(self):
        spill = SpillFile(self.path)
        now = time.time()
        fresh, stale = conversion("fresh", at=now - 23 * 3600), conversion("stale", at=now - 25 * 3600)
        spill.append([stale, fresh])
        with self.assertLogs("expd", "WARNING") as logs:
            self.assertEqual(spill.take_replayable(now=now), [fresh])
        self.assertIn("discarded 1 spilled events older than 24 hours", "\n".join(logs.output))

    def test_unreadable_lines_are_skipped(self):
        spill = SpillFile(self.path)
        spill.append([conversion("u1")])
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write("{not json\n" + json.dumps({"no": "timestamp"}) + "\n")
        with self.assertLogs("expd", "WARNING"):
            self.assertEqual([e["user_id"] for e in spill.take_replayable()], ["u1"])

    def test_an_unwritable_path_reports_failure_instead_of_raising(self):
        blocker = os.path.join(self._tmpdir(), "file")
        open(blocker, "w").close()
        with self.assertLogs("expd", "ERROR"):
            self.assertFalse(SpillFile(os.path.join(blocker, "spill.jsonl")).append([conversion("u1")]))


class SpillAndReplayTest(BackendTestCase):
    def setUp(self):
        super().setUp()
        self.path = os.path.join(self.tmp, "spill.jsonl")

    def spilled(self):
        with open(self.path, encoding="utf-8") as handle:
            return [json.loads(line) for line in handle]

    def test_undeliverable_batches_spill_and_replay_once_after_restart(self):
        self.server.stop()
        first = self.make_client(spill_path=self.path, max_retries=1)
        for n in range(3):
            first.track("conversion", {"experiment_id": "bot", "user_id": f"u{n}", "variant": "control", "value": 1})
        self.eventually(lambda: os.path.exists(self.path) and len(self.spilled()) == 3)
        first.close()
        originals = {e["event_id"]: e["timestamp"] for e in self.spilled()}

        self.server.start()
        second = self.make_client(spill_path=self.path)
        received = self.server.wait_for_events(3)
        self.assertEqual({e["event_id"]: e["timestamp"] for e in received}, originals)
        self.assertFalse(os.path.exists(self.path))
        second.close()

        posts = len(self.server.event_posts)
        third = self.make_client(spill_path=self.path)
        third.flush(1.0)
        third.close()
        self.assertEqual(len(self.server.event_posts), posts)

    def test_close_spills_what_the_down_server_could_not_take(self):
        self.server.stop()
        client = self.make_client(spill_path=self.path, flush_interval=60.0, max_retries=0)
        client.track("conversion", {"experiment_id": "bot", "user_id": "u1", "variant": "control", "value": 1})
        started = time.monotonic()
        client.close(timeout=2.0)
        self.assertLess(time.monotonic() - started, 2.5)
        self.assertEqual([e["user_id"] for e in self.spilled()], ["u1"])

    def test_spilled_events_older_than_24_hours_are_not_replayed(self):
        now = time.time()
        SpillFile(self.path).append([conversion("old", at=now - 25 * 3600), conversion("recent", at=now - 3600)])
        self.make_client(spill_path=self.path)
        received = self.server.wait_for_events(1)
        time.sleep(0.2)
        self.assertEqual([e["user_id"] for e in self.server.events()], ["recent"])
        self.assertEqual(len(received), 1)


if __name__ == "__main__":
    unittest.main()
