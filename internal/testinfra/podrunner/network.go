package podrunner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Prefix starts the name of every network namespace, link and directory a
// runner makes, followed by the runner's process id: "kpr-<pid>-<n>"
// namespaces, "kpr<pid>-<n>" veths, the "kprbr<pid>" bridge and the
// "<Root>/kpr-<pid>" directory. CleanupStale removes those of runners whose
// process is gone.
const Prefix = "kpr"

// network is the runner's bridge in the root namespace and the pod
// addresses of its /24.
type network struct {
	bridge string
	subnet net.IP // a.b.c.0
	gw     string // a.b.c.1, the bridge's address and every node's IP
	next   int
	free   []int
}

// netns is one pod's network namespace and veth.
type netns struct {
	name string // ip netns name
	veth string // host side
	ip   string
}

func run(ctx context.Context, name string, args ...string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("podrunner: %s %s: %w: %s", name, strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// newNetwork makes the bridge with the first free 10.244.x.0/24 (x from
// the pid, skipping subnets on other links).
func newNetwork(ctx context.Context) (*network, error) {
	pid := os.Getpid()
	used := map[string]bool{}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, fmt.Errorf("podrunner: listing addresses: %w", err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil {
			used[n.IP.Mask(net.CIDRMask(24, 32)).String()] = true
		}
	}
	n := &network{bridge: fmt.Sprintf("%sbr%d", Prefix, pid), next: 2}
	for i := range 250 {
		ip := net.IPv4(10, 244, byte((pid+i)%250), 0).To4()
		if !used[ip.String()] {
			n.subnet = ip
			break
		}
	}
	if n.subnet == nil {
		return nil, errors.New("podrunner: no free /24 in 10.244.0.0/16")
	}
	gw := net.IPv4(n.subnet[0], n.subnet[1], n.subnet[2], 1)
	n.gw = gw.String()
	steps := [][]string{
		{"link", "add", n.bridge, "type", "bridge"},
		{"addr", "add", n.gw + "/24", "dev", n.bridge},
		{"link", "set", n.bridge, "up"},
	}
	for _, s := range steps {
		if err := run(ctx, "ip", s...); err != nil {
			_ = run(context.WithoutCancel(ctx), "ip", "link", "del", n.bridge)
			return nil, err
		}
	}
	return n, nil
}

func (n *network) close(ctx context.Context) error {
	return run(ctx, "ip", "link", "del", n.bridge)
}

// add makes the namespace of one pod: a veth pair whose pod end is eth0
// with the next free address, a default route through the bridge, lo up.
func (n *network) add(ctx context.Context, seq int, host int) (*netns, error) {
	if host < 2 || host > 254 {
		return nil, fmt.Errorf("podrunner: no pod address left in %s/24", n.subnet)
	}
	pid := os.Getpid()
	ns := &netns{
		name: fmt.Sprintf("%s-%d-%d", Prefix, pid, seq),
		veth: fmt.Sprintf("%s%d-%d", Prefix, pid, seq),
		ip:   net.IPv4(n.subnet[0], n.subnet[1], n.subnet[2], byte(host)).String(),
	}
	steps := [][]string{
		{"netns", "add", ns.name},
		{"link", "add", ns.veth, "type", "veth", "peer", "name", "eth0", "netns", ns.name},
		{"link", "set", ns.veth, "master", n.bridge, "up"},
		{"-n", ns.name, "addr", "add", ns.ip + "/24", "dev", "eth0"},
		{"-n", ns.name, "link", "set", "eth0", "up"},
		{"-n", ns.name, "link", "set", "lo", "up"},
		{"-n", ns.name, "route", "add", "default", "via", n.gw},
	}
	for _, s := range steps {
		if err := run(ctx, "ip", s...); err != nil {
			return nil, errors.Join(err, ns.remove(context.WithoutCancel(ctx)))
		}
	}
	return ns, nil
}

// etcDir is where `ip netns exec` finds the files it binds over /etc.
func (ns *netns) etcDir() string { return filepath.Join("/etc/netns", ns.name) }

// remove kills what still runs in the namespace, deletes it (its veth
// goes with it) and its /etc/netns directory.
func (ns *netns) remove(ctx context.Context) error {
	err := removeNetns(ctx, ns.name)
	// The veth goes with the namespace; delete it if it is still there.
	link := filepath.Join("/sys/class/net", ns.veth)
	if _, serr := os.Stat(link); serr == nil {
		if derr := run(ctx, "ip", "link", "del", ns.veth); derr != nil {
			if _, serr := os.Stat(link); serr == nil {
				err = errors.Join(err, derr)
			}
		}
	}
	return err
}

// netnsPIDs are the processes in network namespace name.
func netnsPIDs(ctx context.Context, name string) []int {
	out, err := exec.CommandContext(ctx, "ip", "netns", "pids", name).Output()
	if err != nil {
		return nil
	}
	var pids []int
	for f := range strings.FieldsSeq(string(out)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// removeNetns kills what runs in network namespace name and waits (10s at
// most) until it is gone, so that the namespace and its veth go at once
// when it is deleted.
func removeNetns(ctx context.Context, name string) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		pids := netnsPIDs(ctx, name)
		if len(pids) == 0 || time.Now().After(deadline) {
			break
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(50 * time.Millisecond)
	}
	var errs []error
	if _, err := os.Stat(filepath.Join("/run/netns", name)); err == nil {
		errs = append(errs, run(ctx, "ip", "netns", "del", name))
	}
	errs = append(errs, os.RemoveAll(filepath.Join("/etc/netns", name)))
	return errors.Join(errs...)
}

// ownerAlive reports whether the runner whose pid follows prefix in name
// still runs.
func ownerAlive(name, prefix string) bool {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return true
	}
	digits := rest
	if i := strings.IndexAny(rest, "-"); i >= 0 {
		digits = rest[:i]
	}
	pid, err := strconv.Atoi(digits)
	if err != nil {
		return true // not ours
	}
	if pid == os.Getpid() {
		return true
	}
	_, err = os.Stat(fmt.Sprintf("/proc/%d", pid))
	return err == nil
}

// CleanupStale removes the network namespaces (killing what runs in them),
// links and pod directories under root left by runners whose process is
// gone, e.g. a test binary killed by a timeout. Start calls it.
func CleanupStale(ctx context.Context, root string) error {
	var errs []error
	if ents, err := os.ReadDir("/run/netns"); err == nil {
		for _, e := range ents {
			if !ownerAlive(e.Name(), Prefix+"-") {
				errs = append(errs, removeNetns(ctx, e.Name()))
			}
		}
	}
	if ents, err := os.ReadDir("/etc/netns"); err == nil {
		for _, e := range ents {
			if !ownerAlive(e.Name(), Prefix+"-") {
				errs = append(errs, os.RemoveAll(filepath.Join("/etc/netns", e.Name())))
			}
		}
	}
	if ifs, err := net.Interfaces(); err == nil {
		for _, i := range ifs {
			for _, p := range []string{Prefix + "br", Prefix} {
				if strings.HasPrefix(i.Name, p) && !ownerAlive(i.Name, p) {
					// A veth goes with its namespace, removed just above,
					// possibly after the listing: only one still there is
					// an error.
					if err := run(ctx, "ip", "link", "del", i.Name); err != nil {
						if _, serr := os.Stat(filepath.Join("/sys/class/net", i.Name)); serr == nil {
							errs = append(errs, err)
						}
					}
					break
				}
			}
		}
	}
	if ents, err := os.ReadDir(root); err == nil {
		for _, e := range ents {
			if !ownerAlive(e.Name(), Prefix+"-") {
				errs = append(errs, os.RemoveAll(filepath.Join(root, e.Name())))
			}
		}
	}
	return errors.Join(errs...)
}

// Network is a runner's pod network: its bridge and /24. A control plane
// makes it before its API server when the serving certificate must name
// Gateway, the address pods reach the API server on (see APIServerPort),
// and hands it to Start in Options.Network; Start makes one otherwise.
type Network struct{ n *network }

// NewNetwork makes a runner's bridge with the first free 10.244.x.0/24. A
// Network given to Start is the runner's and goes at Runner.Stop; Close
// removes one that was not.
func NewNetwork(ctx context.Context) (*Network, error) {
	n, err := newNetwork(ctx)
	if err != nil {
		return nil, err
	}
	return &Network{n: n}, nil
}

// Gateway is the bridge's address, every node's IP and, on APIServerPort,
// the pods' route to the API server.
func (n *Network) Gateway() string { return n.n.gw }

// Close removes the bridge.
func (n *Network) Close(ctx context.Context) error { return n.n.close(ctx) }
