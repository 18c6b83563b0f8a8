"""The caller's latency of score() beside track(): both only enqueue (score also validates its fields).

Single calls timed alone, taking turns in rounds so that load changes hit
them alike; p50 and p99 per call. The client points at a closed port with
a long flush interval: nothing is sent while measuring, and the queue is
emptied every 10,000 calls as the sender would.

Run: python3 sdk/python/bench/score.py
"""

import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

import helpers  # noqa: E402,F401 - puts the package on the path
from expd import Client  # noqa: E402

ROUNDS, PER_ROUND = 10, 5_000


def main():
    client = Client(api_key="pk_bench", base_url="http://127.0.0.1:9", flush_interval=3600.0,
                    max_queue_size=10_000_000, poll_interval=3600.0)
    queue = client._sender._queue
    payloads = [{"experiment_id": "bench", "user_id": f"user-{i}", "variant": "control", "value": 1} for i in range(1000)]
    call_ids = [f"5f0c{i:04d}-7a1b-4c2d-8e3f-0a1b2c3d4e5f" for i in range(1000)]
    calls = [
        ("track (business event)", lambda i: client.track("conversion", payloads[i % 1000])),
        ("score (thumbs_up, human)", lambda i: client.score(call_ids[i % 1000], "thumbs_up", True)),
        ("score (rating, comment, timestamp)", lambda i: client.score(call_ids[i % 1000], "rating", 4,
                                                                      comment="clear and short",
                                                                      timestamp=time.time())),
    ]
    samples = [[] for _ in calls]
    clock = time.perf_counter_ns
    for _ in range(ROUNDS):
        for (_, fn), out in zip(calls, samples):
            for i in range(PER_ROUND):
                if i % 10_000 == 0:
                    queue.clear()
                started = clock()
                fn(i)
                out.append(clock() - started)
    print("load average " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    print(f"{'call':40}{'p50':>10}{'p99':>10}{'p50/track':>11}")
    base = sorted(samples[0])[len(samples[0]) // 2]
    for (label, _), out in zip(calls, samples):
        out.sort()
        p50, p99 = out[len(out) // 2], out[len(out) * 99 // 100]
        print(f"{label:40}{p50 / 1000:>8.2f}us{p99 / 1000:>8.2f}us{p50 / base:>11.2f}")
    client.close(timeout=0.1)


if __name__ == "__main__":
    main()
