"""The language-neutral conformance scenario (testdata/conformance/scenario.json,
ops in testdata/conformance/README.md), replayed against a fake server of its own."""

import json
import os
import tempfile
import threading
import time
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import expd
from expd._config import Experiment
from helpers import REPO_ROOT

with open(os.path.join(REPO_ROOT, "testdata", "conformance", "scenario.json"), encoding="utf-8") as _f:
    SCENARIO = json.load(_f)


class ScenarioServer:
    """Serves a given config body with ETag/304, stores events, answers 503 when down."""

    def __init__(self):
        self.config = {"config_version": 0, "experiments": []}
        self.ack_version = None
        self.down = False
        self.events = []
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def answer(self, status, body=None, headers=()):
                raw = b"" if body is None else json.dumps(body).encode()
                self.send_response(status)
                for name, value in headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def do_GET(self):
                with server.lock:
                    if server.down:
                        return self.answer(503, {"title": "down"}, [("Retry-After", "0")])
                    etag = f'"{server.config["config_version"]}"'
                    if self.headers.get("If-None-Match") == etag:
                        return self.answer(304, None, [("ETag", etag)])
                    return self.answer(200, server.config, [("ETag", etag)])

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server.lock:
                    if server.down:
                        return self.answer(503, {"title": "down"}, [("Retry-After", "0")])
                    server.events.extend(body["events"])
                    ack = server.ack_version or server.config["config_version"]
                    return self.answer(202, {"accepted": len(body["events"]), "rejected": [], "config_version": ack})

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def events_of(self, kind):
        with self.lock:
            return [e for e in self.events if e["type"] == kind]

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def expected(name, config, i):
    e = SCENARIO["expected"][name]
    return e["variants"][int(e["by_config"][config][i])]


class ConformanceTest(unittest.TestCase):
    def test_sticky_cases(self):
        for case in SCENARIO["sticky_cases"]:
            exp = Experiment({"id": case["experiment_id"], "name": "x", "salt": case["salt"],
                              "bucket_count": case["bucket_count"], "bucket_map": case["map"], "sticky": case["sticky"]})
            for user, variant in zip(case["users"], case["variants"]):
                self.assertEqual(exp.decide(user).variant, variant, user)

    def test_decision_cases(self):
        """The shared decision cases through ``assign_detail`` on a client served each case's config."""
        decisions = SCENARIO["decisions"]
        self.assertTrue(decisions["cases"])
        clients, clients_servers = [], []
        for config in decisions["configs"]:
            server = ScenarioServer()
            clients_servers.append(server)
            self.addCleanup(server.close)
            server.config = config
            client = expd.Client(api_key="pk_test", base_url=server.base_url, wait_for_config=10, flush_interval=3600)
            self.addCleanup(client.close, 0)
            self.assertTrue(client.ready)
            clients.append(client)
        for case in decisions["cases"]:
            want = expd.Decision(case["variant"], case["in_experiment"], case["reason_code"])
            got = clients[case["config"]].assign_detail(case["experiment"], case["user_id"], case["attributes"])
            self.assertEqual(got, want, f'{case["experiment"]} {case["user_id"]}')
        # The holdout exposures: once per (holdout, user) of each client.
        for i, client in enumerate(clients):
            want, holdouts = set(), set()
            for case in decisions["cases"]:
                if case["config"] == i:
                    for h in case.get("holdout_exposures") or ():
                        want.add((h["holdout_id"], case["user_id"], h["variant"]))
                        holdouts.add(h["holdout_id"])
            self.assertTrue(client.flush(10))
            got = [(e["experiment_id"], e["user_id"], e["variant"]) for e in clients_servers[i].events_of("exposure")
                   if e["experiment_id"] in holdouts]
            self.assertEqual(sorted(got), sorted(want), f"config {i}: holdout exposures")

    def test_scripted_scenario(self):
        server = ScenarioServer()
        self.addCleanup(server.close)
        spill = os.path.join(tempfile.mkdtemp(prefix="expd-py-conf-"), "spill.jsonl")
        user = lambda i: f"{SCENARIO['user_prefix']}{i}"  # noqa: E731
        client, seen, spilled, worst = None, {}, [], 0.0

        def fresh(kind):
            events = server.events_of(kind)
            out = events[seen.get(kind, 0):]
            seen[kind] = len(events)
            return out

        def wait_for(check, what):
            deadline = time.monotonic() + 10
            while not check():
                self.assertLess(time.monotonic(), deadline, f"timed out waiting for {what}")
                time.sleep(0.01)

        try:
            for step in SCENARIO["steps"]:
                op = step["op"]
                if op == "serve_config":
                    with server.lock:
                        server.config = SCENARIO["configs"][step["config"]]
                elif op == "start_client":
                    client = expd.Client(api_key="pk_test", base_url=server.base_url, spill_path=spill,
                                         flush_interval=0.05, max_retries=1, retry_backoff=0.01, max_queue_size=100_000)
                elif op == "wait_config_version":
                    wait_for(lambda: client.config_version == step["version"], step)
                elif op == "assign":
                    for i in range(step["from"], step["to"]):
                        self.assertEqual(client.assign(step["experiment"], user(i)),
                                         expected(step["experiment"], step["config"], i), (step, i))
                elif op == "get_prompt":
                    exp = next(e for e in SCENARIO["configs"][step["config"]]["experiments"] if e["name"] == step["experiment"])
                    for i in range(step["from"], step["to"]):
                        variant = expected(step["experiment"], step["config"], i)
                        self.assertEqual(client.get_prompt(step["experiment"], user(i), "default"),
                                         (variant, exp["variants"][variant]["prompt"], False))
                        self.assertEqual(client.get_variables(step["experiment"], user(i), {"arm": "none", "other": 1}),
                                         {"arm": variant, "other": 1})
                elif op == "flush":
                    self.assertTrue(client.flush(20.0), step)
                elif op == "expect_events":
                    # A spill replay is posted by the background sender, which flush() does not wait for.
                    wait_for(lambda: len(server.events_of(step["type"])) - seen.get(step["type"], 0) >= step["count"], step)
                    got = fresh(step["type"])
                    self.assertEqual(len(got), step["count"], step)
                    if (step.get("expect") or {}).get("same_as_spilled"):
                        key = lambda es: sorted((e["event_id"], e["timestamp"]) for e in es)  # noqa: E731
                        self.assertEqual(key(got), key(spilled))
                elif op == "ack_config_version":
                    with server.lock:
                        server.ack_version = step["version"]
                elif op == "track":
                    self.assertTrue(client.track(step["event"], step["payload"]))
                    client.flush(10.0)
                    last = server.events_of(step["expect"]["type"])[-1]
                    self.assertEqual({k: last.get(k) for k in step["expect"]}, step["expect"])
                    self.assertEqual(last["variant"], client.assign(step["payload"]["experiment_id"], step["payload"]["user_id"]))
                elif op in ("server_down", "server_up"):
                    with server.lock:
                        server.down = op == "server_down"
                elif op == "track_many":
                    for i in range(step["from"], step["to"]):
                        started = time.perf_counter()
                        self.assertTrue(client.track(step["event"], {"experiment_id": step["experiment"], "user_id": user(i), "value": 1}))
                        worst = max(worst, time.perf_counter() - started)
                elif op == "close_client":
                    client.close(10.0)
                elif op == "expect_spilled":
                    with open(spill, encoding="utf-8") as handle:
                        spilled = [json.loads(line) for line in handle if line.strip()]
                    self.assertEqual(len(spilled), step["count"], step)
                else:
                    self.fail(f"unknown op {op}")
        finally:
            if client is not None:
                client.close(1.0)


if __name__ == "__main__":
    unittest.main()
