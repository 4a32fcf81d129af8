package kuberay

import (
	"bytes"
	"encoding/json"
	"fmt"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	rayv1ac "github.com/ray-project/kuberay/ray-operator/pkg/client/applyconfiguration/ray/v1"
	"sigs.k8s.io/yaml"
)

// MarshalJSON renders a RayJob as indented JSON with a trailing newline;
// equal RayJobs give identical bytes (fields in declared order, map keys
// sorted).
func MarshalJSON(job *rayv1ac.RayJobApplyConfiguration) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(job); err != nil {
		return nil, fmt.Errorf("kuberay: encoding RayJob: %w", err)
	}
	return buf.Bytes(), nil
}

// MarshalYAML renders a RayJob as YAML, keys sorted, as kubectl apply -f
// takes it.
func MarshalYAML(job *rayv1ac.RayJobApplyConfiguration) ([]byte, error) {
	b, err := json.Marshal(job)
	if err != nil {
		return nil, fmt.Errorf("kuberay: encoding RayJob: %w", err)
	}
	return yaml.JSONToYAML(b)
}

// DecodeYAML reads a RayJob manifest (as MarshalYAML writes it) into
// KubeRay's typed RayJob.
func DecodeYAML(b []byte) (*rayv1.RayJob, error) {
	var job rayv1.RayJob
	if err := yaml.UnmarshalStrict(b, &job); err != nil {
		return nil, fmt.Errorf("kuberay: decoding RayJob manifest: %w", err)
	}
	return &job, nil
}
