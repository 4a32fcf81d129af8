package raycluster

import "strconv"

// ProcessCPU is the CPU seconds a process has used so far, for the
// benchmarks of package raycluster_test.
func ProcessCPU(pid int) (float64, bool) {
	cpu, _, ok := processUsage("/proc/" + strconv.Itoa(pid))
	return cpu, ok
}
