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
// Exit status: 0 on success, 1 for an invalid spec or a failed operation,
// 2 for a usage error.
package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/raytpu/raytpu/cmd/raytpu/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := cli.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
