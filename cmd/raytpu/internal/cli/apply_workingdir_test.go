package cli_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/raytpu/raytpu/cmd/raytpu/internal/cli"
	"github.com/raytpu/raytpu/ray"
)

// raytpu apply packs a local working_dir (into the ConfigMap of the RayJob
// or RayService) before it talks to the cluster, with the packager of the
// Ray backend: a tree with a link out of it is refused with the very
// message ray.HashDir gives, and nothing is sent (the kubeconfig's server
// does not exist).
func TestApplyRefusesWorkingDirLinkOut(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	secret := filepath.Join(tmp, "secret")
	if err := os.WriteFile(secret, []byte("TOP SECRET"), 0o600); err != nil {
		t.Fatal(err)
	}
	wd := filepath.Join(tmp, "wd")
	if err := os.Mkdir(wd, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(wd, "train.py"), []byte("print(1)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(wd, "innocent.txt")); err != nil {
		t.Fatal(err)
	}
	_, want := ray.HashDir(wd, ray.PackageOptions{})
	if want == nil || !strings.Contains(want.Error(), "points outside") {
		t.Fatalf("ray.HashDir: %v, want the refusal of the link", want)
	}

	// A server nothing listens on: reaching it would fail otherwise.
	kubeconfig := filepath.Join(tmp, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters:
- name: nowhere
  cluster: {server: "https://127.0.0.1:1"}
contexts:
- name: nowhere
  context: {cluster: nowhere, user: nobody, namespace: research}
current-context: nowhere
users:
- name: nobody
  user: {token: none}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	plan, err := os.ReadFile("testdata/plans/jaxtrain-v6e-two-slices.json")
	if err != nil {
		t.Fatal(err)
	}
	job := filepath.Join(tmp, "job.json")
	if err := os.WriteFile(job, []byte(strings.Replace(string(plan), "gs://bucket/code/loop.zip", wd, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	chat, err := os.ReadFile("testdata/apps/chat.yaml")
	if err != nil {
		t.Fatal(err)
	}
	app := filepath.Join(tmp, "app.yaml")
	if err := os.WriteFile(app, fmt.Appendf(chat, "runtime_env:\n  working_dir: %s\n", wd), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, file := range map[string]string{"a RayJob": job, "a RayService": app} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, errOut, code := run(t, "apply", "-f", file, "--kubeconfig", kubeconfig)
			if code == cli.ExitOK || !strings.Contains(errOut, want.Error()) {
				t.Errorf("exit %d, stderr %q; want a failure with %q", code, errOut, want)
			}
			if strings.Contains(errOut, "TOP SECRET") || strings.Contains(errOut, "127.0.0.1:1") {
				t.Errorf("stderr %q: the secret's content, or a request to the cluster", errOut)
			}
		})
	}
}
