package podrunner_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/raytpu/raytpu/internal/testinfra/kubetest"
	"github.com/raytpu/raytpu/internal/testinfra/podrunner"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// start starts a control plane whose pods run for real (on nodes, when
// given, else on the runner's default node); it is stopped, and no
// namespace or link of the runner is left, when the test ends.
func start(t *testing.T, nodes ...podrunner.Node) *kubetest.Env {
	t.Helper()
	began := time.Now()
	env, err := kubetest.Start(context.Background(), kubetest.WithPodRunner(podrunner.Options{MaxGrace: 2 * time.Second, Nodes: nodes,
		Logger: slog.New(slog.NewTextHandler(tlog{t}, nil))}))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("control plane, operator and pod runner started in %v", time.Since(began).Round(time.Millisecond))
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stopping: %v", err)
		}
		if left := leftovers(); len(left) > 0 {
			t.Errorf("left after Stop: %v", left)
		}
	})
	return env
}

type tlog struct{ t *testing.T }

func (l tlog) Write(b []byte) (int, error) { l.t.Log(strings.TrimSpace(string(b))); return len(b), nil }

// leftovers are this process's runner namespaces and links (pods' only
// when podsOnly).
func leftovers(podsOnly ...bool) []string {
	var left []string
	mine := fmt.Sprintf("%s-%d-", podrunner.Prefix, os.Getpid())
	ents, _ := os.ReadDir("/run/netns")
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), mine) {
			left = append(left, "netns "+e.Name())
		}
	}
	pattern := fmt.Sprintf("%s*%d*", podrunner.Prefix, os.Getpid())
	if len(podsOnly) > 0 {
		pattern = fmt.Sprintf("%s%d-*", podrunner.Prefix, os.Getpid())
	}
	links, _ := filepath.Glob("/sys/class/net/" + pattern)
	for _, l := range links {
		left = append(left, "link "+filepath.Base(l))
	}
	return left
}

// markedPIDs are the live processes whose environment holds mark.
func markedPIDs(mark string) []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err == nil && strings.Contains(string(env), mark) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// debug, when set, says what went wrong when waitFor times out.
var debug func()

func waitFor(t *testing.T, what string, timeout time.Duration, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, err := cond()
		if err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			if debug != nil {
				debug()
			}
			t.Fatalf("%s: not within %v", what, timeout)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// A pod gets its environment, volumes and probes as a kubelet makes
// them, reports Ready through its own probes, its log is read through the
// apiserver, and deleting it ends every process it started.
func TestPodAsAKubeletRunsIt(t *testing.T) {
	env := start(t)
	ctx := t.Context()
	ns := env.Namespace(t)
	mark := fmt.Sprintf("PODRUNNER_TEST_MARK=%d", time.Now().UnixNano())
	script := `echo "name=$POD_NAME ns=$POD_NS ip=$POD_IP node=$NODE mem=$MEM grp=$GROUP greeting=$GREETING"
echo "cm=$(cat /raytpu/working_dir/app.txt)"
echo "label=$(cat /etc/podinfo/labels)"
echo "host=$(hostname) tmp=$(ls -A /tmp | wc -l) python=$(command -v python) venv=$VIRTUAL_ENV"
echo written > /data/out.txt
sleep 1000 &
exec python -m http.server 8000 --bind 0.0.0.0`
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns, Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name: "main", Image: "unused", Command: []string{"/bin/bash", "-c", "--"}, Args: []string{script},
				Env: []corev1.EnvVar{
					{Name: "PODRUNNER_TEST_MARK", Value: strings.TrimPrefix(mark, "PODRUNNER_TEST_MARK=")},
					{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
					{Name: "POD_NS", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
					{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
					{Name: "NODE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
					{Name: "GROUP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels['app']"}}},
					{Name: "MEM", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.memory", Divisor: resource.MustParse("1Mi")}}},
					{Name: "WHO", Value: "kubelet"},
					{Name: "GREETING", Value: "hello $(WHO) $$(WHO)"},
				},
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")}},
				VolumeMounts: []corev1.VolumeMount{
					{Name: "wd", MountPath: "/raytpu/working_dir", ReadOnly: true},
					{Name: "data", MountPath: "/data"},
					{Name: "info", MountPath: "/etc/podinfo"},
				},
				ReadinessProbe: &corev1.Probe{PeriodSeconds: 1, ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(8000)}}},
				LivenessProbe: &corev1.Probe{InitialDelaySeconds: 5, PeriodSeconds: 1, TimeoutSeconds: 5, FailureThreshold: 10, ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{
					Command: []string{"bash", "-c", "wget -q -O- http://localhost:8000/ >/dev/null && test -f /data/out.txt"}}}},
			}},
			Volumes: []corev1.Volume{
				{Name: "wd", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "wd"}}}},
				{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				{Name: "info", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
					{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}}}}}},
			},
		},
	}
	if err := env.Client.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	debug = func() {
		l, err := env.Pods.Logs(ns, "web", "main")
		t.Logf("pod status %+v\nlogs (%v):\n%s", pod.Status, err, l)
	}
	// The ConfigMap comes after the pod, as an object its creator writes
	// next (a RayService's) does: the pod waits in ContainerCreating, as
	// under a kubelet, and starts once it is there.
	waitFor(t, "pod ContainerCreating without its ConfigMap", time.Minute, func() (bool, error) {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(pod), pod)
		if err != nil || len(pod.Status.ContainerStatuses) != 1 {
			return false, err
		}
		w := pod.Status.ContainerStatuses[0].State.Waiting
		return w != nil && w.Reason == "ContainerCreating" && strings.Contains(w.Message, "wd"), nil
	})
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "wd", Namespace: ns}, Data: map[string]string{"app.txt": "from the configmap"}}
	if err := env.Client.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "pod Ready", 2*time.Minute, func() (bool, error) {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(pod), pod)
		return err == nil && pod.Status.Phase == corev1.PodRunning && len(pod.Status.ContainerStatuses) == 1 && pod.Status.ContainerStatuses[0].Ready, err
	})
	t.Logf("pod Ready %v after create", time.Since(began).Round(time.Millisecond))
	logs, err := env.Pods.Logs(ns, "web", "main")
	if err != nil {
		t.Fatal(err)
	}
	// The apiserver reads the same log from the node's kubelet port, as
	// `kubectl logs` does.
	kc, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	viaAPI, err := kc.CoreV1().Pods(ns).GetLogs("web", &corev1.PodLogOptions{Container: "main"}).DoRaw(ctx)
	if err != nil || !strings.HasPrefix(logs, string(viaAPI)) || len(viaAPI) == 0 {
		t.Errorf("pods/web/log through the apiserver = %q (%v), want the container's log %q", viaAPI, err, logs)
	}
	if last, err := kc.CoreV1().Pods(ns).GetLogs("web", &corev1.PodLogOptions{Container: "main", TailLines: ptr.To[int64](1)}).DoRaw(ctx); err != nil || strings.Count(string(last), "\n") != 1 {
		t.Errorf("pods/web/log?tailLines=1 = %q (%v), want one line", last, err)
	}
	venv := strings.TrimSuffix(strings.TrimPrefix(logs[strings.Index(logs, "venv=")+5:], ""), "\n")
	venv, _, _ = strings.Cut(venv, "\n")
	for _, want := range []string{
		fmt.Sprintf("name=web ns=%s ip=%s node=%s mem=512 grp=web greeting=hello kubelet $(WHO)", ns, pod.Status.PodIP, pod.Spec.NodeName),
		"cm=from the configmap",
		`label=app="web"`,
		"host=web tmp=0 python=" + venv + "/bin/python",
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("container output lacks %q:\n%s", want, logs)
		}
	}
	if pod.Spec.NodeName != "podrunner" || pod.Status.HostIP == "" || pod.Status.PodIP == pod.Status.HostIP {
		t.Errorf("node %q hostIP %q podIP %q: want the pod bound to node podrunner with an IP of its own", pod.Spec.NodeName, pod.Status.HostIP, pod.Status.PodIP)
	}
	if _, err := os.Stat("/raytpu"); err == nil {
		t.Error("the container's mount path /raytpu leaked onto the host")
	}
	pids := markedPIDs(mark)
	if len(pids) < 2 {
		t.Fatalf("found %d processes of the pod, want the server and the sleep", len(pids))
	}
	if n := pod.Status.ContainerStatuses[0].RestartCount; n != 0 {
		t.Errorf("container restarted %d times, want 0 (liveness probe failing?)", n)
	}
	if err := env.Client.Delete(ctx, pod); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "pod gone", time.Minute, func() (bool, error) {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{})
		return client.IgnoreNotFound(err) == nil && err != nil, client.IgnoreNotFound(err)
	})
	if left := markedPIDs(mark); len(left) > 0 {
		t.Errorf("processes %v of the deleted pod still run", left)
	}
	if left := leftovers(true); len(left) > 0 {
		t.Errorf("left after the pod's deletion: %v", left)
	}
	// A slice preempted (preempt_test.go).
	checkPreempt(t, env, ns)
}
