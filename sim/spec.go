package sim

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/rayvocab"
	"github.com/raytpu/raytpu/tpu"
)

// Per-host defaults for a spec item that does not set them.
const (
	// DefaultCPU is the CPU resource of every host, TPU or CPU-only.
	DefaultCPU = 8
	// DefaultMemory is the memory resource of every host, in bytes (32 GiB).
	DefaultMemory Bytes = 32 << 30
	// MaxHosts bounds the hosts a spec may describe.
	MaxHosts = 1 << 20
)

// Bounds on one host, which keep its resources exact in Ray's fixed point.
const (
	maxHostCPU    = 1 << 20
	maxHostMemory = Bytes(1 << 46)
)

// CPUPodType is the pod type of a spec item of CPU-only nodes.
const CPUPodType = "cpu"

// Spec describes a simulated cluster: TPU slices and CPU-only nodes, in
// order. Host order, and so every tie the scheduler breaks, follows it.
//
// A spec is written in a short form (see [ParseSpec]) or in YAML (see
// [ParseSpecYAML]); String renders the short form.
type Spec struct {
	Items []Item `json:"items"`
}

// Item is one entry of a spec: Count slices of one pod type, or Count
// CPU-only nodes.
type Item struct {
	// Count of slices (or of CPU-only nodes). Optional. Default: 1.
	Count int `json:"count"`
	// PodType is Ray's pod type (v6e-16, v5litepod-8, v4-16, v7x-16) or
	// GCE's (tpu7x-16), or "cpu" for CPU-only nodes. Required. ParseSpec
	// stores Ray's form.
	PodType string `json:"podType"`
	// Topology of each slice. Optional. Default: the generation's canonical
	// shape for the pod type's chip count (tpu.Generation.TopologyForChips).
	Topology string `json:"topology,omitempty"`
	// ChipsPerHost splits a slice into hosts. Optional. Default: Ray's rule
	// (tpu.Generation.DefaultChipsPerHost): v5e/v6e 1x1, 2x2 and 2x4 are
	// one host, every other slice has 4 chips per host.
	ChipsPerHost int `json:"chipsPerHost,omitempty"`
	// CPU of each host. Optional. Default: DefaultCPU.
	CPU int `json:"cpu,omitempty"`
	// Memory of each host in bytes. Optional. Default: DefaultMemory.
	Memory Bytes `json:"memory,omitempty"`
}

// IsCPU reports whether the item describes CPU-only nodes.
func (it Item) IsCPU() bool { return strings.EqualFold(strings.TrimSpace(it.PodType), CPUPodType) }

// resolved is a validated item with every default filled in.
type resolved struct {
	item         Item // PodType in Ray's form; Topology, ChipsPerHost, CPU, Memory set
	gen          *tpu.Generation
	topo         tpu.Topology
	chips        int
	hostsPerItem int // hosts per slice (1 for CPU nodes)
}

func (r *resolved) multiHost() bool { return r.gen != nil && r.chips > r.item.ChipsPerHost }

// itemFields are the paths an item's errors are reported under.
type itemFields struct {
	root                                                *field.Path
	count, podType, topology, chipsPerHost, cpu, memory *field.Path
}

func fieldsOf(p *field.Path) itemFields {
	return itemFields{p, p.Child("count"), p.Child("podType"), p.Child("topology"), p.Child("chipsPerHost"), p.Child("cpu"), p.Child("memory")}
}

// resolveItem validates it and fills in its defaults.
func resolveItem(it Item, f itemFields) (resolved, field.ErrorList) {
	var errs field.ErrorList
	r := resolved{item: it, hostsPerItem: 1}
	if it.Count < 0 {
		errs = append(errs, field.Invalid(f.count, it.Count, "must be at least 1"))
	}
	if r.item.Count == 0 {
		r.item.Count = 1
	}
	if it.CPU < 0 || it.CPU > maxHostCPU {
		errs = append(errs, field.Invalid(f.cpu, it.CPU, fmt.Sprintf("must be a positive number of CPUs, at most %d", maxHostCPU)))
	}
	if r.item.CPU == 0 {
		r.item.CPU = DefaultCPU
	}
	if it.Memory < 0 || it.Memory > maxHostMemory {
		errs = append(errs, field.Invalid(f.memory, it.Memory.String(), "must be a positive size up to "+maxHostMemory.String()+", e.g. 64Gi"))
	}
	if r.item.Memory == 0 {
		r.item.Memory = DefaultMemory
	}
	pod := strings.TrimSpace(it.PodType)
	switch {
	case pod == "":
		errs = append(errs, field.Required(f.podType, "a pod type such as v6e-16, v4-16 or tpu7x-8, or \"cpu\" for CPU-only nodes"))
		return r, errs
	case strings.EqualFold(pod, CPUPodType):
		r.item.PodType = CPUPodType
		if it.Topology != "" {
			errs = append(errs, field.Forbidden(f.topology, "CPU-only nodes have no topology"))
		}
		if it.ChipsPerHost != 0 {
			errs = append(errs, field.Forbidden(f.chipsPerHost, "CPU-only nodes have no TPU chips"))
		}
		return r, errs
	}
	gen, chips, perr := parsePodType(pod, f.podType)
	if perr != nil {
		return r, append(errs, perr)
	}
	topo := strings.TrimSpace(it.Topology)
	if topo == "" {
		t, _ := gen.TopologyForChips(chips)
		topo = t.String()
	} else if t, err := tpu.ParseTopology(topo); err != nil {
		errs = append(errs, field.Invalid(f.topology, it.Topology, err.Error()))
		return r, errs
	} else if t.Chips() != chips {
		valid := topologiesWithChips(gen, chips)
		e := field.NotSupported(f.topology, it.Topology, valid)
		if def, ok := gen.TopologyForChips(chips); ok {
			e.Suggestion = def.String()
		}
		e.Detail = fmt.Sprintf("%s has %d chips, %s has %d", gen.PodType(chips), chips, t, t.Chips())
		errs = append(errs, e)
		return r, errs
	} else {
		topo = t.String()
	}
	sl, serrs := tpu.SliceSpec{Generation: gen.Name, Topology: topo, ChipsPerHost: it.ChipsPerHost}.
		Resolve(tpu.TargetAny, tpu.SliceFields{Generation: f.podType, Topology: f.topology, ChipsPerHost: f.chipsPerHost, MachineType: f.root.Child("machineType")})
	if len(serrs) > 0 {
		return r, append(errs, serrs...)
	}
	r.gen, r.topo, r.chips = gen, sl.Topology, chips
	r.item.PodType = gen.PodType(chips)
	r.item.Topology = sl.Topology.String()
	r.item.ChipsPerHost = sl.ChipsPerHost
	r.hostsPerItem = sl.Hosts()
	return r, errs
}

// parsePodType is tpu.ParsePodType with field errors that list valid values.
func parsePodType(s string, p *field.Path) (*tpu.Generation, int, *field.Error) {
	name, _, _ := strings.Cut(s, "-")
	gen, ok := tpu.LookupGeneration(name)
	if !ok {
		valid := append([]string{CPUPodType}, rayVersions()...)
		e := field.NotSupported(p, s, valid)
		e.Detail = fmt.Sprintf("unknown TPU generation %q: want <generation>-<size>, e.g. v6e-16, v4-16, tpu7x-8", name)
		if n := field.Nearest(name, valid); n != "" && n != CPUPodType {
			_, size, _ := strings.Cut(s, "-")
			e.Suggestion = n + "-" + size
		} else {
			e.Suggestion = ""
		}
		return nil, 0, e
	}
	g, chips, err := tpu.ParsePodType(s)
	if err == nil {
		if _, ok := gen.TopologyForChips(chips); ok {
			return g, chips, nil
		}
	}
	valid := podTypesOf(gen)
	e := field.NotSupported(p, s, valid)
	e.Suggestion = nearestPodType(gen, chips, valid)
	if err != nil {
		e.Detail = err.Error()
	} else {
		e.Detail = fmt.Sprintf("no %s slice has %d chips", gen.Name, chips)
	}
	return nil, 0, e
}

func rayVersions() []string {
	var out []string
	for _, g := range tpu.Generations() {
		out = append(out, g.RayVersion)
		if g.GCEPrefix != g.RayVersion {
			out = append(out, g.GCEPrefix)
		}
	}
	return out
}

// podTypesOf lists the pod types of every valid slice of g, smallest first.
func podTypesOf(g *tpu.Generation) []string {
	var chips []int
	for _, s := range g.ValidTopologies(tpu.TargetAny) {
		chips = append(chips, tpu.MustParseTopology(s).Chips())
	}
	slices.Sort(chips)
	chips = slices.Compact(chips)
	out := make([]string, len(chips))
	for i, c := range chips {
		out[i] = g.PodType(c)
	}
	return out
}

// nearestPodType suggests the smallest valid pod type with at least the
// requested chips (the largest when none is that big).
func nearestPodType(g *tpu.Generation, chips int, valid []string) string {
	if chips <= 0 || len(valid) == 0 {
		return ""
	}
	for _, v := range valid {
		if _, c, err := tpu.ParsePodType(v); err == nil && c >= chips {
			return v
		}
	}
	return valid[len(valid)-1]
}

func topologiesWithChips(g *tpu.Generation, chips int) []string {
	var out []string
	for _, s := range g.ValidTopologies(tpu.TargetAny) {
		if tpu.MustParseTopology(s).Chips() == chips {
			out = append(out, s)
		}
	}
	return out
}

// resolve validates every item and counts hosts.
func (s Spec) resolve(root *field.Path) ([]resolved, field.ErrorList) {
	var errs field.ErrorList
	out := make([]resolved, 0, len(s.Items))
	total := 0
	for i, it := range s.Items {
		r, ierrs := resolveItem(it, fieldsOf(root.Index(i)))
		errs = append(errs, ierrs...)
		if len(ierrs) == 0 {
			if r.item.Count > MaxHosts {
				errs = append(errs, field.Invalid(root.Index(i).Child("count"), r.item.Count, fmt.Sprintf("a spec holds at most %d hosts", MaxHosts)))
				continue
			}
			total += r.item.Count * r.hostsPerItem
			out = append(out, r)
		}
	}
	if total > MaxHosts {
		errs = append(errs, field.Invalid(root, total, fmt.Sprintf("describes %d hosts; a spec holds at most %d", total, MaxHosts)))
	}
	return out, errs
}

// Validate reports every problem with s as a field.ErrorList with paths
// items[i].podType, items[i].topology, ...
func (s Spec) Validate() error {
	_, errs := s.resolve(field.NewPath("items"))
	return errs.Err()
}

// Normalize returns s with every default filled in and pod types in Ray's
// form, or the problems found.
func (s Spec) Normalize() (Spec, error) {
	rs, errs := s.resolve(field.NewPath("items"))
	if len(errs) > 0 {
		return Spec{}, errs
	}
	return specOf(rs), nil
}

func specOf(rs []resolved) Spec {
	out := Spec{Items: make([]Item, len(rs))}
	for i, r := range rs {
		out.Items[i] = r.item
	}
	return out
}

// NumHosts is the number of hosts s describes (invalid items count 0).
func (s Spec) NumHosts() int {
	rs, _ := s.resolve(field.NewPath("items"))
	n := 0
	for _, r := range rs {
		n += r.item.Count * r.hostsPerItem
	}
	return n
}

// String renders the short form, leaving out every value equal to its
// default: ParseSpec(s.String()) equals s for a spec ParseSpec returned.
func (s Spec) String() string {
	parts := make([]string, len(s.Items))
	for i, it := range s.Items {
		parts[i] = it.String()
	}
	return strings.Join(parts, ",")
}

// String renders one item of the short form.
func (it Item) String() string {
	var b strings.Builder
	count := max(it.Count, 1)
	if it.IsCPU() {
		b.WriteString(CPUPodType + ":" + strconv.Itoa(count))
	} else {
		if count != 1 {
			b.WriteString(strconv.Itoa(count) + "*")
		}
		b.WriteString(it.PodType)
		r, errs := resolveItem(Item{PodType: it.PodType}, fieldsOf(field.NewPath("item")))
		if it.Topology != "" && (len(errs) > 0 || it.Topology != r.item.Topology) {
			b.WriteString(":" + it.Topology)
		}
		if it.ChipsPerHost != 0 {
			def := 0
			if len(errs) == 0 {
				if t, err := tpu.ParseTopology(cmp.Or(it.Topology, r.item.Topology)); err == nil {
					def = r.gen.DefaultChipsPerHost(t)
				}
			}
			if it.ChipsPerHost != def {
				b.WriteString("@" + strconv.Itoa(it.ChipsPerHost))
			}
		}
	}
	var opts []string
	if it.CPU != 0 && it.CPU != DefaultCPU {
		opts = append(opts, "cpu="+strconv.Itoa(it.CPU))
	}
	if it.Memory != 0 && it.Memory != DefaultMemory {
		opts = append(opts, "mem="+it.Memory.String())
	}
	if len(opts) > 0 {
		b.WriteString("{" + strings.Join(opts, ",") + "}")
	}
	return b.String()
}

// ParseSpec parses the short form of a cluster spec: items separated by
// commas, each one of
//
//	[N*]POD_TYPE[:TOPOLOGY][@CHIPS_PER_HOST][{OPTIONS}]   N slices (default 1)
//	cpu:N[{OPTIONS}]  or  N*cpu[{OPTIONS}]              N CPU-only nodes
//
// POD_TYPE is Ray's or GCE's form (v6e-16, v5litepod-8, v4-16, tpu7x-16);
// TOPOLOGY defaults to the canonical shape for the pod type's chip count;
// CHIPS_PER_HOST defaults to Ray's rule. OPTIONS set each host's CPU and
// memory, comma-separated: cpu=N (default 8) and mem=SIZE (default 32Gi;
// SIZE is bytes or a number with Ki, Mi, Gi, Ti, K, M, G or T). Spaces
// around tokens are ignored. Examples:
//
//	2*v6e-16,v4-16,cpu:2
//	v6e-8:2x4@4{cpu=16,mem=64Gi}
//
// Errors are a field.ErrorList with paths spec[i].podType,
// spec[i].topology, ...; each names the item, the bad value and the valid
// values.
func ParseSpec(s string) (Spec, error) {
	root := field.NewPath("spec")
	if strings.TrimSpace(s) == "" {
		return Spec{}, field.ErrorList{field.Required(root, "at least one item, e.g. 2*v6e-16,cpu:1")}
	}
	raw, serr := splitItems(s)
	if serr != "" {
		return Spec{}, field.ErrorList{field.Invalid(root, s, serr)}
	}
	var errs field.ErrorList
	var spec Spec
	for i, text := range raw {
		p := root.Index(i)
		it, ierrs := parseItem(text, p)
		if len(ierrs) == 0 {
			_, ierrs = resolveItem(it, fieldsOf(p))
		}
		for _, e := range ierrs {
			if e.Detail == "" {
				e.Detail = fmt.Sprintf("in item %q", text)
			} else {
				e.Detail = fmt.Sprintf("in item %q: %s", text, e.Detail)
			}
		}
		errs = append(errs, ierrs...)
		spec.Items = append(spec.Items, it)
	}
	if len(errs) > 0 {
		return Spec{}, errs
	}
	rs, errs := spec.resolve(root)
	if len(errs) > 0 {
		return Spec{}, errs
	}
	return specOf(rs), nil
}

// splitItems splits at commas outside braces.
func splitItems(s string) ([]string, string) {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '{':
			depth++
			if depth > 1 {
				return nil, "nested '{'"
			}
		case '}':
			depth--
			if depth < 0 {
				return nil, "'}' without '{'"
			}
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	if depth != 0 {
		return nil, "'{' without '}'"
	}
	return append(out, strings.TrimSpace(s[start:])), ""
}

func parseItem(text string, p *field.Path) (Item, field.ErrorList) {
	var it Item
	f := fieldsOf(p)
	if text == "" {
		return it, field.ErrorList{field.Required(p, "an item, e.g. v6e-16 or cpu:2; remove the extra comma")}
	}
	rest := text
	var errs field.ErrorList
	if i := strings.IndexByte(rest, '{'); i >= 0 {
		if !strings.HasSuffix(rest, "}") {
			return it, field.ErrorList{field.Invalid(p, text, "options go last, in braces: v6e-16{cpu=8,mem=64Gi}")}
		}
		errs = append(errs, parseOptions(rest[i+1:len(rest)-1], &it, f)...)
		rest = strings.TrimSpace(rest[:i])
	}
	if c, after, ok := strings.Cut(rest, "*"); ok {
		n, err := strconv.Atoi(strings.TrimSpace(c))
		if err != nil || n < 1 {
			errs = append(errs, field.Invalid(f.count, strings.TrimSpace(c), "the count before '*' must be a positive integer"))
		} else {
			it.Count = n
		}
		rest = strings.TrimSpace(after)
	}
	if head, n, ok := strings.Cut(rest, ":"); strings.EqualFold(strings.TrimSpace(head), CPUPodType) {
		it.PodType = CPUPodType
		if ok {
			v, err := strconv.Atoi(strings.TrimSpace(n))
			switch {
			case err != nil || v < 1:
				errs = append(errs, field.Invalid(f.count, strings.TrimSpace(n), "cpu:N wants a positive number of nodes"))
			case it.Count != 0:
				errs = append(errs, field.Invalid(f.count, text, "give the node count once: cpu:2 or 2*cpu"))
			default:
				it.Count = v
			}
		}
		return it, errs
	}
	if head, cph, ok := cutLast(rest, "@"); ok {
		v, err := strconv.Atoi(strings.TrimSpace(cph))
		if err != nil || v < 1 {
			errs = append(errs, field.Invalid(f.chipsPerHost, strings.TrimSpace(cph), "@N wants a positive number of chips per host, e.g. @4"))
		} else {
			it.ChipsPerHost = v
		}
		rest = head
	}
	if pod, topo, ok := strings.Cut(rest, ":"); ok {
		it.Topology = strings.TrimSpace(topo)
		if it.Topology == "" {
			errs = append(errs, field.Invalid(f.topology, "", "a topology follows ':', e.g. v6e-16:4x4"))
		}
		rest = pod
	}
	it.PodType = strings.TrimSpace(rest)
	if it.PodType == "" {
		errs = append(errs, field.Required(f.podType, "a pod type such as v6e-16, v4-16 or tpu7x-8, or \"cpu\""))
	}
	return it, errs
}

func cutLast(s, sep string) (string, string, bool) {
	if i := strings.LastIndex(s, sep); i >= 0 {
		return s[:i], s[i+len(sep):], true
	}
	return s, "", false
}

var optionNames = []string{"cpu", "mem"}

func parseOptions(s string, it *Item, f itemFields) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for _, kv := range strings.Split(s, ",") {
		kv = strings.TrimSpace(kv)
		k, v, ok := strings.Cut(kv, "=")
		k, v = strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(v)
		if k == "memory" {
			k = "mem"
		}
		switch {
		case !ok:
			errs = append(errs, field.Invalid(f.root, kv, "options are key=value: cpu=8, mem=64Gi"))
			continue
		case !slices.Contains(optionNames, k):
			errs = append(errs, field.NotSupported(f.root.Child("options"), k, optionNames))
			continue
		case seen[k]:
			errs = append(errs, field.Invalid(f.root.Child("options"), k, "set twice"))
			continue
		}
		seen[k] = true
		switch k {
		case "cpu":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				errs = append(errs, field.Invalid(f.cpu, v, "cpu wants a positive integer"))
			} else {
				it.CPU = n
			}
		case "mem":
			b, err := ParseBytes(v)
			if err != nil || b < 1 {
				errs = append(errs, field.Invalid(f.memory, v, "mem wants a positive size: bytes, or a number with Ki, Mi, Gi, Ti, K, M, G or T (64Gi)"))
			} else {
				it.Memory = b
			}
		}
	}
	return errs
}

// Bytes is a memory size in bytes. Its text form is an integer with an
// optional unit: Ki, Mi, Gi, Ti (powers of 1024) or K, M, G, T (of 1000).
type Bytes int64

var byteUnits = []struct {
	suffix string
	mult   int64
}{
	{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"Ti", 1 << 40},
	{"K", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12},
}

// ParseBytes parses a size such as 64Gi, 1500M or 4096.
func ParseBytes(s string) (Bytes, error) {
	s = strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range byteUnits {
		if num, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = num, u.mult
			break
		}
	}
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, fmt.Errorf("size %q: want an integer with an optional unit (Ki, Mi, Gi, Ti, K, M, G, T)", s)
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return Bytes(n * mult), nil
}

// String renders the size with the largest binary unit that divides it
// (64Gi), else in bytes.
func (b Bytes) String() string {
	if b != 0 {
		for _, u := range []struct {
			suffix string
			mult   int64
		}{{"Ti", 1 << 40}, {"Gi", 1 << 30}, {"Mi", 1 << 20}, {"Ki", 1 << 10}} {
			if int64(b)%u.mult == 0 {
				return strconv.FormatInt(int64(b)/u.mult, 10) + u.suffix
			}
		}
	}
	return strconv.FormatInt(int64(b), 10)
}

// MarshalText renders String.
func (b Bytes) MarshalText() ([]byte, error) { return []byte(b.String()), nil }

// UnmarshalText parses with ParseBytes.
func (b *Bytes) UnmarshalText(t []byte) error {
	v, err := ParseBytes(string(t))
	if err != nil {
		return err
	}
	*b = v
	return nil
}

// Host is one simulated Ray node, described exactly as Ray's TPU
// accelerator manager would register it (ray/_private/accelerators/tpu.py):
//
//   - resources: CPU, memory (bytes), and on TPU hosts TPU: <chips>,
//     accelerator_type:TPU-V6E: 1, <slice name>: 1 and, on worker 0 only,
//     TPU-<pod type>-head: 1;
//   - labels on TPU hosts: ray.io/tpu-slice-name, ray.io/tpu-worker-id,
//     ray.io/tpu-pod-type, ray.io/tpu-topology, ray.io/accelerator-type.
//
// Ray adds object_store_memory and node:<ip> resources of its own; the
// simulator leaves them out. A real node started from a Host gets the same
// resources and labels from the environment in Env plus
// --num-cpus, --memory and --resources '{"TPU": chips}'.
type Host struct {
	// Name is <slice name>-w<worker id> for a TPU host, cpu-<i> for a
	// CPU-only node.
	Name string `json:"name"`
	// SliceName is the slice (Ray's TPU_NAME), "" for a CPU-only node.
	SliceName string `json:"sliceName,omitempty"`
	// WorkerID is TPU_WORKER_ID; -1 for a CPU-only node.
	WorkerID int `json:"workerId"`
	// PodType is Ray's pod type (v6e-16); "" for a CPU-only node.
	PodType  string `json:"podType,omitempty"`
	Topology string `json:"topology,omitempty"`
	// Generation is raytpu's name (v5e, v6e, v7x); "" for a CPU-only node.
	Generation string             `json:"generation,omitempty"`
	Resources  map[string]float64 `json:"resources"`
	Labels     map[string]string  `json:"labels,omitempty"`
}

// IsTPU reports whether h is a TPU host.
func (h Host) IsTPU() bool { return h.SliceName != "" }

// Env returns the environment that makes Ray's TPU manager on a CPU-only
// machine register the node as h: TPU_NAME, TPU_WORKER_ID,
// TPU_ACCELERATOR_TYPE and TPU_TOPOLOGY (nil for a CPU-only node).
func (h Host) Env() map[string]string {
	if !h.IsTPU() {
		return nil
	}
	return rayvocab.HostEnv(h.SliceName, h.WorkerID, h.PodType, h.Topology)
}

// sliceName is the deterministic name of the ordinal-th slice of a pod type.
func sliceName(podType string, ordinal int) string { return podType + "-" + strconv.Itoa(ordinal) }

func hostName(slice string, worker int) string { return slice + "-w" + strconv.Itoa(worker) }

func cpuHostName(i int) string { return "cpu-" + strconv.Itoa(i) }

// Hosts lists every host of s in order: the items in order, each slice's
// workers 0..n-1. Slices are named <pod type>-<i>, counting per pod type
// over the whole spec (v6e-16-0, v6e-16-1, ...); CPU-only nodes cpu-<i>.
// Invalid items are skipped; call Validate first.
func (s Spec) Hosts() []Host {
	rs, _ := s.resolve(field.NewPath("items"))
	var out []Host
	walkHosts(rs, func(r *resolved, slice string, worker, cpuIndex int) {
		out = append(out, hostOf(r, slice, worker, cpuIndex))
	})
	return out
}

// walkHosts calls fn for every host in order.
func walkHosts(rs []resolved, fn func(r *resolved, slice string, worker, cpuIndex int)) {
	ordinals := map[string]int{}
	cpus := 0
	for i := range rs {
		r := &rs[i]
		for range r.item.Count {
			if r.gen == nil {
				fn(r, "", -1, cpus)
				cpus++
				continue
			}
			name := sliceName(r.item.PodType, ordinals[r.item.PodType])
			ordinals[r.item.PodType]++
			for w := range r.hostsPerItem {
				fn(r, name, w, -1)
			}
		}
	}
}

func hostOf(r *resolved, slice string, worker, cpuIndex int) Host {
	h := Host{
		WorkerID: worker,
		Resources: map[string]float64{
			rayvocab.ResourceCPU:    float64(r.item.CPU),
			rayvocab.ResourceMemory: float64(r.item.Memory),
		},
	}
	if r.gen == nil {
		h.Name = cpuHostName(cpuIndex)
		return h
	}
	h.Name = hostName(slice, worker)
	h.SliceName = slice
	h.PodType = r.item.PodType
	h.Topology = r.item.Topology
	h.Generation = r.gen.Name
	for k, v := range tpuResources(r, slice, worker) {
		h.Resources[k] = v
	}
	h.Labels = tpuLabels(r, worker)
	h.Labels[rayvocab.LabelTPUSliceName] = slice
	return h
}

// tpuResources are the TPU resources of one host.
func tpuResources(r *resolved, slice string, worker int) map[string]float64 {
	m := map[string]float64{
		rayvocab.ResourceTPU: float64(r.item.ChipsPerHost),
		rayvocab.AcceleratorTypeResource(r.gen.RayAcceleratorType()): 1,
		slice: 1,
	}
	if worker == 0 {
		m[rayvocab.HeadResource(r.item.PodType)] = 1
	}
	return m
}

// tpuLabels are the labels of one host except the slice name.
func tpuLabels(r *resolved, worker int) map[string]string {
	return map[string]string{
		rayvocab.LabelTPUWorkerID:     strconv.Itoa(worker),
		rayvocab.LabelTPUPodType:      r.item.PodType,
		rayvocab.LabelTPUTopology:     r.item.Topology,
		rayvocab.LabelAcceleratorType: r.gen.RayAcceleratorType(),
	}
}
