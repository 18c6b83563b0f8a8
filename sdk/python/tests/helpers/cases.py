"""A TestCase base with a running backend and fast-timing clients bound to it."""

import logging
import shutil
import socket
import tempfile
import threading
import time
import unittest
from typing import Any, Callable, List
from unittest import mock

from expd import Client

from .fake_server import FakeExpdServer

# Timings shrunk so behaviour that takes seconds in production takes milliseconds here.
FAST = {
    "poll_interval": 0.2,
    "flush_interval": 0.02,
    "retry_backoff": 0.01,
    "max_backoff": 0.05,
    "request_timeout": 5.0,
    "close_timeout": 2.0,
}


class ClientTestCase(unittest.TestCase):
    """Clients a test makes (``track``) are closed at its end; a scratch dir and a quiet expd logger per test."""

    tmp_prefix = "expd-test-"

    def setUp(self) -> None:
        super().setUp()
        self._clients: List[Client] = []
        self.addCleanup(self._close_clients)
        self.tmp = tempfile.mkdtemp(prefix=self.tmp_prefix)
        self.addCleanup(shutil.rmtree, self.tmp, True)
        logging.getLogger("expd").setLevel(logging.CRITICAL)
        self.addCleanup(logging.getLogger("expd").setLevel, logging.NOTSET)

    def track(self, client: Client) -> Client:
        self._clients.append(client)
        return client

    def _close_clients(self) -> None:
        for client in self._clients:
            client.close(timeout=1.0)

    def eventually(self, condition: Callable[[], bool], timeout: float = 5.0, message: str = "") -> None:
        """Fail unless ``condition()`` becomes true within ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if condition():
                return
            time.sleep(0.01)
        self.fail(message or "condition never became true")


    def assert_never_blocks(self, call: Callable[[int], Any], times: int = 500) -> str:
        """Run ``call(n)`` ``times`` times; fail if any opened a connection on the caller's thread.

        Every connection the client makes goes through ``socket.create_connection``
        (urllib); the client's own threads may open them, the caller's thread never.
        Checked this way rather than by a time bound, which a loaded machine breaks
        and which a fast refused connect would pass. Returns a timing summary for
        the failure messages of the calling test (measured, not asserted).
        """
        caller = threading.get_ident()
        connected_from: List[int] = []
        real = socket.create_connection

        def recording(*args: Any, **kwargs: Any) -> socket.socket:
            connected_from.append(threading.get_ident())
            return real(*args, **kwargs)

        durations = []
        with mock.patch.object(socket, "create_connection", recording):
            for n in range(times):
                started = time.perf_counter()
                call(n)
                durations.append((time.perf_counter() - started) * 1000)
        durations.sort()
        median, p99, worst = durations[times // 2], durations[times * 99 // 100], durations[-1]
        summary = f"median {median:.3f} ms, p99 {p99:.3f} ms, worst {worst:.3f} ms over {times} calls"
        self.assertNotIn(caller, connected_from, f"a call opened a connection on the caller's thread ({summary})")
        return summary

class BackendTestCase(ClientTestCase):
    """Starts a fresh fake backend per test; ``make_client`` builds clients closed at teardown."""

    def setUp(self) -> None:
        self.server = FakeExpdServer().start()
        self.addCleanup(self.server.stop)
        super().setUp()

    def make_client(self, **options: Any) -> Client:
        settings = dict(FAST, api_key=self.server.api_key, base_url=self.server.base_url)
        settings.update(options)
        return self.track(Client(**settings))

    def ready_client(self, **options: Any) -> Client:
        options.setdefault("wait_for_config", 5.0)
        client = self.make_client(**options)
        self.assertTrue(client.ready, "config did not load from the backend")
        return client
