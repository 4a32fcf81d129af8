// Package faultproxy is a loopback HTTP reverse proxy that injects faults
// into chosen requests on their way to a real server: error statuses,
// connection resets (before or after the server handled the request) and
// slow answer bodies. Tests put it between a client and a real Ray
// dashboard to check what the client does when the network misbehaves.
package faultproxy

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Fault is what happens to a matching request.
type Fault int

const (
	// StatusBefore answers Rule.Status without forwarding.
	StatusBefore Fault = iota + 1
	// StatusAfter forwards the request, drops the server's answer and
	// answers Rule.Status: the server acted, the client sees an error.
	StatusAfter
	// ResetBefore closes the connection without forwarding.
	ResetBefore
	// ResetAfter forwards the request, then closes the connection without
	// answering: the server acted, the answer is lost.
	ResetAfter
	// SlowBody forwards the request and sends the server's answer after
	// Rule.Delay, the headers first and the body late.
	SlowBody
)

// Rule selects requests and the fault to inject.
type Rule struct {
	Method     string // "" matches any
	PathPrefix string // "" matches any
	// Skip lets this many matching requests through before faulting.
	Skip int
	// Times is how many matching requests get the fault; 0 means all.
	Times  int
	Fault  Fault
	Status int           // for StatusBefore/StatusAfter; default 503
	Delay  time.Duration // for SlowBody
}

type rule struct {
	Rule
	seen, hit int
}

// Request is a request the proxy saw.
type Request struct {
	Method, Path string
	Fault        Fault // 0 when passed through untouched
}

// Proxy is a running fault-injecting proxy.
type Proxy struct {
	URL string // base URL of the proxy

	srv    *httptest.Server
	target *url.URL
	rp     *httputil.ReverseProxy

	mu    sync.Mutex
	rules []*rule
	log   []Request
}

// New starts a proxy on 127.0.0.1 in front of target (e.g.
// "http://127.0.0.1:8265"). Websocket upgrades pass through.
func New(target string) (*Proxy, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	p := &Proxy{target: u}
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(u)
			r.Out.Host = u.Host
		},
		FlushInterval: -1,
	}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	p.URL = p.srv.URL
	return p, nil
}

// Close stops the proxy.
func (p *Proxy) Close() { p.srv.CloseClientConnections(); p.srv.Close() }

// Add installs a rule. Rules are checked in order; the first that applies
// to a request decides.
func (p *Proxy) Add(r Rule) {
	if r.Status == 0 {
		r.Status = http.StatusServiceUnavailable
	}
	p.mu.Lock()
	p.rules = append(p.rules, &rule{Rule: r})
	p.mu.Unlock()
}

// Reset removes every rule and forgets the requests seen.
func (p *Proxy) Reset() {
	p.mu.Lock()
	p.rules, p.log = nil, nil
	p.mu.Unlock()
}

// Requests returns the requests seen so far that match method and path
// prefix ("" matches any).
func (p *Proxy) Requests(method, pathPrefix string) []Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []Request
	for _, r := range p.log {
		if (method == "" || r.Method == method) && strings.HasPrefix(r.Path, pathPrefix) {
			out = append(out, r)
		}
	}
	return out
}

func (p *Proxy) pick(r *http.Request) *rule {
	p.mu.Lock()
	defer p.mu.Unlock()
	var chosen *rule
	for _, ru := range p.rules {
		if ru.Method != "" && ru.Method != r.Method || !strings.HasPrefix(r.URL.Path, ru.PathPrefix) {
			continue
		}
		ru.seen++
		if ru.seen <= ru.Skip || ru.Times > 0 && ru.hit >= ru.Times {
			continue
		}
		ru.hit++
		chosen = ru
		break
	}
	f := Fault(0)
	if chosen != nil {
		f = chosen.Fault
	}
	p.log = append(p.log, Request{Method: r.Method, Path: r.URL.Path, Fault: f})
	return chosen
}

func (p *Proxy) serve(w http.ResponseWriter, r *http.Request) {
	ru := p.pick(r)
	if ru == nil {
		p.rp.ServeHTTP(w, r)
		return
	}
	switch ru.Fault {
	case StatusBefore:
		io.Copy(io.Discard, r.Body)
		http.Error(w, "faultproxy: injected "+http.StatusText(ru.Status), ru.Status)
	case ResetBefore:
		io.Copy(io.Discard, r.Body)
		reset(w)
	case StatusAfter, ResetAfter, SlowBody:
		rec := httptest.NewRecorder()
		p.rp.ServeHTTP(rec, r)
		switch ru.Fault {
		case StatusAfter:
			http.Error(w, "faultproxy: injected "+http.StatusText(ru.Status)+" after the server answered", ru.Status)
		case ResetAfter:
			reset(w)
		case SlowBody:
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.WriteHeader(rec.Code)
			if f, ok := w.(http.Flusher); ok {
				f.Flush()
			}
			body := rec.Body.Bytes()
			half := len(body) / 2
			w.Write(body[:half])
			if f, ok := w.(http.Flusher); ok {
				f.Flush()
			}
			select {
			case <-time.After(ru.Delay):
			case <-r.Context().Done():
				return
			}
			io.Copy(w, bytes.NewReader(body[half:]))
		}
	}
}

// reset closes the client connection abruptly (RST where the OS allows).
func reset(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	conn.Close()
}
