package raycluster

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strings"
)

// state is what WriteState saves: enough for another process to reach the
// cluster and to stop it.
type state struct {
	ID           string  `json:"id"`
	GCSAddress   string  `json:"gcs_address"`
	DashboardURL string  `json:"dashboard_url"`
	Venv         string  `json:"venv"`
	TempDir      string  `json:"temp_dir"`
	OwnTempDir   bool    `json:"own_temp_dir"`
	Nodes        []*proc `json:"nodes"`
	// AuthTokenPath is the token's file when token auth is on (the
	// token itself is not copied into the state file).
	AuthTokenPath string `json:"auth_token_path,omitempty"`
}

// WriteState saves the cluster's addresses and process ids to path (JSON),
// so a later process can LoadState it and Stop it. Start the cluster with
// Config.Detach for it to outlive the process that started it.
func (c *Cluster) WriteState(path string) error {
	c.mu.Lock()
	s := state{
		ID: c.id, GCSAddress: c.GCSAddress, DashboardURL: c.DashboardURL,
		Venv: c.venv, TempDir: c.tempDir, OwnTempDir: c.ownTemp, Nodes: c.procs,
		AuthTokenPath: c.tokenPath,
	}
	b, err := json.MarshalIndent(s, "", "  ")
	c.mu.Unlock()
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// LoadState returns the cluster saved by WriteState. Its Stop kills the
// saved processes (by process group and environment marker) and removes the
// temp dir if Start had created it.
func LoadState(path string) (*Cluster, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s state
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("raycluster: %s: %w", path, err)
	}
	if s.ID == "" || len(s.Nodes) == 0 {
		return nil, fmt.Errorf("raycluster: %s: not a cluster state file", path)
	}
	for _, p := range s.Nodes {
		if p.PID <= 1 || !strings.HasPrefix(p.Marker, s.ID+"/") {
			return nil, fmt.Errorf("raycluster: %s: bad node entry %q", path, p.Name)
		}
	}
	c := &Cluster{
		GCSAddress: s.GCSAddress, DashboardURL: s.DashboardURL,
		id: s.ID, venv: s.Venv, tempDir: s.TempDir, ownTemp: s.OwnTempDir,
		logger: slog.New(slog.DiscardHandler), procs: s.Nodes, tokenPath: s.AuthTokenPath,
	}
	if err := c.loadToken(); err != nil {
		return nil, err
	}
	return c, nil
}

// FindVenv returns the virtualenv Start would use for Config.Venv = venv
// ("" for the default), or an error wrapping ErrNoRay that says how to
// create it.
func FindVenv(venv string) (string, error) { return resolveVenv(venv) }

// StartDetached starts a detached cluster of cfg (Detach is set), writes
// its state to the file state and returns its dashboard URL: the cluster
// of a script, a benchmark's say, which StopState stops later from
// another process.
func StartDetached(ctx context.Context, cfg Config, state string) (string, error) {
	cfg.Detach = true
	c, err := Start(ctx, cfg)
	if err != nil {
		return "", err
	}
	if err := c.WriteState(state); err != nil {
		c.Stop()
		return "", err
	}
	return c.DashboardURL, nil
}

// StopState stops the cluster whose state StartDetached wrote to the file
// state, and removes the file.
func StopState(state string) error {
	c, err := LoadState(state)
	if err != nil {
		return err
	}
	if err := c.Stop(); err != nil {
		return err
	}
	return os.Remove(state)
}
