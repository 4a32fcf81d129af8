package raycluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
)

// Ray 2.60's token authentication switch and token sources (read by
// `ray start`, the dashboard, raylets and job drivers alike).
const (
	envAuthMode      = "RAY_AUTH_MODE"       // "token" or "disabled"
	envAuthToken     = "RAY_AUTH_TOKEN"      // the token itself
	envAuthTokenPath = "RAY_AUTH_TOKEN_PATH" // a file holding it
)

// authTokenFile is the token's file name under the cluster's temp dir.
const authTokenFile = "auth_token"

// setupAuth prepares token authentication for a cluster being started:
// with cfg.TokenAuth it writes the token (cfg.AuthToken, or a fresh one
// like `ray get-auth-token --generate` makes) to a file only the user can
// read, which every node gets through RAY_AUTH_TOKEN_PATH.
func (c *Cluster) setupAuth(cfg Config) error {
	if !cfg.TokenAuth {
		if cfg.AuthToken != "" {
			return fmt.Errorf("raycluster: Config.AuthToken is set but Config.TokenAuth is false; set TokenAuth to start the cluster with token authentication")
		}
		return nil
	}
	token := strings.TrimSpace(cfg.AuthToken)
	if token == "" {
		var b [32]byte
		_, _ = rand.Read(b[:])
		token = hex.EncodeToString(b[:])
	} else if strings.ContainsAny(token, " \t\r\n") {
		return fmt.Errorf("raycluster: Config.AuthToken contains whitespace; want one word")
	}
	path := filepath.Join(c.tempDir, authTokenFile)
	if err := os.WriteFile(path, []byte(token+"\n"), 0o600); err != nil {
		return fmt.Errorf("raycluster: write auth token: %w", err)
	}
	c.token, c.tokenPath = token, path
	return nil
}

// authEnv is the environment that switches a node's token authentication
// on (with the cluster's token) or off: without an explicit
// RAY_AUTH_MODE=disabled, `ray start` turns it on whenever
// ~/.ray/auth_token exists.
func (c *Cluster) authEnv() []string {
	if c.token == "" {
		return []string{envAuthMode + "=disabled"}
	}
	return []string{envAuthMode + "=token", envAuthTokenPath + "=" + c.tokenPath}
}

// AuthToken returns the cluster's token ("" when token authentication is
// off). Dashboard requests carry it as "Authorization: Bearer <token>".
func (c *Cluster) AuthToken() string { return c.token }

// AuthTokenPath returns the file holding the cluster's token ("" when
// token authentication is off), for RAY_AUTH_TOKEN_PATH.
func (c *Cluster) AuthTokenPath() string { return c.tokenPath }

// get GETs a dashboard path with the cluster's token.
func (c *Cluster) get(ctx context.Context, hc *http.Client, path string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.DashboardURL+path, nil)
	if err != nil {
		return nil, err
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	return hc.Do(req)
}

// loadToken reads the token of a cluster loaded from a state file.
func (c *Cluster) loadToken() error {
	if c.tokenPath == "" {
		return nil
	}
	f, err := os.Open(c.tokenPath)
	if err != nil {
		return fmt.Errorf("raycluster: auth token: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 64<<10))
	if err != nil {
		return fmt.Errorf("raycluster: auth token: %w", err)
	}
	c.token = strings.TrimSpace(string(b))
	return nil
}
