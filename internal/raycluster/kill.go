package raycluster

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// KillNode kills every process of the named worker node with SIGKILL, the
// way a host dies. The head cannot be killed this way; use Stop.
func (c *Cluster) KillNode(name string) error {
	c.mu.Lock()
	var p *proc
	for _, q := range c.procs[min(1, len(c.procs)):] {
		if q.Name == name {
			p = q
		}
	}
	c.mu.Unlock()
	if p == nil {
		return fmt.Errorf("raycluster: no worker node %q", name)
	}
	killAll([]int{p.PID}, func(m string) bool { return m == p.Marker })
	if p.done != nil {
		<-p.done
	}
	return nil
}

// Processes returns the pids of every live process that belongs to the
// cluster (found by the environment marker every node is started with).
func (c *Cluster) Processes() []int {
	return markedPIDs(func(m string) bool { return strings.HasPrefix(m, c.id+"/") })
}

// Stop kills every process the cluster started (by process group, then by
// environment marker, so job drivers in their own sessions go too), waits
// for them to exit, and removes the temp dir if Start created it. It is safe
// to call more than once.
func (c *Cluster) Stop() error {
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return nil
	}
	c.stopped = true
	procs := slices.Clone(c.procs)
	c.mu.Unlock()

	pids := make([]int, 0, len(procs))
	for _, p := range procs {
		pids = append(pids, p.PID)
	}
	left := killAll(pids, func(m string) bool { return strings.HasPrefix(m, c.id+"/") })
	for _, p := range procs {
		if p.done != nil {
			select {
			case <-p.done:
			case <-time.After(10 * time.Second):
			}
		}
	}
	err := c.closePlugins()
	if len(left) > 0 {
		err = fmt.Errorf("raycluster: processes still alive after stop: %v", left)
	}
	if c.ownTemp {
		if rerr := os.RemoveAll(c.tempDir); rerr != nil && err == nil {
			err = rerr
		}
	}
	c.logger.Info("ray cluster stopped", "dashboard", c.DashboardURL)
	return err
}

// killAll sends SIGKILL to the process groups led by roots, to their
// descendants and to every process whose marker matches, repeating until
// none is left (or 15s pass). It returns the pids still alive.
func killAll(roots []int, match func(marker string) bool) []int {
	deadline := time.Now().Add(15 * time.Second)
	for {
		targets := map[int]bool{}
		for _, pid := range roots {
			if alive(pid) {
				targets[pid] = true
			}
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		}
		for _, pid := range descendants(roots) {
			targets[pid] = true
		}
		for _, pid := range markedPIDs(match) {
			targets[pid] = true
		}
		if len(targets) == 0 {
			return nil
		}
		for pid := range targets {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		if time.Now().After(deadline) {
			return slices.Sorted(maps.Keys(targets))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	_, st := parseStat(b)
	return st != "Z" && st != ""
}

func parseStat(b []byte) (ppid int, state string) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, ""
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0, ""
	}
	ppid, _ = strconv.Atoi(f[1])
	return ppid, f[0]
}

// descendants lists the live descendants of roots.
func descendants(roots []int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		ppid, st := parseStat(b)
		if st == "Z" {
			continue
		}
		children[ppid] = append(children[ppid], pid)
	}
	var out []int
	queue := slices.Clone(roots)
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, ch := range children[p] {
			out = append(out, ch)
			queue = append(queue, ch)
		}
	}
	return out
}

// markedPIDs lists live processes whose environment holds a marker that
// match accepts.
func markedPIDs(match func(string) bool) []int { return markedPIDsOf(nil, match) }

// markedPIDsOf is markedPIDs over the processes that pre accepts (nil:
// every one), given the process's /proc directory; pre runs before the
// environment is read, which is the costly part on a machine running
// hundreds of processes.
func markedPIDsOf(pre func(dir string) bool, match func(string) bool) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	prefix := []byte(markerEnv + "=")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self || pre != nil && !pre("/proc/"+e.Name()) {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !bytes.Contains(b, prefix) {
			continue
		}
		for kv := range bytes.SplitSeq(b, []byte{0}) {
			if v, ok := bytes.CutPrefix(kv, prefix); ok && match(string(v)) && alive(pid) {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}
