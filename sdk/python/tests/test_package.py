"""The package as users get it: a wheel built without the network, installed
into a fresh virtual environment without an index, imported and run."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from helpers import REPO_ROOT

PACKAGE = os.path.join(REPO_ROOT, "sdk", "python")


def wheel_builder():
    """An interpreter that can build a wheel offline (setuptools and wheel
    importable), or None. This one first; else the system's, which Debian
    ships with both (python3-setuptools, python3-wheel)."""
    for python in (sys.executable, "/usr/bin/python3"):
        if not os.path.exists(python):
            continue
        probe = subprocess.run([python, "-c", "import setuptools, wheel"], capture_output=True)
        if probe.returncode == 0:
            return python
    return None


class WheelTest(unittest.TestCase):
    def test_the_wheel_builds_and_installs_offline_and_runs(self):
        builder = wheel_builder()
        if builder is None:
            if os.environ.get("EXPD_REQUIRE_WHEEL") == "1":
                self.fail("no interpreter here has setuptools and wheel to build the wheel")
            self.skipTest("no interpreter with setuptools and wheel (set EXPD_REQUIRE_WHEEL=1 to fail instead)")
        work = tempfile.mkdtemp(prefix="expd-wheel-")
        try:
            # Build from a copy: a build writes build/ and *.egg-info beside the sources.
            src = os.path.join(work, "src")
            shutil.copytree(PACKAGE, src, ignore=shutil.ignore_patterns("tests", "bench", "build", "*.egg-info", "__pycache__"))
            dist = os.path.join(work, "dist")
            subprocess.run(
                [builder, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "--no-index", "--disable-pip-version-check", "-w", dist, src],
                check=True, capture_output=True,
            )
            wheels = [f for f in os.listdir(dist) if f.endswith(".whl")]
            self.assertEqual(len(wheels), 1, wheels)

            # Installed into a directory of its own (what a virtual environment's
            # site-packages is, without the minute ensurepip takes), and run
            # isolated from this checkout and the user's site-packages.
            site = os.path.join(work, "site")
            subprocess.run(
                [sys.executable, "-m", "pip", "install", "--no-index", "--disable-pip-version-check", "--target", site, os.path.join(dist, wheels[0])],
                check=True, capture_output=True,
            )
            script = (
                "import json, importlib.metadata as md, expd\n"
                "from expd._bucketing import bucket_of\n"
                "from expd._prices import shipped_prices\n"
                "meta = md.metadata('expd')\n"
                "print(json.dumps({'version': expd.__version__, 'dist': md.version('expd'),"
                " 'license': meta['License'], 'prices': len(shipped_prices()) > 0,"
                " 'bucket': bucket_of('e', 's', 10000, 'u')}))\n"
            )
            env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": site, "PYTHONNOUSERSITE": "1"}
            out = subprocess.run([sys.executable, "-S", "-c", script], check=True, capture_output=True, text=True, cwd=work, env=env)
            self.assertTrue(json.loads(out.stdout), out.stderr)
            got = json.loads(out.stdout)
            from expd._version import __version__
            from expd._bucketing import bucket_of

            self.assertEqual(got["version"], __version__)
            self.assertEqual(got["dist"], __version__)
            self.assertEqual(got["license"], "Apache-2.0")
            self.assertTrue(got["prices"])
            self.assertEqual(got["bucket"], bucket_of("e", "s", 10000, "u"))
        finally:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
