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
	b, err := raybackend.New(client)
	if err != nil {
		fmt.Println(err)
		return
	}
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

// New validates its options: a poll interval that is not positive is an
// error naming the option, the value and the default.
func ExampleNew() {
	client, err := ray.NewClient("http://127.0.0.1:8265")
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := raybackend.New(client, raybackend.WithPollInterval(0)); err != nil {
		fmt.Println(err)
	}
	b, err := raybackend.New(client, raybackend.WithPollInterval(500*time.Millisecond))
	fmt.Println(b != nil, err)
	// Output:
	// raybackend: WithPollInterval(0s): the interval must be positive (the default is 1s)
	// true <nil>
}
