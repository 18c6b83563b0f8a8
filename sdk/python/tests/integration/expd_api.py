"""The routes the tests call themselves: experiments and event read-back (JWT), /v1/assign (API key)."""

import http.client
import json
import threading
import urllib.parse
from typing import Any, Dict, List, Optional, Sequence, Tuple


class ApiError(AssertionError):
    """An answer other than the one the test expected."""


class ExpdApi:
    """A keep-alive HTTP connection to one expd, usable from several threads (one request at a time)."""

    def __init__(self, base_url: str, identity_jwt: str, api_key: str) -> None:
        address = urllib.parse.urlsplit(base_url)
        self._host, self._port = address.hostname, address.port
        self._session = {"Authorization": f"Bearer {identity_jwt}"}
        self._key = {"X-API-Key": api_key}
        self._lock = threading.Lock()
        self._connection: Optional[http.client.HTTPConnection] = None

    def close(self) -> None:
        with self._lock:
            self._drop_connection()

    def _drop_connection(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    # --- dashboard routes (identity JWT) ---------------------------------------------

    def create_experiment(self, config: Dict[str, Any]) -> Dict[str, Any]:
        return self._expect(201, "POST", "/v1/experiments", config, self._session)

    def update_experiment(self, ref: str, config: Dict[str, Any]) -> Dict[str, Any]:
        return self._expect(200, "PUT", f"/v1/experiments/{urllib.parse.quote(ref)}", config, self._session)

    def events(self, ref: str, **query: Any) -> List[Dict[str, Any]]:
        """Stored events of one experiment, newest first (GET /v1/experiments/{id}/events)."""
        query.setdefault("limit", 1000)
        path = f"/v1/experiments/{urllib.parse.quote(ref)}/events?{urllib.parse.urlencode(query)}"
        return self._expect(200, "GET", path, None, self._session)["events"]

    # --- SDK routes (API key) ----------------------------------------------------------

    def assign(self, ref: str, user_id: str) -> Dict[str, Any]:
        """The server's AssignResponse for one user (POST /v1/assign)."""
        return self._expect(200, "POST", "/v1/assign", {"experiment_id": ref, "user_id": user_id}, self._key)

    # --- transport -----------------------------------------------------------------------

    def _expect(self, status: int, method: str, path: str, body: Optional[Dict[str, Any]],
                headers: Dict[str, str]) -> Dict[str, Any]:
        got, answer = self.call(method, path, body, headers)
        if got != status:
            raise ApiError(f"{method} {path}: {got} {answer}, want {status}")
        return answer

    def call(self, method: str, path: str, body: Optional[Dict[str, Any]] = None,
             headers: Optional[Dict[str, str]] = None) -> Tuple[int, Any]:
        """One request; (status, decoded JSON body or None). Reconnects once if the kept connection died."""
        data = None if body is None else json.dumps(body).encode("utf-8")
        sent = {"Content-Type": "application/json", **(headers or {})}
        with self._lock:
            try:
                return self._round_trip(method, path, data, sent)
            except (ConnectionError, http.client.HTTPException):
                # The kept-alive connection may have been closed by the server (idle, or restarted).
                self._drop_connection()
                return self._round_trip(method, path, data, sent)

    def _round_trip(self, method: str, path: str, data: Optional[bytes], headers: Dict[str, str]) -> Tuple[int, Any]:
        if self._connection is None:
            self._connection = http.client.HTTPConnection(self._host, self._port, timeout=30)
        self._connection.request(method, path, body=data, headers=headers)
        response = self._connection.getresponse()
        raw = response.read()
        return response.status, json.loads(raw) if raw else None


def experiment_config(
    name: str,
    weights: Sequence[Tuple[str, int]] = (("control", 50), ("treatment", 50)),
    prompts: Optional[Dict[str, str]] = None,
    variables: Optional[Dict[str, Dict[str, Any]]] = None,
    salt: str = "integration",
    bucket_count: int = 10000,
) -> Dict[str, Any]:
    """An ExperimentConfig as POST and PUT /v1/experiments take it."""
    prompts, variables = prompts or {}, variables or {}
    return {
        "name": name,
        "salt": salt,
        "bucket_count": bucket_count,
        "allocation": [{"variant": v, "weight": w} for v, w in weights],
        "variants": {v: {**({"prompt": prompts[v]} if v in prompts else {}), "variables": variables.get(v, {})}
                     for v, _ in weights},
        "metrics": [],
    }
