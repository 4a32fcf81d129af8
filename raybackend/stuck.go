package raybackend

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/ray"
)

// errStuck is the cause Wait's own context ends with when watchStuck found
// the application stuck.
var errStuck = errors.New("raybackend: application stuck")

// watchStuck waits until the application has been DEPLOYING for after,
// then diagnoses it on every poll until the diagnosis finds it stuck (an
// error, or a pending placement group) and returns its status with the
// diagnosis; nil when ctx ends first. A diagnosis whose every finding
// waits for capacity (see waitsForCapacity) is not stuck while the
// cluster's autoscaler is starting nodes, nor for scaleSettle after it
// last was: the placement waits for them; with no nodes starting, it is
// stuck once it has waited capacityConfirm.
func (b *Backend) watchStuck(ctx context.Context, name string, after time.Duration) *backend.ServiceStatus {
	t := time.NewTimer(after)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return nil
	case <-t.C:
	}
	var as autoscalerWatch
	var waitingSince time.Time // since when the placement waits for capacity
	for {
		d, err := b.client.ServeApplications(ctx)
		if a, ok := d.Applications[name]; err == nil && ok && a.Status == ray.ServeAppDeploying {
			landings, diag, err := b.diagnose(ctx, a)
			stuck := err == nil && isStuck(diag)
			switch {
			case err != nil: // nothing learnt
			case !stuck:
				waitingSince = time.Time{}
			case waitsForCapacity(diag) && b.scaling(ctx, &as, name):
				waitingSince, stuck = time.Time{}, false
			case waitsForCapacity(diag):
				if waitingSince.IsZero() {
					waitingSince = time.Now()
				}
				stuck = time.Since(waitingSince) >= capacityConfirm
			}
			if stuck {
				st := serviceStatus(a)
				st.Message = strings.TrimSpace(strings.Join(appMessages(a), "\n"))
				st.Landings, st.Diagnosis = landings, diag
				return st
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(max(b.poll, time.Second)):
		}
	}
}

func isStuck(d placement.Diagnosis) bool {
	return d.HasErrors() || slices.ContainsFunc(d, func(f placement.Finding) bool { return f.Code == placement.CodePending })
}

// waitsForCapacity reports whether every finding that makes d stuck is one
// that nodes the autoscaler adds can clear: a pending or infeasible
// placement group, a slice head no node offers yet. A group whose bundles
// landed on several slices is not.
func waitsForCapacity(d placement.Diagnosis) bool {
	return !slices.ContainsFunc(d, func(f placement.Finding) bool {
		stuck := f.Severity == placement.SeverityError || f.Code == placement.CodePending
		return stuck && !slices.Contains([]string{placement.CodePending, placement.CodeInfeasible, placement.CodeHeadReservationFailed}, f.Code)
	})
}

// How long a placement must wait for capacity, with no autoscaler starting
// nodes, before it is stuck: two of the autoscaler's passes (5 s each), so
// that a group made just before a diagnosis is in a report first.
const capacityConfirm = 10 * time.Second

// How long after the autoscaler last reported nodes starting a placement
// that waits for capacity is still not stuck: the nodes' Ray nodes
// register, and the replica's head reservation and slice group are made
// in turn once they have.
const scaleSettle = 30 * time.Second

// How long the autoscaler's report may stay unchanged before Wait stops
// believing it: the monitor writes one every pass (5 s).
const scaleReportStale = time.Minute

// autoscalerWatch is what watchStuck has seen of the autoscaler's reports.
type autoscalerWatch struct {
	reportTime  time.Time // the last report's own time
	reportSeen  time.Time // when that time was first seen, by the local clock
	lastStarted time.Time // when a fresh report last had nodes starting
	said        string    // the last starting summary logged
}

// scaling reports whether the cluster's autoscaler is starting nodes, or
// was within scaleSettle, by its last report (GET /api/cluster_status;
// autoscaler v1's, what KubeRay runs), and logs what it starts when that
// changes. A cluster with no autoscaler, a report that stopped changing
// and a failed read all say no.
func (b *Backend) scaling(ctx context.Context, w *autoscalerWatch, app string) bool {
	st, err := b.client.ClusterStatus(ctx)
	if err != nil {
		st = ray.ClusterStatus{}
	}
	scaling, news := w.observe(st, time.Now())
	if news != "" {
		b.logger.InfoContext(ctx, "raybackend: the application waits for the nodes the autoscaler is starting", "application", app, "starting", news)
	}
	return scaling
}

// observe takes in a report read at now and says whether the autoscaler
// is starting nodes or was within scaleSettle; news is the starting
// summary when it differs from the last one said.
func (w *autoscalerWatch) observe(st ray.ClusterStatus, now time.Time) (scaling bool, news string) {
	if st.Autoscaler != nil {
		if !st.Time.Equal(w.reportTime) {
			w.reportTime, w.reportSeen = st.Time, now
		}
		switch summary := st.Autoscaler.StartingSummary(); {
		case now.Sub(w.reportSeen) >= scaleReportStale:
		case summary == "":
			w.said = ""
		default:
			w.lastStarted = now
			if summary != w.said {
				w.said, news = summary, summary
			}
		}
	}
	return !w.lastStarted.IsZero() && now.Sub(w.lastStarted) < scaleSettle, news
}

// appMessages lists the application's message and those of its
// deployments that are not HEALTHY, as Ray's wait error does.
func appMessages(a ray.ApplicationDetails) []string {
	var msgs []string
	if m := strings.TrimSpace(a.Message); m != "" {
		msgs = append(msgs, m)
	}
	for _, dn := range slices.Sorted(maps.Keys(a.Deployments)) {
		dep := a.Deployments[dn]
		if dep.Status != ray.ServeDeploymentHealthy && strings.TrimSpace(dep.Message) != "" {
			msgs = append(msgs, fmt.Sprintf("deployment %q is %s: %s", dn, dep.Status, strings.TrimSpace(dep.Message)))
		}
	}
	return msgs
}
