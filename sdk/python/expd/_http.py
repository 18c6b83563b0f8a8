"""A minimal JSON-over-HTTP transport on urllib, carrying the API key."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from email.utils import parsedate_to_datetime
from datetime import datetime, timezone
from typing import Any, Mapping, Optional

from ._version import __version__ as _version

USER_AGENT = f"expd-python/{_version}"


class Response:
    """Status, headers and decoded JSON body of one answer (any status)."""

    __slots__ = ("status", "headers", "body")

    def __init__(self, status: int, headers: Mapping[str, str], body: Any) -> None:
        self.status = status
        self.headers = headers
        self.body = body

    def header(self, name: str) -> Optional[str]:
        """Return one header's value, case-insensitively."""
        return self.headers.get(name)

    def retry_after(self) -> Optional[float]:
        """Seconds the server asks us to wait (``Retry-After``), if it says."""
        return parse_retry_after(self.header("Retry-After"))

    def problem(self) -> str:
        """A one-line description of a problem+json body, for log lines."""
        if isinstance(self.body, Mapping):
            title = self.body.get("title") or ""
            detail = self.body.get("detail") or ""
            return f"{self.status} {title}: {detail}".strip(" :")
        return str(self.status)


class TransportError(Exception):
    """The request got no HTTP answer (connection refused, timeout, TLS...)."""


def parse_retry_after(value: Optional[str]) -> Optional[float]:
    """Parse ``Retry-After`` as delta-seconds or an HTTP date; None if absent or bad."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())


class HttpClient:
    """Sends JSON requests to one base URL with the ``X-API-Key`` header."""

    def __init__(self, base_url: str, api_key: str, timeout: float) -> None:
        self._base_url = base_url.rstrip("/")
        self._api_key = api_key
        self._timeout = timeout
        self._opener = urllib.request.build_opener()

    def request(
        self,
        method: str,
        path: str,
        body: Optional[bytes] = None,
        headers: Optional[Mapping[str, str]] = None,
        timeout: Optional[float] = None,
    ) -> Response:
        """Send one request; every HTTP status is returned, only no-answer raises."""
        request = urllib.request.Request(self._base_url + path, data=body, method=method)
        request.add_header("X-API-Key", self._api_key)
        request.add_header("Accept", "application/json")
        request.add_header("User-Agent", USER_AGENT)
        if body is not None:
            request.add_header("Content-Type", "application/json")
        for name, value in (headers or {}).items():
            request.add_header(name, value)
        try:
            with self._opener.open(request, timeout=timeout or self._timeout) as answer:
                return Response(answer.status, answer.headers, _decode(answer.read()))
        except urllib.error.HTTPError as answer:
            with answer:
                return Response(answer.code, answer.headers, _decode(_read_quietly(answer)))
        except (OSError, ValueError) as exc:
            raise TransportError(f"{method} {path}: {exc}") from exc


def _read_quietly(answer: urllib.error.HTTPError) -> bytes:
    # An error answer's body is only informative: a broken read must not hide its status.
    try:
        return answer.read()
    except OSError:
        return b""


def _decode(raw: bytes) -> Any:
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return None
