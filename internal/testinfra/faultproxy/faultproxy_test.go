package faultproxy_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/raytpu/raytpu/internal/testinfra/faultproxy"
)

func TestFaults(t *testing.T) {
	t.Parallel()
	var served atomic.Int32
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		io.WriteString(w, "hello from the server")
	}))
	defer backend.Close()
	p, err := faultproxy.New(backend.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	tests := []struct {
		name       string
		rule       faultproxy.Rule
		wantStatus int // 0: a transport error
		wantServed int32
		wantBody   string
	}{
		{"pass", faultproxy.Rule{Method: "NONE"}, 200, 1, "hello from the server"},
		{"status before", faultproxy.Rule{Fault: faultproxy.StatusBefore}, 503, 0, ""},
		{"status after", faultproxy.Rule{Fault: faultproxy.StatusAfter, Status: 502}, 502, 1, ""},
		{"reset before", faultproxy.Rule{Fault: faultproxy.ResetBefore}, 0, 0, ""},
		{"reset after", faultproxy.Rule{Fault: faultproxy.ResetAfter}, 0, 1, ""},
		{"slow body", faultproxy.Rule{Fault: faultproxy.SlowBody, Delay: 300 * time.Millisecond}, 200, 1, "hello from the server"},
		{"skip first", faultproxy.Rule{Fault: faultproxy.StatusBefore, Skip: 1}, 200, 1, "hello from the server"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p.Reset()
			p.Add(tt.rule)
			served.Store(0)
			start := time.Now()
			resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Get(p.URL + "/x")
			if tt.wantStatus == 0 {
				if err == nil {
					resp.Body.Close()
					t.Fatalf("status %d, want a transport error", resp.StatusCode)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != tt.wantStatus || tt.wantBody != "" && string(body) != tt.wantBody {
					t.Errorf("got %d %q, want %d %q", resp.StatusCode, body, tt.wantStatus, tt.wantBody)
				}
			}
			if got := served.Load(); got != tt.wantServed {
				t.Errorf("server saw %d requests, want %d", got, tt.wantServed)
			}
			if tt.rule.Fault == faultproxy.SlowBody && time.Since(start) < tt.rule.Delay {
				t.Errorf("slow body took only %v", time.Since(start))
			}
			if n := len(p.Requests(http.MethodGet, "/x")); n != 1 {
				t.Errorf("proxy logged %d requests, want 1", n)
			}
		})
	}
}
