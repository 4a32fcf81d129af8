package raybackend_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
)

func askSlice(t *testing.T, url string) sliceAnswer {
	t.Helper()
	a, err := getSlice(url)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func getSlice(url string) (sliceAnswer, error) {
	var a sliceAnswer
	resp, err := http.Get(url)
	if err != nil {
		return a, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &a) != nil {
		return a, fmt.Errorf("GET %s = %d %.500s", url, resp.StatusCode, body)
	}
	return a, nil
}

// askSlices sends the requests at once and returns their answers in
// order. Serve's proxy routes a request first to a replica on its own
// node when that replica is free (local-node routing), and a slice
// replica's orchestrator (0 CPUs) may run on the head beside the proxy:
// requests sent one at a time could then all reach that one replica.
// Sent together to replicas that take one request at a time
// (max_ongoing_requests 1), the ones the local replica cannot take go to
// the others.
func askSlices(t *testing.T, urls ...string) []sliceAnswer {
	t.Helper()
	out := make([]sliceAnswer, len(urls))
	errs := make([]error, len(urls))
	var wg sync.WaitGroup
	for i, u := range urls {
		wg.Go(func() { out[i], errs[i] = getSlice(u) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return out
}
