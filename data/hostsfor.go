package data

import (
	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/tpu"
)

// hostsForPath roots HostsForSlices' errors: its arguments are a
// JaxTrainer's ScalingConfig fields, under Ray's names.
var hostsForPath = field.NewPath("scaling_config")

// HostsForSlices returns the Hosts of a JaxTrainer that runs one worker per
// TPU host on numSlices slices of the given accelerator and topology: what
// train.ScalingConfig{UseTPU: true, Accelerator: accelerator, Topology:
// topology, NumSlices: numSlices, ChipsPerHost: chipsPerHost} starts, so
// that Predict sees the same hosts as the trainer (package data does not
// import train: front ends never import each other).
//
// accelerator is a TPU generation in any spelling the catalog accepts
// (v6e, TPU-V6E, v5litepod) and topology a shape Ray accepts for it
// ("4x4"). numSlices 0 means one slice, as in ScalingConfig; chipsPerHost
// 0 means Ray's chips per host for the topology. A negative count, an
// unknown generation or a topology Ray rejects is a field.ErrorList under
// scaling_config (accelerator_type, topology, num_slices, chips_per_host),
// every problem at once.
//
// The result's Workers is the hosts of one slice times the slices, its
// Accelerator the generation's name and ChipsPerHost each host's chips;
// set NotSplit or LocalDevices on it as the dataset needs.
func HostsForSlices(accelerator, topology string, numSlices, chipsPerHost int) (Hosts, error) {
	f := tpu.SliceFields{
		Generation:   hostsForPath.Child("accelerator_type"),
		Topology:     hostsForPath.Child("topology"),
		ChipsPerHost: hostsForPath.Child("chips_per_host"),
		MachineType:  hostsForPath.Child("machine_type"),
	}
	var errs field.ErrorList
	if numSlices < 0 {
		errs = append(errs, field.Invalid(hostsForPath.Child("num_slices"), numSlices, "cannot be negative; 0 means one slice"))
	}
	if chipsPerHost < 0 {
		errs = append(errs, field.Invalid(f.ChipsPerHost, chipsPerHost, "cannot be negative; 0 means Ray's chips per host for the topology"))
		chipsPerHost = 0 // report the generation and topology too
	}
	sl, serrs := tpu.SliceSpec{Generation: accelerator, Topology: topology, ChipsPerHost: chipsPerHost}.Resolve(tpu.TargetRay, f)
	errs = append(errs, serrs...)
	if len(errs) > 0 {
		return Hosts{}, errs
	}
	return Hosts{Workers: sl.Hosts() * max(numSlices, 1), Accelerator: sl.Generation.Name, ChipsPerHost: sl.ChipsPerHost}, nil
}
