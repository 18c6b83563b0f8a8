"""The caller's latency while expd is down, against the same client with the server up.

Three clients in this process on the same config (the conformance scenario's
two-arms 50/50): one whose server is up (the test suite's fake backend in a
child process, so that its request handling does not compete for this
process's GIL), one whose server refuses connections, one whose server
accepts and never answers. Their sender and poller threads run with short
intervals, so the down ones keep failing and retrying while we measure.
Each call (a warm ``assign``, a ``track``, a wrapped model call to an
in-process fake OpenAI client) is timed alone; the states take turns in
rounds so that load changes hit them alike. p50 and p99 are reported
against the up client and against baselines timed the same way: a bare
SHA-256 of the same input (assign, track) and the same provider call
unwrapped (model call).

Run: python3 sdk/python/bench/down.py
"""

import hashlib
import json
import multiprocessing
import os
import socket
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

from helpers.fake_openai import FakeOpenAI  # noqa: E402 - also puts the package on the path
from helpers.fake_server import FakeExpdServer  # noqa: E402
from expd import Client  # noqa: E402
from expd._config import ConfigSnapshot  # noqa: E402

SCENARIO = os.path.join(HERE, "..", "..", "..", "testdata", "conformance", "scenario.json")
ROUNDS, FAST_N, CALL_N = 5, 10_000, 1_000  # per round


def serve(config, addresses):
    server = FakeExpdServer().start()
    for experiment in config["experiments"]:
        server.put_experiment(experiment)
    addresses.put((server.base_url, server.api_key))
    while True:
        time.sleep(3600)


def load_line():
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def main():
    with open(SCENARIO, encoding="utf-8") as handle:
        config = json.load(handle)["configs"][0]
    addresses = multiprocessing.Queue()
    backend = multiprocessing.Process(target=serve, args=(config, addresses), daemon=True)
    backend.start()
    up_url, api_key = addresses.get(timeout=30)

    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    refused_url = f"http://127.0.0.1:{closed.getsockname()[1]}"
    closed.close()
    hanging = socket.socket()  # listens, never accepts: the kernel completes connections nobody answers
    hanging.bind(("127.0.0.1", 0))
    hanging.listen(4096)
    hanging_url = f"http://127.0.0.1:{hanging.getsockname()[1]}"

    options = dict(api_key=api_key, poll_interval=1.0, flush_interval=0.05, retry_backoff=0.02, max_backoff=0.2,
                   request_timeout=2.0, close_timeout=0.01)
    states = ("up", "refused", "hanging")
    clients = {"up": Client(base_url=up_url, wait_for_config=30.0, **options),
               "refused": Client(base_url=refused_url, **options),
               "hanging": Client(base_url=hanging_url, **options)}
    if not clients["up"].ready:
        sys.exit("no config from the fake backend")
    for name in states[1:]:  # the config they loaded before the server went away
        clients[name]._poller._install(ConfigSnapshot.parse(config, '"1"'), None)
    users = [f"user-{i}" for i in range(1000)]
    provider = FakeOpenAI()
    wrapped = {name: clients[name].wrap(provider, "two-arms") for name in states}
    for client in clients.values():
        for user in users:
            client.assign("two-arms", user)  # warm

    samples = {}

    def time_each(key, n, fn):
        out = samples.setdefault(key, [])
        clock = time.perf_counter_ns
        for i in range(n):
            started = clock()
            fn(i)
            out.append(clock() - started)

    prefix = clients["up"]._experiment("two-arms")._hash_prefix
    messages = [{"role": "user", "content": "Hi"}]
    for _ in range(ROUNDS):
        time_each("baseline SHA-256", FAST_N, lambda i: hashlib.sha256(prefix + users[i % 1000].encode("utf-8")).digest())
        time_each("baseline provider call", CALL_N,
                  lambda i: provider.chat.completions.create(model="gpt-4o", messages=messages))
        for name in states:
            client = clients[name]
            time_each(f"{name} assign", FAST_N, lambda i: client.assign("two-arms", users[i % 1000]))
            time_each(f"{name} track", FAST_N, lambda i: client.track(
                "purchase", {"experiment_id": "two-arms", "user_id": users[i % 1000], "value": 1}))

            def model_call(i, client=client, name=name):
                with client.as_user(users[i % 1000]):
                    wrapped[name].chat.completions.create(model="gpt-4o", messages=messages)

            time_each(f"{name} model call", CALL_N, model_call)

    def q(key, p):
        s = sorted(samples[key])
        return s[int(p * (len(s) - 1))]

    def us(ns):
        return f"{ns / 1000:10.3f}µs"

    print(load_line())
    base_hash, base_call = q("baseline SHA-256", 0.5), q("baseline provider call", 0.5)
    print(f"baselines (p50): SHA-256 {us(base_hash)}, provider call unwrapped {us(base_call)}")
    print(f"{'state call':20}{'p50':>12}{'p99':>12}{'p50/base':>10}{'p99/base':>10}{'p50/up':>10}{'p99/up':>10}")
    for what in ("assign", "track", "model call"):
        base = base_call if what == "model call" else base_hash
        for name in states:
            k, u = f"{name} {what}", f"up {what}"
            print(f"{k:20}{us(q(k, 0.5))}{us(q(k, 0.99))}{q(k, 0.5) / base:10.2f}{q(k, 0.99) / base:10.2f}"
                  f"{q(k, 0.5) / q(u, 0.5):10.2f}{q(k, 0.99) / q(u, 0.99):10.2f}")
    for name in states:
        print(f"{name} client: {clients[name].dropped_events} events dropped (queue bound 10,000)")
    for client in clients.values():
        client.close()
    hanging.close()
    backend.terminate()


if __name__ == "__main__":
    main()
