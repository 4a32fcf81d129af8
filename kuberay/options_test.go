package kuberay_test

import (
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/kuberay"
)

// noCluster is a rest.Config for a cluster that is never reached: New
// makes its clients without a request, so only the options are checked.
var noCluster = &rest.Config{Host: "http://127.0.0.1:1"}

// Invalid options are refused by New with an error that names the option,
// the bad value and what is valid; WithOptions reports every bad field.
func TestNewRefusesInvalidOptions(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		opt   kuberay.Option
		field string
		says  []string
	}{
		{"a namespace with capitals", kuberay.WithOptions(kuberay.Options{Namespace: "ML_Team"}), "options.namespace", []string{`"ML_Team"`, "DNS-1123"}},
		{"a negative deadline", kuberay.WithOptions(kuberay.Options{ActiveDeadline: -time.Second}), "options.activeDeadline", []string{`"-1s"`, "0 for no deadline"}},
		{"an image with a space", kuberay.WithOptions(kuberay.Options{Image: "rayproject/ray :2.60.0"}), "options.image", []string{"white space"}},
		{"an image with a newline", kuberay.WithOptions(kuberay.Options{Image: "rayproject/ray:2.60.0\nx"}), "options.image", []string{"control characters"}},
		{"an image that is a path", kuberay.WithOptions(kuberay.Options{Image: "../../x"}), "options.image", []string{"OCI image reference"}},
		{"a Ray version that is a tag", kuberay.WithOptions(kuberay.Options{RayVersion: "latest"}), "options.rayVersion", []string{`"latest"`, kuberay.RayVersion}},
		{"a Ray version that is a path", kuberay.WithOptions(kuberay.Options{RayVersion: "../../x"}), "options.rayVersion", []string{`"../../x"`}},
		{"a Python version without a dot", kuberay.WithOptions(kuberay.Options{PythonVersion: "311"}), "options.pythonVersion", []string{`"311"`, kuberay.PythonVersion}},
		{"a Python version Ray has no image for", kuberay.WithOptions(kuberay.Options{PythonVersion: "9.99"}), "options.pythonVersion", []string{`"9.99"`}},
		{"a cluster with a control character", kuberay.WithOptions(kuberay.Options{Cluster: "pool\x1b"}), "options.cluster", nil},
		{"a cluster and autoscaling", kuberay.WithOptions(kuberay.Options{Cluster: "pool", Autoscaling: &kuberay.Autoscaling{}}), "options.autoscaling", nil},
		{"a nil option", nil, "", []string{"nil Option"}},
		{"a nil logger", kuberay.WithLogger(nil), "", []string{"WithLogger(nil)"}},
		{"a nil Kubernetes client", kuberay.WithKubeClient(nil), "", []string{"WithKubeClient(nil)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b, err := kuberay.New(noCluster, c.opt)
			if err == nil || b != nil {
				t.Fatalf("New = %v, %v; want an error", b, err)
			}
			if c.field != "" {
				fields := field.Errors(err)
				if len(fields) != 1 || fields[0].Field != c.field {
					t.Errorf("New = %v; want one field error, of %s", err, c.field)
				}
				c.says = append(c.says, "kuberay: WithOptions", c.field)
			}
			for _, s := range c.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("%q does not say %q", err, s)
				}
			}
		})
	}
}

func TestWithOptionsReportsEveryField(t *testing.T) {
	t.Parallel()
	bad := kuberay.Options{Namespace: "-", ActiveDeadline: -1, RayVersion: "two", PythonVersion: "py3"}
	_, err := kuberay.New(noCluster, kuberay.WithOptions(bad))
	var got []string
	for _, e := range field.Errors(err) {
		got = append(got, e.Field)
	}
	want := []string{"options.namespace", "options.activeDeadline", "options.rayVersion", "options.pythonVersion"}
	if !slices.Equal(got, want) {
		t.Errorf("fields %v, want %v", got, want)
	}
	good := kuberay.Options{Namespace: "ml", Image: "example.com/ray:custom", RayVersion: "2.61.0rc1", PythonVersion: "3.12", ActiveDeadline: time.Hour}
	if _, err := kuberay.New(noCluster, kuberay.WithOptions(good), kuberay.WithLogger(slog.New(slog.DiscardHandler)), kuberay.WithDryRun()); err != nil {
		t.Errorf("New with valid options = %v", err)
	}
	if _, err := kuberay.NewWithClient(nil); err == nil {
		t.Error("NewWithClient(nil) succeeded")
	}
}
