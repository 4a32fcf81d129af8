package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/raytpu/raytpu/cmd/raytpu/internal/progress"
	"github.com/raytpu/raytpu/ray"
)

// tickEvery is how often a terminal's status line is redrawn while a wait
// has nothing new to say (its elapsed times move).
const tickEvery = 200 * time.Millisecond

// newProgress returns the progress printer of a long wait writing to w: in
// place on a terminal, timestamped lines anywhere else.
func newProgress(w io.Writer) *progress.Printer { return progress.New(w) }

// ticking redraws p's status line every tickEvery until the returned
// function is first called (on a terminal; nothing otherwise).
func ticking(p *progress.Printer) (stop func()) {
	if !p.Terminal() {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(tickEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				p.Tick()
			}
		}
	})
	var once sync.Once
	return func() { once.Do(func() { close(done); wg.Wait() }) }
}

// withUploadProgress makes the uploads under ctx report their bytes to p,
// in state UPLOADING: the files packed into the zip out of their total.
// uploaded reports whether anything was uploaded (a package the cluster
// has already is not).
func withUploadProgress(ctx context.Context, p *progress.Printer, what string) (_ context.Context, uploaded func() bool) {
	var any atomic.Bool
	ctx = ray.WithUploadProgress(ctx, func(u ray.UploadProgress) {
		any.Store(true)
		p.State("UPLOADING")
		label := what
		if u.Attempt > 1 {
			label = fmt.Sprintf("%s (attempt %d)", what, u.Attempt)
		}
		p.Bytes(label, u.Packed, u.Total)
	})
	return ctx, any.Load
}

// gaveUp is the last progress line of a wait that ended with err and no
// state: a dashboard that never answered says so, anything else is a wait
// given up.
func gaveUp(err error) string {
	if errors.Is(err, ray.ErrUnreachable) {
		return "cannot reach the Ray dashboard"
	}
	return "gave up waiting"
}
