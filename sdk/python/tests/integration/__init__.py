"""Integration tests of the client against a real ``expd dev`` (SQLite, embedded Temporal).

``harness`` builds the Go binary once per test run and starts one server per
test class. The tests are skipped only when ``go`` is not on PATH.
"""
