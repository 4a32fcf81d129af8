package cli

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/raytpu/raytpu/profiler"
	"github.com/raytpu/raytpu/ray"
)

// jobWorkerTarget finds the profiler server of train worker rank of job
// in the job's log, and returns its address, the trace's host name and a
// description.
func jobWorkerTarget(ctx context.Context, c *ray.Client, job string, rank int) (addr, host, what string, err error) {
	log, err := c.JobLogs(ctx, job)
	if err != nil {
		return "", "", "", fmt.Errorf("job %s: %w", job, err)
	}
	s, err := profiler.FindRank(profiler.ServersFromLog(log), rank)
	if err != nil {
		return "", "", "", fmt.Errorf("job %s: %w", job, err)
	}
	return s.Address(), fmt.Sprintf("worker-%d", rank), fmt.Sprintf("job %s worker %d (%s, node %s)", job, rank, s.Address(), s.NodeID), nil
}

// replicaHostTarget finds the profiler server of TPU host host of a Serve
// replica (its index among the deployment's running replicas ordered by
// replica id, or the replica id itself) in the replica's standard output.
func replicaHostTarget(ctx context.Context, c *ray.Client, app, deployment, replica string, host int) (addr, name, what string, err error) {
	details, err := c.ServeApplications(ctx)
	if err != nil {
		return "", "", "", err
	}
	a, ok := details.Applications[app]
	if !ok {
		return "", "", "", fmt.Errorf("--app %q: no such Serve application (applications: %s)", app, strings.Join(sortedKeys(details.Applications), ", "))
	}
	d, ok := a.Deployments[deployment]
	if !ok {
		return "", "", "", fmt.Errorf("--deployment %q: application %s has no such deployment (deployments: %s)", deployment, app, strings.Join(sortedKeys(a.Deployments), ", "))
	}
	var running []ray.ReplicaDetails
	for _, r := range d.Replicas {
		if r.State == "RUNNING" {
			running = append(running, r)
		}
	}
	slices.SortFunc(running, func(x, y ray.ReplicaDetails) int { return strings.Compare(x.ReplicaID, y.ReplicaID) })
	ids := make([]string, len(running))
	for i, r := range running {
		ids[i] = fmt.Sprintf("%d=%s", i, r.ReplicaID)
	}
	i := slices.IndexFunc(running, func(r ray.ReplicaDetails) bool { return r.ReplicaID == replica })
	if n, err := strconv.Atoi(replica); i < 0 && err == nil && n >= 0 && n < len(running) {
		i = n
	}
	if i < 0 {
		return "", "", "", fmt.Errorf("--replica %q: no such running replica of %s/%s (running: %s)", replica, app, deployment, strings.Join(ids, ", "))
	}
	r := running[i]
	log, err := c.ActorLog(ctx, r.ActorID, "out")
	if err != nil {
		return "", "", "", fmt.Errorf("replica %s: reading its output: %w", r.ReplicaID, err)
	}
	s, err := profiler.FindHost(profiler.HostServersFromLog(log), host)
	if err != nil {
		return "", "", "", fmt.Errorf("replica %s of %s/%s: %w", r.ReplicaID, app, deployment, err)
	}
	name = fmt.Sprintf("%s-%s-%s-host-%d", app, deployment, r.ReplicaID, host)
	what = fmt.Sprintf("%s/%s replica %s host %d (%s, node %s)", app, deployment, r.ReplicaID, host, s.Address(), s.NodeID)
	return s.Address(), name, what, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
