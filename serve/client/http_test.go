package client_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/raytpu/raytpu/serve/client"
)

func TestNewHTTPValidates(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		url  string
		opts []client.HTTPOption
	}{
		{"relative url", "127.0.0.1:8000", nil},
		{"ftp", "ftp://h:1", nil},
		{"query", "http://h:1/?a=b", nil},
		{"nil client", "http://h:1", []client.HTTPOption{client.WithHTTPClient(nil)}},
		{"empty header", "http://h:1", []client.HTTPOption{client.WithHeader("", "v")}},
		{"own header", "http://h:1", []client.HTTPOption{client.WithHeader("content-type", "text/plain")}},
		{"header line break", "http://h:1", []client.HTTPOption{client.WithHeader("X-A", "a\r\nb")}},
		{"zero body limit", "http://h:1", []client.HTTPOption{client.WithMaxResponseBytes(0)}},
		{"nil logger", "http://h:1", []client.HTTPOption{client.WithLogger(nil)}},
		{"nil option", "http://h:1", []client.HTTPOption{nil}},
	} {
		if c, err := client.NewHTTP(tc.url, tc.opts...); err == nil {
			t.Errorf("%s: NewHTTP = %v, want an error", tc.name, c)
		}
	}
	if _, err := client.NewHTTP("http://user:secret@h:1/?x=1"); err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("error %v must not show the password", err)
	}
}

// Answers the real proxy cannot be made to give on demand: backpressure,
// a body that is not JSON, one larger than the limit.
func TestHTTPFaults(t *testing.T) {
	t.Parallel()
	var gotHeader, gotPath string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotHeader, gotPath = r.Header.Get("X-Tenant"), r.URL.RequestURI()
		switch r.URL.Path {
		case "/root/busy":
			w.Header().Set("X-Request-Id", "rid-1")
			http.Error(w, "Request dropped due to backpressure", http.StatusServiceUnavailable)
		case "/root/limited":
			http.Error(w, "slow down", http.StatusTooManyRequests)
		case "/root/text":
			w.Write([]byte("not json"))
		case "/root/big":
			w.Write([]byte(`{"y":"` + strings.Repeat("a", 100) + `"}`))
		default:
			w.Write([]byte(`{"y":[1]}`))
		}
	}))
	defer srv.Close()
	c, err := client.NewHTTP(srv.URL+"/root/", client.WithHeader("X-Tenant", "t1"), client.WithMaxResponseBytes(64))
	if err != nil {
		t.Fatal(err)
	}
	var out struct{ Y []int }
	if err := c.Post(t.Context(), "/ok/sub?n=3", map[string]int{"x": 1}, &out); err != nil || len(out.Y) != 1 {
		t.Fatalf("Post = %v, %+v", err, out)
	}
	if gotHeader != "t1" || gotPath != "/root/ok/sub?n=3" {
		t.Errorf("server saw header %q path %q, want t1 and /root/ok/sub?n=3", gotHeader, gotPath)
	}

	err = c.Post(t.Context(), "/busy", nil, nil)
	var he *client.HTTPError
	if !errors.As(err, &he) || !errors.Is(err, client.ErrUnavailable) || he.RequestID != "rid-1" || he.Body != "Request dropped due to backpressure" {
		t.Errorf("503: err = %#v, want an ErrUnavailable *HTTPError with body and request id", err)
	}
	if err := c.Get(t.Context(), "/limited", nil); !errors.Is(err, client.ErrUnavailable) || errors.Is(err, client.ErrNotFound) {
		t.Errorf("429: err = %v, want ErrUnavailable only", err)
	}
	if err := c.Get(t.Context(), "/text", &out); err == nil || errors.As(err, &he) {
		t.Errorf("non-JSON answer: err = %v, want a decoding error", err)
	}
	if err := c.Get(t.Context(), "/big", &out); err == nil || !strings.Contains(err.Error(), "exceeds 64 bytes") {
		t.Errorf("big answer: err = %v, want the limit named", err)
	}
	if err := c.Get(t.Context(), "no-slash", nil); err == nil {
		t.Errorf("route without a slash: no error")
	}
}
