"""Integration tests of the client against a real ``expd dev`` (SQLite, embedded Temporal).

``expd_dev`` builds the Go binary once per test run and ``cases`` starts one
server per test class. The tests are skipped only when ``go`` is not on PATH.
"""

import helpers  # noqa: F401 - puts the package (sdk/python) on sys.path, whichever module loads first
