"""The ``expd dev`` harness itself: a start that exits before its banner is run again."""

import os
import tempfile
import unittest
from unittest import mock

from helpers import REPO_ROOT

from . import expd_dev
from .expd_dev import START_ATTEMPTS, ExpdDev

FAKE_EXPD = os.path.join(REPO_ROOT, "testdata", "harness", "fake-expd-dev.sh")


class ExpdDevHarnessTest(unittest.TestCase):
    def server(self, failures: int) -> ExpdDev:
        """An ExpdDev on the fake binary (its header says how), set to exit ``failures`` times."""
        directory = tempfile.TemporaryDirectory()
        self.addCleanup(directory.cleanup)
        self.state = directory.name
        with open(os.path.join(self.state, "fail-count"), "w", encoding="utf-8") as handle:
            handle.write(str(failures))
        for patcher in (mock.patch.object(expd_dev, "expd_binary", return_value=FAKE_EXPD),
                        mock.patch.dict(os.environ, {"FAKE_EXPD_STATE": self.state})):
            patcher.start()
            self.addCleanup(patcher.stop)
        server = ExpdDev(os.path.join(self.state, "data"))
        self.addCleanup(server.stop)
        return server

    def starts(self) -> int:
        with open(os.path.join(self.state, "starts"), encoding="utf-8") as handle:
            return len(handle.readlines())

    def test_a_start_that_exits_before_its_banner_is_run_again(self) -> None:
        server = self.server(failures=START_ATTEMPTS - 1).start()
        self.assertEqual(server.base_url, "http://127.0.0.1:4321")
        self.assertEqual(server.port, 4321)
        self.assertEqual(self.starts(), START_ATTEMPTS)

    def test_gives_up_after_start_attempts_with_the_log(self) -> None:
        with self.assertRaisesRegex(RuntimeError, "exited before printing its API address(.|\n)*address already in use"):
            self.server(failures=START_ATTEMPTS).start()
        self.assertEqual(self.starts(), START_ATTEMPTS)


if __name__ == "__main__":
    unittest.main()
