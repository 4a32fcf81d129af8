package kuberay_test

import (
	"context"
	"net"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/raytpu/raytpu/kuberay"
)

// A kube-apiserver that accepts connections and never answers costs a
// call at most the backend's answer timeout, whatever the caller's
// context, and at most the context's deadline when that is shorter.
func TestUnansweringAPIServerTimesOut(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var conns []net.Conn
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	b, err := kuberay.NewAnswering(&rest.Config{Host: "http://" + ln.Addr().String()}, 500*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := b.Status(context.Background(), "chat"); err == nil {
		t.Error("Status against a silent server succeeded")
	}
	if took := time.Since(start); took > 500*time.Millisecond+5*time.Second {
		t.Errorf("Status took %s, want about the 500ms answer timeout", took)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start = time.Now()
	if _, err := b.ReadClusterSlices(ctx, "pool"); err == nil {
		t.Error("ReadClusterSlices against a silent server succeeded")
	}
	if took := time.Since(start); took > 200*time.Millisecond+5*time.Second {
		t.Errorf("ReadClusterSlices took %s, want about its context's 200ms", took)
	}
}
