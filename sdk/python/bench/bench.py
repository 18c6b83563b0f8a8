"""Micro-benchmarks of the caller's path: assign on a warm config, track enqueue.

Each as a ratio to a bare SHA-256 of the same input timed in the same run,
with the load average. The caller's latency while the server is down:
down.py next to this file.

Run: python3 sdk/python/bench/bench.py [--base-url URL --api-key KEY]
Without a base URL it runs the test suite's fake backend in a child process
(so its request handling does not compete for this process's GIL).
It also reports how many events per second the background sender delivers
(to the fake backend, or to the server given by --base-url).
"""

import argparse
import hashlib
import multiprocessing
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

from helpers import experiments  # noqa: E402 - also puts the package on the path
from helpers.fake_server import FakeExpdServer  # noqa: E402
from expd import Client  # noqa: E402


def per_call_us(fn, n):
    started = time.perf_counter()
    for i in range(n):
        fn(i)
    return (time.perf_counter() - started) / n * 1e6


def serve_fake_backend(experiment, addresses):
    server = FakeExpdServer().start()
    server.put_experiment(experiment)
    addresses.put((server.base_url, server.api_key))
    while True:
        time.sleep(3600)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url")
    parser.add_argument("--api-key")
    parser.add_argument("--experiment", default="bench")
    parser.add_argument("-n", type=int, default=200_000)
    args = parser.parse_args()

    backend = None
    if not args.base_url:
        addresses = multiprocessing.Queue()
        experiment = experiments.experiment(args.experiment, weights=(("control", 34), ("concise", 33),
                                                                      ("friendly", 33)))
        backend = multiprocessing.Process(target=serve_fake_backend, args=(experiment, addresses), daemon=True)
        backend.start()
        args.base_url, args.api_key = addresses.get(timeout=10)
    client = Client(api_key=args.api_key, base_url=args.base_url, wait_for_config=10.0,
                    max_queue_size=args.n * 4, flush_interval=0.2)
    if not client.ready:
        sys.exit("no config loaded")
    n, name = args.n, args.experiment
    users = [f"user-{i}" for i in range(1000)]

    for user in users:  # warm: every exposure already sent
        client.assign(name, user)
    # Baseline in the same run: the SHA-256 of the same input alone, what
    # any hash-based assignment pays (the machine's load moves both alike).
    prefix = client._experiment(name)._hash_prefix
    bare = per_call_us(lambda i: hashlib.sha256(prefix + users[i % 1000].encode("utf-8")).digest(), n)
    print("load average " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    print(f"baseline: bare SHA-256 of the same input:    {bare:.2f} us/call")
    warm = per_call_us(lambda i: client.assign(name, users[i % 1000]), n)
    print(f"assign, warm config, exposure already sent: {warm:.2f} us/call ({warm / bare:.1f}x the bare hash)")
    cold = per_call_us(lambda i: client.assign(name, f"new-{i}"), min(n, 50_000))
    print(f"assign, warm config, first exposure queued:  {cold:.2f} us/call ({cold / bare:.1f}x the bare hash)")
    # No variant given: track takes it from assign's cache (no hashing).
    payloads = [{"experiment_id": name, "user_id": user, "value": 1} for user in users]
    enqueue = per_call_us(lambda i: client.track("conversion", payloads[i % 1000]), min(n, 50_000))
    print(f"track enqueue:                               {enqueue:.2f} us/call ({enqueue / bare:.1f}x the bare hash)")

    print("load average " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    payload = payloads[0]
    total = 20_000
    if client.flush(60.0):
        started = time.perf_counter()
        for _ in range(total):
            client.track("conversion", payload)
        delivered = client.flush(120.0)
        elapsed = time.perf_counter() - started
        where = "the fake backend" if backend is not None else args.base_url
        print(f"sender throughput to {where}: {total / elapsed:,.0f} events/s (all delivered: {delivered})")
    client.close()
    if backend is not None:
        backend.terminate()


if __name__ == "__main__":
    main()
