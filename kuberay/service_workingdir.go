package kuberay

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/runtimeenv"
)

// A Serve application whose runtime_env working_dir is a local directory
// ships it as a job does (see WorkingDirMountPath): Deploy packs it into
// ConfigMap WorkingDirConfigMapName(<RayService name>), owned by the
// RayService and mounted into every Ray container of its RayClusters, and
// serveConfigV2 carries the application with working_dir replaced by the
// file:// URI of the mounted zip (and no excludes, which shaped the zip);
// every other byte of the compiled config is kept. A change of the files
// changes the URI, which KubeRay submits to the running cluster in place;
// kubelet refreshes a mounted ConfigMap within about a minute, so Ray may
// fail to fetch the new zip until then and retries.

// appRuntimeEnv is the application-level runtime_env of a Serve config.
func appRuntimeEnv(config []byte) (*runtimeenv.RuntimeEnv, error) {
	var app struct {
		RuntimeEnv *runtimeenv.RuntimeEnv `json:"runtime_env"`
	}
	if err := json.Unmarshal(config, &app); err != nil {
		return nil, err
	}
	return app.RuntimeEnv, nil
}

// withPackedWorkingDir returns a copy of the Serve plan whose application
// runs in the packed working_dir.
func withPackedWorkingDir(p *placement.Plan, wd *WorkingDir) (*placement.Plan, error) {
	env, err := appRuntimeEnv(p.Serve.Config)
	if err != nil || env == nil {
		return nil, fmt.Errorf("kuberay: plan %q: the Serve config has no runtime_env to rewrite: %v", p.Name, err)
	}
	env = env.Clone()
	env.WorkingDir = wd.URI()
	env.Excludes = nil
	envJSON, err := json.Marshal(env)
	if err != nil {
		return nil, err
	}
	cfg, err := replaceKey(p.Serve.Config, "runtime_env", envJSON)
	if err != nil {
		return nil, fmt.Errorf("kuberay: plan %q Serve config: %w", p.Name, err)
	}
	out := *p
	out.Serve = &placement.ServeApplication{Config: cfg}
	return &out, nil
}

// replaceKey rewrites the value of one top-level key of a JSON object,
// keeping every other key, in order, byte for byte.
func replaceKey(obj []byte, key string, value []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object")
	}
	var out bytes.Buffer
	out.WriteByte('{')
	for first := true; dec.More(); first = false {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if k == key {
			v = value
		}
		if !first {
			out.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		out.Write(kb)
		out.WriteByte(':')
		out.Write(v)
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return nil, fmt.Errorf("not a JSON object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("trailing data after the JSON object")
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}

// applyServiceWorkingDir writes the ConfigMap of a RayService's packed
// working_dir, owned by the RayService.
func (b *Backend) applyServiceWorkingDir(ctx context.Context, svc *rayv1.RayService, wd *WorkingDir, p *placement.Plan) error {
	owner := metav1ac.OwnerReference().WithAPIVersion(rayv1.GroupVersion.String()).WithKind(KindRayService).
		WithName(svc.Name).WithUID(svc.UID)
	cm := WorkingDirConfigMap(svc.Name, svc.Namespace, wd, labels(p), owner)
	if _, err := b.kube.CoreV1().ConfigMaps(svc.Namespace).Apply(ctx, cm, b.applyOptions()); err != nil {
		return fmt.Errorf("kuberay: applying the working_dir ConfigMap %s/%s of RayService %s: %w", svc.Namespace, *cm.Name, svc.Name, err)
	}
	return nil
}
