package client

import (
	"context"
	"errors"
	"net/http"
	"strings"
)

// OpenAI calls the OpenAI-compatible API of a Ray Serve LLM application
// (build_openai_app): chat completions, completions, each whole or
// streamed over server-sent events, and the model list. It is safe for
// concurrent use.
type OpenAI struct {
	h      *HTTP
	prefix string
}

// NewOpenAI returns a client of the OpenAI API served under baseURL: the
// Serve proxy's URL with the application's route prefix, e.g.
// http://127.0.0.1:8000 for route prefix "/" (the API is then at
// http://127.0.0.1:8000/v1/...). It takes the HTTP client's options; a key
// for a gateway in front of Serve goes in WithHeader("Authorization",
// "Bearer ..."), as Serve itself checks none.
func NewOpenAI(baseURL string, opts ...HTTPOption) (*OpenAI, error) {
	h, err := NewHTTP(baseURL, opts...)
	if err != nil {
		return nil, errors.New(strings.Replace(err.Error(), "NewHTTP", "NewOpenAI", 1))
	}
	return &OpenAI{h: h, prefix: "/v1"}, nil
}

// usable says why c cannot make a call with ctx, or nil.
func (c *OpenAI) usable(ctx context.Context) error {
	if c == nil || c.h == nil {
		return errNilOpenAI
	}
	return c.h.usable(ctx)
}

// ChatCompletion asks for one chat completion. A failed call is an
// [*OpenAIError] when the server answered with an error.
func (c *OpenAI) ChatCompletion(ctx context.Context, req ChatCompletionRequest) (*ChatCompletion, error) {
	if err := c.usable(ctx); err != nil {
		return nil, err
	}
	req.Stream, req.StreamOptions = false, nil
	var out ChatCompletion
	if err := c.h.Do(ctx, http.MethodPost, c.prefix+"/chat/completions", req, &out); err != nil {
		return nil, apiError(err)
	}
	return &out, nil
}

// ChatCompletionStream asks for a chat completion streamed as chunks: see
// [Stream]. The stream must be closed.
func (c *OpenAI) ChatCompletionStream(ctx context.Context, req ChatCompletionRequest) (*Stream[ChatCompletionChunk], error) {
	if err := c.usable(ctx); err != nil {
		return nil, err
	}
	req.Stream = true
	return openStream[ChatCompletionChunk](ctx, c.h, c.prefix+"/chat/completions", req)
}

// Completion asks for one text completion of a prompt.
func (c *OpenAI) Completion(ctx context.Context, req CompletionRequest) (*Completion, error) {
	if err := c.usable(ctx); err != nil {
		return nil, err
	}
	req.Stream, req.StreamOptions = false, nil
	var out Completion
	if err := c.h.Do(ctx, http.MethodPost, c.prefix+"/completions", req, &out); err != nil {
		return nil, apiError(err)
	}
	return &out, nil
}

// CompletionStream asks for a text completion streamed as chunks (each a
// Completion holding the new text). The stream must be closed.
func (c *OpenAI) CompletionStream(ctx context.Context, req CompletionRequest) (*Stream[Completion], error) {
	if err := c.usable(ctx); err != nil {
		return nil, err
	}
	req.Stream = true
	return openStream[Completion](ctx, c.h, c.prefix+"/completions", req)
}

// Models lists the models the application serves (GET /v1/models).
func (c *OpenAI) Models(ctx context.Context) ([]Model, error) {
	if err := c.usable(ctx); err != nil {
		return nil, err
	}
	var out struct {
		Data []Model `json:"data"`
	}
	if err := c.h.Get(ctx, c.prefix+"/models", &out); err != nil {
		return nil, apiError(err)
	}
	return out.Data, nil
}

// ChatMessage is one message of a chat.
type ChatMessage struct {
	// Role: "system", "user" or "assistant".
	Role    string `json:"role"`
	Content string `json:"content"`
	// Name of the participant. Optional.
	Name string `json:"name,omitempty"`
}

// Sampling holds the sampling options chat completions and completions
// share. Unset options are not sent: the server's defaults apply.
type Sampling struct {
	MaxTokens   int      `json:"max_tokens,omitempty"`
	Temperature *float64 `json:"temperature,omitempty"`
	TopP        *float64 `json:"top_p,omitempty"`
	// N is the number of choices. Optional. Default: 1.
	N    int      `json:"n,omitempty"`
	Stop []string `json:"stop,omitempty"`
	Seed *int     `json:"seed,omitempty"`
	User string   `json:"user,omitempty"`
}

// StreamOptions are a streamed request's options.
type StreamOptions struct {
	// IncludeUsage adds a last chunk holding the token usage.
	IncludeUsage bool `json:"include_usage"`
}

// ChatCompletionRequest is the body of POST /v1/chat/completions.
type ChatCompletionRequest struct {
	// Model is the model ID (an LLMConfig's model_id). Required.
	Model    string        `json:"model"`
	Messages []ChatMessage `json:"messages"`
	Sampling
	// Stream is set by the method called.
	Stream bool `json:"stream,omitempty"`
	// StreamOptions apply to ChatCompletionStream only.
	StreamOptions *StreamOptions `json:"stream_options,omitempty"`
}

// CompletionRequest is the body of POST /v1/completions.
type CompletionRequest struct {
	// Model is the model ID. Required.
	Model  string `json:"model"`
	Prompt string `json:"prompt"`
	// Echo returns the prompt before the completion.
	Echo bool `json:"echo,omitempty"`
	Sampling
	// Stream is set by the method called.
	Stream bool `json:"stream,omitempty"`
	// StreamOptions apply to CompletionStream only.
	StreamOptions *StreamOptions `json:"stream_options,omitempty"`
}

// Usage counts a request's tokens.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// Response is what every answer and chunk starts with.
type Response struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	Model   string `json:"model"`
	// Usage counts the tokens; in a stream it is set on the last chunk
	// with StreamOptions.IncludeUsage.
	Usage *Usage `json:"usage,omitempty"`
}

// ChatCompletion is the answer of a chat completion.
type ChatCompletion struct {
	Response
	Choices []ChatChoice `json:"choices"`
}

// ChatChoice is one choice of a chat completion.
type ChatChoice struct {
	Index   int         `json:"index"`
	Message ChatMessage `json:"message"`
	// FinishReason: "stop", "length", ...
	FinishReason string `json:"finish_reason"`
}

// ChatCompletionChunk is one chunk of a streamed chat completion.
type ChatCompletionChunk struct {
	Response
	Choices []ChatChunkChoice `json:"choices"`
}

// ChatChunkChoice is one choice's part of a chunk.
type ChatChunkChoice struct {
	Index int         `json:"index"`
	Delta ChatMessage `json:"delta"`
	// FinishReason is "" until the choice's last chunk.
	FinishReason string `json:"finish_reason"`
}

// Completion is the answer of a completion, or one chunk of a streamed one.
type Completion struct {
	Response
	Choices []CompletionChoice `json:"choices"`
}

// CompletionChoice is one choice of a completion.
type CompletionChoice struct {
	Index        int    `json:"index"`
	Text         string `json:"text"`
	FinishReason string `json:"finish_reason"`
}

// Model is one entry of the model list.
type Model struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}
