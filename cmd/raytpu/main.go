// Command raytpu plans and runs Ray workloads on TPUs.
//
//	raytpu catalog [GEN] [-o table|json]
//	raytpu slice GEN TOPOLOGY [--chips-per-host N] [--machine-type T] [-o table|json]
//	raytpu plan --accelerator GEN --topology T [--num-slices N] [--cluster SPEC] [-o table|json|svg]
//	raytpu job submit [--working-dir DIR] [--wait] --address URL -- ENTRYPOINT...
//	raytpu job list|status|logs|wait|stop --address URL
//	raytpu plan -f APP.yaml
//	raytpu serve deploy|status|wait|delete --address URL
//	raytpu data plan -f DATASET.yaml [-o table|json]
//	raytpu top [--once] [-o table|json|svg] [--node-addr NODE=HOST:PORT] --address URL
//	raytpu render -f FILE [-o yaml|json]
//	raytpu apply -f FILE [--dry-run] [--wait]
//	raytpu dev-cluster up|down
//
// Exit status: 0 on success, 1 for an invalid spec or file or a failed
// operation, 2 for a usage error: a bad flag value or argument, named as
// typed. Every input is checked before any request. Commands that talk to
// a server end by their --timeout (see each command's help for its
// default). Ctrl-C ends a command within a second (dev-cluster: once its
// processes are stopped; a second Ctrl-C at once).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/raytpu/raytpu/cmd/raytpu/internal/cli"
)

// interruptGrace is how long a command has to end after Ctrl-C (or
// SIGTERM) cancels its context before the process exits anyway.
const interruptGrace = 900 * time.Millisecond

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	finished := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
		case <-finished:
			return
		}
		// A second Ctrl-C kills the process at once.
		stop()
		if len(os.Args) > 1 && os.Args[1] == "dev-cluster" {
			return // stops the processes it started: given the time it needs
		}
		select {
		case <-time.After(interruptGrace):
			fmt.Fprintln(os.Stderr, "raytpu: interrupted")
			os.Exit(cli.ExitInvalid)
		case <-finished:
		}
	}()
	code := cli.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	close(finished)
	stop()
	os.Exit(code)
}
