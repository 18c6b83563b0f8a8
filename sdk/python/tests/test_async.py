"""The async forms: they answer from memory and never stall the event loop."""

import asyncio
import time

from helpers.cases import BackendTestCase
from helpers.experiments import experiment


class AsyncClientTest(BackendTestCase):
    def setUp(self):
        super().setUp()
        self.server.put_experiment(experiment("bot", prompts={"control": "P", "treatment": "P"},
                                              variables={"control": {"k": 1}, "treatment": {"k": 1}}))

    def test_async_helpers_agree_with_the_sync_ones(self):
        client = self.make_client()

        async def main():
            self.assertTrue(await client.await_ready(5.0))
            return (await client.aassign("bot", "u1"), await client.aget_prompt("bot", "u1", "d"),
                    await client.aget_variables("bot", "u1", {"x": 0}), await client.atrack("purchase", {
                        "experiment_id": "bot", "user_id": "u1", "value": 3}))

        variant, prompt, variables, queued = asyncio.run(main())
        self.assertEqual(variant, client.assign("bot", "u1"))
        self.assertEqual(prompt, (variant, "P", False))
        self.assertEqual(variables, {"x": 0, "k": 1})
        self.assertTrue(queued)
        self.assertTrue(client.flush(5.0))
        self.assertEqual([e["business_metric"] for e in self.server.events() if e["type"] == "business_event"],
                         ["purchase"])

    def test_waiting_for_the_config_does_not_stall_the_loop(self):
        self.server.stop()
        client = self.make_client()
        ticks = []

        async def ticker():
            for _ in range(10):
                ticks.append(time.monotonic())
                await asyncio.sleep(0.01)

        async def main():
            ready, _ = await asyncio.gather(client.await_ready(0.3), ticker())
            return ready

        self.assertFalse(asyncio.run(main()))
        self.assertEqual(len(ticks), 10)
        self.assertLess(ticks[-1] - ticks[0], 0.25)

    def test_the_async_context_manager_flushes_on_exit(self):
        async def main():
            async with self.make_client(flush_interval=60.0) as client:
                await client.atrack("conversion", {"experiment_id": "bot", "user_id": "u1", "variant": "control"})
            return client

        asyncio.run(main())
        self.assertEqual([e["user_id"] for e in self.server.events()], ["u1"])
