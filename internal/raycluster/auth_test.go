package raycluster_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/raytpu/raytpu/internal/raycluster"
	"github.com/raytpu/raytpu/internal/testinfra/raytest"
)

// TestTokenAuth starts a cluster with token authentication on and checks
// that the real dashboard refuses requests without the token (401) or
// with a wrong one (403), accepts the cluster's token, and that a cluster
// loaded from a state file (which holds the token's path, not the token)
// still reaches the state API.
func TestTokenAuth(t *testing.T) {
	c := raytest.Start(t, raycluster.Config{HeadCPUs: 1, TokenAuth: true})
	token := c.AuthToken()
	if len(token) != 64 {
		t.Fatalf("AuthToken() is %d characters, want 64 hex digits", len(token))
	}
	st, err := os.Stat(c.AuthTokenPath())
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v, want 0600", st.Mode().Perm())
	}

	for _, tc := range []struct {
		name, header string
		want         int
	}{
		{"no token", "", http.StatusUnauthorized},
		{"wrong token", "Bearer not-" + token, http.StatusForbidden},
		{"cluster token", "Bearer " + token, http.StatusOK},
	} {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, c.DashboardURL+"/api/version", nil)
		if tc.header != "" {
			req.Header.Set("Authorization", tc.header)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s: GET /api/version = HTTP %d, want %d", tc.name, resp.StatusCode, tc.want)
		}
	}

	statePath := filepath.Join(t.TempDir(), "cluster.json")
	if err := c.WriteState(statePath); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(statePath)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), token) {
		t.Errorf("state file holds the token:\n%s", b)
	}
	loaded, err := raycluster.LoadState(statePath)
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := loaded.Nodes(t.Context())
	if err != nil {
		t.Fatalf("Nodes of a loaded token-auth cluster: %v", err)
	}
	if len(nodes) != 1 || !nodes[0].Alive() {
		t.Errorf("nodes = %+v, want one ALIVE head", nodes)
	}
}
