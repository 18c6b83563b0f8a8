"""Local assignment against the real server's config equals POST /v1/assign."""

import unittest

from .cases import LiveTestCase

USERS = [f"user-{n}" for n in range(2000)]
WEIGHTS = (("control", 50), ("concise", 30), ("friendly", 20))


class AssignLiveTest(LiveTestCase):
    def test_assign_equals_the_assign_route_for_2000_users_by_name_and_by_id(self):
        exp = self.new_experiment("assign", weights=WEIGHTS)
        client = self.ready_client()
        self.wait_for_version(client, exp["config_version"])
        for ref in (exp["name"], exp["id"]):
            with self.subTest(addressed_by=ref):
                local = {user: client.assign(ref, user) for user in USERS}
                served = {user: self.api.assign(ref, user)["variant"] for user in USERS}
                mismatches = {u: (local[u], served[u]) for u in USERS if local[u] != served[u]}
                self.assertEqual(mismatches, {}, "local vs served")
                self.assertEqual(set(local.values()), {"control", "concise", "friendly"})

    def test_assign_equals_the_assign_route_after_a_weight_change(self):
        exp = self.new_experiment("reweigh", weights=WEIGHTS)
        updated = self.api.update_experiment(exp["id"], dict(self.config_of(exp), allocation=[
            {"variant": "control", "weight": 20}, {"variant": "concise", "weight": 30}, {"variant": "friendly", "weight": 50}]))
        client = self.ready_client()
        self.wait_for_version(client, updated["config_version"])
        # Users never assigned before get the new map's variant on both sides.
        fresh = [f"fresh-{n}" for n in range(300)]
        self.assertEqual([client.assign(exp["id"], u) for u in fresh],
                         [self.api.assign(exp["name"], u)["variant"] for u in fresh])

    @staticmethod
    def config_of(exp):
        return {k: exp[k] for k in ("name", "salt", "bucket_count", "allocation", "variants", "metrics")}


if __name__ == "__main__":
    unittest.main()
