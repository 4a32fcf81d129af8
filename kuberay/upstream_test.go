package kuberay_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	rayclient "github.com/ray-project/kuberay/ray-operator/pkg/client/clientset/versioned"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/internal/testinfra/kubetest"
	"github.com/raytpu/raytpu/kuberay"
)

// The 47-character name limit Validate enforces is KubeRay's: a 48-character
// RayJob sent past Validate is accepted by the apiserver and then marked
// ValidationFailed by the real operator, which WaitJob reports as FAILED
// with the Warning event KubeRay recorded.
func TestNameLimitIsKubeRays(t *testing.T) {
	t.Parallel()
	env := kubetest.Shared(t)
	ns := env.Namespace(t)
	job, err := kuberay.RenderJob(compile(t, trainer("v6e", "4x4", 1)), kuberay.Options{Namespace: ns})
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

// A RayService KubeRay refuses never becomes ready and its status says
// nothing: Wait's error carries the Warning event the operator recorded.
// A head service with a name set is refused by KubeRay's
// ValidateRayServiceSpec and let through by the CRD schema; raytpu never
// renders one, so the test applies it past raytpu.
func TestServiceWaitCarriesKubeRaysEvents(t *testing.T) {
	t.Parallel()
	env := kubetest.Shared(t)
	ns := env.Namespace(t)
	svc, err := kuberay.RenderService(compileApp(t, chatApp(1, nil)), kuberay.Options{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	svc.Spec.RayClusterSpec.HeadGroupSpec.WithHeadService(corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "chat-head"}})
	c, err := rayclient.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.RayV1().RayServices(ns).Apply(t.Context(), svc, metav1.ApplyOptions{FieldManager: "test"}); err != nil {
		t.Fatalf("the apiserver refused what KubeRay is to refuse: %v", err)
	}
	b, err := kuberay.New(env.Config, kuberay.WithOptions(kuberay.Options{Namespace: ns}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	_, err = b.Wait(ctx, "chat", backend.WaitOptions{})
	var se *backend.ServiceError
	if !errors.As(err, &se) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait = %v, want a *backend.ServiceError ending at the deadline", err)
	}
	if !strings.Contains(se.Status.Message, "events: InvalidRayServiceSpec: ") || !strings.Contains(se.Status.Message, "headService.metadata.name") {
		t.Errorf("status message %q lacks KubeRay's Warning event InvalidRayServiceSpec naming the field", se.Status.Message)
	}
	t.Logf("KubeRay: %s", se.Status.Message)
}
