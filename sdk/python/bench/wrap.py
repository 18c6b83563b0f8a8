"""What ``wrap`` adds to a model call, in microseconds per call.

A provider whose ``chat.completions.create`` answers at once with an
OpenAI-shaped response (so only expd's work is measured), called bare and
wrapped inside ``as_user``, in the same run; the sender delivers to the test
suite's fake backend in a child process. Prints the added time and the ratio;
run with ``--profile`` to see where the added time goes.

Run: python3 sdk/python/bench/wrap.py [-n 50000] [--redact] [--profile]
(``--redact``: the client redacts prompt and response, ``redact=True``)
"""

import argparse
import cProfile
import multiprocessing
import os
import pstats
import sys
import time
from types import SimpleNamespace as NS

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

from helpers import experiments  # noqa: E402 - also puts the package on the path
from helpers.fake_server import FakeExpdServer  # noqa: E402
from expd import Client  # noqa: E402

RESPONSE = NS(
    id="chatcmpl-1", model="gpt-4o-mini-2024-07-18",
    choices=[NS(index=0, message=NS(role="assistant", content="Sure: here is a short answer to your question."))],
    usage=NS(prompt_tokens=42, completion_tokens=12, total_tokens=54),
)
MESSAGES = [{"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": "What is the capital of France? Answer in one word."}]


class Provider:
    """The smallest OpenAI-style client: chat.completions.create returns at once."""

    def __init__(self):
        self.chat = NS(completions=NS(create=lambda **kwargs: RESPONSE))


def serve_fake_backend(addresses):
    server = FakeExpdServer().start()
    server.put_experiment(experiments.experiment("bench"))
    addresses.put((server.base_url, server.api_key))
    while True:
        time.sleep(3600)


def per_call_us(client, provider, n, clock=time.thread_time):
    """Per call, by ``clock``: the calling thread's CPU time by default, which
    the sender thread and the machine's other load do not inflate."""
    create = provider.chat.completions.create
    started = clock()
    with client.as_user("user-1"):
        for _ in range(n):
            create(model="gpt-4o-mini", messages=MESSAGES)
    return (clock() - started) / n * 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=50_000)
    parser.add_argument("--redact", action="store_true", help="redact prompt and response (redact=True)")
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    addresses = multiprocessing.Queue()
    backend = multiprocessing.Process(target=serve_fake_backend, args=(addresses,), daemon=True)
    backend.start()
    base_url, api_key = addresses.get(timeout=10)
    client = Client(api_key=api_key, base_url=base_url, wait_for_config=10.0, max_queue_size=args.n * 20,
                    redact=args.redact)
    if not client.ready:
        sys.exit("no config loaded")
    bare, wrapped = Provider(), client.wrap(Provider(), "bench")
    per_call_us(client, bare, 2000)
    per_call_us(client, wrapped, 2000)
    # Best of five alternating rounds: the machine's load moves both alike.
    rounds = [(per_call_us(client, bare, args.n), per_call_us(client, wrapped, args.n)) for _ in range(5)]
    b = min(r[0] for r in rounds)
    w = min(r[1] for r in rounds)
    wall = min(per_call_us(client, wrapped, args.n, time.perf_counter) for _ in range(3))
    print("load average " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    print(f"bare call:    {b:.2f} us of the caller's CPU")
    print(f"wrapped call: {w:.2f} us of the caller's CPU (added {w - b:.2f} us); wall clock {wall:.2f} us")
    if args.profile:
        profile = cProfile.Profile()
        profile.runcall(per_call_us, client, wrapped, args.n)
        pstats.Stats(profile).sort_stats("tottime").print_stats(15)
    client.close(timeout=1.0)
    backend.terminate()


if __name__ == "__main__":
    main()
