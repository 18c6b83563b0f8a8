"""A TestCase base: one ``expd dev`` per test class, experiments and clients per test."""

import os
import shutil
import socket
import tempfile
import threading
import time
import uuid
from unittest import mock
from typing import Any, Callable, Dict, List, Optional

from expd import Client
from helpers.cases import FAST, ClientTestCase

from .expd_api import ExpdApi, experiment_config
from .expd_dev import ExpdDev
from .recording import Traffic, recorded_client


class LiveTestCase(ClientTestCase):
    """Starts ``expd dev`` (fresh data dir) for the class; ``make_client`` builds clients closed after each test."""

    server: ExpdDev
    api: ExpdApi
    tmp_prefix = "expd-live-test-"

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        directory = tempfile.mkdtemp(prefix="expd-live-")
        cls.addClassCleanup(shutil.rmtree, directory, True)
        cls.server = ExpdDev(os.path.join(directory, "data"))
        cls.addClassCleanup(cls.server.stop)
        cls.server.start()
        cls.api = ExpdApi(cls.server.base_url, cls.server.identity_jwt, cls.server.api_key)
        cls.addClassCleanup(cls.api.close)

    def new_experiment(self, prefix: str, **config: Any) -> Dict[str, Any]:
        """Create an experiment with a name no other test uses; the stored Experiment."""
        return self.api.create_experiment(experiment_config(f"{prefix}-{uuid.uuid4().hex[:8]}", **config))

    def make_client(self, traffic: Optional[Traffic] = None, **options: Any) -> Client:
        """A client of the dev org's publishable key, with the fake-backend tests' fast timings."""
        settings = dict(FAST, api_key=self.server.api_key, base_url=self.server.base_url)
        settings.update(options)
        return self.track(recorded_client(traffic, **settings) if traffic is not None else Client(**settings))

    def ready_client(self, traffic: Optional[Traffic] = None, **options: Any) -> Client:
        options.setdefault("wait_for_config", 10.0)
        client = self.make_client(traffic, **options)
        self.assertTrue(client.ready, "no config loaded from expd dev")
        return client

    def wait_for_version(self, client: Client, version: int, timeout: float = 10.0) -> None:
        """Wait until ``client`` has loaded config ``version`` (that of a create or update) or a later one.

        The server's per-instance cache may serve the previous config for up to 1 s after a change.
        """
        self.eventually(lambda: (client.config_version or 0) >= version, timeout,
                        f"client never loaded config_version {version} (has {client.config_version})")

    def stored_events(self, experiment_id: str, count: int, timeout: float = 10.0, **query: Any) -> List[Dict[str, Any]]:
        """The experiment's stored events (newest first) once at least ``count`` match ``query``."""
        found: List[Dict[str, Any]] = []

        def enough() -> bool:
            found[:] = self.api.events(experiment_id, **query)
            return len(found) >= count

        self.eventually(enough, timeout, f"fewer than {count} events stored (query {query})")
        return found

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
