"""Unit tests of the replica runtime's pure part (no Ray cluster): it
reads exactly the keys of the protocol description's wire types."""

import unittest

import raytpu_testutil as tu

import raytpu_replica  # noqa: E402 (raytpu_testutil sets sys.path)
from raytpu_replica import _reservation as res  # noqa: E402


class ReservationTest(unittest.TestCase):
    def user_config(self, reads):
        reservation = tu.sample("SliceReservation", reads)
        data = dict(reservation._data, version=res.RESERVATION_VERSION)
        return {res.RESERVATION_KEY: tu.Recording("SliceReservation", data, reads),
                res.PROFILER_KEY: tu.sample("ReplicaProfiler", reads), "scale": 2}

    def test_reads_every_key(self):
        reads = {}
        reservation, profiler, rest = res.split_user_config(self.user_config(reads))
        call = res.reservation_call(reservation)
        described = tu.described_types()
        for name in ("SliceReservation", "ReplicaProfiler"):
            with self.subTest(type=name):
                self.assertEqual(reads.get(name), described[name]["keys"])
        self.assertEqual(rest, {"scale": 2})
        self.assertEqual(profiler, {"port": 1})
        self.assertEqual(sorted(call["kwargs"]), ["accelerator_version", "head_reservation_timeout_s", "resources_per_bundle", "strategy", "topology"])

    def test_keys_come_from_the_description(self):
        self.assertEqual(raytpu_replica.RESERVATION_KEY, tu.rt.PROTOCOL["reservation_key"])
        self.assertEqual(raytpu_replica.PROFILER_KEY, tu.rt.PROTOCOL["profiler_key"])
        self.assertEqual(raytpu_replica.RESERVATION_VERSION, tu.rt.PROTOCOL["reservation_version"])

    def test_refusals_name_the_key(self):
        key = res.RESERVATION_KEY
        cases = [
            ({}, "user_config has no %r" % key),
            ({key: {"version": res.RESERVATION_VERSION + 1}}, "user_config.%s.version %d is not supported" % (key, res.RESERVATION_VERSION + 1)),
        ]
        for cfg, want in cases:
            with self.subTest(cfg=cfg):
                with self.assertRaises(ValueError) as ctx:
                    res.split_user_config(cfg)
                self.assertIn(want, str(ctx.exception))
        bad = dict(tu.sample("SliceReservation", {})._data, num_bundles=2, num_hosts=4)
        with self.assertRaisesRegex(ValueError, r"%s\.num_bundles is 2 for 4 hosts" % key):
            res.reservation_call(bad)

    def test_no_profiler(self):
        _, profiler, _ = res.split_user_config({res.RESERVATION_KEY: {"version": res.RESERVATION_VERSION}})
        self.assertIsNone(profiler)

    def test_slice_group_name(self):
        self.assertEqual(res.slice_group_name("app", "dep", "r1"), tu.rt.PROTOCOL["slice_group_prefix"] + ":app:dep:r1")

    def test_hosts_rank_by_tpu_worker_id(self):
        infos = [{"bundle": 0, "labels": {"ray.io/tpu-worker-id": "1"}}, {"bundle": 1, "labels": {"ray.io/tpu-worker-id": "0"}},
                 {"bundle": 2, "labels": {}}]
        self.assertEqual(sorted(range(3), key=lambda i: res.worker_id(infos[i])), [1, 0, 2])

    def test_bundle_options(self):
        self.assertEqual(res.bundle_options({"CPU": 1, "TPU": 4, "memory": 10}),
                         {"num_cpus": 1, "memory": 10, "resources": {"TPU": 4}})


if __name__ == "__main__":
    unittest.main()
