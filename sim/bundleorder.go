package sim

import (
	"maps"
	"slices"

	"github.com/raytpu/raytpu/rayvocab"
)

// predefined are Ray's predefined resources; every other resource is an
// "extra" one in the bundle order.
var predefined = map[string]bool{rayvocab.ResourceCPU: true, rayvocab.ResourceGPU: true, rayvocab.ResourceMemory: true, rayvocab.ResourceObjectStoreMemory: true}

// bundleOrder is Ray's SortRequiredResources: bundles asking for more GPU
// first, then more of the extra resources (compared by name, where Ray
// compares by its internal resource id), then more object store memory,
// memory and CPU. Ties keep bundle order (Ray's sort is not stable).
func bundleOrder(bundles []map[string]float64) []int {
	order := make([]int, len(bundles))
	same := true
	for i := range order {
		order[i] = i
		same = same && maps.Equal(bundles[i], bundles[0])
	}
	if same {
		return order
	}
	get := func(m map[string]float64, k string) int64 { return toFixed(m[k]) }
	slices.SortStableFunc(order, func(i, j int) int {
		a, b := bundles[i], bundles[j]
		if x, y := get(a, "GPU"), get(b, "GPU"); x != y {
			return cmpDesc(x, y)
		}
		var extra []string
		for k := range a {
			if !predefined[k] {
				extra = append(extra, k)
			}
		}
		for k := range b {
			if !predefined[k] {
				extra = append(extra, k)
			}
		}
		slices.Sort(extra)
		for _, k := range slices.Compact(extra) {
			if x, y := get(a, k), get(b, k); x != y {
				return cmpDesc(x, y)
			}
		}
		for _, k := range []string{rayvocab.ResourceObjectStoreMemory, rayvocab.ResourceMemory, rayvocab.ResourceCPU} {
			if x, y := get(a, k), get(b, k); x != y {
				return cmpDesc(x, y)
			}
		}
		return 0
	})
	return order
}

func cmpDesc(x, y int64) int {
	if x > y {
		return -1
	}
	return 1
}
