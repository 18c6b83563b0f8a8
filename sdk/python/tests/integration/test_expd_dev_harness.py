"""The ``expd dev`` harness itself: a start that exits before its banner is run again."""

import os
import stat
import tempfile
import textwrap
import unittest
from unittest import mock

from . import expd_dev
from .expd_dev import START_ATTEMPTS, ExpdDev

# Stands in for the expd binary: exits 1 while the file `fail-count` in its data dir holds a
# positive number (counting it down), then writes the credentials, prints the banner and
# waits for SIGINT like ``expd dev``.
FAKE_EXPD = textwrap.dedent("""\
    #!/bin/sh
    while [ "$#" -gt 0 ]; do [ "$1" = --data-dir ] && dir="$2"; shift; done
    echo start >> "$dir/starts"
    left=$(cat "$dir/fail-count")
    if [ "$left" -gt 0 ]; then echo $((left - 1)) > "$dir/fail-count"; echo "bind: address already in use" >&2; exit 1; fi
    echo '{"base_url": "http://127.0.0.1:4321"}' > "$dir/dev-credentials.json"
    echo "  API:         http://127.0.0.1:4321"
    trap 'exit 0' INT
    while :; do sleep 0.1; done
    """)


class ExpdDevHarnessTest(unittest.TestCase):
    def setUp(self) -> None:
        self.directory = tempfile.TemporaryDirectory()
        self.addCleanup(self.directory.cleanup)
        binary = os.path.join(self.directory.name, "expd")
        with open(binary, "w", encoding="utf-8") as handle:
            handle.write(FAKE_EXPD)
        os.chmod(binary, stat.S_IRWXU)
        patcher = mock.patch.object(expd_dev, "expd_binary", return_value=binary)
        patcher.start()
        self.addCleanup(patcher.stop)
        self.data_dir = os.path.join(self.directory.name, "data")

    def server(self, failures: int) -> ExpdDev:
        server = ExpdDev(self.data_dir)
        with open(os.path.join(self.data_dir, "fail-count"), "w", encoding="utf-8") as handle:
            handle.write(str(failures))
        self.addCleanup(server.stop)
        return server

    def starts(self) -> int:
        with open(os.path.join(self.data_dir, "starts"), encoding="utf-8") as handle:
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
