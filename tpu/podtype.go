package tpu

import (
	"fmt"
	"strconv"
	"strings"
)

// ParsePodType parses a pod type in Ray's or GCE's form (v6e-16,
// v5litepod-16, v4-16, tpu7x-16, v7x-16) into its generation and chip count.
// The suffix counts TensorCores, so it must be a multiple of the
// generation's cores per chip.
func ParsePodType(s string) (*Generation, int, error) {
	name, count, ok := strings.Cut(strings.TrimSpace(s), "-")
	if !ok || name == "" || count == "" {
		return nil, 0, fmt.Errorf("pod type %q: want <generation>-<cores>, e.g. v6e-16 or v4-8", s)
	}
	g, found := LookupGeneration(name)
	if !found {
		return nil, 0, fmt.Errorf("pod type %q: unknown generation %q (valid: %s)", s, name, strings.Join(GenerationNames(), ", "))
	}
	n, err := strconv.Atoi(count)
	if err != nil || n <= 0 {
		return nil, 0, fmt.Errorf("pod type %q: size %q is not a positive integer", s, count)
	}
	if n%g.CoresPerChip != 0 {
		return nil, 0, fmt.Errorf("pod type %q: %s counts %d TensorCores per chip, so the size must be a multiple of %d", s, g.Name, g.CoresPerChip, g.CoresPerChip)
	}
	return g, n / g.CoresPerChip, nil
}

// TopologyForChips returns the canonical topology of a slice with the given
// chip count: the first Ray-valid shape with that many chips (sorted
// dimensions), else the first GKE shape, else false.
func (g *Generation) TopologyForChips(chips int) (Topology, bool) {
	for _, list := range [][]string{g.ray, g.GKETopologies()} {
		for _, s := range list {
			t := MustParseTopology(s)
			if t.Chips() != chips {
				continue
			}
			d := t.Dims()
			sorted := true
			for i := 1; i < len(d); i++ {
				if d[i-1] > d[i] && !(len(d) == 3 && s == "2x2x1") {
					sorted = false
				}
			}
			if sorted {
				return t, true
			}
		}
	}
	return Topology{}, false
}
