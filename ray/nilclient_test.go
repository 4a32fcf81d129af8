package ray_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/raytpu/raytpu/ray"
)

// A nil Client and one not made by NewClient answer every method with an
// error saying to use NewClient; nothing panics.
func TestClientNotMadeByNewClient(t *testing.T) {
	ctx := context.Background()
	for name, c := range map[string]*ray.Client{"nil": nil, "zero": new(ray.Client)} {
		t.Run(name, func(t *testing.T) {
			if got := c.BaseURL(); got != "" {
				t.Errorf("BaseURL = %q, want \"\"", got)
			}
			calls := map[string]error{}
			_, calls["ListJobs"] = c.ListJobs(ctx)
			_, calls["GetJob"] = c.GetJob(ctx, "raysubmit_1")
			_, calls["SubmitJob"] = c.SubmitJob(ctx, ray.JobSubmission{Entrypoint: "true"})
			_, calls["Version"] = c.Version(ctx)
			_, calls["UploadPackage"] = c.UploadPackage(ctx, &ray.Package{})
			_, _, calls["UploadDir"] = c.UploadDir(ctx, t.TempDir(), ray.PackageOptions{})
			calls["ShutdownServe"] = c.ShutdownServe(ctx)
			for _, err := range c.TailJobLogs(ctx, "raysubmit_1") {
				calls["TailJobLogs"] = err
				break
			}
			for m, err := range calls {
				if err == nil || !strings.Contains(err.Error(), "use ray.NewClient") {
					t.Errorf("%s: err = %v, want one saying to use ray.NewClient", m, err)
				}
			}
		})
	}
}

// Nil errors and packages answer neutrally.
func TestNilValues(t *testing.T) {
	var ae *ray.APIError
	var se *ray.ServeApplicationError
	var p *ray.Package
	if ae.Error() != "<nil>" || se.Error() != "<nil>" || se.Unwrap() != nil || p.Name() != "" {
		t.Errorf("nil values: %q %q %v %q", ae.Error(), se.Error(), se.Unwrap(), p.Name())
	}
	if errors.Is(ae, ray.ErrNotFound) || errors.Is(se, ray.ErrNotFound) {
		t.Error("a nil error matches ErrNotFound")
	}
}
