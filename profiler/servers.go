package profiler

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/raytpu/raytpu/rayruntime"
)

// ServerPrefix starts the line raytpu's launcher prints in a job's log for
// every train worker whose profiler server started (train.ProfilerConfig),
// followed by the Server as JSON; the replica runtime prints the same for
// every TPU host (a HostServer). It is rayruntime.ProfilerPrefix.
const ServerPrefix = rayruntime.ProfilerPrefix

// Server is where one worker's profiler server listens, as the launcher
// reported it.
type Server struct {
	// Rank is the worker's world rank.
	Rank int `json:"rank"`
	// NodeID and IP are the Ray node the worker runs on.
	NodeID string `json:"node_id"`
	IP     string `json:"ip"`
	// Port is the server's port on that node.
	Port int `json:"port,omitempty"`
	// PID is the worker's process.
	PID int `json:"pid"`
	// Error says why the server did not start; the worker trained without.
	Error string `json:"error,omitempty"`
}

// Address is the server's "ip:port", the target of [Capture].
func (s Server) Address() string { return net.JoinHostPort(s.IP, strconv.Itoa(s.Port)) }

// ServersFromLog reads the ServerPrefix lines of a job's log and returns
// the newest report of every rank (a worker group restarted after a
// failure reports again), by rank. Lines that do not parse are skipped:
// the log is user output too.
func ServersFromLog(log string) []Server {
	byRank := map[int]Server{}
	for rest := range prefixed(log) {
		var s Server
		if err := json.Unmarshal([]byte(rest), &s); err != nil || s.Rank < 0 {
			continue
		}
		byRank[s.Rank] = s
	}
	out := make([]Server, 0, len(byRank))
	for _, s := range byRank {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b Server) int { return a.Rank - b.Rank })
	return out
}

// FindRank returns the server of the worker of rank rank, or an error
// that lists the ranks there are.
func FindRank(servers []Server, rank int) (Server, error) {
	ranks := make([]string, 0, len(servers))
	for _, s := range servers {
		if s.Rank == rank {
			if s.Error != "" {
				return s, fmt.Errorf("worker %d: its profiler server did not start: %s", rank, s.Error)
			}
			return s, nil
		}
		ranks = append(ranks, strconv.Itoa(s.Rank))
	}
	if len(servers) == 0 {
		return Server{}, fmt.Errorf("worker %d: no worker reported a profiler server (is RunConfig.Profiler set, and has the worker group started?)", rank)
	}
	return Server{}, fmt.Errorf("worker %d: no such worker; workers with a profiler server: %s", rank, strings.Join(ranks, ", "))
}

// HostServer is where the profiler server of one TPU host of a Serve
// replica listens, as raytpu's replica runtime reported it
// (serve.ProfilerConfig).
type HostServer struct {
	// App, Deployment and Replica (Serve's replica unique id) name the
	// replica; Host is the host's rank in its slice (TPU worker id order).
	App        string `json:"app"`
	Deployment string `json:"deployment"`
	Replica    string `json:"replica"`
	Host       int    `json:"host"`
	NodeID     string `json:"node_id"`
	IP         string `json:"ip"`
	Port       int    `json:"port,omitempty"`
	PID        int    `json:"pid"`
	Error      string `json:"error,omitempty"`
}

// Address is the server's "ip:port", the target of [Capture].
func (s HostServer) Address() string { return net.JoinHostPort(s.IP, strconv.Itoa(s.Port)) }

// HostServersFromLog reads the ServerPrefix lines of a replica's standard
// output and returns the newest report of every host (a slice reserved
// again reports again), by host rank.
func HostServersFromLog(log string) []HostServer {
	byHost := map[int]HostServer{}
	for rest := range prefixed(log) {
		var s HostServer
		if err := json.Unmarshal([]byte(rest), &s); err != nil || s.Host < 0 {
			continue
		}
		byHost[s.Host] = s
	}
	out := make([]HostServer, 0, len(byHost))
	for _, s := range byHost {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b HostServer) int { return a.Host - b.Host })
	return out
}

// FindHost returns the server of host rank host, or an error that lists
// the hosts there are.
func FindHost(servers []HostServer, host int) (HostServer, error) {
	hosts := make([]string, 0, len(servers))
	for _, s := range servers {
		if s.Host == host {
			if s.Error != "" {
				return s, fmt.Errorf("host %d: its profiler server did not start: %s", host, s.Error)
			}
			return s, nil
		}
		hosts = append(hosts, strconv.Itoa(s.Host))
	}
	if len(servers) == 0 {
		return HostServer{}, fmt.Errorf("host %d: no host reported a profiler server (is Deployment.Profiler set, and does the replica hold its slice?)", host)
	}
	return HostServer{}, fmt.Errorf("host %d: no such host; hosts with a profiler server: %s", host, strings.Join(hosts, ", "))
}

// prefixed yields what follows ServerPrefix on every line of log that
// holds it.
func prefixed(log string) func(func(string) bool) {
	return func(yield func(string) bool) {
		sc := bufio.NewScanner(strings.NewReader(log))
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			if _, rest, ok := strings.Cut(sc.Text(), ServerPrefix); ok && !yield(rest) {
				return
			}
		}
	}
}
