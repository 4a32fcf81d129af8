package placement

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/rayvocab"
)

// Strategy is a Ray placement group strategy.
type Strategy string

// The four strategies Ray accepts.
const (
	Pack         Strategy = "PACK"
	Spread       Strategy = "SPREAD"
	StrictPack   Strategy = "STRICT_PACK"
	StrictSpread Strategy = "STRICT_SPREAD"
)

// Strategies lists the valid strategies.
func Strategies() []string {
	return []string{string(Pack), string(Spread), string(StrictPack), string(StrictSpread)}
}

// Valid reports whether s is one of the four strategies; the empty
// Strategy, which stands for a default, is not.
func (s Strategy) Valid() bool {
	switch s {
	case Pack, Spread, StrictPack, StrictSpread:
		return true
	}
	return false
}

// DefaultHeadReservationTimeout is Ray's DEFAULT_TPU_HEAD_RESERVATION_TIMEOUT_S.
const DefaultHeadReservationTimeout = 100 * time.Second

// validTPUPerWorker is Ray's TPU_VALID_CHIP_OPTIONS: a task or actor may
// request only these many TPU.
var validTPUPerWorker = []float64{1, 2, 4, 8}

// SliceSpec mirrors ray.util.tpu.slice_placement_group's arguments. The
// zero value of each optional field is Ray's default.
type SliceSpec struct {
	// Topology of one slice, e.g. "4x4" or "2x2x2". Required.
	Topology string `json:"topology"`
	// Accelerator is the TPU generation in any accepted spelling (v6e,
	// TPU-V6E, v5litepod, tpu7x). Required.
	Accelerator string `json:"accelerator"`
	// ResourcesPerBundle are the resources of every worker bundle.
	// Optional. Default: {"TPU": chips per host × TPU per chip}; CPU: 1 is
	// added when absent, as is TPU.
	ResourcesPerBundle map[string]float64 `json:"resourcesPerBundle,omitempty"`
	// NumSlices is the number of slices. Optional. Default: 1.
	NumSlices int `json:"numSlices,omitempty"`
	// ChipsPerHost overrides the chips per host (Ray's chips_per_vm), e.g.
	// to read v6e 2x4 as two 4-chip hosts. Optional. Default: Ray's rule.
	ChipsPerHost int `json:"chipsPerHost,omitempty"`
	// PGPerSlice creates one placement group per slice, named
	// <Name>_slice_<i>. Optional. Default: false (one group for all slices).
	PGPerSlice bool `json:"pgPerSlice,omitempty"`
	// TPUResourcePerChip scales the TPU resource per physical chip (Ray's
	// RAY_TPU_RESOURCE_PER_CHIP). Optional. Default: 1.
	TPUResourcePerChip int `json:"tpuResourcePerChip,omitempty"`
	// Strategy of the worker placement group. Optional. Default: SPREAD.
	Strategy Strategy `json:"strategy,omitempty"`
	// Name of the placement group. Optional. Default: "" (unnamed).
	Name string `json:"name,omitempty"`
	// BundleLabelSelector gives one label selector per bundle, merged under
	// the slice-name pin, in Ray's syntax (see [LabelSelector]). Optional;
	// when set its length must equal the number of bundles.
	BundleLabelSelector []map[string]string `json:"bundleLabelSelector,omitempty"`
	// HeadReservationTimeout bounds the wait for each slice head.
	// Optional. Default: 100s. Negative: wait indefinitely.
	HeadReservationTimeout time.Duration `json:"headReservationTimeout,omitempty"`
}

// Validate reports every problem with s, with paths below path.
func (s SliceSpec) Validate(path *field.Path) error {
	_, err := s.Compile(path)
	return err
}

// Compile validates s and builds the slice group Ray would build. Errors are
// a field.ErrorList with paths below path (nil: "topology", "accelerator", ...).
func (s SliceSpec) Compile(path *field.Path) (*SliceGroup, error) {
	return s.CompileFields(FieldsUnder(path))
}

// CompileFields is Compile with every error reported at the caller's own
// path for each field (see [Fields]). It resolves the catalog once.
func (s SliceSpec) CompileFields(f Fields) (*SliceGroup, error) {
	sh, errs := s.Resolve(f)
	if len(errs) > 0 {
		return nil, errs
	}
	g, errs := sh.Group(max(s.NumSlices, 1))
	if len(errs) > 0 {
		return nil, errs
	}
	return g, nil
}

func fmtNum(v float64) string {
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// SliceGroup is a compiled slice placement: the head reservations and the
// worker placement groups Ray creates for NumSlices slices of one shape.
//
// A compiled group belongs to its caller: every map and slice in it (the
// bundle resources, each bundle's resources and label selector, each head
// reservation's) is its own, shared with no other group, plan or spec, so
// changing it changes nothing else. DeepCopy keeps a group unchanged while
// a copy is changed.
type SliceGroup struct {
	// Part is the part of the workload the group holds (a trainer's
	// worker group, a deployment's replica), set by the front end.
	Part Part `json:"part,omitzero"`
	// Generation is raytpu's name (v6e); AcceleratorVersion Ray's
	// (v5litepod); AcceleratorType Ray's resource form (TPU-V6E).
	Generation         string `json:"generation"`
	AcceleratorVersion string `json:"acceleratorVersion"`
	AcceleratorType    string `json:"acceleratorType"`
	Topology           string `json:"topology"`
	// PodType is Ray's pod type (v6e-16): the value of ray.io/tpu-pod-type.
	PodType            string `json:"podType"`
	NumSlices          int    `json:"numSlices"`
	ChipsPerHost       int    `json:"chipsPerHost"`
	TPUResourcePerChip int    `json:"tpuResourcePerChip"`
	HostsPerSlice      int    `json:"hostsPerSlice"`
	BundlesPerSlice    int    `json:"bundlesPerSlice"`
	// MultiHost slices get a head reservation and a slice-name pin.
	MultiHost bool     `json:"multiHost"`
	Strategy  Strategy `json:"strategy"`
	// BundleResources are the resources of every worker bundle.
	BundleResources map[string]float64 `json:"bundleResources"`
	// HeadReservationTimeoutSeconds is 0 for "wait indefinitely".
	HeadReservationTimeoutSeconds float64 `json:"headReservationTimeoutSeconds"`
	// Heads are the head reservations, one per multi-host slice whose name
	// the user did not fix.
	Heads []HeadReservation `json:"heads,omitempty"`
	// Groups are the worker placement groups: one, or one per slice.
	Groups []Group `json:"groups"`
	// Megascale holds, for multi-slice groups, the MEGASCALE_* values each
	// slice's workers get.
	Megascale []Megascale `json:"megascale,omitempty"`
}

// DeepCopy returns a copy of g that shares no map or slice with it.
func (g *SliceGroup) DeepCopy() *SliceGroup {
	if g == nil {
		return nil
	}
	out := *g
	out.BundleResources = maps.Clone(g.BundleResources)
	out.Heads = slices.Clone(g.Heads)
	for i := range out.Heads {
		out.Heads[i].Resources = maps.Clone(g.Heads[i].Resources)
		out.Heads[i].LabelSelector = maps.Clone(g.Heads[i].LabelSelector)
	}
	out.Groups = slices.Clone(g.Groups)
	for i := range out.Groups {
		bs := slices.Clone(g.Groups[i].Bundles)
		for j := range bs {
			bs[j].Resources = maps.Clone(bs[j].Resources)
			bs[j].LabelSelector = maps.Clone(bs[j].LabelSelector)
		}
		out.Groups[i].Bundles = bs
	}
	out.Megascale = slices.Clone(g.Megascale)
	return &out
}

// Hosts is the number of hosts over all slices (0 for a nil group).
func (g *SliceGroup) Hosts() int {
	if g == nil {
		return 0
	}
	return g.HostsPerSlice * g.NumSlices
}

// Bundles returns every worker bundle over all groups, slice by slice (nil
// for a nil group).
func (g *SliceGroup) Bundles() []Bundle {
	if g == nil {
		return nil
	}
	var out []Bundle
	for _, grp := range g.Groups {
		out = append(out, grp.Bundles...)
	}
	return out
}

// HeadReservation is the one-bundle placement group that claims worker 0 of
// a slice before its workers are placed.
type HeadReservation struct {
	Slice         int                `json:"slice"`
	Resources     map[string]float64 `json:"resources"`
	LabelSelector map[string]string  `json:"labelSelector"`
}

// Group is one Ray placement group.
type Group struct {
	// Name is "" for an unnamed group.
	Name     string   `json:"name"`
	Strategy Strategy `json:"strategy"`
	Bundles  []Bundle `json:"bundles"`
}

// Bundle is one placement group bundle.
type Bundle struct {
	// Index inside its placement group.
	Index int `json:"index"`
	// Slice is the slice (0..NumSlices-1) the bundle belongs to.
	Slice     int                `json:"slice"`
	Resources map[string]float64 `json:"resources"`
	// LabelSelector is the static part of the bundle's label selector.
	LabelSelector map[string]string `json:"labelSelector,omitempty"`
	// SliceNameFromHead: at run time the bundle's selector gets
	// ray.io/tpu-slice-name = the name of the slice whose head was reserved
	// for Slice.
	SliceNameFromHead bool `json:"sliceNameFromHead,omitempty"`
}

// Megascale is the multi-slice environment of one slice's workers; the
// coordinator address (rank 0's IP) is known only at run time.
type Megascale struct {
	Slice     int `json:"slice"`
	NumSlices int `json:"numSlices"`
	Port      int `json:"port"`
}

// Env returns the MEGASCALE_* variables for coordinator address addr.
func (m Megascale) Env(addr string) map[string]string {
	return rayvocab.MegascaleEnv(addr, m.Port, m.NumSlices, m.Slice)
}

// String summarises the group: "2 × v6e 4x4 (v6e-16): 8 bundles {CPU:1, TPU:4}, SPREAD";
// "<nil>" for a nil group.
func (g *SliceGroup) String() string {
	if g == nil {
		return "<nil>"
	}
	keys := slices.Sorted(maps.Keys(g.BundleResources))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + ":" + fmtNum(g.BundleResources[k])
	}
	return fmt.Sprintf("%d × %s %s (%s): %d bundles {%s}, %s", g.NumSlices, g.Generation, g.Topology, g.PodType,
		g.BundlesPerSlice*g.NumSlices, strings.Join(parts, ", "), g.Strategy)
}
