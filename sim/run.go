package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/raytpu/raytpu/placement"
)

// Result is what the simulated backend reports for a plan: where every
// bundle of every slice group landed, and the diagnosis.
type Result struct {
	// Name and Kind are the plan's.
	Name string         `json:"name"`
	Kind placement.Kind `json:"kind"`
	// Slices holds one placement per slice group of the plan, in order.
	Slices []*SlicePlacement `json:"slices"`
	// Diagnosis gathers every slice group's findings, in order.
	Diagnosis placement.Diagnosis `json:"diagnosis"`
}

func (r *Result) placedBundles() []placedBundle {
	if r == nil {
		return nil
	}
	var out []placedBundle
	for _, sp := range r.Slices {
		out = append(out, sp.placedBundles()...)
	}
	return out
}

// MarshalIndent renders r as indented JSON with a trailing newline; equal
// results give identical bytes.
func (r *Result) MarshalIndent() ([]byte, error) { return marshalIndent(r) }

// MarshalIndent renders sp as indented JSON with a trailing newline.
func (sp *SlicePlacement) MarshalIndent() ([]byte, error) { return marshalIndent(sp) }

func marshalIndent(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Place places every slice group of a plan, in order, as the Ray backend
// would before starting the plan's job, and returns where each bundle
// landed with the diagnosis; each finding names the workload part of its
// group. The groups stay placed, as they would while the job runs:
// c.Release(res) frees them all in one call. [Cluster.Run] is the same as
// a backend.Runner, and releases them itself.
//
// A slice head that cannot be reserved is recorded in its SlicePlacement
// (Error) and the diagnosis, and Place goes on with the next group, so one
// call shows every problem. Place returns an error only for a nil or
// malformed plan, or when ctx is done (with the result so far).
func (c *Cluster) Place(ctx context.Context, p *placement.Plan) (*Result, error) {
	if err := c.usableCtx(ctx, "Place"); err != nil {
		return nil, err
	}
	if p == nil {
		return nil, errors.New("sim: nil plan")
	}
	res := &Result{Name: p.Name, Kind: p.Kind, Slices: []*SlicePlacement{}, Diagnosis: placement.Diagnosis{}}
	for i, g := range p.Slices {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		sp, err := c.PlaceSlices(g)
		if err != nil && !errors.Is(err, ErrSliceReservation) {
			return res, fmt.Errorf("sim: plan %q slices[%d]: %w", p.Name, i, err)
		}
		res.Slices = append(res.Slices, sp)
		for _, f := range sp.Diagnosis {
			if g.Part != (placement.Part{}) {
				f.Part = g.Part.String()
			}
			res.Diagnosis = append(res.Diagnosis, f)
		}
	}
	return res, nil
}
