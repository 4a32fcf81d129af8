package podrunner

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// imageEnv is the environment the image would give (the project
// virtualenv stands in for the image, so its bin comes first on PATH),
// then Options.ImageEnv, then the kubernetes Service's variables a
// kubelet always adds.
func (w *worker) imageEnv() []corev1.EnvVar {
	env := append([]corev1.EnvVar{
		{Name: "PATH", Value: w.r.venv + "/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
		{Name: "VIRTUAL_ENV", Value: w.r.venv},
		{Name: "HOME", Value: w.home()},
		{Name: "HOSTNAME", Value: w.pod.Name},
		{Name: "LANG", Value: "C.UTF-8"},
		// Ray's workers at nice 0, as on the local clusters (see
		// internal/raycluster): a TPU host pod on GKE has a node of its
		// own, where Ray's default worker_niceness (15) only orders the
		// pod's own processes; here every pod shares the machine with
		// the tests and whatever else runs, which would starve them.
		// The image's variable: a container's env may set it otherwise.
		{Name: "RAY_worker_niceness", Value: "0"},
	}, w.r.opts.ImageEnv...)
	return append(env, w.r.serviceEnv()...)
}

// containerEnv resolves c's environment as the kubelet does: the image's,
// then envFrom, then env in order, each value's $(VAR) expanded against
// what came before; then, for a TPU container, what a GKE TPU node pool
// adds where the container sets nothing (tpuPose). (Service links, the
// <SVC>_SERVICE_HOST variables, are set for the kubernetes Service only.)
func (w *worker) containerEnv(ctx context.Context, c *corev1.Container) ([]string, map[string]string, error) {
	vars := map[string]string{}
	var order []string
	set := func(k, v string) {
		if _, ok := vars[k]; !ok {
			order = append(order, k)
		}
		vars[k] = v
	}
	for _, e := range w.imageEnv() {
		set(e.Name, e.Value)
	}
	for _, from := range c.EnvFrom {
		data, err := w.envFromData(ctx, from)
		if err != nil {
			return nil, nil, err
		}
		for k, v := range data {
			set(from.Prefix+k, v)
		}
	}
	for _, e := range c.Env {
		v, err := w.envValue(ctx, c, e, vars)
		if err != nil {
			return nil, nil, fmt.Errorf("env %s: %w", e.Name, err)
		}
		set(e.Name, v)
	}
	pose, err := w.tpuPose(c, vars)
	if err != nil {
		return nil, nil, fmt.Errorf("posing a TPU host: %w", err)
	}
	for _, k := range slices.Sorted(maps.Keys(pose)) {
		set(k, pose[k])
	}
	out := make([]string, 0, len(order))
	for _, k := range order {
		out = append(out, k+"="+vars[k])
	}
	return out, vars, nil
}

func (w *worker) envValue(ctx context.Context, c *corev1.Container, e corev1.EnvVar, vars map[string]string) (string, error) {
	src := e.ValueFrom
	switch {
	case src == nil:
		return expand(e.Value, vars), nil
	case src.FieldRef != nil:
		return w.fieldValue(src.FieldRef.FieldPath)
	case src.ResourceFieldRef != nil:
		return w.resourceValue(c, src.ResourceFieldRef)
	case src.ConfigMapKeyRef != nil:
		ref := src.ConfigMapKeyRef
		var cm corev1.ConfigMap
		return w.keyValue(ctx, &cm, ref.Name, ref.Key, ref.Optional, func() (string, bool) {
			if v, ok := cm.Data[ref.Key]; ok {
				return v, true
			}
			v, ok := cm.BinaryData[ref.Key]
			return string(v), ok
		})
	case src.SecretKeyRef != nil:
		ref := src.SecretKeyRef
		var s corev1.Secret
		return w.keyValue(ctx, &s, ref.Name, ref.Key, ref.Optional, func() (string, bool) {
			v, ok := s.Data[ref.Key]
			return string(v), ok
		})
	}
	return "", fmt.Errorf("unsupported valueFrom")
}

func (w *worker) keyValue(ctx context.Context, obj client.Object, name, key string, optional *bool, get func() (string, bool)) (string, error) {
	opt := optional != nil && *optional
	if err := w.r.reader.Get(ctx, client.ObjectKey{Namespace: w.pod.Namespace, Name: name}, obj); err != nil {
		if opt && client.IgnoreNotFound(err) == nil {
			return "", nil
		}
		return "", err
	}
	v, ok := get()
	if !ok && !opt {
		return "", fmt.Errorf("key %q not in %s", key, name)
	}
	return v, nil
}

func (w *worker) envFromData(ctx context.Context, from corev1.EnvFromSource) (map[string]string, error) {
	out := map[string]string{}
	switch {
	case from.ConfigMapRef != nil:
		var cm corev1.ConfigMap
		_, err := w.keyValue(ctx, &cm, from.ConfigMapRef.Name, "", from.ConfigMapRef.Optional, func() (string, bool) { return "", true })
		if err != nil {
			return nil, err
		}
		for k, v := range cm.Data {
			out[k] = v
		}
	case from.SecretRef != nil:
		var s corev1.Secret
		_, err := w.keyValue(ctx, &s, from.SecretRef.Name, "", from.SecretRef.Optional, func() (string, bool) { return "", true })
		if err != nil {
			return nil, err
		}
		for k, v := range s.Data {
			out[k] = string(v)
		}
	}
	return out, nil
}

// fieldValue is a downward API field of the pod.
func (w *worker) fieldValue(path string) (string, error) {
	p := w.pod
	if k, ok := strings.CutPrefix(path, "metadata.labels['"); ok {
		return p.Labels[strings.TrimSuffix(k, "']")], nil
	}
	if k, ok := strings.CutPrefix(path, "metadata.annotations['"); ok {
		return p.Annotations[strings.TrimSuffix(k, "']")], nil
	}
	switch path {
	case "metadata.name":
		return p.Name, nil
	case "metadata.namespace":
		return p.Namespace, nil
	case "metadata.uid":
		return string(p.UID), nil
	case "spec.nodeName":
		return p.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return p.Spec.ServiceAccountName, nil
	case "status.podIP", "status.podIPs":
		return w.ns.Load().ip, nil
	case "status.hostIP", "status.hostIPs":
		return w.r.net.gw, nil
	}
	return "", fmt.Errorf("unsupported fieldRef %q", path)
}

// resourceValue is a container's limit or request divided by the divisor,
// rounded up; a limit that is not set is the node's allocatable amount.
func (w *worker) resourceValue(c *corev1.Container, ref *corev1.ResourceFieldSelector) (string, error) {
	if ref.ContainerName != "" {
		c = w.container(ref.ContainerName)
		if c == nil {
			return "", fmt.Errorf("no container %q", ref.ContainerName)
		}
	}
	if c == nil {
		return "", fmt.Errorf("resourceFieldRef %q needs a containerName", ref.Resource)
	}
	kind, name, ok := strings.Cut(ref.Resource, ".")
	if !ok || (kind != "limits" && kind != "requests") {
		return "", fmt.Errorf("unsupported resourceFieldRef %q", ref.Resource)
	}
	list := c.Resources.Limits
	if kind == "requests" {
		list = c.Resources.Requests
	}
	q, ok := list[corev1.ResourceName(name)]
	if !ok {
		if kind == "requests" {
			q = resource.Quantity{}
		} else if q, ok = w.node().Capacity[corev1.ResourceName(name)]; !ok {
			return "", fmt.Errorf("node %s has no %s", w.node().Name, name)
		}
	}
	div := ref.Divisor
	if div.IsZero() {
		div = resource.MustParse("1")
	}
	if name == string(corev1.ResourceCPU) {
		return strconv.FormatInt(int64(math.Ceil(float64(q.MilliValue())/float64(div.MilliValue()))), 10), nil
	}
	return strconv.FormatInt(int64(math.Ceil(float64(q.Value())/float64(div.Value()))), 10), nil
}

// expand replaces $(VAR) by its value when VAR is defined, leaves it as is
// otherwise, and turns $$ into $, as the kubelet expands env values,
// command and args.
func expand(s string, vars map[string]string) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				b.WriteString(s[i:])
				return b.String()
			}
			name := s[i+2 : i+2+end]
			if v, ok := vars[name]; ok {
				b.WriteString(v)
			} else {
				b.WriteString(s[i : i+3+end])
			}
			i += 2 + end
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}
