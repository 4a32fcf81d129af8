package serveconfig_test

import (
	"encoding/json"
	"fmt"

	"github.com/raytpu/raytpu/serveconfig"
)

// num_replicas and max_queued_requests say each mode with its own value:
// a count, "auto", or unset; a limit, no limit, or unset. No number
// selects a mode, so ReplicaCount(-1) stays a count that validation
// refuses.
func ExampleReplicas() {
	for _, d := range []serveconfig.Deployment{
		{Name: "fixed", NumReplicas: serveconfig.ReplicaCount(2), MaxQueuedRequests: serveconfig.MaxQueued(100)},
		{Name: "auto", NumReplicas: serveconfig.AutoReplicas(), MaxQueuedRequests: serveconfig.NoQueueLimit()},
		{Name: "defaults"},
	} {
		b, _ := json.Marshal(d)
		fmt.Println(string(b))
	}
	var r serveconfig.Replicas
	_ = json.Unmarshal([]byte(`"auto"`), &r)
	fmt.Println(r.IsAuto(), serveconfig.ReplicaCount(-1).IsAuto())
	// Output:
	// {"name":"fixed","num_replicas":2,"max_queued_requests":100}
	// {"name":"auto","num_replicas":"auto","max_queued_requests":-1}
	// {"name":"defaults"}
	// true false
}
