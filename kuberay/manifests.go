package kuberay

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	rayv1ac "github.com/ray-project/kuberay/ray-operator/pkg/client/applyconfiguration/ray/v1"
	"k8s.io/apimachinery/pkg/runtime"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
)

// RenderManifests renders plan p as everything `kubectl apply -f` needs to
// run it, in the order it must be applied: the ConfigMaps its Ray
// containers mount, then the RayJob, RayService or RayCluster RenderPlan
// renders. A local working_dir is packed as Apply and Deploy pack it (a
// job's with the launcher's files) into ConfigMap
// WorkingDirConfigMapName(<object name>); a Serve application whose
// deployments own TPU slices gets raytpu's replica runtime in ConfigMap
// ReplicaRuntimeConfigMapName(<RayService name>). Apply and Deploy make
// the object own its ConfigMaps; a rendered ConfigMap has no owner (the
// object has no UID yet), so `kubectl delete -f` of the same file is what
// removes them together. A plan that mounts nothing renders as one object.
// The output is byte-identical from run to run.
func RenderManifests(p *placement.Plan, o Options) ([]any, error) {
	if err := backend.CheckPlan(Name, p, placement.Kinds()...); err != nil {
		return nil, err
	}
	if o.WorkingDir == nil {
		wd, err := packLocalWorkingDir(p, o.Cluster != "")
		if err != nil {
			return nil, err
		}
		o.WorkingDir = wd
	}
	obj, err := RenderPlan(p, o)
	if err != nil {
		return nil, err
	}
	var objs []any
	lbl := labels(p)
	switch r := obj.(type) {
	case *rayv1ac.RayJobApplyConfiguration:
		if o.WorkingDir != nil {
			objs = append(objs, WorkingDirConfigMap(*r.Name, *r.Namespace, o.WorkingDir, lbl, nil))
		}
	case *rayv1ac.RayServiceApplyConfiguration:
		if o.WorkingDir != nil && p.Serve.Config.RuntimeEnv != nil && isLocal(p.Serve.Config.RuntimeEnv.WorkingDir) {
			objs = append(objs, WorkingDirConfigMap(*r.Name, *r.Namespace, o.WorkingDir, lbl, nil))
		}
		if mountsReplicaRuntime(r) {
			rt, err := PackReplicaRuntime()
			if err != nil {
				return nil, err
			}
			objs = append(objs, ReplicaRuntimeConfigMap(*r.Name, *r.Namespace, rt, lbl, nil))
		}
	}
	return append(objs, obj), nil
}

// packLocalWorkingDir packs the local working_dir of plan p as the object
// it runs as ships it: a job's (PackJobWorkingDir, or
// PackSubmittedWorkingDir when it is submitted to an existing cluster) or
// a Serve application's runtime_env (PackWorkingDir); nil when it has
// none. A directory that cannot be packed is reported at its field.
func packLocalWorkingDir(p *placement.Plan, submitted bool) (*WorkingDir, error) {
	var (
		wd   *WorkingDir
		err  error
		path *field.Path
		dir  string
	)
	switch {
	case p.Kind == placement.KindApplication:
		env := p.Serve.Config.RuntimeEnv
		if env == nil || !isLocal(env.WorkingDir) {
			return nil, nil
		}
		path, dir = field.NewPath("plan", "serve", "config", "runtime_env", "working_dir"), env.WorkingDir
		wd, err = PackWorkingDir(env.WorkingDir, env.Excludes)
	case p.Kind == placement.KindSlicePlacementGroup || !ShipsWorkingDir(p):
		return nil, nil
	default:
		path, dir = field.NewPath("plan", "job", "runtimeEnv", "workingDir"), p.Job.RuntimeEnv.WorkingDir
		if submitted {
			wd, err = PackSubmittedWorkingDir(p)
		} else {
			wd, err = PackJobWorkingDir(p)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("kuberay: %w", field.ErrorList{field.Invalid(path, dir, "a local directory, packed into a ConfigMap: "+err.Error())})
	}
	return wd, nil
}

// MarshalManifestsYAML writes objects as one YAML stream, each document
// as MarshalYAML writes it and "---" between them: what kubectl apply -f
// takes.
func MarshalManifestsYAML(objs []any) ([]byte, error) {
	var buf bytes.Buffer
	for i, obj := range objs {
		b, err := MarshalYAML(obj)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			buf.WriteString("---\n")
		}
		buf.Write(b)
	}
	return buf.Bytes(), nil
}

// MarshalManifestsJSON writes one object as MarshalJSON does, and more as
// a v1 List of them, which kubectl apply -f takes.
func MarshalManifestsJSON(objs []any) ([]byte, error) {
	if len(objs) == 1 {
		return MarshalJSON(objs[0])
	}
	return MarshalJSON(struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Items      []any  `json:"items"`
	}{"v1", "List", objs})
}

// DecodeManifests reads what RenderManifests renders, as
// MarshalManifestsYAML or MarshalManifestsJSON write it (or one object as
// MarshalYAML writes it): ConfigMaps, as
// *corev1ac.ConfigMapApplyConfiguration, and exactly one KubeRay object,
// as DecodeManifest reads it. Unknown fields are errors.
func DecodeManifests(manifests []byte) ([]any, error) {
	docs, err := splitManifests(manifests)
	if err != nil {
		return nil, err
	}
	var out []any
	kubeRay := 0
	for i, doc := range docs {
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := yaml.Unmarshal(doc, &head); err != nil {
			return nil, fmt.Errorf("kuberay: decoding manifest %d: %w", i, err)
		}
		if head.APIVersion == "v1" && head.Kind == "ConfigMap" {
			cm := &corev1ac.ConfigMapApplyConfiguration{}
			if err := yaml.UnmarshalStrict(doc, cm); err != nil {
				return nil, fmt.Errorf("kuberay: decoding manifest %d, a ConfigMap: %w", i, err)
			}
			out = append(out, cm)
			continue
		}
		obj, err := DecodeManifest(doc)
		if err != nil {
			return nil, fmt.Errorf("kuberay: manifest %d (valid kinds: v1 ConfigMap, %s, %s, %s): %w", i, KindRayCluster, KindRayJob, KindRayService, err)
		}
		kubeRay++
		out = append(out, obj)
	}
	if kubeRay != 1 {
		return nil, fmt.Errorf("kuberay: the manifests hold %d RayJob, RayService or RayCluster objects, want exactly one", kubeRay)
	}
	return out, nil
}

// splitManifests splits a YAML stream at its "---" lines, or a v1 List
// into its items; empty documents are dropped.
func splitManifests(b []byte) ([][]byte, error) {
	var list struct {
		APIVersion string            `json:"apiVersion"`
		Kind       string            `json:"kind"`
		Items      []json.RawMessage `json:"items"`
	}
	if err := yaml.Unmarshal(b, &list); err == nil && list.Kind == "List" {
		docs := make([][]byte, len(list.Items))
		for i, it := range list.Items {
			docs[i] = it
		}
		return docs, nil
	}
	var docs [][]byte
	for _, doc := range bytes.Split(append([]byte("\n"), b...), []byte("\n---\n")) {
		if len(bytes.TrimSpace(doc)) > 0 {
			docs = append(docs, doc)
		}
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("kuberay: the manifest is empty")
	}
	return docs, nil
}

// applyConfigMaps server-side applies the ConfigMaps of a rendered set of
// manifests into namespace ns (a namespace in them is replaced by ns).
func (b *Backend) applyConfigMaps(ctx context.Context, ns string, cms []*corev1ac.ConfigMapApplyConfiguration) error {
	if len(cms) == 0 {
		return nil
	}
	if b.kube == nil {
		return fmt.Errorf("kuberay: %w: the manifests hold ConfigMaps and the backend has no Kubernetes client to write them (use New or WithKubeClient)", backend.ErrUnsupported)
	}
	for _, cm := range cms {
		cm.WithNamespace(ns)
		if _, err := b.kube.CoreV1().ConfigMaps(ns).Apply(ctx, cm, b.applyOptions()); err != nil {
			return fmt.Errorf("kuberay: applying ConfigMap %s/%s: %w", ns, deref(cm.Name), err)
		}
	}
	return nil
}

// applyManifests applies what DecodeManifests read: the ConfigMaps first,
// then the KubeRay object (ApplyObject), whose result it returns.
func (b *Backend) applyManifests(ctx context.Context, ns string, objs []any) (runtime.Object, error) {
	var cms []*corev1ac.ConfigMapApplyConfiguration
	var obj any
	for _, o := range objs {
		if cm, ok := o.(*corev1ac.ConfigMapApplyConfiguration); ok {
			cms = append(cms, cm)
		} else {
			obj = o
		}
	}
	if err := b.applyConfigMaps(ctx, ns, cms); err != nil {
		return nil, err
	}
	return b.ApplyObject(ctx, ns, obj)
}
