package backendtest_test

import (
	"fmt"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/backend/backendtest"
	"github.com/raytpu/raytpu/placement"
)

// The suite's default plans are valid plans of every kind: what a backend
// of your own runs in the suite unless it supplies its own.
func ExampleJobPlan() {
	job := backendtest.JobPlan("nightly", placement.KindJaxTrainer)
	fmt.Println(job.Kind, job.Name, job.Job.Entrypoint)
	fmt.Println(job.Slices[0].PodType, job.Slices[0].HostsPerSlice, "host")
	fmt.Println(backend.CheckPlan("mine", job, backend.RunKinds()...))

	app := backendtest.AppPlan("chat")
	cfg, err := app.Serve.Config.MarshalJSON() // the config Ray is sent
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(app.Kind, string(cfg))
	fmt.Println(backendtest.SlicePlan("reserve").Kind)
	// Output:
	// JaxTrainer nightly python -c "print('raytpu backendtest')"
	// v4-8 1 host
	// <nil>
	// Application {"name":"chat","route_prefix":"/chat","import_path":"backendtest:app","deployments":[{"name":"Echo","num_replicas":1}]}
	// SlicePlacementGroup
}
