package podrunner

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// logServer is the part of the kubelet's API the apiserver calls for
// `kubectl logs` (GET pods/<name>/log): /containerLogs/<ns>/<pod>/<container>
// on the node's address and kubelet port (every node's status carries it),
// over TLS with a self-signed certificate (an apiserver started without
// --kubelet-certificate-authority does not verify it). It serves a
// container's whole log, or its last tailLines lines; follow, previous,
// timestamps and sinceSeconds are not supported (400).
type logServer struct {
	srv  *http.Server
	port int
	done chan error
}

// startLogServer listens on addr (the bridge's address) for r's pods' logs.
func startLogServer(r *Runner, addr string) (*logServer, error) {
	cert, err := selfSigned(addr)
	if err != nil {
		return nil, fmt.Errorf("podrunner: the log server's certificate: %w", err)
	}
	l, err := tls.Listen("tcp", net.JoinHostPort(addr, "0"), &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	if err != nil {
		return nil, fmt.Errorf("podrunner: the log server: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /containerLogs/{namespace}/{pod}/{container}", r.serveLogs)
	s := &logServer{srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}, port: l.Addr().(*net.TCPAddr).Port, done: make(chan error, 1)}
	go func() { s.done <- s.srv.Serve(l) }()
	return s, nil
}

func (s *logServer) close() error {
	err := s.srv.Close()
	if serr := <-s.done; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}

func (r *Runner) serveLogs(rw http.ResponseWriter, req *http.Request) {
	q := req.URL.Query()
	for _, k := range []string{"follow", "previous", "timestamps"} {
		if q.Get(k) == "true" {
			http.Error(rw, "podrunner serves no "+k+" logs", http.StatusBadRequest)
			return
		}
	}
	if q.Get("sinceSeconds") != "" || q.Get("sinceTime") != "" {
		http.Error(rw, "podrunner serves no logs since a time", http.StatusBadRequest)
		return
	}
	key := types.NamespacedName{Namespace: req.PathValue("namespace"), Name: req.PathValue("pod")}
	r.mu.Lock()
	w := r.workers[key]
	r.mu.Unlock()
	if w == nil {
		http.Error(rw, fmt.Sprintf("pod %s is not on this node", key), http.StatusNotFound)
		return
	}
	b, err := os.ReadFile(w.logPath(req.PathValue("container")))
	if errors.Is(err, os.ErrNotExist) {
		http.Error(rw, fmt.Sprintf("container %s of pod %s has not started", req.PathValue("container"), key), http.StatusNotFound)
		return
	}
	if err != nil {
		http.Error(rw, err.Error(), http.StatusInternalServerError)
		return
	}
	if v := q.Get("tailLines"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			http.Error(rw, "tailLines "+strconv.Quote(v)+": want a non-negative integer", http.StatusBadRequest)
			return
		}
		b = tail(b, n)
	}
	if v := q.Get("limitBytes"); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n >= 0 && n < len(b) {
			b = b[:n]
		}
	}
	rw.Header().Set("Content-Type", "text/plain")
	_, _ = io.Copy(rw, strings.NewReader(string(b)))
}

// tail is the last n lines of b.
func tail(b []byte, n int) []byte {
	end := len(b)
	if end > 0 && b[end-1] == '\n' {
		end--
	}
	for i := end - 1; i >= 0; i-- {
		if b[i] == '\n' {
			if n--; n == 0 {
				return b[i+1:]
			}
		}
	}
	if n == 0 {
		return b[:0]
	}
	return b
}

// selfSigned is a fresh certificate for ip, valid for a day.
func selfSigned(ip string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "podrunner"},
		NotBefore:    time.Now().Add(-time.Minute),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.ParseIP(ip)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}
