package serve

import (
	"maps"
	"slices"
	"strings"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
)

// compileSlice runs placement's slice validation for one replica's slice of
// the deployment at p, reporting errors under the deployment's own fields:
// acceleratorConfig.topology and .accelerator, placementGroupBundles[i] for
// the worker bundle, placementGroupStrategy. It is the one call into
// placement.SliceSpec, kept small so it can move to placement's
// resolve-once API.
func compileSlice(p *field.Path, a *AcceleratorConfig, bundle map[string]float64, strategy placement.Strategy) (*placement.SliceGroup, field.ErrorList) {
	ap := p.Child("acceleratorConfig")
	g, err := placement.SliceSpec{
		Topology:           a.Topology,
		Accelerator:        a.Accelerator,
		ResourcesPerBundle: bundle,
		Strategy:           strategy,
	}.Compile(ap)
	if err == nil {
		return g, nil
	}
	errs := field.Errors(err)
	prefix := ap.String() + "."
	for _, e := range errs {
		rest, ok := strings.CutPrefix(e.Field, prefix)
		if !ok {
			continue
		}
		switch {
		case strings.HasPrefix(rest, "resourcesPerBundle"):
			e.Field = p.Child("placementGroupBundles").Index(0).String() + strings.TrimPrefix(rest, "resourcesPerBundle")
		case rest == "strategy":
			e.Field = p.Child("placementGroupStrategy").String()
		}
	}
	return nil, errs
}

// cloneGroup deep-copies a compiled slice group, so that the groups of a
// deployment's replicas share no map or slice.
func cloneGroup(g *placement.SliceGroup) *placement.SliceGroup {
	c := *g
	c.BundleResources = maps.Clone(g.BundleResources)
	c.Heads = slices.Clone(g.Heads)
	for i := range c.Heads {
		c.Heads[i].Resources = maps.Clone(g.Heads[i].Resources)
		c.Heads[i].LabelSelector = maps.Clone(g.Heads[i].LabelSelector)
	}
	c.Groups = slices.Clone(g.Groups)
	for i := range c.Groups {
		c.Groups[i].Bundles = slices.Clone(g.Groups[i].Bundles)
		for j := range c.Groups[i].Bundles {
			b := &c.Groups[i].Bundles[j]
			b.Resources = maps.Clone(b.Resources)
			b.LabelSelector = maps.Clone(b.LabelSelector)
		}
	}
	c.Megascale = slices.Clone(g.Megascale)
	return &c
}
