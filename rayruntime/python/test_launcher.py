"""Unit tests of the launcher's pure part (no Ray cluster): it reads
exactly the keys of the protocol description's wire types."""

import contextlib
import io
import json
import os
import tempfile
import unittest

import raytpu_testutil as tu

import _raytpu_launcher as launcher  # noqa: E402 (raytpu_testutil sets sys.path)
import _raytpu_recorder as recorder  # noqa: E402


class ReadsTest(unittest.TestCase):
    def assert_reads(self, reads, types):
        described = tu.described_types()
        for name in types:
            with self.subTest(type=name):
                want = described[name]
                got = reads.get(name, set())
                self.assertLessEqual(got, want["keys"], "%s: the launcher reads keys the description lacks" % name)
                if want["read"] != "some":
                    self.assertEqual(got, want["keys"], "%s: keys the launcher never reads" % name)

    def test_train_config(self):
        reads = {}
        cfg = tu.sample("TrainConfig", reads)
        dataset = cfg._data["datasets"]._data["datasets"]["a"]
        with self.assertRaisesRegex(ValueError, r"datasets\['a'\]\.sink is set"):
            launcher.train_call(cfg)
        dataset._data["sink"] = None  # a trainer's dataset has none
        call = launcher.train_call(cfg)
        self.assert_reads(reads, ["TrainConfig", "TrainScaling", "TrainRun", "TrainJax", "TrainProfiler",
                                  "TrainDatasets", "DataConfig", "IterJaxBatchesKwargs", "Dataset", "Op"])
        self.assertEqual(call["scaling"]["num_workers"], (1, 1), "an elastic group is (min_workers, num_workers)")
        self.assertEqual(call["profiler_port"], 1)
        self.assertEqual(sorted(call), ["checkpoint", "datasets", "failure", "jax", "logging", "profiler_port", "run",
                                        "scaling", "train_loop_config", "train_loop_per_worker"])

    def test_train_config_minimal(self):
        cfg = {"train_loop_per_worker": "m:f", "scaling_config": {"num_workers": 2, "use_tpu": False, "use_gpu": False, "placement_strategy": "PACK"},
               "run_config": {"name": "r", "max_failures": 0, "checkpoint_score_order": "max"}}
        call = launcher.train_call(cfg)
        self.assertEqual(call["scaling"], {"num_workers": 2, "use_tpu": False, "use_gpu": False, "placement_strategy": "PACK"})
        self.assertEqual(call["run"], {"name": "r"})
        self.assertEqual(call["checkpoint"], {"num_to_keep": None, "checkpoint_score_attribute": None, "checkpoint_score_order": "max"})
        self.assertIsNone(call["logging"])
        self.assertIsNone(call["profiler_port"])
        self.assertIsNone(call["datasets"])
        self.assertIsNone(call["jax"])

    def test_pipeline_config(self):
        reads = {}
        call = launcher.pipeline_call(tu.sample("PipelineConfig", reads))
        # PipelineConfig embeds Dataset: its keys are read as PipelineConfig's.
        self.assert_reads(reads, ["PipelineConfig", "Op"])
        self.assertEqual(call["sink"], ("x", {}))

    def test_iter_jax_batches_key(self):
        config = {tu.rt.PROTOCOL["iter_jax_batches_key"]: {"train": {"batch_size": 8}}}
        self.assertEqual(launcher.iter_jax_batches_kwargs(config, "train"), {"batch_size": 8})

    def test_entries(self):
        self.assertEqual(sorted(launcher.LAUNCHERS), sorted(tu.rt.PROTOCOL["entries"]))


class StorageTest(unittest.TestCase):
    def test_emulator_gets_an_anonymous_filesystem(self):
        env = {launcher.STORAGE_EMULATOR_ENV: "http://10.0.0.1:4443"}
        path, fs = launcher.storage_filesystem("gs://bucket/runs", env)
        self.assertEqual(path, "bucket/runs")
        self.assertEqual(fs.type_name, "gcs")
        self.assertEqual(launcher.rt.storage_uri(fs, path + "/checkpoint_0"), "gs://bucket/runs/checkpoint_0")

    def test_others_are_left_to_ray(self):
        for storage, env in [("gs://bucket/runs", {}), ("/mnt/runs", {launcher.STORAGE_EMULATOR_ENV: "http://h:1"}),
                             (None, {launcher.STORAGE_EMULATOR_ENV: "http://h:1"})]:
            with self.subTest(storage=storage, env=env):
                self.assertEqual(launcher.storage_filesystem(storage, env), (storage, None))
        self.assertEqual(launcher.rt.storage_uri(None, "/mnt/runs/checkpoint_0"), "/mnt/runs/checkpoint_0")


class MainTest(unittest.TestCase):
    def run_main(self, job):
        d = tempfile.mkdtemp()
        plan = os.path.join(d, "plan.json")
        with open(plan, "w") as f:
            json.dump({"job": job}, f)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = launcher.main(plan)
        lines = [l for l in out.getvalue().splitlines() if l.startswith(tu.rt.RESULT_PREFIX)]
        self.assertEqual(len(lines), 1, out.getvalue())
        return code, json.loads(lines[0][len(tu.rt.RESULT_PREFIX):]), err.getvalue()

    def test_unknown_entry(self):
        code, result, _ = self.run_main({"launcher": "nope", "launcherConfig": {}})
        self.assertEqual(code, 2)
        self.assertEqual(result["error"]["type"], "ValueError")
        self.assertIn("'nope'", result["error"]["message"])

    def test_failure_is_reported_with_warnings(self):
        def failing(cfg, warnings):
            warnings.append("w1")
            raise RuntimeError("boom")

        saved = dict(launcher.LAUNCHERS)
        self.addCleanup(launcher.LAUNCHERS.update, saved)
        launcher.LAUNCHERS["data"] = failing
        code, result, err = self.run_main({"launcher": "data", "launcherConfig": {}})
        self.assertEqual(code, 1)
        self.assertEqual(result, {"error": {"type": "RuntimeError", "message": "boom"}, "warnings": ["w1"]})
        self.assertIn("Traceback", err)
        self.assertLessEqual(set(result), set(tu.rt.wire_keys("Outcome")))


class SummarizeTest(unittest.TestCase):
    def test_attempts_timeline_and_lost_hosts(self):
        node = lambda i, alive: {"node_id": "n%d" % i, "ip": "10.0.0.%d" % i, "alive": alive, "slice": "s", "tpu_worker_id": str(i)}  # noqa: E731
        before = {"n0": node(0, True), "n1": node(1, True)}
        after = {"n0": node(0, True), "n1": node(1, False)}
        events = [
            {"kind": "group_started", "time": 101.0, "workers": [{"rank": 1, "node_id": "n1"}, {"rank": 0, "node_id": "n0"}], "resumed_from": None},
            {"kind": "state", "time": 102.5, "state": "RESTARTING"},
            {"kind": "recorder_error", "time": 103.0, "message": "reading x: KeyError: 'y'"},
        ]
        out, warnings = recorder.summarize(events, before, after, 100.0)
        self.assertEqual([w["rank"] for w in out["attempts"][0]["workers"]], [0, 1])
        self.assertEqual(out["attempts"][0]["slices"], ["s"])
        self.assertEqual(out["timeline"][0], {"kind": "state", "state": "RESTARTING", "at_s": 2.5})
        self.assertEqual([h["node_id"] for h in out["lost_hosts"]], ["n1"])
        self.assertEqual(warnings, ["reading x: KeyError: 'y'"])
        self.assertNotIn("lost_slices", out)

    def test_lost_slice(self):
        # Slice a loses one host of two, slice b both (preempted) and comes
        # back as new nodes of the same name.
        node = lambda i, s, w, alive: {"node_id": "n%d" % i, "ip": "", "alive": alive, "slice": s, "tpu_worker_id": w}  # noqa: E731
        before = {"n0": node(0, "a", "0", True), "n1": node(1, "a", "1", True), "n2": node(2, "b", "0", True), "n3": node(3, "b", "1", True),
                  "n4": node(4, "", "", True)}
        after = dict(before, n1=node(1, "a", "1", False), n2=node(2, "b", "0", False), n3=node(3, "b", "1", False),
                     n5=node(5, "b", "0", True), n6=node(6, "b", "1", True))
        out, _ = recorder.summarize([], before, after, 100.0)
        self.assertEqual([h["node_id"] for h in out["lost_hosts"]], ["n1", "n2", "n3"])
        self.assertEqual(out["lost_slices"], ["b"])


if __name__ == "__main__":
    unittest.main()
