// Command llmstreambench drives the Go side of
// bench/llmstreambench/vs-python.sh: it starts and stops a local Ray
// cluster of the LLM virtualenv, deploys serve/llm's tiny test model on
// vLLM's CPU engine behind Serve's HTTP proxy, and streams chat
// completions from it through package serve/client's OpenAI client,
// printing one JSON object with the client's CPU time per 1,000
// completion tokens.
//
//	llmstreambench -start-cluster state.json -venv DIR   # prints the dashboard URL
//	llmstreambench -address URL -deploy -model DIR       # prints the OpenAI base URL
//	llmstreambench -base URL -n 8 -max-tokens 200        # streams and times
//	llmstreambench -stop-cluster state.json
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"

	"github.com/raytpu/raytpu/internal/raycluster"
)

func main() {
	var (
		start     = flag.String("start-cluster", "", "start a head-only local cluster of -venv, write its state to this file, print its dashboard URL")
		venv      = flag.String("venv", "", "with -start-cluster: the virtualenv holding Ray, vLLM and openai (the LLM venv)")
		stop      = flag.String("stop-cluster", "", "stop the cluster saved in this state file")
		addr      = flag.String("address", "", "dashboard URL, with -deploy")
		deploy    = flag.Bool("deploy", false, "start Serve (HTTP proxy only) and deploy the tiny model of -model; print the OpenAI API's base URL")
		modelDir  = flag.String("model", "", "with -deploy: the model directory serve/llm/testdata/make_tiny_model.py wrote")
		base      = flag.String("base", "", "stream chat completions from the OpenAI API at this base URL (the API is at BASE/v1)")
		n         = flag.Int("n", 8, "timed streamed requests")
		conc      = flag.Int("c", 1, "concurrent streams")
		maxTokens = flag.Int("max-tokens", 200, "max_tokens of each request; each answer must be that long")
		side      = flag.String("side", "go", "the side's name in the output")
		prof      = flag.String("cpuprofile", "", "write a CPU profile of the timed streams here")
	)
	flag.Parse()
	ctx := context.Background()
	var err error
	switch {
	case *start != "":
		err = startCluster(ctx, *start, *venv)
	case *stop != "":
		err = raycluster.StopState(*stop)
	case *deploy:
		err = deployApp(ctx, *addr, *modelDir)
	case *base != "":
		err = bench(ctx, benchConfig{base: *base, side: *side, profile: *prof, n: *n, conc: *conc, maxTokens: *maxTokens})
	default:
		flag.Usage()
		os.Exit(2)
	}
	if err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "llmstreambench:", err)
		os.Exit(1)
	}
}
