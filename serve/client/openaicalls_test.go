package client_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/serve/client"
)

// openAIServer is an OpenAI API as Ray Serve LLM's ingress answers it,
// with the application under /llm. It records each request's body.
func openAIServer(t *testing.T, bodies map[string]map[string]any) (*client.OpenAI, string) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		if r.Body != nil {
			b, _ := io.ReadAll(r.Body)
			json.Unmarshal(b, &body)
		}
		bodies[r.Method+" "+r.URL.Path] = body
		w.Header().Set("Content-Type", "application/json")
		switch r.Method + " " + r.URL.Path {
		case "GET /llm/v1/models":
			io.WriteString(w, `{"object":"list","data":[{"id":"m","object":"model","created":1,"owned_by":"organization-owner"},{"id":"n","object":"model","created":2,"owned_by":"organization-owner"}]}`)
		case "POST /llm/v1/chat/completions":
			if body["model"] == "ghost" {
				// Serve LLM's ingress answers a model it does not serve
				// with FastAPI's HTTPException body.
				w.WriteHeader(http.StatusNotFound)
				io.WriteString(w, `{"detail":"Got request for model \"ghost\". Could not find base model with ID \"ghost\"."}`)
				return
			}
			if body["model"] != "m" {
				w.Header().Set("X-Request-Id", "rid-7")
				w.WriteHeader(http.StatusNotFound)
				io.WriteString(w, `{"error":{"message":"The model `+"`x`"+` does not exist.","type":"NotFoundError","param":null,"code":404}}`)
				return
			}
			io.WriteString(w, `{"id":"c1","object":"chat.completion","created":3,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Hello"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
		case "POST /llm/v1/completions":
			if body["max_tokens"] == nil {
				w.WriteHeader(http.StatusBadRequest)
				io.WriteString(w, `{"error":{"message":"max_tokens required","type":"BadRequestError","param":"max_tokens","code":"bad_request"}}`)
				return
			}
			io.WriteString(w, `{"id":"t1","object":"text_completion","created":4,"model":"m","choices":[{"index":0,"text":" world","finish_reason":"length"}]}`)
		default:
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, "Path '"+r.URL.Path+"' not found.")
		}
	}))
	t.Cleanup(srv.Close)
	c, err := client.NewOpenAI(srv.URL + "/llm")
	if err != nil {
		t.Fatal(err)
	}
	return c, srv.URL
}

func TestOpenAICalls(t *testing.T) {
	t.Parallel()
	bodies := map[string]map[string]any{}
	c, _ := openAIServer(t, bodies)
	ctx := t.Context()

	models, err := c.Models(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]client.Model{{ID: "m", Object: "model", Created: 1, OwnedBy: "organization-owner"},
		{ID: "n", Object: "model", Created: 2, OwnedBy: "organization-owner"}}, models); diff != "" {
		t.Errorf("models (-want +got):\n%s", diff)
	}

	temp := 0.0
	req := chatReq
	req.Sampling = client.Sampling{MaxTokens: 8, Temperature: &temp}
	req.Stream = true // the method decides, not the field
	got, err := c.ChatCompletion(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if got.Choices[0].Message.Content != "Hello" || got.Choices[0].FinishReason != "stop" || got.Usage.TotalTokens != 2 {
		t.Errorf("chat completion %+v", got)
	}
	want := map[string]any{"model": "m", "messages": []any{map[string]any{"role": "user", "content": "hi"}}, "max_tokens": 8.0, "temperature": 0.0}
	if diff := cmp.Diff(want, bodies["POST /llm/v1/chat/completions"]); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}

	comp, err := c.Completion(ctx, client.CompletionRequest{Model: "m", Prompt: "Hello", Sampling: client.Sampling{MaxTokens: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if comp.Choices[0].Text != " world" || comp.Object != "text_completion" {
		t.Errorf("completion %+v", comp)
	}
}

// The API's error body comes back typed, and maps onto the sentinels.
func TestOpenAIErrors(t *testing.T) {
	t.Parallel()
	c, base := openAIServer(t, map[string]map[string]any{})
	ctx := t.Context()

	_, err := c.ChatCompletion(ctx, client.ChatCompletionRequest{Model: "x"})
	var oe *client.OpenAIError
	if !errors.As(err, &oe) {
		t.Fatalf("err = %v, want an *OpenAIError", err)
	}
	if oe.Message != "The model `x` does not exist." || oe.Type != "NotFoundError" || oe.Code != "404" || oe.Param != "" ||
		oe.StatusCode != http.StatusNotFound || oe.HTTP == nil || oe.HTTP.RequestID != "rid-7" {
		t.Errorf("error %+v", oe)
	}
	if !errors.Is(err, client.ErrNotFound) || errors.Is(err, client.ErrUnavailable) {
		t.Errorf("errors.Is(%v, ErrNotFound) = false", err)
	}
	if !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("message %q does not say what the server said", err)
	}

	_, err = c.Completion(ctx, client.CompletionRequest{Model: "m", Prompt: "p"})
	if !errors.As(err, &oe) || oe.Code != "bad_request" || oe.Param != "max_tokens" || oe.StatusCode != http.StatusBadRequest {
		t.Errorf("err = %#v, want the 400's OpenAIError", err)
	}

	// FastAPI's {"detail": ...}, as Serve LLM answers an unknown model.
	_, err = c.ChatCompletion(ctx, client.ChatCompletionRequest{Model: "ghost"})
	if !errors.As(err, &oe) || oe.Message != `Got request for model "ghost". Could not find base model with ID "ghost".` ||
		oe.Type != "" || oe.Code != "" || oe.StatusCode != http.StatusNotFound || oe.HTTP == nil || !errors.Is(err, client.ErrNotFound) {
		t.Errorf("err = %#v, want the 404's OpenAIError with the detail as its message", err)
	}

	// An error before a stream starts is the same OpenAIError.
	_, err = c.CompletionStream(ctx, client.CompletionRequest{Model: "m", Prompt: "p"})
	if !errors.As(err, &oe) || oe.Code != "bad_request" {
		t.Errorf("err = %#v, want the 400's OpenAIError", err)
	}

	// A body that is not the API's error (no application at the route)
	// stays an HTTPError.
	other, err := client.NewOpenAI(base + "/elsewhere")
	if err != nil {
		t.Fatal(err)
	}
	_, err = other.Models(ctx)
	var he *client.HTTPError
	if errors.As(err, &oe) || !errors.As(err, &he) || he.StatusCode != http.StatusNotFound || !errors.Is(err, client.ErrNotFound) {
		t.Errorf("err = %#v, want a 404 HTTPError", err)
	}
}

func TestNewOpenAIValidates(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"127.0.0.1:8000", "ftp://h:1", "http://h:1/?a=b"} {
		if _, err := client.NewOpenAI(u); err == nil || !strings.Contains(err.Error(), "NewOpenAI") {
			t.Errorf("NewOpenAI(%q) = %v, want an error naming NewOpenAI", u, err)
		}
	}
}
