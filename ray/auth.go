package ray

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
)

// Token authentication, as in Ray 2.60 (ray._private.authentication and
// the C++ AuthenticationTokenLoader behind it).
//
// A cluster started with RAY_AUTH_MODE=token (the default for one started
// by ray.init(), and for `ray start` when a token already exists) answers
// every dashboard request but a few health checks with 401 when it carries
// no token and 403 when the token is wrong. The token travels as
// "Authorization: Bearer <token>". Ray's clients look for it in this order:
//
//  1. the RAY_AUTH_TOKEN environment variable (surrounding whitespace
//     trimmed; empty means unset);
//  2. the file named by RAY_AUTH_TOKEN_PATH (when set, it must be readable
//     and hold a token: Ray fails otherwise rather than look further);
//  3. ~/.ray/auth_token, the file ray.init() writes.
//
// NewClient does the same unless an Authorization header was given
// (WithToken, WithHeader, or user:password in the base URL), and finds
// nothing when RAY_AUTH_MODE is "disabled". Ray's Python
// JobSubmissionClient sends the token only when RAY_AUTH_MODE is "token";
// NewClient also sends it when RAY_AUTH_MODE is unset, as ray.init() does
// when it connects to a running cluster (a token file alone turns
// authentication on there).
const (
	EnvAuthMode      = "RAY_AUTH_MODE"
	EnvAuthToken     = "RAY_AUTH_TOKEN"
	EnvAuthTokenPath = "RAY_AUTH_TOKEN_PATH"
)

// DefaultTokenPath returns ~/.ray/auth_token, where ray.init() writes the
// token of a cluster it starts.
func DefaultTokenPath() (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("ray: no home directory for ~/.ray/auth_token: %w", err)
	}
	return filepath.Join(home, ".ray", "auth_token"), nil
}

// WithToken authenticates every request with token ("Authorization:
// Bearer <token>"), replacing any Authorization header and the token Ray's
// environment variables or files would give. The token is never logged
// nor put in an error.
func WithToken(token string) Option {
	return optionFunc(func(c *Client) error {
		t := strings.TrimSpace(token)
		switch {
		case t == "":
			return errors.New("ray: WithToken: the token is empty")
		case strings.ContainsAny(t, " \t\r\n"):
			return errors.New("ray: WithToken: the token contains whitespace (want one word, as `ray get-auth-token` prints it)")
		}
		c.token = t
		c.tokenSource = "ray.WithToken"
		return nil
	})
}

// findToken looks for a token the way Ray's clients do. It returns "" when
// there is none, and where it found the token (never the token) otherwise.
func findToken(getenv func(string) string) (token, source string, err error) {
	switch mode := strings.ToLower(strings.TrimSpace(getenv(EnvAuthMode))); mode {
	case "disabled":
		return "", "", nil
	case "", "token":
	default:
		return "", "", fmt.Errorf("ray: %s=%q: want \"token\", \"disabled\" or unset", EnvAuthMode, getenv(EnvAuthMode))
	}
	if t := strings.TrimSpace(getenv(EnvAuthToken)); t != "" {
		return t, "$" + EnvAuthToken, nil
	}
	if p := getenv(EnvAuthTokenPath); p != "" {
		t, err := readToken(p)
		if err != nil || t == "" {
			why := "it is empty"
			if err != nil {
				why = err.Error()
			}
			return "", "", fmt.Errorf("ray: %s=%s: cannot read a token from it: %s", EnvAuthTokenPath, p, why)
		}
		return t, "$" + EnvAuthTokenPath + " (" + p + ")", nil
	}
	p, err := DefaultTokenPath()
	if err != nil {
		return "", "", nil
	}
	t, err := readToken(p)
	if err != nil || t == "" {
		return "", "", nil
	}
	return t, p, nil
}

func readToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// setupAuth decides the Authorization header after the options ran.
func (c *Client) setupAuth() error {
	if c.token != "" {
		c.header.Set("Authorization", "Bearer "+c.token)
		return nil
	}
	if c.header.Get("Authorization") != "" {
		c.tokenSource = "an Authorization header"
		return nil
	}
	t, src, err := findToken(os.Getenv)
	if err != nil {
		return err
	}
	if t != "" {
		c.token, c.tokenSource = t, src
		c.header.Set("Authorization", "Bearer "+t)
	} else if strings.EqualFold(os.Getenv(EnvAuthMode), "token") {
		c.logger.Warn("ray: " + EnvAuthMode + "=token but no token found; requests to a cluster with token authentication will fail")
	}
	return nil
}

// authHint tells how to supply a token after a 401 or 403.
func (c *Client) authHint(status int) string {
	const how = "pass ray.WithToken, set " + EnvAuthToken + " or " + EnvAuthTokenPath +
		", or write the token to ~/.ray/auth_token (`ray get-auth-token` prints a cluster's token)"
	if status == http.StatusUnauthorized || c.tokenSource == "" {
		return "the cluster uses token authentication and no token was sent: " + how
	}
	return "the cluster rejected the token from " + c.tokenSource + ": " + how
}
