package placement

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/raytpu/raytpu/tpu"
)

// Finding codes every backend reports in: the simulator before anything
// runs, the Ray backend from a live cluster's State API.
const (
	// CodeSpansSlices: a request's TPU bundles landed on more than one
	// slice. Slices share no ICI: the first collective hangs, a Serve
	// replica stays DEPLOYING.
	CodeSpansSlices = "SpansSlices"
	// CodePartialSlice: a multi-host request holds only some hosts of a
	// multi-host slice, whose program expects every host.
	CodePartialSlice = "PartialSlice"
	// CodeWrongPodType: a slice landed on a slice of another pod type.
	CodeWrongPodType = "WrongPodType"
	// CodeSpansHosts: a single-host slice's bundles landed on several hosts.
	CodeSpansHosts = "SpansHosts"
	// CodeSharedSlice: two requested slices landed on one physical slice.
	CodeSharedSlice = "SharedSlice"
	// CodeHeadReservationFailed: a slice head could not be reserved.
	CodeHeadReservationFailed = "HeadReservationFailed"
	// CodePending: a placement group waits for resources.
	CodePending = "Pending"
	// CodeInfeasible: a placement group can never be placed.
	CodeInfeasible = "Infeasible"
	// CodeUnpinned: a multi-host request landed on one whole slice, but
	// only by chance: nothing pinned it there.
	CodeUnpinned = "Unpinned"
	// CodeBusySlice: a head reservation took a slice whose other hosts are
	// in use, so the worker bundles pinned to it wait; Ray's
	// reserve_tpu_slice does not look for an idle slice.
	CodeBusySlice = "BusySlice"
)

// noICI says why a request spread over slices hangs.
const noICI = "slices share no ICI, so the first collective across them hangs (a Serve replica stays DEPLOYING)"

// partialWhy says why a request holding part of a multi-host slice waits.
const partialWhy = "a multi-host slice runs one program over all of its hosts, so the job waits for hosts it does not hold"

// PendingFinding reports a placement group that waits for resources;
// group names it ("placement group <id> (<name>)") and reason says what
// it waits for.
func PendingFinding(group, reason string) Finding {
	return Finding{Severity: SeverityWarning, Code: CodePending, Message: fmt.Sprintf(
		"%s is PENDING: %s; Ray leaves it waiting and its ready() does not resolve until resources are freed", group, reason)}
}

// InfeasibleFinding reports a placement group no node can ever hold.
func InfeasibleFinding(group, reason string) Finding {
	return Finding{Severity: SeverityError, Code: CodeInfeasible, Message: fmt.Sprintf(
		"%s is INFEASIBLE: %s; no node of this cluster can ever hold it", group, reason)}
}

// GroupName renders a placement group for a finding: "placement group
// <id>", with " (<name>)" when it has one.
func GroupName(id, name string) string {
	s := "placement group " + id
	if name != "" {
		s += " (" + name + ")"
	}
	return s
}

// SliceShare is the part of a request that landed on one slice.
type SliceShare struct {
	// Slice is the slice's name (its TPU_NAME).
	Slice string
	// TPU is the TPU the request's bundles hold there, Hosts on how many
	// of the slice's hosts.
	TPU   float64
	Hosts int
	// PodType is the slice's pod type and SliceHosts its number of hosts,
	// as the cluster's snapshot says.
	PodType    string
	SliceHosts int
}

// describeShares renders shares as "slice-a: 4 TPU on 1 host, slice-b: 4
// TPU on 1 host".
func describeShares(shares []SliceShare) string {
	parts := make([]string, len(shares))
	for i, s := range shares {
		parts[i] = fmt.Sprintf("%s: %s TPU on %s", s.Slice, FormatNumber(s.TPU), Plural(s.Hosts, "host"))
	}
	return strings.Join(parts, ", ")
}

// RawLanding is where the TPU bundles of a request made without a
// topology (a raw placement group) landed.
type RawLanding struct {
	// Bundles is the number of placed TPU bundles, TPU their sum, Hosts
	// the number of hosts they landed on.
	Bundles int
	TPU     float64
	Hosts   int
	// Shares are the slices they landed on, in cluster order.
	Shares []SliceShare
	// SliceHosts, PodType and Generation describe the slice when all
	// landed on one: its number of hosts, its pod type, its generation.
	SliceHosts int
	PodType    string
	Generation *tpu.Generation
}

// Diagnose reports a raw request's TPU bundles: SpansSlices (error) when
// they landed on several slices, PartialSlice (error) when on some hosts
// of one multi-host slice, Unpinned (info) when on every host of one slice
// by chance. Bundles on one host need no finding.
func (l RawLanding) Diagnose() Diagnosis {
	if l.Hosts < 2 {
		return nil
	}
	what := fmt.Sprintf("%s holding %s TPU", Plural(l.Bundles, "bundle"), FormatNumber(l.TPU))
	hint := l.topologyHint()
	switch {
	case len(l.Shares) > 1:
		return Diagnosis{{Severity: SeverityError, Code: CodeSpansSlices, Message: fmt.Sprintf(
			"%s landed on %d slices (%s): %s; %s", what, len(l.Shares), describeShares(l.Shares), noICI, hint)}}
	case len(l.Shares) == 1 && l.Hosts < l.SliceHosts:
		s := l.Shares[0]
		return Diagnosis{{Severity: SeverityError, Code: CodePartialSlice, Message: fmt.Sprintf(
			"%s landed on %d of the %d hosts of %s (%s): %s; %s", what, s.Hosts, l.SliceHosts, s.Slice, l.PodType, partialWhy, hint)}}
	case len(l.Shares) == 1:
		return Diagnosis{{Severity: SeverityInfo, Code: CodeUnpinned, Message: fmt.Sprintf(
			"%s landed on every host of %s, but nothing pinned them to one slice: on a busier cluster they can spread; %s", what, l.Shares[0].Slice, hint)}}
	}
	return nil
}

// topologyHint suggests the topology that reserves one slice for the
// request's chips.
func (l RawLanding) topologyHint() string {
	if l.Generation != nil {
		if chips := int(l.TPU); float64(chips) == l.TPU {
			if t, ok := l.Generation.TopologyForChips(chips); ok {
				pt := l.Generation.PodType(chips)
				return fmt.Sprintf("request topology %s (%s) so that Ray reserves one whole %s slice", t, pt, pt)
			}
		}
	}
	return "request a topology so that Ray reserves one whole slice"
}

// FormatResources renders {CPU: 1, TPU: 4}, keys sorted.
func FormatResources(m map[string]float64) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(k + ": " + FormatNumber(m[k]))
	}
	b.WriteByte('}')
	return b.String()
}

// FormatSelector renders a label selector as {key: value}, keys sorted.
func FormatSelector(m map[string]string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(k + ": " + m[k])
	}
	b.WriteByte('}')
	return b.String()
}

// FormatNumber renders a resource amount as short as it reads: 4, 0.5.
func FormatNumber(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// Plural renders a count with its noun: "1 host", "2 hosts".
func Plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}
