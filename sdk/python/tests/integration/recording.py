"""What one client sent and got back: its transport records every request.

The server shows what it stored; only the client side shows how often the
client asked (config fetches, 304s) and that it sent an event once or never.
"""

import json
import threading
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Type
from unittest import mock

from expd import Client
from expd._http import HttpClient, Response, TransportError


class Exchange(NamedTuple):
    method: str
    path: str
    headers: Mapping[str, str]  # headers given beyond the transport's own
    body: Any  # the decoded JSON request body, or None
    status: Optional[int]  # None: no HTTP answer (connection refused, timeout)
    answer: Any  # the decoded JSON answer, or None


class Traffic:
    """The requests of one client, in order."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._exchanges: List[Exchange] = []

    def add(self, exchange: Exchange) -> None:
        with self._lock:
            self._exchanges.append(exchange)

    def exchanges(self, path: Optional[str] = None) -> List[Exchange]:
        with self._lock:
            return [e for e in self._exchanges if path is None or e.path == path]

    def posted_events(self) -> List[Dict[str, Any]]:
        """Every event the client put in a POST /v1/events, whatever the answer (repeats included)."""
        return [event for e in self.exchanges("/v1/events") for event in e.body["events"]]

    def http_class(self) -> Type[HttpClient]:
        traffic = self

        class RecordingHttp(HttpClient):
            def request(self, method: str, path: str, body: Optional[bytes] = None,
                        headers: Optional[Mapping[str, str]] = None, timeout: Optional[float] = None) -> Response:
                sent = json.loads(body) if body else None
                given = dict(headers or {})
                try:
                    response = super().request(method, path, body, headers, timeout)
                except TransportError:
                    traffic.add(Exchange(method, path, given, sent, None, None))
                    raise
                traffic.add(Exchange(method, path, given, sent, response.status, response.body))
                return response

        return RecordingHttp


def recorded_client(traffic: Traffic, **settings: Any) -> Client:
    """A Client whose every request (from the constructor on) is recorded in ``traffic``."""
    with mock.patch("expd._client.HttpClient", traffic.http_class()):
        return Client(**settings)
