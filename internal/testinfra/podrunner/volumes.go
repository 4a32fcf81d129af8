package podrunner

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// mount is one bind mount of a container: a host path onto a path of the
// container's root.
type mount struct {
	src, dst string
	readOnly bool
}

// volumes materialises every volume of the pod as a directory under the
// pod's root, as the kubelet does under /var/lib/kubelet/pods/<uid>:
// emptyDir (on disk, also for medium Memory), configMap, secret,
// downwardAPI and projected (their configMap, secret, downwardAPI and
// serviceAccountToken sources) write their files once (later changes to
// the ConfigMap are not followed, a token is not refreshed); hostPath is
// the host's path itself.
func (w *worker) volumes(ctx context.Context) error {
	w.volPaths = map[string]string{}
	for _, v := range w.pod.Spec.Volumes {
		dir := filepath.Join(w.root, "volumes", v.Name)
		if v.HostPath != nil {
			w.volPaths[v.Name] = v.HostPath.Path
			continue
		}
		if err := os.MkdirAll(dir, 0o777); err != nil {
			return err
		}
		w.volPaths[v.Name] = dir
		var err error
		switch {
		case v.EmptyDir != nil:
			err = os.Chmod(dir, 0o777)
		case v.ConfigMap != nil:
			err = w.configMapFiles(ctx, dir, v.ConfigMap.Name, v.ConfigMap.Items, v.ConfigMap.Optional, v.ConfigMap.DefaultMode)
		case v.Secret != nil:
			err = w.secretFiles(ctx, dir, v.Secret.SecretName, v.Secret.Items, v.Secret.Optional, v.Secret.DefaultMode)
		case v.DownwardAPI != nil:
			err = w.downwardFiles(dir, v.DownwardAPI.Items, v.DownwardAPI.DefaultMode)
		case v.Projected != nil:
			for _, s := range v.Projected.Sources {
				switch {
				case s.ConfigMap != nil:
					err = w.configMapFiles(ctx, dir, s.ConfigMap.Name, s.ConfigMap.Items, s.ConfigMap.Optional, v.Projected.DefaultMode)
				case s.Secret != nil:
					err = w.secretFiles(ctx, dir, s.Secret.Name, s.Secret.Items, s.Secret.Optional, v.Projected.DefaultMode)
				case s.DownwardAPI != nil:
					err = w.downwardFiles(dir, s.DownwardAPI.Items, v.Projected.DefaultMode)
				case s.ServiceAccountToken != nil:
					err = w.tokenFile(ctx, dir, s.ServiceAccountToken, v.Projected.DefaultMode)
				default:
					err = fmt.Errorf("projected volume %s: only configMap, secret, downwardAPI and serviceAccountToken sources are supported", v.Name)
				}
				if err != nil {
					break
				}
			}
		default:
			err = fmt.Errorf("volume %s: unsupported volume type (podrunner supports emptyDir, configMap, secret, downwardAPI, projected, hostPath)", v.Name)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func mode(m *int32, def fs.FileMode) fs.FileMode {
	if m != nil {
		return fs.FileMode(*m)
	}
	return def
}

func writeKeys(dir string, data map[string][]byte, items []corev1.KeyToPath, defMode *int32) error {
	if len(items) == 0 {
		for k := range data {
			items = append(items, corev1.KeyToPath{Key: k, Path: k})
		}
	}
	for _, it := range items {
		b, ok := data[it.Key]
		if !ok {
			return fmt.Errorf("key %q not found", it.Key)
		}
		p := filepath.Join(dir, filepath.Clean("/"+it.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, b, mode(it.Mode, mode(defMode, 0o644))); err != nil {
			return err
		}
	}
	return nil
}

func (w *worker) configMapFiles(ctx context.Context, dir, name string, items []corev1.KeyToPath, optional *bool, defMode *int32) error {
	var cm corev1.ConfigMap
	if _, err := w.keyValue(ctx, &cm, name, "", optional, func() (string, bool) { return "", true }); err != nil {
		return fmt.Errorf("configMap %s: %w", name, err)
	}
	data := map[string][]byte{}
	for k, v := range cm.Data {
		data[k] = []byte(v)
	}
	for k, v := range cm.BinaryData {
		data[k] = v
	}
	return writeKeys(dir, data, items, defMode)
}

func (w *worker) secretFiles(ctx context.Context, dir, name string, items []corev1.KeyToPath, optional *bool, defMode *int32) error {
	var s corev1.Secret
	if _, err := w.keyValue(ctx, &s, name, "", optional, func() (string, bool) { return "", true }); err != nil {
		return fmt.Errorf("secret %s: %w", name, err)
	}
	return writeKeys(dir, s.Data, items, defMode)
}

func (w *worker) downwardFiles(dir string, items []corev1.DownwardAPIVolumeFile, defMode *int32) error {
	data := map[string][]byte{}
	var keys []corev1.KeyToPath
	for _, it := range items {
		var v string
		var err error
		switch {
		case it.FieldRef != nil && it.FieldRef.FieldPath == "metadata.labels":
			v = keyValues(w.pod.Labels)
		case it.FieldRef != nil && it.FieldRef.FieldPath == "metadata.annotations":
			v = keyValues(w.pod.Annotations)
		case it.FieldRef != nil:
			v, err = w.fieldValue(it.FieldRef.FieldPath)
		case it.ResourceFieldRef != nil:
			v, err = w.resourceValue(nil, it.ResourceFieldRef)
		}
		if err != nil {
			return fmt.Errorf("downwardAPI %s: %w", it.Path, err)
		}
		data[it.Path] = []byte(v)
		keys = append(keys, corev1.KeyToPath{Key: it.Path, Path: it.Path, Mode: it.Mode})
	}
	return writeKeys(dir, data, keys, defMode)
}

// keyValues is the downward API's file form of labels or annotations.
func keyValues(m map[string]string) string {
	var lines []string
	for k, v := range m {
		lines = append(lines, fmt.Sprintf("%s=%q", k, v))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// mounts are c's volumeMounts as bind mounts, sorted so that a parent is
// mounted before what is mounted inside it.
func (w *worker) mounts(c *corev1.Container) ([]mount, error) {
	var out []mount
	for _, m := range c.VolumeMounts {
		src, ok := w.volPaths[m.Name]
		if !ok {
			return nil, fmt.Errorf("volumeMount %s: no volume %q", m.MountPath, m.Name)
		}
		if m.SubPath != "" {
			src = filepath.Join(src, filepath.Clean("/"+m.SubPath))
			if _, err := os.Stat(src); os.IsNotExist(err) {
				if err := os.MkdirAll(src, 0o777); err != nil {
					return nil, err
				}
			}
		}
		out = append(out, mount{src: src, dst: filepath.Clean(m.MountPath), readOnly: m.ReadOnly})
	}
	slices.SortStableFunc(out, func(a, b mount) int { return strings.Count(a.dst, "/") - strings.Count(b.dst, "/") })
	return out, nil
}

// tokenFile writes a token of the pod's service account, bound to the
// pod, as the kubelet does for a projected serviceAccountToken source (the
// one the ServiceAccount admission plugin adds to every pod's
// kube-api-access volume): a TokenRequest with the source's audience (none:
// the API server's own) and expiry. The token is not refreshed: the API
// server extends the admission plugin's tokens to a year, and a test's
// pods live minutes.
func (w *worker) tokenFile(ctx context.Context, dir string, src *corev1.ServiceAccountTokenProjection, defMode *int32) error {
	name := w.pod.Spec.ServiceAccountName
	if name == "" {
		name = "default"
	}
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: src.ExpirationSeconds,
		BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: w.pod.Name, UID: w.pod.UID},
	}}
	if src.Audience != "" {
		tr.Spec.Audiences = []string{src.Audience}
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: w.pod.Namespace, Name: name}}
	if err := w.r.client.SubResource("token").Create(ctx, sa, tr); err != nil {
		return fmt.Errorf("serviceAccountToken %s: requesting a token of service account %s: %w", src.Path, name, err)
	}
	return writeKeys(dir, map[string][]byte{src.Path: []byte(tr.Status.Token)}, []corev1.KeyToPath{{Key: src.Path, Path: src.Path}}, defMode)
}
