package llm_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/internal/raycluster"
	"github.com/raytpu/raytpu/internal/testinfra/raytest"
	"github.com/raytpu/raytpu/internal/testinfra/venvtest"
	"github.com/raytpu/raytpu/ray"
	"github.com/raytpu/raytpu/raybackend"
	"github.com/raytpu/raytpu/runtimeenv"
	"github.com/raytpu/raytpu/serve"
	"github.com/raytpu/raytpu/serve/client"
	"github.com/raytpu/raytpu/serve/llm"
	"github.com/raytpu/raytpu/serveconfig"
)

// tinyApp serves the tiny model in dir on vLLM's CPU engine: one replica,
// a 1 GiB KV cache, and the engine logging each request (so that an
// aborted one shows in the replica's log).
func tinyApp(dir string) llm.OpenAIApp {
	return llm.OpenAIApp{
		Name: "tiny", RoutePrefix: "/",
		LLMConfigs: []llm.LLMConfig{{
			ModelLoadingConfig: llm.ModelLoadingConfig{ModelID: "tiny", ModelSource: dir},
			AcceleratorConfig:  &llm.AcceleratorConfig{Kind: llm.CPU},
			EngineKwargs: map[string]any{
				"dtype": "float32", "enforce_eager": true, "max_model_len": 512,
				"max_num_seqs": 4, "enable_log_requests": true,
			},
			DeploymentConfig: llm.DeploymentConfig{NumReplicas: serveconfig.ReplicaCount(1)},
			RuntimeEnv:       runtimeenv.RuntimeEnv{EnvVars: map[string]string{"VLLM_CPU_KVCACHE_SPACE": "1"}},
		}},
	}
}

// A Serve LLM application compiled by this package, deployed through
// raybackend (Serve's REST API) on a local Ray cluster of the LLM
// virtualenv, serves a tiny model made here on vLLM's CPU engine, and
// serve/client's OpenAI client calls it: the model list, a chat
// completion, a completion, a streamed chat completion whose chunks arrive
// one at a time, a stream cancelled through its context, which the engine
// aborts (its log says so), the engine's refusal of a too long answer as
// an *client.OpenAIError with the API's error body, and an unknown
// model's 404, typed the same.
func TestServeTinyModelOnVLLMCPU(t *testing.T) {
	py := venvtest.LLMPython(t)
	venv := filepath.Dir(filepath.Dir(py))
	model := filepath.Join(t.TempDir(), "tiny")
	out, err := exec.Command(py, filepath.Join("testdata", "make_tiny_model.py"), model).Output()
	if err != nil {
		t.Fatalf("make_tiny_model.py: %v\n%s", err, stderrOf(err))
	}
	t.Logf("model: %s", lastLine(out))

	c := raytest.Start(t, raycluster.Config{Venv: venv, HeadCPUs: 4})
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Minute)
	defer cancel()
	rc, err := ray.NewClient(c.DashboardURL)
	if err != nil {
		t.Fatal(err)
	}
	base := raytest.StartServe(t, rc, c.DashboardURL)
	b, err := raybackend.New(rc)
	if err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	st, err := tinyApp(model).Run(ctx, b, &backend.WaitOptions{StuckAfter: 5 * time.Minute})
	if err != nil {
		t.Fatalf("Run: %v (status %+v)", err, st)
	}
	if st.State != backend.ServiceRunning {
		t.Fatalf("status = %+v, want RUNNING", st)
	}
	t.Logf("RUNNING after %s", time.Since(started).Round(time.Second))

	oa, err := client.NewOpenAI(base)
	if err != nil {
		t.Fatal(err)
	}
	models, err := oa.Models(ctx)
	if err != nil {
		t.Fatalf("Models: %v", err)
	}
	if len(models) != 1 || models[0].ID != "tiny" || models[0].Object != "model" {
		t.Errorf("Models = %+v, want the one model tiny", models)
	}

	// The model never picks its end-of-sequence token greedily
	// (make_tiny_model.py), so every answer is max_tokens long.
	greedy := client.Sampling{MaxTokens: 8, Temperature: new(0.0)}
	chat := client.ChatCompletionRequest{Model: "tiny", Sampling: greedy,
		Messages: []client.ChatMessage{{Role: "user", Content: "Hello, how are you today?"}}}
	cc, err := oa.ChatCompletion(ctx, chat)
	if err != nil {
		t.Fatalf("ChatCompletion: %v", err)
	}
	if cc.Object != "chat.completion" || cc.Model != "tiny" || len(cc.Choices) != 1 ||
		cc.Choices[0].Message.Role != "assistant" || cc.Choices[0].FinishReason != "length" ||
		cc.Usage == nil || cc.Usage.CompletionTokens != 8 || cc.Usage.PromptTokens == 0 {
		t.Errorf("ChatCompletion = %+v, want one assistant choice of 8 tokens ended by length", cc)
	}

	comp, err := oa.Completion(ctx, client.CompletionRequest{Model: "tiny", Prompt: "The quick brown fox", Sampling: greedy})
	if err != nil {
		t.Fatalf("Completion: %v", err)
	}
	// The random model's tokens may decode to nothing printable, so the
	// text is not checked.
	if comp.Object != "text_completion" || len(comp.Choices) != 1 ||
		comp.Choices[0].FinishReason != "length" || comp.Usage == nil || comp.Usage.CompletionTokens != 8 {
		t.Errorf("Completion = %+v (usage %+v), want one choice of 8 tokens ended by length", comp, comp.Usage)
	}

	streamed(ctx, t, oa, chat)
	cancelled(ctx, t, oa, chat, c.TempDir())

	// The engine refuses more tokens than the model's context: the API's
	// error body, typed.
	long := chat
	long.MaxTokens = 1000
	_, err = oa.ChatCompletion(ctx, long)
	var oe *client.OpenAIError
	if !errors.As(err, &oe) || oe.StatusCode != 400 || oe.Code != "400" || oe.Type != "OpenAIHTTPException" ||
		!strings.Contains(oe.Message, "max_tokens=1000 cannot be greater than max_model_len=max_total_tokens=512") {
		t.Errorf("max_tokens 1000: err = %#v, want an OpenAIError 400 saying max_tokens=1000 is more than max_model_len 512", err)
	} else {
		t.Logf("max_tokens 1000: %v", err)
	}
	// Serve LLM's ingress answers an unknown model with FastAPI's
	// {"detail": ...}, not the OpenAI error body: an OpenAIError 404 whose
	// message is the detail.
	_, err = oa.ChatCompletion(ctx, client.ChatCompletionRequest{Model: "no-such-model", Sampling: greedy, Messages: chat.Messages})
	if !errors.As(err, &oe) || oe.StatusCode != 404 || !errors.Is(err, client.ErrNotFound) ||
		oe.Message != `Got request for model "no-such-model". Could not find base model with ID "no-such-model".` {
		t.Errorf("unknown model: err = %#v, want an OpenAIError 404 whose message names no-such-model", err)
	}

	noFreeSlice(ctx, t, b, c.DashboardURL, model)

	if err := serve.Delete(ctx, b, "tiny"); err != nil {
		t.Errorf("Delete: %v", err)
	}
}

// streamed reads a streamed chat completion of 200 tokens and checks that
// its chunks came one at a time: several content chunks, read at times
// spread over the generation, not in one burst at its end. Serve LLM
// batches a stream's tokens every 50 ms (stream_batching_interval_ms), and
// 200 decode steps of vLLM's engine take longer than two such intervals.
func streamed(ctx context.Context, t *testing.T, oa *client.OpenAI, req client.ChatCompletionRequest) {
	t.Helper()
	req.MaxTokens = 200
	req.StreamOptions = &client.StreamOptions{IncludeUsage: true}
	s, err := oa.ChatCompletionStream(ctx, req)
	if err != nil {
		t.Fatalf("ChatCompletionStream: %v", err)
	}
	defer s.Close()
	var at []time.Time
	var text strings.Builder
	var usage *client.Usage
	finish := ""
	for s.Next() {
		ch := s.Current()
		if ch.Usage != nil {
			usage = ch.Usage
		}
		for _, c := range ch.Choices {
			if c.Delta.Content != "" {
				at = append(at, time.Now())
				text.WriteString(c.Delta.Content)
			}
			if c.FinishReason != "" {
				finish = c.FinishReason
			}
		}
	}
	if err := s.Err(); err != nil {
		t.Fatalf("stream: %v", err)
	}
	if usage == nil || usage.CompletionTokens != 200 || finish != "length" {
		t.Errorf("stream: usage %+v, finish %q; want 200 completion tokens ended by length", usage, finish)
	}
	if len(at) < 3 {
		t.Fatalf("stream: %d chunks with content (%q), want several", len(at), text.String())
	}
	// A buffered answer hands every chunk over within microseconds of
	// the first; a streamed one spreads them over the decode.
	spread := at[len(at)-1].Sub(at[0])
	distinct := 1
	for i := 1; i < len(at); i++ {
		if at[i].Sub(at[i-1]) > time.Millisecond {
			distinct++
		}
	}
	t.Logf("stream: %d content chunks over %s, %d of them more than 1ms after the one before", len(at), spread, distinct)
	if distinct < 3 || spread < 100*time.Millisecond {
		t.Errorf("stream: only %d of %d chunks came more than 1ms apart (%s in all): the answer was not streamed", distinct, len(at), spread)
	}
}

// cancelled starts a long streamed chat completion, cancels its context
// after two chunks, and checks that the stream ends with the context's
// error and that the engine aborted the request: vLLM's AsyncLLM logs
// "Request <id> aborted." when the request's generator is cancelled,
// which happens only when the client has gone.
func cancelled(ctx context.Context, t *testing.T, oa *client.OpenAI, req client.ChatCompletionRequest, logs string) {
	t.Helper()
	req.MaxTokens = 480
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	s, err := oa.ChatCompletionStream(sctx, req)
	if err != nil {
		t.Fatalf("ChatCompletionStream: %v", err)
	}
	defer s.Close()
	id := ""
	for n := 0; n < 2 && s.Next(); n++ {
		id = s.Current().ID
	}
	if id == "" {
		t.Fatalf("cancelled stream: no chunk before the cancel: %v", s.Err())
	}
	stop()
	if s.Next() {
		// Chunks already read into the buffer may still come; the stream
		// must end soon after.
		for s.Next() {
		}
	}
	if err := s.Err(); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled stream: Err = %v, want context.Canceled", err)
	}
	want := "Request " + id + " aborted."
	deadline := time.Now().Add(2 * time.Minute)
	for {
		file, line := findLog(logs, want)
		if file != "" {
			t.Logf("cancelled stream %s: %s: %s", id, file, line)
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("cancelled stream: no %q in the cluster's logs under %s after 2m", want, logs)
			return
		}
		time.Sleep(time.Second)
	}
}

// findLog returns the first log file under dir with a line containing s,
// and that line.
func findLog(dir, s string) (file, line string) {
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || file != "" || !strings.Contains(path, "logs") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		for l := range strings.Lines(string(b)) {
			if strings.Contains(l, s) {
				file, line = path, strings.TrimSpace(l)
				return fs.SkipAll
			}
		}
		return nil
	})
	return file, line
}

func stderrOf(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(ee.Stderr)
	}
	return ""
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}
