package kuberay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	rayv1ac "github.com/ray-project/kuberay/ray-operator/pkg/client/applyconfiguration/ray/v1"
	"k8s.io/apimachinery/pkg/runtime"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
)

// Manifests are a rendered plan: everything `kubectl apply -f` needs to
// run it. Exactly one of Job, Service and Cluster is set: the RayJob of a
// job plan, the RayService of a Serve application, the RayCluster of a
// slice plan. ConfigMaps are the files its Ray containers mount, applied
// before it.
type Manifests struct {
	ConfigMaps []*corev1ac.ConfigMapApplyConfiguration
	Job        *rayv1ac.RayJobApplyConfiguration
	Service    *rayv1ac.RayServiceApplyConfiguration
	Cluster    *rayv1ac.RayClusterApplyConfiguration

	// uploads are the packages the objects name in Options.PackageBucket.
	uploads []*WorkingDir
}

// Upload uploads to Options.PackageBucket the working_dir packages that
// m's objects name there (Render with a PackageBucket), each unless an
// object of its content-addressed name is there already, and returns
// the gs:// URIs it wrote (none on a retry). Call it before the objects
// are applied. Manifests read back by DecodeManifests hold none.
func (m *Manifests) Upload(ctx context.Context) ([]string, error) {
	if m == nil {
		return nil, errors.New("kuberay: nil *Manifests: pass what Render returned")
	}
	if ctx == nil {
		return nil, errors.New("kuberay: nil context.Context: pass context.Background() or a request's context")
	}
	var wrote []string
	for _, w := range m.uploads {
		done, err := w.upload(ctx)
		if err != nil {
			return wrote, err
		}
		if done {
			wrote = append(wrote, w.URI())
		}
	}
	return wrote, nil
}

// objects are m's objects in the order they are applied; an error when m
// is nil or holds not exactly one KubeRay object.
func (m *Manifests) objects() ([]any, error) {
	if m == nil {
		return nil, errors.New("kuberay: nil *Manifests: pass what Render or DecodeManifests returned")
	}
	out := make([]any, 0, len(m.ConfigMaps)+1)
	for i, cm := range m.ConfigMaps {
		if cm == nil {
			return nil, fmt.Errorf("kuberay: Manifests.ConfigMaps[%d] is nil", i)
		}
		out = append(out, cm)
	}
	n := 0
	if m.Job != nil {
		out, n = append(out, m.Job), n+1
	}
	if m.Service != nil {
		out, n = append(out, m.Service), n+1
	}
	if m.Cluster != nil {
		out, n = append(out, m.Cluster), n+1
	}
	if n != 1 {
		return nil, fmt.Errorf("kuberay: Manifests hold %d of Job, Service and Cluster, want exactly one", n)
	}
	return out, nil
}

// Render renders plan p, run with options o, as everything `kubectl apply
// -f` needs to run it: a RayJob for a job (one that creates its own
// RayCluster: a head without TPUs and one TPU worker group per slice
// group; with Options.Cluster, one that runs on that existing RayCluster),
// a RayService for a Serve application (spec.serveConfigV2 is the plan's
// compiled config), a RayCluster for a slice plan; and the ConfigMaps its
// Ray containers mount. A local working_dir is packed as Apply and Deploy
// pack it (a job's with the launcher's files) into ConfigMap
// <object name>-working-dir; a Serve application whose deployments own TPU
// slices gets raytpu's replica runtime in ConfigMap <RayService
// name>-replica-runtime. Apply and Deploy make the object own its
// ConfigMaps; a rendered ConfigMap has no owner (the object has no UID
// yet), so `kubectl delete -f` of the same file is what removes them
// together.
//
// The options are checked first, as CheckOptions checks them, then the
// plan and the object KubeRay, its CRD and GKE's TPU webhook would refuse;
// every problem comes back at once as a field.ErrorList, with paths below
// "options", "input", "plan" or the object's own fields. The output is
// byte-identical from run to run.
func Render(p *placement.Plan, o Options, in RenderInput) (*Manifests, error) {
	if err := backend.CheckPlan(Name, p, placement.Kinds()...); err != nil {
		return nil, err
	}
	s := settings{Options: o, Name: in.Name}
	if errs := s.validate(); len(errs) > 0 {
		return nil, errs
	}
	if err := checkStorage(p); err != nil {
		return nil, err
	}
	wd, err := packLocalWorkingDir(p, o.Cluster != "", o.PackageBucket)
	if err != nil {
		return nil, err
	}
	s.WorkingDir = wd
	obj, err := renderObject(p, s)
	if err != nil {
		return nil, err
	}
	m := &Manifests{}
	lbl := labels(p)
	if wd != nil && wd.remote != "" {
		m.uploads = append(m.uploads, wd)
		wd = nil // no ConfigMap
	}
	switch r := obj.(type) {
	case *rayv1ac.RayJobApplyConfiguration:
		if wd != nil {
			m.ConfigMaps = append(m.ConfigMaps, workingDirConfigMap(*r.Name, *r.Namespace, wd, lbl, nil))
		}
		m.Job = r
	case *rayv1ac.RayServiceApplyConfiguration:
		if wd != nil {
			m.ConfigMaps = append(m.ConfigMaps, workingDirConfigMap(*r.Name, *r.Namespace, wd, lbl, nil))
		}
		if mountsReplicaRuntime(r) {
			rt, err := packReplicaRuntime()
			if err != nil {
				return nil, err
			}
			m.ConfigMaps = append(m.ConfigMaps, replicaRuntimeConfigMap(*r.Name, *r.Namespace, rt, lbl, nil))
		}
		m.Service = r
	case *rayv1ac.RayClusterApplyConfiguration:
		m.Cluster = r
	}
	return m, nil
}

// packLocalWorkingDir packs the local working_dir of plan p as the object
// it runs as ships it: a job's (packJobWorkingDir, or
// packSubmittedWorkingDir when it is submitted to an existing cluster) or
// a Serve application's runtime_env (PackWorkingDir); nil when it has
// none; with a bucket (Options.PackageBucket), packed for it instead. A
// directory that cannot be packed is reported at its field.
func packLocalWorkingDir(p *placement.Plan, submitted bool, bucket string) (*WorkingDir, error) {
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
		wd, err = packServiceWorkingDir(env.WorkingDir, env.Excludes, bucket)
	case p.Kind == placement.KindSlicePlacementGroup || !shipsWorkingDir(p):
		return nil, nil
	default:
		path, dir = field.NewPath("plan", "job", "runtimeEnv", "workingDir"), p.Job.RuntimeEnv.WorkingDir
		switch {
		case bucket != "":
			wd, err = packJobForBucket(p, bucket)
		case submitted:
			wd, err = packSubmittedWorkingDir(p)
		default:
			wd, err = packJobWorkingDir(p)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("kuberay: %w: %w", ErrLocalWorkingDir, field.ErrorList{field.Invalid(path, dir, "a local directory, packed: "+err.Error())})
	}
	return wd, nil
}

// YAML writes m as one YAML stream, the ConfigMaps first, each document
// with its keys sorted and "---" between them: what kubectl apply -f
// takes. Equal manifests give identical bytes.
func (m *Manifests) YAML() ([]byte, error) {
	objs, err := m.objects()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	for i, obj := range objs {
		b, err := marshalYAML(obj)
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

// JSON writes m as indented JSON with a trailing newline: the object
// alone when there are no ConfigMaps, else a v1 List of them all, which
// kubectl apply -f takes. Equal manifests give identical bytes.
func (m *Manifests) JSON() ([]byte, error) {
	objs, err := m.objects()
	if err != nil {
		return nil, err
	}
	if len(objs) == 1 {
		return marshalJSON(objs[0])
	}
	return marshalJSON(struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Items      []any  `json:"items"`
	}{"v1", "List", objs})
}

// DecodeManifests reads what Manifests.YAML or Manifests.JSON write (or
// one KubeRay object alone, YAML or JSON): ConfigMaps and exactly one
// RayJob, RayService or RayCluster of apiVersion ray.io/v1. Any other
// kind or apiVersion, and unknown fields, are errors naming the document.
func DecodeManifests(manifests []byte) (*Manifests, error) {
	docs, err := splitManifests(manifests)
	if err != nil {
		return nil, err
	}
	out := &Manifests{}
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
			out.ConfigMaps = append(out.ConfigMaps, cm)
			continue
		}
		obj, err := decodeManifest(doc)
		if err != nil {
			return nil, fmt.Errorf("kuberay: manifest %d (valid kinds: v1 ConfigMap, %s, %s, %s): %w", i, KindRayCluster, KindRayJob, KindRayService, err)
		}
		kubeRay++
		switch o := obj.(type) {
		case *rayv1ac.RayJobApplyConfiguration:
			out.Job = o
		case *rayv1ac.RayServiceApplyConfiguration:
			out.Service = o
		case *rayv1ac.RayClusterApplyConfiguration:
			out.Cluster = o
		}
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

// ApplyManifests server-side applies m (what Render or DecodeManifests
// return) into namespace ns (empty: the backend's) with field manager
// "raytpu": the ConfigMaps first, then the RayJob, RayService or
// RayCluster, which is checked first as Render checks what it renders (a
// namespace in the objects is replaced by ns). It returns the object the
// apiserver holds (*rayv1.RayJob, *rayv1.RayService or *rayv1.RayCluster).
func (b *Backend) ApplyManifests(ctx context.Context, ns string, m *Manifests) (runtime.Object, error) {
	if err := b.usable(ctx); err != nil {
		return nil, err
	}
	if ns == "" {
		ns = b.opts.Namespace
	}
	objs, err := m.objects()
	if err != nil {
		return nil, err
	}
	if err := b.applyConfigMaps(ctx, ns, m.ConfigMaps); err != nil {
		return nil, err
	}
	return b.applyObject(ctx, ns, objs[len(objs)-1])
}
