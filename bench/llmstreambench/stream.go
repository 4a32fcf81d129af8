package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"time"

	"github.com/raytpu/raytpu/bench/cpubench"
	"github.com/raytpu/raytpu/serve/client"
)

// benchConfig is one timed run of -base.
type benchConfig struct {
	base, side, profile string
	n, conc, maxTokens  int
}

// prompt is the one user message of every request, as in serve/llm's test.
const prompt = "Hello, how are you today?"

// answer is what one streamed request returned.
type answer struct {
	tokens        int // usage.completion_tokens of the last chunk
	chunks        int // chunks read, the usage chunk included
	contentChunks int // chunks with delta content
	text          int // bytes of content
}

// stream reads one streamed chat completion as a user would (the text
// collected in a strings.Builder) and checks that it is whole: [DONE]
// reached, maxTokens completion tokens in its usage, ended by length.
func stream(ctx context.Context, oa *client.OpenAI, maxTokens int) (answer, error) {
	req := client.ChatCompletionRequest{
		Model:         Model,
		Messages:      []client.ChatMessage{{Role: "user", Content: prompt}},
		Sampling:      client.Sampling{MaxTokens: maxTokens, Temperature: new(0.0)},
		StreamOptions: &client.StreamOptions{IncludeUsage: true},
	}
	s, err := oa.ChatCompletionStream(ctx, req)
	if err != nil {
		return answer{}, err
	}
	defer s.Close()
	var a answer
	var text strings.Builder
	var usage *client.Usage
	finish := ""
	for s.Next() {
		ch := s.Current()
		a.chunks++
		if ch.Usage != nil {
			usage = ch.Usage
		}
		for _, c := range ch.Choices {
			if c.Delta.Content != "" {
				a.contentChunks++
				text.WriteString(c.Delta.Content)
			}
			if c.FinishReason != "" {
				finish = c.FinishReason
			}
		}
	}
	if err := s.Err(); err != nil {
		return a, err
	}
	a.text = text.Len()
	if usage == nil || usage.CompletionTokens != maxTokens || finish != "length" || a.text == 0 {
		return a, fmt.Errorf("incomplete answer: usage %+v, finish %q, %d bytes of text in %d chunks; want %d completion tokens ended by length",
			usage, finish, a.text, a.chunks, maxTokens)
	}
	a.tokens = usage.CompletionTokens
	return a, nil
}

// cpuSeconds is the process's user + system CPU time so far.
func cpuSeconds() float64 { return cpubench.CPUTime().Seconds() }

// bench streams one untimed request, then cfg.n timed ones over cfg.conc
// concurrent streams, and prints the totals as one JSON object.
func bench(ctx context.Context, cfg benchConfig) error {
	if cfg.n < 1 || cfg.conc < 1 || cfg.maxTokens < 1 {
		return fmt.Errorf("-n, -c and -max-tokens must be at least 1")
	}
	oa, err := client.NewOpenAI(cfg.base)
	if err != nil {
		return err
	}
	if _, err := stream(ctx, oa, cfg.maxTokens); err != nil {
		return fmt.Errorf("warm-up request: %w", err)
	}
	if cfg.profile != "" {
		f, err := os.Create(cfg.profile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
	}

	var (
		mu    sync.Mutex
		total answer
		errs  []error
		left  = cfg.n
		wg    sync.WaitGroup
	)
	c0, t0 := cpuSeconds(), time.Now()
	for range cfg.conc {
		wg.Go(func() {
			for {
				mu.Lock()
				if left == 0 || len(errs) > 0 {
					mu.Unlock()
					return
				}
				left--
				mu.Unlock()
				a, err := stream(ctx, oa, cfg.maxTokens)
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				}
				total.tokens += a.tokens
				total.chunks += a.chunks
				total.contentChunks += a.contentChunks
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	wall, used := time.Since(t0).Seconds(), cpuSeconds()-c0
	pprof.StopCPUProfile()
	if len(errs) > 0 {
		return fmt.Errorf("%s: %d of %d requests failed; the first: %w", cfg.side, len(errs), cfg.n, errs[0])
	}
	if total.tokens != cfg.n*cfg.maxTokens {
		return fmt.Errorf("%s: %d completion tokens, want %d", cfg.side, total.tokens, cfg.n*cfg.maxTokens)
	}
	return json.NewEncoder(os.Stdout).Encode(map[string]any{
		"side": cfg.side, "gomaxprocs": runtime.GOMAXPROCS(0), "requests": cfg.n, "concurrency": cfg.conc,
		"max_tokens": cfg.maxTokens, "completion_tokens": total.tokens,
		"chunks": total.chunks, "content_chunks": total.contentChunks,
		"seconds": wall, "tokens_per_s": float64(total.tokens) / wall,
		"cpu_seconds": used, "cpu_s_per_1000_tokens": used / float64(total.tokens) * 1000,
	})
}
