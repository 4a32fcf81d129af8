package raybackend_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/ray"
	"github.com/raytpu/raytpu/raybackend"
)

// Waiting for an application whose replica cannot be placed: after
// StuckAfter, Wait reads the cluster's placement groups and nodes and
// stops with the diagnosis instead of waiting for ever. Diagnose gives the
// same reading of a running application (per-chip bundles that landed on
// two slices, say). Needs a Ray cluster's dashboard.
func ExampleBackend_Diagnose() {
	client, err := ray.NewClient("http://127.0.0.1:8265")
	if err != nil {
		fmt.Println(err)
		return
	}
	b := raybackend.New(client)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	_, err = b.Wait(ctx, "chat", backend.WaitOptions{StuckAfter: time.Minute})
	var se *backend.ServiceError
	if errors.As(err, &se) && errors.Is(err, backend.ErrPlacement) {
		for _, f := range se.Status.Diagnosis {
			fmt.Println(f) // e.g. error Infeasible: deployment "LLM" replica 0: placement group ... (TPU-v4-32-head reservation ...)
		}
	}
	st, err := b.Diagnose(ctx, "chat")
	if err == nil {
		for _, l := range st.Landings {
			fmt.Println(l.Part, l.Bundle, l.State, l.SliceName)
		}
	}
}
