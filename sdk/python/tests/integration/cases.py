"""A TestCase base: one ``expd dev`` per test class, experiments and clients per test."""

import os
import shutil
import tempfile
import uuid
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
