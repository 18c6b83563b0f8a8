"""A config change reaches the client through ETag polling (304, then 200) and through an ingest ack."""

import time
import unittest

from .cases import LiveTestCase
from .recording import Traffic

PROMPTS = {"control": "You are helpful.", "treatment": "Be brief."}


class ConfigRefreshLiveTest(LiveTestCase):
    def changed(self, exp):
        """A new version of ``exp``: another control prompt and other weights."""
        config = {k: exp[k] for k in ("name", "salt", "bucket_count", "variants", "metrics")}
        config["variants"] = dict(config["variants"], control={"prompt": "You are terse.", "variables": {}})
        config["allocation"] = [{"variant": "control", "weight": 10}, {"variant": "treatment", "weight": 90}]
        return self.api.update_experiment(exp["id"], config)

    def test_polling_revalidates_with_304_and_a_change_arrives_as_200(self):
        exp = self.new_experiment("poll", prompts=PROMPTS)
        traffic = Traffic()
        # No events are sent (a minute between flushes), so only polling can bring the change.
        client = self.ready_client(traffic, poll_interval=0.3, flush_interval=60.0)
        self.wait_for_version(client, exp["config_version"])
        etag = f'"{client.config_version}"'
        self.eventually(lambda: [e.status for e in traffic.exchanges("/v1/config")][-2:] == [304, 304],
                        message="polls of an unchanged config did not answer 304")
        revalidations = [e for e in traffic.exchanges("/v1/config") if e.status == 304][-2:]
        self.assertEqual([e.headers.get("If-None-Match") for e in revalidations], [etag, etag])

        updated = self.changed(exp)
        self.wait_for_version(client, updated["config_version"], timeout=5.0)
        polls = traffic.exchanges("/v1/config")
        last_200 = max(i for i, e in enumerate(polls) if e.status == 200)
        self.assertEqual(polls[last_200].headers.get("If-None-Match"), etag, "the change came on a conditional poll")
        self.assertEqual(polls[last_200].answer["config_version"], updated["config_version"])
        self.assertEqual(traffic.exchanges("/v1/events"), [])
        users = [f"u{n}" for n in range(200)]
        self.assertEqual([client.assign(exp["name"], u) for u in users],
                         [self.api.assign(exp["name"], u)["variant"] for u in users])
        variant, prompt, fallback = client.get_prompt(exp["name"], self.user_of(exp, "control"), "dflt")
        self.assertEqual((variant, prompt, fallback), ("control", "You are terse.", False))

    def test_a_newer_config_version_in_an_ingest_ack_refreshes_at_once(self):
        exp = self.new_experiment("ack", prompts=PROMPTS)
        traffic = Traffic()
        # Polling would take a minute: a refresh within seconds comes from an ack.
        client = self.ready_client(traffic, poll_interval=60.0)
        updated = self.changed(exp)
        deadline = time.monotonic() + 10.0
        while (client.config_version or 0) < updated["config_version"] and time.monotonic() < deadline:
            # The server's cache may report the old version for up to 1 s: keep sending until an ack has the new one.
            client.track("conversion", {"experiment_id": exp["id"], "user_id": "ack-user", "value": 1})
            time.sleep(0.25)
        self.assertEqual(client.config_version, updated["config_version"])

        exchanges = traffic.exchanges()
        first_newer_ack = next(i for i, e in enumerate(exchanges) if e.path == "/v1/events" and
                               e.answer["config_version"] == updated["config_version"])
        refetch = [e for e in exchanges[first_newer_ack:] if e.path == "/v1/config"]
        self.assertEqual([e.status for e in refetch][:1], [200], "no config fetch followed the newer ack")
        self.assertEqual(refetch[0].answer["config_version"], updated["config_version"])
        self.assertLessEqual(len(traffic.exchanges("/v1/config")), 3, "fetches beyond the first and the refresh")
        self.assertEqual(client.get_prompt(exp["name"], self.user_of(exp, "control"), "dflt")[1],
                         "You are terse.")

    def user_of(self, exp, variant):
        """A user the server assigns to ``variant``."""
        return next(u for u in (f"probe-{n}" for n in range(1000))
                    if self.api.assign(exp["id"], u)["variant"] == variant)


if __name__ == "__main__":
    unittest.main()
