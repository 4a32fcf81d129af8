package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/cmd/raytpu/internal/progress"
	"github.com/raytpu/raytpu/kuberay"
)

// headService is the head service KubeRay gives a RayService or a
// RayCluster that names none (raytpu never names one): "<name>-head-svc".
// A RayJob's cluster is named by KubeRay when it creates it: "".
func headService(ref kuberay.Ref) string {
	switch ref.Kind {
	case kuberay.KindRayService, kuberay.KindRayCluster:
		return ref.Name + "-head-svc"
	}
	return ""
}

// printKubeLinks prints an applied object kubectl-style and where its
// dashboard is.
func printKubeLinks(w io.Writer, ref kuberay.Ref) {
	fmt.Fprintln(w, "resource:", kubeRef(ref.Kind, ref.Namespace, ref.Name))
	if d := kubeDashboard(ref.Namespace, headService(ref)); d != "" {
		fmt.Fprintln(w, "dashboard:", d)
	} else if ref.Kind == kuberay.KindRayJob {
		fmt.Fprintf(w, "dashboard: once KubeRay has created the job's RayCluster: kubectl -n %s get rayjob %s -o jsonpath='{.status.dashboardURL}'\n", ref.Namespace, ref.Name)
	}
}

// waitKube follows an applied object until KubeRay is done with it: a
// RayJob's deployment and job states, a RayService's application state
// and replicas, a RayCluster's state and worker pods ready of desired.
func waitKube(ctx context.Context, w io.Writer, b *kuberay.Backend, ref kuberay.Ref, planName string) error {
	p := newProgress(w)
	p.Line("resource: " + kubeRef(ref.Kind, ref.Namespace, ref.Name))
	if d := kubeDashboard(ref.Namespace, headService(ref)); d != "" {
		p.Link("dashboard", d)
	}
	stop := ticking(p)
	defer stop()
	switch ref.Kind {
	case kuberay.KindRayJob:
		out, err := b.WaitJob(ctx, ref.Name, backend.RunOptions{OnStatus: func(st backend.Status) {
			p.State(terminalSafe(string(st.State)))
			p.Detail(terminalSafe(st.Message))
		}})
		stop()
		if out != nil {
			p.Done(terminalSafe(string(out.State)))
		} else {
			p.Done(terminalSafe(gaveUp(err)))
		}
		return err
	case kuberay.KindRayService:
		st, err := b.Wait(ctx, planName, backend.WaitOptions{OnStatus: func(st *backend.ServiceStatus) { showServeStatus(p, st) }})
		stop()
		if se := (*backend.ServiceError)(nil); st == nil && errors.As(err, &se) {
			st = se.Status
		}
		if st != nil {
			p.Done(terminalSafe(string(st.State)))
		} else {
			p.Done(terminalSafe(gaveUp(err)))
		}
		return err
	case kuberay.KindRayCluster:
		cs, err := b.WaitCluster(ctx, planName, func(cs kuberay.ClusterStatus) { showClusterStatus(p, cs) })
		stop()
		if err != nil {
			p.Done(terminalSafe(gaveUp(err)))
			return err
		}
		p.Done(clusterState(cs))
		return nil
	}
	return fmt.Errorf("apply --wait: cannot follow a %s", ref.Kind)
}

// showClusterStatus shows a RayCluster's state and its worker pods ready.
func showClusterStatus(p *progress.Printer, cs kuberay.ClusterStatus) {
	p.State(clusterState(cs))
	d := fmt.Sprintf("workers ready %d/%d", cs.ReadyWorkers, cs.DesiredWorkers)
	if cs.Message != "" {
		d += "  " + cs.Message
	}
	p.Detail(terminalSafe(d))
}

// clusterState is KubeRay's state of a RayCluster, "provisioning" before
// it has one.
func clusterState(cs kuberay.ClusterStatus) string {
	if cs.State == "" {
		return "provisioning"
	}
	return cs.State
}
