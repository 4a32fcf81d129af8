package raytpu_test

import (
	"go/types"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/internal/testinfra/apirecord"
	"github.com/raytpu/raytpu/internal/testinfra/golden"
)

// apiFile is the record of the module's public API: one exported feature a
// line, as Go's api/*.txt. A change to the public surface changes this file
// in the same diff; the test fails until it does.
const apiFile = "api/raytpu.txt"

// publicAPI is the type information of the module's public packages, read
// once for the tests that check the surface. -race: the export data of the
// race build the suite has already made.
var publicAPI = sync.OnceValues(func() ([]*types.Package, error) {
	return apirecord.Load(".", "-race")
})

func TestAPIRecord(t *testing.T) {
	t.Parallel()
	pkgs, err := publicAPI()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(apirecord.Describe(pkgs), "\n") + "\n"
	if golden.Updating() {
		if err := os.WriteFile(apiFile, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(apiFile)
	if err != nil {
		t.Fatalf("%v (write it with UPDATE_GOLDEN=1 go test -run TestAPIRecord .)", err)
	}
	if diff := cmp.Diff(strings.Split(string(want), "\n"), strings.Split(got, "\n")); diff != "" {
		t.Errorf("the public API changed (-%s +now); if the change is meant, rewrite the record with\n\tUPDATE_GOLDEN=1 go test -run TestAPIRecord .\nand say so in the change:\n%s", apiFile, diff)
	}
}
