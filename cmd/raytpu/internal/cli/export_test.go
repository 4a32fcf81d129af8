package cli

import (
	"context"
	"io"
	"log/slog"
)

// WriteTopTable renders a reading as `raytpu top` does, for the black-box
// test that compares the command's output on a real cluster.
var WriteTopTable = writeTopTable

// StartProgress returns the logger dev-cluster up gives raycluster.Start,
// showing the start on w as progress of wanted nodes, and how to stop
// its node count.
func StartProgress(ctx context.Context, w io.Writer, wanted int) (*slog.Logger, func()) {
	sp := newStartProgress(ctx, newProgress(w), wanted)
	return slog.New(sp), sp.stop
}
