package podrunner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// proc is one run of a container: `ip netns exec <pod netns> unshare
// --pid --fork --kill-child --uts --ipc --mount sh -c <rootfs script> sh
// <command> <args>`. The command and args are KubeRay's, $(VAR)-expanded
// as the kubelet does and otherwise untouched. The container's processes
// live in their own PID namespace whose init is the command, so killing
// unshare (its parent, which --kill-child ties to it) ends every one of
// them, as a container runtime does.
type proc struct {
	cmd  *exec.Cmd
	env  []string
	done chan struct{}
	exit int // exit code, 128+signal for a signal
	log  *os.File
}

// start starts container c.
func (w *worker) start(ctx context.Context, c *corev1.Container) (*proc, error) {
	env, vars, err := w.containerEnv(ctx, c)
	if err != nil {
		return nil, err
	}
	if len(c.Command) == 0 {
		return nil, fmt.Errorf("container %s has no command: podrunner runs no image, so it knows no entrypoint", c.Name)
	}
	var argv []string
	for _, a := range append(append([]string{}, c.Command...), c.Args...) {
		argv = append(argv, expand(a, vars))
	}
	cdir := filepath.Join(w.root, "containers", c.Name)
	tmp := filepath.Join(cdir, "tmp")
	if err := os.RemoveAll(tmp); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(tmp, 0o1777); err != nil {
		return nil, err
	}
	if err := os.Chmod(tmp, 0o1777|os.ModeSticky); err != nil {
		return nil, err
	}
	ms, err := w.mounts(c)
	if err != nil {
		return nil, err
	}
	rf, err := newRootfs(w.r.tools, tmp)
	if err != nil {
		return nil, err
	}
	workdir := c.WorkingDir
	if workdir == "" {
		workdir = w.home()
	}
	script, err := rf.script(w.pod.Name, workdir, ms)
	if err != nil {
		return nil, err
	}
	log, err := os.OpenFile(w.logPath(c.Name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	t := w.r.tools
	args := append([]string{"netns", "exec", w.ns.Load().name, t.unshare, "--pid", "--fork", "--kill-child", "--uts", "--ipc", "--mount", "--propagation", "private",
		"/bin/sh", "-c", script, "sh"}, argv...)
	cmd := exec.Command(t.ip, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = log, log
	// The runner's death takes the container with it (unshare's
	// --kill-child then ends its PID namespace).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("starting container %s: %w", c.Name, err)
	}
	p := &proc{cmd: cmd, env: env, done: make(chan struct{}), log: log}
	go func() {
		err := cmd.Wait()
		p.exit = exitCode(cmd.ProcessState, err)
		log.Close()
		close(p.done)
	}()
	return p, nil
}

func exitCode(ps *os.ProcessState, err error) int {
	if ps == nil {
		return 128
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	if code := ps.ExitCode(); code >= 0 {
		return code
	}
	if err != nil {
		return 1
	}
	return 0
}

// init returns the host pid of the container's init (pid 1 of its PID
// namespace), or 0 before unshare forked it or after it exited.
func (p *proc) init() int {
	pid := p.cmd.Process.Pid
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	n, _ := strconv.Atoi(f[0])
	return n
}

// running reports whether the container has not exited.
func (p *proc) running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// stop sends SIGTERM to the container's init and, if the container has
// not exited after grace, kills every process of it. (An init that
// installed no handler ignores SIGTERM, as in any container, and waits
// for the kill.)
func (p *proc) stop(grace time.Duration) error {
	if pid := p.init(); pid > 0 {
		_ = syscall.Kill(pid, syscall.SIGTERM)
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(grace):
	}
	// Killing the init ends its PID namespace; unshare, its parent, reaps
	// it once every process of the namespace is gone, then exits.
	if pid := p.init(); pid > 0 {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		select {
		case <-p.done:
			return nil
		case <-time.After(10 * time.Second):
		}
	}
	_ = p.cmd.Process.Kill()
	select {
	case <-p.done:
		return nil
	case <-time.After(30 * time.Second):
		return errors.New("podrunner: a container did not exit 30s after SIGKILL")
	}
}

// exec runs argv inside the running container (its namespaces, root and
// working directory, with its environment), as an exec probe does.
func (p *proc) exec(ctx context.Context, nsenter string, argv []string) ([]byte, error) {
	pid := p.init()
	if pid == 0 {
		return nil, errors.New("container not running")
	}
	cmd := exec.CommandContext(ctx, nsenter, append([]string{"-t", strconv.Itoa(pid), "-a", "-r", "-w", "--"}, argv...)...)
	cmd.Env = p.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	return cmd.CombinedOutput()
}
