package placement

import (
	"fmt"
	"slices"
	"strings"
)

// Unplaced is why a bundle of a placement group is not placed, as the
// facts a cluster knows: the simulator from its model, the Ray backend
// from the nodes the State API lists. Placement words them, so both say it
// alike ([Unplaced.PendingReason], [Unplaced.InfeasibleReason]).
type Unplaced struct {
	// Bundle is the bundle's index in its group; Resources and Selector
	// are the bundle as submitted.
	Bundle    int
	Resources map[string]float64
	Selector  map[string]string
	// Missing lists the resources of the bundle that no node offers.
	Missing []string
	// NoLabels says that no node carries the labels Selector asks for.
	NoLabels bool
	// Fits counts the nodes that could hold the bundle on an idle cluster.
	Fits int
	// Strategy and GroupSize are the group's ("" when not known): they
	// say why a bundle that fits a node alone still waits.
	Strategy  Strategy
	GroupSize int
	// WholeGroup reports STRICT_PACK's failure to hold the group's
	// bundles together on one node: Resources is then their sum and Fits
	// counts the nodes that could hold them all.
	WholeGroup bool
}

// PendingReason says what a PENDING group waits for: no node that could
// hold the bundle has it free now.
func (u Unplaced) PendingReason() string {
	if u.WholeGroup {
		return fmt.Sprintf("STRICT_PACK: none of the %d nodes that can hold all %d bundles together has them free", u.Fits, u.GroupSize)
	}
	msg := noneFreeReason(u.describe(), u.Fits)
	switch u.Strategy {
	case StrictSpread:
		msg += " on a node of its own (STRICT_SPREAD)"
	case Pack, Spread:
		if u.GroupSize > 1 {
			msg += " beside the group's other bundles"
		}
	}
	return msg
}

// InfeasibleReason says why a group can never be placed: no node offers a
// resource, carries the labels, or has enough of every resource; or the
// nodes that can hold the bundle cannot hold the whole group.
func (u Unplaced) InfeasibleReason() string {
	bundle := u.describe()
	switch {
	case u.WholeGroup:
		return fmt.Sprintf("STRICT_PACK: no node can hold all %d bundles together %s", u.GroupSize, FormatResources(u.Resources))
	case u.Fits > 0 && u.Strategy == StrictSpread:
		return fmt.Sprintf("%s: STRICT_SPREAD needs a node per bundle, and only %s can hold one", bundle, Plural(u.Fits, "node"))
	case u.Fits == 1:
		return bundle + ": the one node that can hold it cannot hold the whole group"
	case u.Fits > 1:
		return fmt.Sprintf("%s: the %d nodes that can hold it cannot hold the whole group", bundle, u.Fits)
	case len(u.Missing) > 0:
		return fmt.Sprintf("%s: no node has resource %s", bundle, joinSorted(u.Missing))
	case u.NoLabels:
		s := fmt.Sprintf("%s: no node has labels %s", bundle, FormatSelector(u.Selector))
		if note := NewLabelSelector(u.Selector).UnmatchableNote(); note != "" {
			s += " (" + note + ")"
		}
		return s
	}
	return bundle + ": no node that matches has that much of every resource"
}

// describe renders the bundle for a reason: "bundle 2 {CPU: 1, TPU: 4}
// with label selector {...}".
func (u Unplaced) describe() string {
	s := fmt.Sprintf("bundle %d %s", u.Bundle, FormatResources(u.Resources))
	if len(u.Selector) > 0 {
		s += " with label selector " + FormatSelector(u.Selector)
	}
	return s
}

// noneFreeReason says why a bundle waits: n nodes could hold it, none has
// it free now.
func noneFreeReason(bundle string, n int) string {
	if n == 1 {
		return bundle + ": the one node that can hold it does not have it free"
	}
	return fmt.Sprintf("%s: none of the %d nodes that can hold it has it free", bundle, n)
}

func joinSorted(s []string) string { return strings.Join(slices.Sorted(slices.Values(s)), ", ") }
