"""Unit tests of _raytpu_runtime (no Ray cluster)."""

import contextlib
import io
import os
import unittest

import raytpu_testutil as tu

rt = tu.rt


class ProtocolTest(unittest.TestCase):
    def test_constants_come_from_the_description(self):
        self.assertEqual(rt.RESULT_PREFIX, rt.PROTOCOL["result_prefix"])
        self.assertEqual(rt.PROFILER_PREFIX, rt.PROTOCOL["profiler_prefix"])
        self.assertEqual(rt.PROTOCOL["files"]["protocol"], rt.PROTOCOL_FILE)

    def test_unknown_wire_type(self):
        with self.assertRaisesRegex(KeyError, "NoSuchType"):
            rt.wire_keys("NoSuchType")

    def test_error_info_is_an_outcome_error(self):
        self.assertEqual(set(rt.error_info(ValueError("bad"))), set(rt.wire_keys("OutcomeError")))
        self.assertEqual(rt.error_info(ValueError("bad")), {"type": "ValueError", "message": "bad"})


class ReportTest(unittest.TestCase):
    def test_report_exception_logs_the_traceback_and_warns(self):
        warnings, err = [], io.StringIO()
        with contextlib.redirect_stderr(err):
            try:
                raise OSError("disk gone")
            except OSError:
                line = rt.report_exception("writing x", warnings)
        self.assertEqual(line, "writing x: OSError: disk gone")
        self.assertEqual(warnings, [line])
        self.assertIn("Traceback (most recent call last)", err.getvalue())
        self.assertIn("raytpu: writing x:", err.getvalue())

    def test_profiler_line(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rt.print_profiler_report({"port": 1, "rank": 0})
        self.assertEqual(out.getvalue(), rt.PROFILER_PREFIX + '{"port": 1, "rank": 0}\n')


class ProfilerTest(unittest.TestCase):
    def setUp(self):
        os.environ.pop(rt.PROFILER_PORT_ENV, None)
        self.addCleanup(os.environ.pop, rt.PROFILER_PORT_ENV, None)

    def test_free_port_started_once_per_process(self):
        started = []
        got = rt.start_profiler(0, start_server=started.append)
        self.assertEqual(list(got), ["port"])
        self.assertEqual(started, [got["port"]])
        self.assertGreater(got["port"], 0)
        self.assertEqual(rt.start_profiler(0, start_server=started.append), got)
        self.assertEqual(len(started), 1, "a second server started in the same process")

    def test_locked_port_is_an_error_not_a_shared_server(self):
        port = rt.free_port(0)
        fd = rt.lock_profiler_port(port)
        self.addCleanup(os.close, fd)
        err, started = io.StringIO(), []
        with contextlib.redirect_stderr(err):
            got = rt.start_profiler(port, start_server=started.append)
        self.assertEqual(started, [])
        self.assertIn("port %d: another raytpu profiler server" % port, got["error"])
        self.assertIn("Traceback", err.getvalue())
        self.assertNotIn(rt.PROFILER_PORT_ENV, os.environ)

    def test_failing_server_is_reported(self):
        def fail(port):
            raise RuntimeError("no jax")

        with contextlib.redirect_stderr(io.StringIO()):
            got = rt.start_profiler(0, start_server=fail)
        self.assertEqual(got, {"error": "RuntimeError: no jax"})


class PrivateRayAPITest(unittest.TestCase):
    def test_installed_ray_has_every_private_api(self):
        import ray

        missing = rt.missing_private_apis()
        self.assertEqual(missing, [], "Ray %s lacks private APIs the runtime relies on (checked with Ray %s):\n%s"
                         % (ray.__version__, rt.PROTOCOL["ray"]["checked_version"], "\n".join(missing)))
        self.assertGreater(len(rt.PROTOCOL["ray"]["private_apis"]), 0)

    def test_missing_api_is_named(self):
        cases = [
            ({"module": "ray.no_such_module", "attr": "X"}, "module ray.no_such_module"),
            ({"module": "ray.train.v2._internal.execution.callback", "attr": "ControllerCallback.no_such_hook"},
             "ControllerCallback.no_such_hook: no attribute 'no_such_hook'"),
            ({"module": "ray.train.v2._internal.execution.controller.state", "attr": "TrainControllerState._no_such_field"},
             "no attribute '_no_such_field'"),
        ]
        for api, want in cases:
            with self.subTest(api=api):
                self.assertIn(want, rt.resolve_private_api(api) or "")

    def test_instance_attributes_resolve(self):
        for attr in ("TrainControllerState._state_type", "ErroredState.training_failed_error"):
            with self.subTest(attr=attr):
                self.assertIsNone(rt.resolve_private_api(
                    {"module": "ray.train.v2._internal.execution.controller.state", "attr": attr}))


if __name__ == "__main__":
    unittest.main()
