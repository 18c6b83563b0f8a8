"""After fork, the child gets its own worker threads and its events still arrive."""

import os
import unittest

from helpers.cases import BackendTestCase
from helpers.experiments import experiment


@unittest.skipUnless(hasattr(os, "fork"), "needs os.fork")
class ForkTest(BackendTestCase):
    def test_a_forked_child_sends_its_events_and_not_the_parents(self):
        self.server.put_experiment(experiment("bot"))
        client = self.ready_client(flush_interval=60.0)
        client.track("conversion", {"experiment_id": "bot", "user_id": "parent", "variant": "control"})
        pid = os.fork()
        if pid == 0:  # child: exit without running the parent's test machinery
            code = 1
            try:
                client.track("conversion", {"experiment_id": "bot", "user_id": "child", "variant": "control"})
                code = 0 if client.flush(5.0) and client.assign("bot", "child") is not None else 2
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        self.assertEqual(os.waitstatus_to_exitcode(status), 0)
        self.assertEqual([e["user_id"] for e in self.server.events() if e["type"] == "business_event"], ["child"])
        self.assertTrue(client.flush(5.0))
        users = sorted(e["user_id"] for e in self.server.events() if e["type"] == "business_event")
        self.assertEqual(users, ["child", "parent"])
