package raycluster

import (
	"context"
	"net/http"
	"strconv"
	"time"
)

// ProcessCPU is the CPU seconds a process has used so far, for the
// benchmarks of package raycluster_test.
func ProcessCPU(pid int) (float64, bool) {
	cpu, _, ok := processUsage("/proc/" + strconv.Itoa(pid))
	return cpu, ok
}

// ProbeJobsAPI and ProbeVersion run the start's checks of the Jobs API
// once against the dashboard at url.
func ProbeJobsAPI(ctx context.Context, url string) error {
	return (&Cluster{DashboardURL: url}).jobsProbe(ctx, &http.Client{Timeout: 5 * time.Second})
}

func ProbeVersion(ctx context.Context, url string) error {
	return (&Cluster{DashboardURL: url}).versionOK(ctx, &http.Client{Timeout: 5 * time.Second})
}
