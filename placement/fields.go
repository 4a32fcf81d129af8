package placement

import (
	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/rayvocab"
)

// Fields are the paths a slice's errors are reported under, one per
// [SliceSpec] field. A front end whose spec holds the slice arguments under
// its own names fills them with its own paths, so that every error lands on
// the field the user wrote and nothing is renamed or filtered afterwards:
//
//	train's ScalingConfig: Strategy at trainer.scaling_config.placement_strategy,
//	    ResourcesPerBundle at trainer.scaling_config.resources_per_worker
//	serve's AcceleratorConfig: Accelerator and Topology at
//	    app.deployments[0].acceleratorConfig.accelerator / .topology,
//	    NumSlices at app.deployments[0].numReplicas
//
// A nil path is allowed for a field the caller never sets from user input
// (its errors, which cannot occur, would carry an empty path).
type Fields struct {
	Topology            *field.Path
	Accelerator         *field.Path
	ChipsPerHost        *field.Path
	NumSlices           *field.Path
	ResourcesPerBundle  *field.Path // map keys go below it: resourcesPerBundle[TPU]
	Strategy            *field.Path
	TPUResourcePerChip  *field.Path
	BundleLabelSelector *field.Path
	Name                *field.Path
	// BundleTPU is where a problem with the TPU count of each bundle is
	// reported, for a caller that derives that count from a field of its
	// own (train's chipsPerHost). Default (nil): ResourcesPerBundle[TPU].
	BundleTPU *field.Path
}

func (f *Fields) bundleTPU() *field.Path {
	if f.BundleTPU != nil {
		return f.BundleTPU
	}
	return f.ResourcesPerBundle.Key(rayvocab.ResourceTPU)
}

// FieldsUnder returns SliceSpec's own field names below p (nil: at the
// root): topology, accelerator, chipsPerHost, numSlices, ...
func FieldsUnder(p *field.Path) Fields {
	at := func(name string) *field.Path {
		if p == nil {
			return field.NewPath(name)
		}
		return p.Child(name)
	}
	return Fields{
		Topology:            at("topology"),
		Accelerator:         at("accelerator"),
		ChipsPerHost:        at("chipsPerHost"),
		NumSlices:           at("numSlices"),
		ResourcesPerBundle:  at("resourcesPerBundle"),
		Strategy:            at("strategy"),
		TPUResourcePerChip:  at("tpuResourcePerChip"),
		BundleLabelSelector: at("bundleLabelSelector"),
		Name:                at("name"),
	}
}
