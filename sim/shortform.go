package sim

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/tpu"
)

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
		if it.Autoscaled() {
			if it.Count != it.MinSlices {
				b.WriteString(strconv.Itoa(it.Count) + "*")
			}
		} else if count != 1 {
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
	if it.Autoscaled() {
		if it.MinSlices != 0 {
			opts = append(opts, "min="+strconv.Itoa(it.MinSlices))
		}
		opts = append(opts, "max="+strconv.Itoa(it.MaxSlices))
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
// SIZE is bytes or a number with Ki, Mi, Gi, Ti, K, M, G or T). On a TPU
// item, max=N (and min=N, default 0) make it a worker group Ray's
// autoscaler scales between N slices (see PredictAutoscaling); N* then
// counts the slices it has now, default min, and may be 0. Spaces around
// tokens are ignored. Examples:
//
//	2*v6e-16,v4-16,cpu:2
//	v6e-8:2x4@4{cpu=16,mem=64Gi}
//	v4-16:2x2x2{max=2},cpu:1       a v4 2x2x2 group at 0 slices, up to 2
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
		switch {
		case err == nil && n == 0 && it.Autoscaled():
			// An autoscaled group with no slices now.
			if it.MinSlices > 0 {
				errs = append(errs, field.Invalid(f.count, 0, fmt.Sprintf("the slices the group has now: from min %d to max %d", it.MinSlices, it.MaxSlices)))
			}
		case err != nil || n < 1:
			errs = append(errs, field.Invalid(f.count, strings.TrimSpace(c), "the count before '*' must be a positive integer (0 only with max=N)"))
		default:
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

var optionNames = []string{"cpu", "mem", "min", "max"}

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
		case "min", "max":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 || (k == "max" && n < 1) {
				p, want := f.minSlices, "min wants 0 or more slices"
				if k == "max" {
					p, want = f.maxSlices, "max wants a positive number of slices"
				}
				errs = append(errs, field.Invalid(p, v, want))
			} else if k == "min" {
				it.MinSlices = n
			} else {
				it.MaxSlices = n
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
