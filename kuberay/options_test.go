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
		{"a name, which each run sets", kuberay.WithOptions(kuberay.Options{Name: "llama"}), "Options.Name", []string{`"llama"`, "SubmissionID", "leave it empty"}},
		{"a packed working_dir", kuberay.WithOptions(kuberay.Options{WorkingDir: &kuberay.WorkingDir{}}), "Options.WorkingDir", []string{"packs each plan's own"}},
		{"a namespace with capitals", kuberay.WithOptions(kuberay.Options{Namespace: "ML_Team"}), "Options.Namespace", []string{`"ML_Team"`, "DNS-1123"}},
		{"a negative deadline", kuberay.WithOptions(kuberay.Options{ActiveDeadline: -time.Second}), "Options.ActiveDeadline", []string{`"-1s"`, "0 for no deadline"}},
		{"an image with a space", kuberay.WithOptions(kuberay.Options{Image: "rayproject/ray :2.60.0"}), "Options.Image", []string{"white space"}},
		{"a Ray version that is a tag", kuberay.WithOptions(kuberay.Options{RayVersion: "latest"}), "Options.RayVersion", []string{`"latest"`, kuberay.RayVersion}},
		{"a Python version without a dot", kuberay.WithOptions(kuberay.Options{PythonVersion: "311"}), "Options.PythonVersion", []string{`"311"`, kuberay.PythonVersion}},
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
	bad := kuberay.Options{Name: "x", Namespace: "-", ActiveDeadline: -1, RayVersion: "two", PythonVersion: "py3"}
	_, err := kuberay.New(noCluster, kuberay.WithOptions(bad))
	var got []string
	for _, e := range field.Errors(err) {
		got = append(got, e.Field)
	}
	want := []string{"Options.Name", "Options.Namespace", "Options.ActiveDeadline", "Options.RayVersion", "Options.PythonVersion"}
	if !slices.Equal(got, want) {
		t.Errorf("fields %v, want %v", got, want)
	}
	good := kuberay.Options{Namespace: "ml", Image: "example.com/ray:custom", RayVersion: "2.61.0rc1", PythonVersion: "3.12", ActiveDeadline: time.Hour}
	if _, err := kuberay.New(noCluster, kuberay.WithOptions(good), kuberay.WithLogger(slog.New(slog.DiscardHandler)), kuberay.WithDryRun(), nil); err != nil {
		t.Errorf("New with valid options (and a nil one, skipped) = %v", err)
	}
	if _, err := kuberay.NewWithClient(nil); err == nil {
		t.Error("NewWithClient(nil) succeeded")
	}
}
