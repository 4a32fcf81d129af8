package raycluster

import "testing"

// TestTracebackReason checks a failed `ray start` is reported only once
// Python has written the traceback's exception line, so the error never
// carries a traceback cut off in the middle.
func TestTracebackReason(t *testing.T) {
	const head = "2026-12-06 INFO scripts.py:1092 -- starting\n" +
		"Traceback (most recent call last):\n" +
		"  File \"ray/_private/parameter.py\", line 435, in _check_usage\n" +
		"    assert \"CPU\" not in self.resources, build_error(\"CPU\", \"num_cpus\")\n"
	const reason = "AssertionError: {'CPU': 3} -> `CPU` cannot be a custom resource. Use `ray start --num-cpus=1`"
	for _, tc := range []struct {
		name, log, want string
		ok              bool
	}{
		{"no traceback", "2026-12-06 INFO scripts.py:1092 -- starting\n", "", false},
		{"header only", "Traceback (most recent call last):\n", "", false},
		{"frames only", head, "", false},
		{"exception line half written", head + reason[:20], "", false},
		{"complete", head + reason + "\n", reason, true},
		{"tab-indented frame", "Traceback (most recent call last):\n\tat x\nValueError: bad\n", "ValueError: bad", true},
		{"chained: the last traceback counts", head + reason + "\n\nDuring handling of the above exception, another exception occurred:\n\n" +
			"Traceback (most recent call last):\n  File \"x\", line 1\nRuntimeError: outer\n", "RuntimeError: outer", true},
		{"chained, second still being written", head + reason + "\n\nDuring handling of the above exception, another exception occurred:\n\n" +
			"Traceback (most recent call last):\n  File \"x\", line 1\n", "", false},
	} {
		got, ok := tracebackReason([]byte(tc.log))
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: tracebackReason = %q, %v; want %q, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}
