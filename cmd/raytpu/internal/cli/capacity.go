package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/sim"
	"github.com/raytpu/raytpu/tpu"
)

// capacityFlags are the flags of a capacity class (placement.Capacity),
// shared by render, apply and plan.
type capacityFlags struct {
	class, reservation, project string
}

func addCapacityFlags(fl *pflag.FlagSet, c *capacityFlags) {
	names := make([]string, 0, 4)
	for _, cl := range placement.CapacityClasses() {
		names = append(names, string(cl))
	}
	fl.StringVar(&c.class, "capacity", "", "where the TPU workers' nodes come from on GKE: "+strings.Join(names, ", ")+
		" (default: the plan's, else on-demand; reservation when --reservation is given)")
	fl.StringVar(&c.reservation, "reservation", "", "the specific Compute Engine reservation the TPU workers consume (--capacity reservation)")
	fl.StringVar(&c.project, "reservation-project", "", "the project that owns a shared --reservation (default: the cluster's own)")
}

// capacity is the capacity the flags give.
func (c capacityFlags) capacity() placement.Capacity {
	return placement.Capacity{Class: placement.CapacityClass(c.class), Reservation: c.reservation, ReservationProject: c.project}
}

// forPlan is the capacity the flags give a plan of slice groups groups,
// checked as a backend checks a plan's: a usage error naming the flag.
func (c capacityFlags) forPlan(groups []*placement.SliceGroup) (placement.Capacity, error) {
	cp := c.capacity()
	if errs := cp.Validate(field.NewPath("options", "capacity")); len(errs) > 0 {
		return cp, optionFlagErrors(errs)
	}
	if errs := cp.ValidateSlices(field.NewPath("slices"), groups); len(errs) > 0 {
		msgs := make([]string, len(errs))
		for i, e := range errs {
			msgs[i] = fmt.Sprintf("--capacity %s: %v", cp.EffectiveClass(), e)
		}
		return cp, usagef("%s", strings.Join(msgs, "\n"))
	}
	return cp, nil
}

// parseQuota reads --quota: "google.com/tpu=CHIPS" for any capacity
// class, or "CLASS:google.com/tpu=CHIPS" for one.
func parseQuota(s string) (sim.Quota, error) {
	bad := func(why string) error {
		return usagef("--quota %s: %s; want %s=CHIPS (e.g. %s=8), or CLASS:%s=CHIPS for one capacity class (spot:%s=16)",
			strconv.Quote(capText(s, maxArg)), why, tpu.ResourceGKETPU, tpu.ResourceGKETPU, tpu.ResourceGKETPU, tpu.ResourceGKETPU)
	}
	var q sim.Quota
	rest := s
	if class, after, ok := strings.Cut(s, ":"); ok {
		q.Class, rest = placement.CapacityClass(class), after
	}
	name, value, ok := strings.Cut(rest, "=")
	if !ok {
		return q, bad("no =")
	}
	if name != tpu.ResourceGKETPU {
		return q, bad(fmt.Sprintf("the quota is of %s chips, not %s", tpu.ResourceGKETPU, strconv.Quote(capText(name, maxArg))))
	}
	n, err := strconv.Atoi(value)
	if err != nil {
		return q, bad("the chips are a whole number")
	}
	q.TPU = n
	if errs := q.Validate(field.NewPath("quota")); len(errs) > 0 {
		msgs := make([]string, len(errs))
		for i, e := range errs {
			msgs[i] = "--quota " + strconv.Quote(capText(s, maxArg)) + ": " + e.Error()
		}
		return q, usagef("%s", strings.Join(msgs, "\n"))
	}
	return q, nil
}

// quotaFit answers --quota for plan p: nil without the flag.
func quotaFit(flag string, p *placement.Plan) (*sim.QuotaFit, error) {
	if flag == "" {
		return nil, nil
	}
	q, err := parseQuota(flag)
	if err != nil {
		return nil, err
	}
	fit, err := sim.FitQuota(p, q)
	if err != nil {
		return nil, err
	}
	return &fit, nil
}

// quotaError fails a plan that does not fit --quota: Kueue would keep it
// suspended until that many chips are free, forever if the quota is
// smaller.
func quotaError(fit *sim.QuotaFit) error {
	if fit == nil || fit.Fits {
		return nil
	}
	return fmt.Errorf("plan: %s (a queue with this quota would never admit it)", fit)
}

// printCapacity ends a plan's table with its capacity, when it has one,
// and the answer to --quota, when given.
func printCapacity(w io.Writer, p *placement.Plan, fit *sim.QuotaFit) {
	if p.Capacity == (placement.Capacity{}) && fit == nil {
		return
	}
	fmt.Fprintln(w)
	if p.Capacity != (placement.Capacity{}) {
		fmt.Fprintf(w, "Capacity: %s\n", terminalSafe(p.Capacity.String()))
	}
	if fit != nil {
		fmt.Fprintln(w, fit)
	}
}
