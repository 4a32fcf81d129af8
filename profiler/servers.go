package profiler

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
)

// ServerPrefix starts the line raytpu's launcher prints in a job's log for
// every train worker whose profiler server started (train.ProfilerConfig),
// followed by the Server as JSON.
const ServerPrefix = "RAYTPU_PROFILER "

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
	sc := bufio.NewScanner(strings.NewReader(log))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		_, rest, ok := strings.Cut(sc.Text(), ServerPrefix)
		if !ok {
			continue
		}
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
