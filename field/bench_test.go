package field_test

import (
	"testing"

	"github.com/raytpu/raytpu/field"
)

// scaling has ScalingConfig's shape: five tagged fields, five not.
type scaling struct {
	NumWorkers         int                `validate:"gte=0"`
	NumSlices          int                `validate:"gte=0"`
	UseTPU             bool               //
	UseGPU             bool               //
	Accelerator        string             //
	Topology           string             //
	ChipsPerHost       int                `validate:"gte=0"`
	ResourcesPerWorker map[string]float64 `validate:"dive,gte=0"`
	PlacementStrategy  string             `validate:"omitempty,oneof=PACK SPREAD STRICT_PACK STRICT_SPREAD"`
	LabelSelector      map[string]string  //
}

// scalingSkip is scaling with validate:"-" on the untagged fields, which
// validator then never visits.
type scalingSkip struct {
	NumWorkers         int                `validate:"gte=0"`
	NumSlices          int                `validate:"gte=0"`
	UseTPU             bool               `validate:"-"`
	UseGPU             bool               `validate:"-"`
	Accelerator        string             `validate:"-"`
	Topology           string             `validate:"-"`
	ChipsPerHost       int                `validate:"gte=0"`
	ResourcesPerWorker map[string]float64 `validate:"dive,gte=0"`
	PlacementStrategy  string             `validate:"omitempty,oneof=PACK SPREAD STRICT_PACK STRICT_SPREAD"`
	LabelSelector      map[string]string  `validate:"-"`
}

// BenchmarkValidateStruct measures what validator/v10's reflection costs
// a valid spec, and what an error costs to convert.
func BenchmarkValidateStruct(b *testing.B) {
	root := field.NewPath("trainer", "scaling")
	res := map[string]float64{"CPU": 1, "TPU": 4}
	valid := scaling{NumWorkers: 8, UseTPU: true, Accelerator: "v6e", Topology: "4x4", PlacementStrategy: "PACK", ResourcesPerWorker: res}
	skip := scalingSkip{NumWorkers: 8, UseTPU: true, Accelerator: "v6e", Topology: "4x4", PlacementStrategy: "PACK", ResourcesPerWorker: res}
	invalid := scaling{NumWorkers: -1, PlacementStrategy: "PACKED"}
	b.Run("valid", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if errs := field.ValidateStruct(root, &valid); errs != nil {
				b.Fatal(errs)
			}
		}
	})
	b.Run("valid-skip-untagged", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if errs := field.ValidateStruct(root, &skip); errs != nil {
				b.Fatal(errs)
			}
		}
	})
	b.Run("two-errors", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if errs := field.ValidateStruct(root, &invalid); len(errs) != 2 {
				b.Fatal(errs)
			}
		}
	})
}
