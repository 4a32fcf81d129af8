package serveconfig_test

import (
	"encoding/json"
	"testing"

	"github.com/raytpu/raytpu/serveconfig"
)

// TestValuesAreTotal: the zero values say "unset", nil targets are
// errors, and nothing panics on nil or negative input.
func TestValuesAreTotal(t *testing.T) {
	t.Parallel()
	var r serveconfig.Replicas
	var q serveconfig.QueueLimit
	if !r.IsZero() || r.IsAuto() || r.String() != "unset" || !q.IsZero() || q.IsUnlimited() || q.String() != "unset" {
		t.Errorf("zero values: %v %v", r, q)
	}
	if n, ok := serveconfig.ReplicaCount(-1).Count(); !ok || n != -1 {
		t.Errorf("ReplicaCount(-1) is not kept as the count -1 for validation to refuse: %d %v", n, ok)
	}
	if serveconfig.ReplicaCount(-1).IsAuto() {
		t.Error("ReplicaCount(-1) means auto")
	}
	if n, ok := serveconfig.MaxQueued(-1).Limit(); !ok || n != -1 || serveconfig.MaxQueued(-1).IsUnlimited() {
		t.Error("MaxQueued(-1) means no limit")
	}
	for _, c := range []struct {
		v    any
		want string
	}{
		{serveconfig.ReplicaCount(3), "3"}, {serveconfig.AutoReplicas(), `"auto"`}, {r, "null"},
		{serveconfig.MaxQueued(5), "5"}, {serveconfig.NoQueueLimit(), "-1"}, {q, "null"},
	} {
		b, err := json.Marshal(c.v)
		if err != nil || string(b) != c.want {
			t.Errorf("%v: %s %v, want %s", c.v, b, err, c.want)
		}
	}
	for _, in := range []string{`"lots"`, `1.5`, `true`, `{}`} {
		if err := json.Unmarshal([]byte(in), &r); err == nil {
			t.Errorf("num_replicas %s: no error", in)
		}
	}
	for _, in := range []string{`"none"`, `1.5`} {
		if err := json.Unmarshal([]byte(in), &q); err == nil {
			t.Errorf("max_queued_requests %s: no error", in)
		}
	}
	var nilR *serveconfig.Replicas
	var nilQ *serveconfig.QueueLimit
	var nilA *serveconfig.Application
	var nilD *serveconfig.Deployment
	for name, err := range map[string]error{
		"Replicas":    nilR.UnmarshalJSON([]byte("1")),
		"QueueLimit":  nilQ.UnmarshalJSON([]byte("1")),
		"Application": nilA.UnmarshalJSON([]byte("{}")),
		"Deployment":  nilD.UnmarshalJSON([]byte("{}")),
	} {
		if err == nil {
			t.Errorf("nil *%s: UnmarshalJSON: no error", name)
		}
	}
	if nilA.Deployment("x") != nil {
		t.Error("nil application holds a deployment")
	}
	// A config holding itself is an error, not a crash.
	self := map[string]any{}
	self["self"] = self
	if _, err := (serveconfig.Application{Deployments: []serveconfig.Deployment{{Name: "d", UserConfig: self}}}).MarshalJSON(); err == nil {
		t.Error("user_config holding itself: no error")
	}
}
