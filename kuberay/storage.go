package kuberay

import (
	"fmt"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
)

// checkStorage refuses, as a *backend.InvalidPlanError (ErrInvalidPlan),
// a plan of more than one host whose storage (Ray Train's storage_path,
// placement.Storage) is a local directory not declared a shared mount:
// the pods of a KubeRay cluster share no disk, so each host would write
// its checkpoints to a directory of its own, and the run would fail when
// it first checkpoints or resume from nothing. The error names the
// storage field and the fixes.
func checkStorage(p *placement.Plan) error {
	if p.Job == nil {
		return nil
	}
	st := p.Job.Storage
	if st == nil || st.SharedMount || isURI(st.Path) {
		return nil
	}
	hosts := planHosts(p)
	if hosts < 2 {
		return nil
	}
	path := field.NewPath("plan", "job", "storage", "path")
	if st.Field != "" {
		path = field.NewPath(st.Field)
	}
	e := field.Invalid(path, st.Path, fmt.Sprintf(
		"a local directory, and the run's %d hosts are pods that share no disk: use object storage every pod reaches (gs://bucket/prefix), or declare the directory mounted on every pod (storage_shared_mount)", hosts))
	return &backend.InvalidPlanError{Backend: Name, Name: p.Name, Errs: field.ErrorList{e}}
}

// planHosts is the number of TPU hosts (pods) a plan's slice groups take.
func planHosts(p *placement.Plan) int {
	n := 0
	for _, g := range p.Slices {
		if g != nil {
			n += max(1, g.NumSlices) * max(1, g.HostsPerSlice)
		}
	}
	return n
}
