package silentserver_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/raytpu/raytpu/internal/testinfra/silentserver"
)

func TestNeverAnswers(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, silentserver.Start(t).URL+"/x", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		resp.Body.Close()
		t.Fatal("the server answered")
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v, want the context's deadline", err)
	}
}
