"""The offline spill file: events the server could not take, as JSON lines.

Events are appended with their original ``event_id`` and ``timestamp``. On the
next start the file is claimed (renamed, so two processes never replay the
same lines), read, and removed; events still inside the replay window are
sent again, older ones are discarded with a log line. The server
de-duplicates on ``event_id``, so a replay that races a late success is
harmless.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from typing import Any, Dict, List, Sequence

from ._events import parse_rfc3339

logger = logging.getLogger("expd")

REPLAY_WINDOW_SECONDS = 24 * 3600


class SpillFile:
    """Appends event batches to ``path`` and hands back replayable ones."""

    def __init__(self, path: str, replay_window: float = REPLAY_WINDOW_SECONDS) -> None:
        self.path = path
        self.replay_window = replay_window
        self._lock = threading.Lock()

    def reset_after_fork(self) -> None:
        """Drop a lock that a parent's thread may have held at fork time."""
        self._lock = threading.Lock()

    def append(self, events: Sequence[Dict[str, Any]]) -> bool:
        """Append events as JSON lines; False (with a log line) if the file cannot be written."""
        data = "".join(json.dumps(e, separators=(",", ":"), ensure_ascii=False) + "\n" for e in events)
        try:
            with self._lock:
                directory = os.path.dirname(self.path)
                if directory:
                    os.makedirs(directory, exist_ok=True)
                # One write per batch on an O_APPEND file keeps lines whole across processes.
                fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
                try:
                    os.write(fd, data.encode("utf-8"))
                finally:
                    os.close(fd)
        except OSError as exc:
            logger.error("expd: could not spill %d events to %s: %s", len(events), self.path, exc)
            return False
        return True

    def take_replayable(self, now: float = 0.0) -> List[Dict[str, Any]]:
        """Claim the file and return its events still inside the replay window."""
        now = now or time.time()
        claimed = f"{self.path}.replay-{os.getpid()}"
        try:
            os.replace(self.path, claimed)
        except FileNotFoundError:
            return []
        except OSError as exc:
            logger.error("expd: could not claim spill file %s: %s", self.path, exc)
            return []
        try:
            with open(claimed, encoding="utf-8") as handle:
                lines = handle.readlines()
        except OSError as exc:
            logger.error("expd: could not read spill file %s: %s", claimed, exc)
            return []
        finally:
            _remove_quietly(claimed)
        fresh, expired, unreadable = _split_by_age(lines, now - self.replay_window)
        if expired:
            logger.warning(
                "expd: discarded %d spilled events older than %d hours from %s",
                expired, int(self.replay_window // 3600), self.path,
            )
        if unreadable:
            logger.warning("expd: discarded %d unreadable lines from %s", unreadable, self.path)
        return fresh


def _split_by_age(lines: Sequence[str], oldest: float):
    fresh: List[Dict[str, Any]] = []
    expired = unreadable = 0
    for line in lines:
        if not line.strip():
            continue
        try:
            event = json.loads(line)
            stamp = parse_rfc3339(event["timestamp"])
        except (ValueError, KeyError, TypeError, AttributeError):
            unreadable += 1
            continue
        if stamp < oldest:
            expired += 1
        else:
            fresh.append(event)
    return fresh, expired, unreadable


def _remove_quietly(path: str) -> None:
    try:
        os.remove(path)
    except OSError:
        pass
