package raytpu_test

import (
	"context"
	"fmt"
	"go/types"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/raytpu/raytpu/internal/testinfra/apirecord"
	"github.com/raytpu/raytpu/internal/testinfra/golden"
)

// totalCall is one exported function or method called with zero values
// (and, where it takes integers, with -1 in each); total_walk_test.go is
// generated from the public API (see apirecord.Walk).
type totalCall struct {
	Name string
	Call func(ctx context.Context)
}

const totalFile = "total_walk_test.go"

// Every exported function and method is total: called with nil pointers,
// nil interfaces, empty strings, zero structs, zero and negative numbers
// and a cancelled context, it returns (an error, as its doc says) and
// never panics or hangs.
//
// Not parallel: it watches the working directory, which no other test of
// the package may change meanwhile.
func TestTotal(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// A zero value must not be taken for "here": no call may write into
	// the working directory (an empty dir is not ".").
	before, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		after, err := os.ReadDir(".")
		if err != nil {
			t.Fatal(err)
		}
		names := map[string]bool{}
		for _, e := range before {
			names[e.Name()] = true
		}
		for _, e := range after {
			if !names[e.Name()] {
				t.Errorf("a call with zero values wrote %s into the working directory", e.Name())
				_ = os.RemoveAll(e.Name())
			}
		}
	}()
	for _, c := range totalCalls {
		done := make(chan string, 1)
		go func() {
			defer func() {
				if r := recover(); r != nil {
					done <- fmt.Sprintf("panics: %v\n%s", r, debug.Stack())
					return
				}
				done <- ""
			}()
			c.Call(ctx)
		}()
		select {
		case msg := <-done:
			if msg != "" {
				t.Errorf("%s %s", c.Name, msg)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("%s did not return within 10s of a cancelled context", c.Name)
		}
	}
	t.Logf("%d calls; %d entry points not written down (generic or unexported parameter types): %v", len(totalCalls), len(totalSkipped), totalSkipped)
}

// The walk covers the public API as it is: regenerated with UPDATE_GOLDEN=1.
func TestTotalWalkCurrent(t *testing.T) {
	t.Parallel()
	pkgs, err := publicAPI()
	if err != nil {
		t.Fatal(err)
	}
	// servev1 is generated protobuf and gRPC code: its nil messages panic
	// by protobuf-go's design, and it is not written by hand.
	pkgs = slices.DeleteFunc(slices.Clone(pkgs), func(p *types.Package) bool { return strings.HasSuffix(p.Path(), "/serve/servev1") })
	got, err := apirecord.Walk("raytpu_test", pkgs)
	if err != nil {
		t.Fatal(err)
	}
	if golden.Updating() {
		if err := os.WriteFile(totalFile, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(totalFile)
	if err != nil || string(want) != string(got) {
		t.Errorf("%s is not the walk of today's public API; rewrite it with UPDATE_GOLDEN=1 go test -run TestTotalWalkCurrent .", totalFile)
	}
}
