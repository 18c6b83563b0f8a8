"""Local assign with a five-condition targeting rule and a layer, against
the same call on the experiment without them (testdata/targeting/bench.json;
docs/targeting.md, "Benchmark"), warm: every user assigned once, with
attributes that match. Checks that every user is in before timing.

Run: python3 sdk/python/bench/targeted.py
"""

import json
import multiprocessing
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

from helpers.fake_server import FakeExpdServer  # noqa: E402 - also puts the package on the path
from expd import Client  # noqa: E402

with open(os.path.join(HERE, "..", "..", "..", "testdata", "targeting", "bench.json"), encoding="utf-8") as f:
    BENCH = json.load(f)


def serve(addresses):
    server = FakeExpdServer().start()
    for experiment in BENCH["config"]["experiments"]:
        server.put_experiment(experiment)
    addresses.put((server.base_url, server.api_key))
    while True:
        time.sleep(3600)


def p50_us(calls, rounds=10, n=5_000):
    """The p50 of single calls of each fn(i) in calls, in microseconds, the calls taking
    turns in rounds (so that load changes hit them alike)."""
    samples = [[] for _ in calls]
    for _ in range(rounds):
        for fn, out in zip(calls, samples):
            for i in range(n):
                started = time.perf_counter_ns()
                fn(i)
                out.append(time.perf_counter_ns() - started)
    return [statistics.median(s) / 1000 for s in samples]


def main():
    addresses = multiprocessing.Queue()
    backend = multiprocessing.Process(target=serve, args=(addresses,), daemon=True)
    backend.start()
    base_url, api_key = addresses.get(timeout=10)
    client = Client(api_key=api_key, base_url=base_url, wait_for_config=10.0, max_queue_size=1_000_000, flush_interval=0.2)
    if not client.ready:
        sys.exit("no config loaded")
    attrs = BENCH["attributes"]
    users = [f"user-{i}" for i in range(1000)]
    for user in users:
        if not client.assign_detail("targeted", user, attrs).in_experiment:
            sys.exit(f"{user} is not in the targeted experiment")
        if client.assign_detail("targeted", user, {"plan": "free"}).reason_code != "not_targeted":
            sys.exit(f"{user} is targeted without matching")
        client.assign("plain", user, attrs)
    print("load average " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    plain, targeted = p50_us([
        lambda i: client.assign("plain", users[i % 1000], attrs),
        lambda i: client.assign("targeted", users[i % 1000], attrs),
    ])
    print(f"assign, no targeting:          p50 {plain:.2f} us")
    print(f"assign, 5 conditions + layer:  p50 {targeted:.2f} us ({targeted / plain:.2f}x)")
    client.close()
    backend.terminate()


if __name__ == "__main__":
    main()
