package kuberay

import (
	"bytes"
	"encoding/json"
	"fmt"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"sigs.k8s.io/yaml"
)

// marshalJSON renders a KubeRay object (a RayJob, RayService or RayCluster
// apply configuration) as indented JSON with a trailing newline; equal
// objects give identical bytes (fields in declared order, map keys sorted).
func marshalJSON(obj any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(obj); err != nil {
		return nil, fmt.Errorf("kuberay: encoding %T: %w", obj, err)
	}
	return buf.Bytes(), nil
}

// marshalYAML renders a KubeRay object (a RayJob, RayService or RayCluster
// apply configuration) as YAML, keys sorted, as kubectl apply -f takes it.
func marshalYAML(obj any) ([]byte, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("kuberay: encoding %T: %w", obj, err)
	}
	return yaml.JSONToYAML(b)
}

// decodeJobYAML reads a RayJob manifest (as marshalYAML writes it) into
// KubeRay's typed RayJob.
func decodeJobYAML(b []byte) (*rayv1.RayJob, error) {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal(b, &head); err != nil {
		return nil, fmt.Errorf("kuberay: decoding RayJob manifest: %w", err)
	}
	if head.APIVersion != "ray.io/v1" || head.Kind != KindRayJob {
		return nil, fmt.Errorf("kuberay: decoding RayJob manifest: apiVersion %q kind %q, want ray.io/v1 %s", head.APIVersion, head.Kind, KindRayJob)
	}
	var job rayv1.RayJob
	if err := yaml.UnmarshalStrict(b, &job); err != nil {
		return nil, fmt.Errorf("kuberay: decoding RayJob manifest: %w", err)
	}
	return &job, nil
}
