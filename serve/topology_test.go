package serve_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/serve"
)

// TestTopologyAsChipCount: a deployment's topology given as a chip count
// is NotSupported at its own path, listing the shapes of that many chips.
func TestTopologyAsChipCount(t *testing.T) {
	t.Parallel()
	_, err := limitApp(serve.Deployment{Name: "llm", AcceleratorConfig: &serve.AcceleratorConfig{Accelerator: "v6e", Topology: "16"}}).Compile()
	errs := field.Errors(err)
	if len(errs) != 1 || errs[0].Field != "app.deployments[llm].accelerator_config.topology" || errs[0].Type != field.TypeNotSupported {
		t.Fatalf("errors = %v; want one NotSupported at the deployment's topology", err)
	}
	if diff := cmp.Diff([]string{"2x8", "4x4"}, errs[0].ValidValues); diff != "" {
		t.Errorf("valid values (-want +got):\n%s", diff)
	}
}
