package sim

import (
	"errors"
	"fmt"
	"slices"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/tpu"
)

// Quota is a quota of TPU chips (google.com/tpu) that a workload is
// admitted against as a whole, as Kueue admits a RayJob or RayCluster
// against its ClusterQueue: all of its slices at once or none. The zero
// value is a quota of no chips. The json names are the paths of errors
// below "quota".
type Quota struct {
	// TPU is the google.com/tpu chips of the quota (a ClusterQueue's
	// nominal quota of the resource, or what of it is free).
	TPU int `json:"tpu"`
	// Class, when set, is the one capacity class the quota is for (the
	// ResourceFlavor of a ClusterQueue that stands for Spot or reserved
	// nodes): a plan of another class gets none of it. Empty: the quota
	// is for any class. Optional.
	Class placement.CapacityClass `json:"class,omitempty"`
}

// QuotaFit says whether a plan fits a Quota: the chips it needs, all of
// them at once, against the chips of the quota for its capacity class.
type QuotaFit struct {
	// Resource is the resource counted: google.com/tpu.
	Resource string `json:"resource"`
	// Class is the plan's capacity class.
	Class placement.CapacityClass `json:"class"`
	// Needs is the chips of every slice of every slice group of the plan
	// (slices × hosts per slice × chips per host, summed); a CPU head and
	// a job's submitter take none.
	Needs int `json:"needs"`
	// Quota is the chips of the quota the plan's class may use: the
	// quota's, or 0 when the quota is for another class.
	Quota int `json:"quota"`
	// Fits reports Needs <= Quota.
	Fits bool `json:"fits"`
	// QuotaClass is the class the quota is for, when it is for one.
	QuotaClass placement.CapacityClass `json:"quotaClass,omitempty"`
}

// String is the answer in one line: "fits quota: needs 8 google.com/tpu
// of 8", "does not fit quota: needs 16 google.com/tpu, quota 8", with the
// class when the quota is for one.
func (f QuotaFit) String() string {
	class := ""
	if f.QuotaClass != "" {
		class = " " + string(f.QuotaClass)
	}
	if f.Fits {
		return fmt.Sprintf("fits quota: needs %d %s of %d%s", f.Needs, f.Resource, f.Quota, class)
	}
	if f.QuotaClass != "" && f.QuotaClass != f.Class {
		return fmt.Sprintf("does not fit quota: needs %d %s of %s capacity, quota is for %s capacity only", f.Needs, f.Resource, f.Class, f.QuotaClass)
	}
	return fmt.Sprintf("does not fit quota: needs %d %s, quota %d%s", f.Needs, f.Resource, f.Quota, class)
}

// Validate reports every field of q that is not a quota, at paths below
// path: a negative TPU, a Class that is not a capacity class.
func (q Quota) Validate(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if q.TPU < 0 {
		errs = append(errs, field.Invalid(path.Child("tpu"), q.TPU, "chips: 0 or more"))
	}
	if q.Class != "" && !slices.Contains(placement.CapacityClasses(), q.Class) {
		valid := make([]string, 0, 4)
		for _, c := range placement.CapacityClasses() {
			valid = append(valid, string(c))
		}
		errs = append(errs, field.NotSupported(path.Child("class"), string(q.Class), valid))
	}
	return errs
}

// FitQuota answers, before anything is submitted, whether plan p fits
// quota q: the google.com/tpu chips of all its slice groups together
// against the chips q gives p's capacity class (placement.Plan.Capacity).
// A plan that does not fit is not an error: Kueue would keep it
// suspended until that much quota is free, forever if the quota is
// smaller. The error is for a nil plan or an invalid quota (field errors
// below "quota").
func FitQuota(p *placement.Plan, q Quota) (QuotaFit, error) {
	if p == nil {
		return QuotaFit{}, errors.New("sim: FitQuota(nil plan): pass a compiled plan")
	}
	if errs := q.Validate(field.NewPath("quota")); len(errs) > 0 {
		return QuotaFit{}, fmt.Errorf("sim: FitQuota: %w", errs)
	}
	f := QuotaFit{Resource: tpu.ResourceGKETPU, Class: p.Capacity.EffectiveClass(), Quota: q.TPU, QuotaClass: q.Class}
	for _, g := range p.Slices {
		if g != nil {
			f.Needs += g.NumSlices * g.HostsPerSlice * g.ChipsPerHost
		}
	}
	if q.Class != "" && q.Class != f.Class {
		f.Quota = 0
	}
	f.Fits = f.Needs <= f.Quota
	return f, nil
}
