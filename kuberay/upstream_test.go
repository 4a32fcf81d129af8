package kuberay_test

import (
	"errors"
	"strings"
	"testing"

	rayclient "github.com/ray-project/kuberay/ray-operator/pkg/client/clientset/versioned"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/kuberay"
	"github.com/raytpu/raytpu/kuberay/internal/kubetest"
)

// The 47-character name limit Validate enforces is KubeRay's: a 48-character
// RayJob sent past Validate is accepted by the apiserver and then marked
// ValidationFailed by the real operator, which WaitJob reports as FAILED
// with the Warning event KubeRay recorded.
func TestNameLimitIsKubeRays(t *testing.T) {
	t.Parallel()
	env := kubetest.Shared(t)
	ns := env.Namespace(t)
	job, err := kuberay.Render(compile(t, trainer("v6e", "4x4", 1)), kuberay.Options{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	long := "a" + strings.Repeat("b", kuberay.MaxRayJobName)
	job.WithName(long)
	if got := field.Errors(kuberay.Validate(job)); len(got) != 1 || got[0].Field != "metadata.name" {
		t.Fatalf("Validate on a %d-character name: %v, want one metadata.name error", len(long), got)
	}
	c, err := rayclient.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.RayV1().RayJobs(ns).Apply(t.Context(), job, metav1.ApplyOptions{FieldManager: "test"}); err != nil {
		t.Fatalf("the apiserver refused what KubeRay is to refuse: %v", err)
	}
	b, err := kuberay.New(env.Config, kuberay.WithOptions(kuberay.Options{Namespace: ns}))
	if err != nil {
		t.Fatal(err)
	}
	out, err := b.WaitJob(t.Context(), long, backend.RunOptions{})
	var re *backend.RunError
	if !errors.As(err, &re) || out.State != backend.StateFailed || !strings.HasPrefix(out.Message, "ValidationFailed") || !strings.Contains(out.Message, "47") {
		t.Fatalf("WaitJob = %+v, %v; want FAILED with KubeRay's ValidationFailed naming the 47-character limit", out, err)
	}
	if !strings.Contains(out.Message, "events: InvalidRayJobMetadata: ") {
		t.Errorf("message %q lacks KubeRay's Warning event InvalidRayJobMetadata", out.Message)
	}
	t.Logf("KubeRay: %s", out.Message)
}
