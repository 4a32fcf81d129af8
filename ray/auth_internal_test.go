package ray

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tokenEnv sets HOME and Ray's token variables for one test ("" unsets).
func tokenEnv(t *testing.T, home string, vars map[string]string) {
	t.Helper()
	t.Setenv("HOME", home)
	for _, k := range []string{EnvAuthMode, EnvAuthToken, EnvAuthTokenPath} {
		t.Setenv(k, "")
		os.Unsetenv(k)
		if v, ok := vars[k]; ok {
			t.Setenv(k, v)
		}
	}
}

func writeFile(t *testing.T, path, data string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestFindTokenOrder checks the lookup order Ray 2.60's token loader uses
// (checked against its Python binding: RAY_AUTH_TOKEN, then the file at
// RAY_AUTH_TOKEN_PATH, then ~/.ray/auth_token; whitespace trimmed).
func TestFindTokenOrder(t *testing.T) {
	home := t.TempDir()
	writeFile(t, filepath.Join(home, ".ray", "auth_token"), "  home-token \n\n")
	pathFile := writeFile(t, filepath.Join(t.TempDir(), "tok"), "path-token\n")
	for _, tc := range []struct {
		name       string
		vars       map[string]string
		want, from string
	}{
		{"default file", nil, "home-token", filepath.Join(home, ".ray", "auth_token")},
		{"mode token", map[string]string{EnvAuthMode: "TOKEN"}, "home-token", filepath.Join(home, ".ray", "auth_token")},
		{"path wins over file", map[string]string{EnvAuthTokenPath: pathFile}, "path-token", "$RAY_AUTH_TOKEN_PATH (" + pathFile + ")"},
		{"env wins", map[string]string{EnvAuthToken: "  env-token  ", EnvAuthTokenPath: pathFile}, "env-token", "$RAY_AUTH_TOKEN"},
		{"empty env is unset", map[string]string{EnvAuthToken: "", EnvAuthTokenPath: ""}, "home-token", filepath.Join(home, ".ray", "auth_token")},
		{"disabled", map[string]string{EnvAuthMode: "disabled", EnvAuthToken: "env-token"}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tokenEnv(t, home, tc.vars)
			got, from, err := findToken(os.Getenv)
			if err != nil || got != tc.want || from != tc.from {
				t.Errorf("findToken = %q from %q, %v; want %q from %q", got, from, err, tc.want, tc.from)
			}
		})
	}
}

func TestFindTokenErrors(t *testing.T) {
	t.Run("no token anywhere", func(t *testing.T) {
		tokenEnv(t, t.TempDir(), nil)
		if got, _, err := findToken(os.Getenv); got != "" || err != nil {
			t.Errorf("findToken = %q, %v; want none", got, err)
		}
	})
	t.Run("unreadable path", func(t *testing.T) {
		missing := filepath.Join(t.TempDir(), "nope")
		tokenEnv(t, t.TempDir(), map[string]string{EnvAuthTokenPath: missing})
		_, err := NewClient("http://127.0.0.1:1")
		if err == nil || !strings.Contains(err.Error(), EnvAuthTokenPath+"="+missing) {
			t.Errorf("NewClient with a missing token file: %v; want an error naming %s and the path", err, EnvAuthTokenPath)
		}
	})
	t.Run("bad mode", func(t *testing.T) {
		tokenEnv(t, t.TempDir(), map[string]string{EnvAuthMode: "tokn"})
		_, err := NewClient("http://127.0.0.1:1")
		if err == nil || !strings.Contains(err.Error(), `"tokn"`) || !strings.Contains(err.Error(), `"disabled"`) {
			t.Errorf("NewClient with RAY_AUTH_MODE=tokn: %v; want an error naming the value and the valid ones", err)
		}
	})
}

// TestExplicitAuthWins: WithToken and an Authorization header beat the
// token Ray's environment gives.
func TestExplicitAuthWins(t *testing.T) {
	tokenEnv(t, t.TempDir(), map[string]string{EnvAuthToken: "env-token"})
	for _, tc := range []struct {
		opts []Option
		want string
	}{
		{nil, "Bearer env-token"},
		{[]Option{WithToken("explicit")}, "Bearer explicit"},
		{[]Option{WithHeader("Authorization", "Bearer hdr")}, "Bearer hdr"},
		{[]Option{WithHeader("Authorization", "Bearer hdr"), WithToken("explicit")}, "Bearer explicit"},
	} {
		c, err := NewClient("http://127.0.0.1:1", tc.opts...)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.header.Get("Authorization"); got != tc.want {
			t.Errorf("Authorization = %q, want %q", got, tc.want)
		}
	}
	for _, bad := range []string{"", "  ", "two words"} {
		_, err := NewClient("http://127.0.0.1:1", WithToken(bad))
		if err == nil || !strings.Contains(err.Error(), "WithToken") {
			t.Errorf("WithToken(%q): %v; want an error", bad, err)
		} else if bad == "two words" && strings.Contains(err.Error(), "words") {
			t.Errorf("WithToken's error shows the token: %v", err)
		}
	}
}

func TestUnauthenticatedIsTyped(t *testing.T) {
	for _, status := range []int{401, 403} {
		e := (&Client{tokenSource: "$RAY_AUTH_TOKEN"}).apiError(status, "GET", "/api/version", []byte("Unauthorized: Missing authentication token"))
		if !errors.Is(e, ErrUnauthenticated) || errors.Is(e, ErrUnavailable) || e.retryable() {
			t.Errorf("HTTP %d: Is(ErrUnauthenticated) = %v, retryable = %v", status, errors.Is(e, ErrUnauthenticated), e.retryable())
		}
		if !strings.Contains(e.Error(), "ray.WithToken") || !strings.Contains(e.Error(), EnvAuthToken) {
			t.Errorf("HTTP %d: message does not say how to supply a token: %v", status, e)
		}
	}
}
