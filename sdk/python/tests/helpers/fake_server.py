"""An in-process HTTP server speaking expd's SDK wire contract.

It is the test backend for HTTP behaviour: ``GET /v1/config`` with
ETag/304, ``POST /v1/assign``, ``POST /v1/events`` and ``POST /v1/scores``
answering 202 with an IngestAck; on request it answers 429/503 (with ``Retry-After``) or goes
down and comes back on the same port. It offers the same surface the
integration backend against a real ``expd dev`` will: ``base_url``,
``api_key``, ``put_experiment``, ``events()``.
"""

import hashlib
import json
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Deque, Dict, List, Optional, Tuple

API_KEY = "pk_test_fake"


class FakeExpdServer:
    """Start with ``start()``; ``stop()`` takes it down, ``start()`` again brings it back on the same port."""

    def __init__(self, api_key: str = API_KEY) -> None:
        self.api_key = api_key
        self.config_version = 1
        self._experiments: Dict[str, Dict[str, Any]] = {}
        self._events: Dict[str, Dict[str, Any]] = {}
        self.event_posts: List[Dict[str, Any]] = []  # every POST /v1/events: time, count, status
        self.score_bodies: List[Dict[str, Any]] = []  # every POST /v1/scores body, as it arrived
        self.config_requests: List[Dict[str, Any]] = []  # every GET /v1/config: If-None-Match, status
        self.api_keys_seen: List[Optional[str]] = []
        self.ack_version_bonus = 0  # report config_version + bonus in acks (a stale-config hint)
        self._forced: Deque[Tuple[str, int, Optional[str]]] = deque()
        self._lock = threading.Lock()
        self._port = 0
        self._httpd: Optional[ThreadingHTTPServer] = None

    # --- lifecycle ---------------------------------------------------------

    def start(self) -> "FakeExpdServer":
        server = self

        class Handler(_Handler):
            fake = server

        self._httpd = ThreadingHTTPServer(("127.0.0.1", self._port), Handler)
        self._httpd.daemon_threads = True
        self._port = self._httpd.server_address[1]
        threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._port}"

    # --- backend surface shared with the integration backend ---------------------

    def put_experiment(self, experiment: Dict[str, Any]) -> None:
        """Create or replace a running experiment; raises the org's config_version."""
        with self._lock:
            self._experiments[experiment["id"]] = experiment
            self.config_version += 1

    def events(self) -> List[Dict[str, Any]]:
        """Distinct events the server accepted, de-duplicated by event_id as the real one does."""
        with self._lock:
            return list(self._events.values())

    def scores(self) -> List[Dict[str, Any]]:
        """Every score that arrived, in order (bodies of POST /v1/scores, flattened)."""
        with self._lock:
            return [score for body in self.score_bodies for score in body.get("scores") or []]

    def wait_for_events(self, count: int, timeout: float = 5.0) -> List[Dict[str, Any]]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            events = self.events()
            if len(events) >= count:
                return events
            time.sleep(0.01)
        return self.events()

    # --- failure injection --------------------------------------------------------

    def fail_next(self, path: str, status: int, times: int = 1, retry_after: Optional[str] = None) -> None:
        """Answer the next ``times`` requests to ``path`` with ``status`` (problem+json)."""
        with self._lock:
            for _ in range(times):
                self._forced.append((path, status, retry_after))

    def _take_forced(self, path: str) -> Optional[Tuple[str, int, Optional[str]]]:
        with self._lock:
            for item in self._forced:
                if item[0] == path:
                    self._forced.remove(item)
                    return item
        return None

    # --- routes ---------------------------------------------------------------------

    def config_body(self) -> Dict[str, Any]:
        with self._lock:
            return {"config_version": self.config_version, "experiments": list(self._experiments.values())}

    def find(self, key: str) -> Optional[Dict[str, Any]]:
        with self._lock:
            for exp in self._experiments.values():
                if key in (exp["id"], exp["name"]):
                    return exp
        return None

    def server_assign(self, key: str, user_id: str) -> Optional[Dict[str, Any]]:
        """The server's own bucketing, written independently of the SDK's."""
        exp = self.find(key)
        if exp is None:
            return None
        text = exp["id"] + "." + exp["salt"] + "." + user_id
        bucket = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big") % exp["bucket_count"]
        variant = next(r["variant"] for r in exp["bucket_map"] if r["start"] <= bucket < r["end"])
        return {"variant": variant, "config_version": self.config_version, "experiment_id": exp["id"],
                "bucket": bucket}

    def ingest(self, body: Dict[str, Any]) -> Dict[str, Any]:
        rejected = []
        with self._lock:
            for index, event in enumerate(body.get("events") or []):
                missing = [f for f in ("event_id", "type", "experiment_id", "user_id", "timestamp") if not event.get(f)]
                if missing:
                    rejected.append({"index": index, "event_id": event.get("event_id"),
                                     "reason": f"missing {', '.join(missing)}"})
                    continue
                self._events.setdefault(event["event_id"], event)
            count = len(body.get("events") or [])
            return {"accepted": count - len(rejected), "config_version": self.config_version + self.ack_version_bonus,
                    "rejected": rejected}


class _Handler(BaseHTTPRequestHandler):
    fake: FakeExpdServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - keep test output quiet
        pass

    def do_GET(self) -> None:  # noqa: N802 - http.server naming
        if not self._authorised():
            return
        if self.path != "/v1/config":
            return self._problem(404, "not found")
        if self._forced_failure("/v1/config"):
            return
        etag = f'"{self.fake.config_version}"'
        sent = self.headers.get("If-None-Match")
        status = 304 if sent == etag else 200
        self.fake.config_requests.append({"if_none_match": sent, "status": status, "time": time.monotonic()})
        if status == 304:
            self.send_response(304)
            self.send_header("ETag", etag)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self._json(200, self.fake.config_body(), {"ETag": etag})

    def do_POST(self) -> None:  # noqa: N802 - http.server naming
        body = self._read_json()
        if not self._authorised():
            return
        if self.path == "/v1/events":
            forced = self.fake._take_forced("/v1/events")
            # Recorded before answering, so a client that saw the answer also sees the record.
            self.fake.event_posts.append({"time": time.monotonic(), "count": len(body.get("events") or []),
                                          "status": forced[1] if forced else 202})
            if forced:
                return self._answer_forced(forced)
            return self._json(202, self.fake.ingest(body))
        if self.path == "/v1/scores":
            if self._forced_failure("/v1/scores"):
                return
            with self.fake._lock:
                self.fake.score_bodies.append(body)
            count = len(body.get("scores") or [])
            return self._json(202, {"accepted": count, "rejected": [], "config_version": self.fake.config_version})
        if self.path == "/v1/assign":
            if self._forced_failure("/v1/assign"):
                return
            answer = self.fake.server_assign(str(body.get("experiment_id")), str(body.get("user_id")))
            return self._json(200, answer) if answer else self._problem(404, "unknown experiment")
        self._problem(404, "not found")

    def _authorised(self) -> bool:
        key = self.headers.get("X-API-Key")
        self.fake.api_keys_seen.append(key)
        if key != self.fake.api_key:
            self._problem(401, "invalid API key")
            return False
        return True

    def _forced_failure(self, path: str) -> Optional[int]:
        forced = self.fake._take_forced(path)
        if forced is None:
            return None
        return self._answer_forced(forced)

    def _answer_forced(self, forced: Tuple[str, int, Optional[str]]) -> int:
        _, status, retry_after = forced
        self._problem(status, "forced failure", {"Retry-After": retry_after} if retry_after else {})
        return status

    def _read_json(self) -> Dict[str, Any]:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        return json.loads(raw) if raw else {}

    def _json(self, status: int, body: Any, headers: Optional[Dict[str, str]] = None,
              content_type: str = "application/json") -> None:
        data = json.dumps(body).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _problem(self, status: int, detail: str, headers: Optional[Dict[str, str]] = None) -> None:
        body = {"type": "about:blank", "title": "error", "status": status, "detail": detail}
        self._json(status, body, headers, "application/problem+json")
