"""Building the expd binary once per test run, and running ``expd dev`` as a child process."""

import atexit
import json
import os
import queue
import shutil
import signal
import subprocess
import tempfile
import threading
import unittest
from typing import Any, Dict, Optional

from helpers import REPO_ROOT

# A cold start creates the SQLite databases and the embedded Temporal server's schema.
START_TIMEOUT = 120.0
STOP_TIMEOUT = 30.0
# How often start() runs ``expd dev`` again when it exits before printing its API address.
# The dev server retries a port lost to another process itself; this covers what it cannot,
# so that one unlucky start does not fail every test of a class.
START_ATTEMPTS = 3
# Forced so a test run never touches a shared database or Temporal, whatever the caller's
# environment: SQLite and embedded Temporal in the data dir. Rate limits are off because the
# tests call /v1/assign thousands of times (the free plan allows 50 requests/s).
DEV_ENV = {"DATABASE_URL": "", "TEMPORAL_ADDRESS": "", "EXPD_LOG_LEVEL": "warn", "EXPD_RATE_LIMITS": "*=off"}

_build_lock = threading.Lock()
_build: Dict[str, Any] = {}


def expd_binary() -> str:
    """The path of an expd binary built from this checkout, built once per process.

    Raises ``unittest.SkipTest`` when ``go`` is not on PATH; a failed build is an error
    (remembered, so later test modules fail fast instead of building again).
    """
    with _build_lock:
        if not _build:
            _build.update(_go_build())
    if "error" in _build:
        raise RuntimeError(_build["error"])
    return _build["path"]


def _go_build() -> Dict[str, str]:
    go = shutil.which("go")
    if go is None:
        raise unittest.SkipTest("integration tests against expd dev need Go on PATH to build expd: go not found")
    directory = tempfile.mkdtemp(prefix="expd-bin-")
    atexit.register(shutil.rmtree, directory, True)
    path = os.path.join(directory, "expd")
    build = subprocess.run([go, "build", "-o", path, "./cmd/expd"], cwd=REPO_ROOT, capture_output=True, text=True)
    if build.returncode != 0:
        return {"error": f"go build ./cmd/expd failed:\n{build.stdout}{build.stderr}"}
    return {"path": path}


class ExpdDev:
    """One ``expd dev`` process on a data dir. ``restart()`` keeps the port and the data."""

    def __init__(self, data_dir: str) -> None:
        self.data_dir = data_dir
        self.port = 0
        self.credentials: Dict[str, str] = {}
        self._process: Optional[subprocess.Popen] = None
        os.makedirs(data_dir, exist_ok=True)
        self._log_path = os.path.join(data_dir, "expd-dev.log")

    @property
    def base_url(self) -> str:
        return self.credentials["base_url"]

    @property
    def api_key(self) -> str:
        """The dev org's publishable key, what an application embeds."""
        return self.credentials["publishable_key"]

    @property
    def identity_jwt(self) -> str:
        """The dev admin's session token for dashboard routes."""
        return self.credentials["identity_jwt"]

    def start(self) -> "ExpdDev":
        """Start ``expd dev``, again (up to START_ATTEMPTS) when it exits before its banner."""
        for attempt in range(1, START_ATTEMPTS + 1):
            base_url = self._start_once()
            if base_url is not None:
                break
            exited = self._exited()
            self.stop()
            if not exited or attempt == START_ATTEMPTS:
                what = "exited" if exited else f"printed nothing within {START_TIMEOUT:.0f} s"
                raise RuntimeError(f"expd dev {what} before printing its API address "
                                   f"(start {attempt} of {START_ATTEMPTS}); its log ends:\n{self.log_tail()}")
        self.port = int(base_url.rsplit(":", 1)[1])
        with open(os.path.join(self.data_dir, "dev-credentials.json"), encoding="utf-8") as handle:
            self.credentials = json.load(handle)
        if self.credentials.get("base_url") != base_url:
            raise RuntimeError(f"dev-credentials.json names {self.credentials.get('base_url')}, not {base_url}")
        return self

    def _start_once(self) -> Optional[str]:
        """Run ``expd dev``; the URL of its banner's ``API:`` line, or None (see _wait_for_banner)."""
        args = [expd_binary(), "dev", "--addr", f"127.0.0.1:{self.port}", "--data-dir", self.data_dir,
                "--temporal-port", "0", "--temporal-http-port", "0", "--ui-port", "-1",
                # The tests send thousands of assigns and events: the free plan's rate limits would throttle them.
                "--plan", "enterprise"]
        with open(self._log_path, "ab") as log:
            self._process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=log,
                                             env={**os.environ, **DEV_ENV})
        # A test run cut short (Ctrl-C) skips class cleanups; the exit hook still stops the server.
        atexit.register(self.stop)
        return self._wait_for_banner(self._process)

    def _exited(self) -> bool:
        """Whether the process ended (its stdout closing is followed by its exit within moments)."""
        try:
            self._process.wait(1.0)
        except subprocess.TimeoutExpired:
            return False
        return True

    def stop(self) -> None:
        """Stop with SIGINT (a clean shutdown), killing only if it outlives STOP_TIMEOUT."""
        process, self._process = self._process, None
        if process is None:
            return
        atexit.unregister(self.stop)
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        process.stdout.close()

    def restart(self) -> None:
        self.stop()
        self.start()

    def ensure_started(self) -> None:
        """Start it again if a test stopped it (a cleanup: the class's next tests need it)."""
        if self._process is None:
            self.start()

    def pause(self) -> None:
        """Freeze the process (SIGSTOP): connections are accepted by the kernel but never answered."""
        self._process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        self._process.send_signal(signal.SIGCONT)

    def log_tail(self, lines: int = 30) -> str:
        with open(self._log_path, encoding="utf-8", errors="replace") as handle:
            return "".join(handle.readlines()[-lines:])

    @staticmethod
    def _wait_for_banner(process: subprocess.Popen) -> Optional[str]:
        """The URL of the banner's ``API:`` line, or None if the process ended or timed out first."""
        found: "queue.Queue[Optional[str]]" = queue.Queue()

        def read() -> None:
            # Keeps draining stdout after the banner so the child never blocks writing to it.
            for raw in process.stdout:
                line = raw.decode("utf-8", "replace").strip()
                if line.startswith("API:"):
                    found.put(line[len("API:"):].strip())
            found.put(None)

        threading.Thread(target=read, name="expd-dev-stdout", daemon=True).start()
        try:
            return found.get(timeout=START_TIMEOUT)
        except queue.Empty:
            return None
