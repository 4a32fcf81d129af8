package rayruntime_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/rayruntime"
)

// A backend ships the launcher and the plan at the root of the working
// directory, runs Entrypoint and reads the outcome from the job's log.
func Example() {
	plan := &placement.Plan{APIVersion: placement.APIVersion, Name: "demo", Job: &placement.Job{Launcher: rayruntime.EntryData}}
	files, err := rayruntime.Files(plan)
	if err != nil {
		fmt.Println(err)
		return
	}
	var names []string
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	fmt.Println(names)
	fmt.Println(rayruntime.Entrypoint)

	log := "(pid=7) starting\nRAYTPU_RESULT {\"kind\": \"Pipeline\", \"warnings\": [\"a warning\"]}\n"
	raw, err := rayruntime.ParseResult(log)
	if err != nil {
		fmt.Println(err)
		return
	}
	var out rayruntime.Outcome
	if err := json.Unmarshal(raw, &out); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out.Kind, out.Error == nil, out.Warnings)
	// Output:
	// [_raytpu_launcher.py _raytpu_plan.json _raytpu_recorder.py _raytpu_runtime.py raytpu_protocol.json]
	// python _raytpu_launcher.py
	// Pipeline true [a warning]
}

// A backend writes the replica runtime package and lists its directory in
// the Serve application's runtime_env py_modules.
func ExampleWriteModule() {
	dir, err := os.MkdirTemp("", "raytpu-replica-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	pkg, err := rayruntime.WriteModule(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(filepath.Base(pkg), rayruntime.ReservationKey, rayruntime.ReservationVersion)
	fmt.Println(rayruntime.SliceGroupName("chat", "Model", "abc123"))
	// Output:
	// raytpu_replica raytpu_slice 1
	// raytpu-slice:chat:Model:abc123
}

// The protocol description lists every wire type's keys.
func ExampleProtocol() {
	var p struct {
		ResultPrefix string `json:"result_prefix"`
		Types        []struct {
			Name string `json:"name"`
			Keys []struct {
				Name string `json:"name"`
			} `json:"keys"`
		} `json:"types"`
	}
	if err := json.Unmarshal(rayruntime.Protocol(), &p); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%q\n", p.ResultPrefix)
	for _, t := range p.Types {
		if t.Name == "TrainProfiler" {
			fmt.Println(t.Name, t.Keys[0].Name)
		}
	}
	// Output:
	// "RAYTPU_RESULT "
	// TrainProfiler port
}
