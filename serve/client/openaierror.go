package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
)

// OpenAIError is an error the OpenAI API answered with, as its body
// {"error": {"message", "type", "param", "code"}} says, or as FastAPI's
// {"detail": "..."} does (Message only), which Ray Serve LLM 2.60's
// ingress answers for a model it does not serve (404). It wraps the
// [*HTTPError] of the answer (nil for an error event inside a stream,
// whose HTTP status was 200), so errors.Is maps it onto the package's
// sentinels: a model that does not exist is ErrNotFound.
type OpenAIError struct {
	// Message, Type, Param and Code are the API's error fields (Code as
	// text, whether the server sent a number or a string).
	Message, Type, Param, Code string
	// StatusCode is the HTTP status, or for an error event the status its
	// code names (0 when it names none).
	StatusCode int
	// HTTP is the answer's error; nil for an error event in a stream.
	HTTP *HTTPError
}

func (e *OpenAIError) Error() string {
	if e == nil {
		return "serve client: <nil OpenAIError>"
	}
	msg := "serve client: OpenAI API error"
	if e.HTTP != nil {
		msg = fmt.Sprintf("serve client: %s %s: %d %s", e.HTTP.Method, e.HTTP.URL, e.StatusCode, http.StatusText(e.StatusCode))
	}
	if e.Type != "" {
		msg += ": " + e.Type
	}
	msg += ": " + e.Message
	if e.HTTP != nil && e.HTTP.RequestID != "" {
		msg += " (request_id " + e.HTTP.RequestID + ")"
	}
	return msg
}

// Unwrap returns the answer's [*HTTPError], if any.
func (e *OpenAIError) Unwrap() error {
	if e == nil || e.HTTP == nil {
		return nil
	}
	return e.HTTP
}

// Is maps an error event's status onto the sentinels as an HTTPError's.
func (e *OpenAIError) Is(target error) bool {
	return e != nil && e.HTTP == nil && (&HTTPError{StatusCode: e.StatusCode}).Is(target)
}

// apiBody is the OpenAI API's error body, or FastAPI's HTTPException
// body (detail).
type apiBody struct {
	Error *struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Param   json.RawMessage `json:"param"`
		Code    json.RawMessage `json:"code"`
	} `json:"error"`
	Detail *string `json:"detail"`
}

// apiError turns an HTTPError whose body is the API's error into an
// OpenAIError; any other error is returned as it is.
func apiError(err error) error {
	var he *HTTPError
	if !errors.As(err, &he) {
		return err
	}
	if e := parseAPIError([]byte(he.Body)); e != nil {
		e.HTTP, e.StatusCode = he, he.StatusCode
		return e
	}
	var body apiBody
	if json.Unmarshal([]byte(he.Body), &body) == nil && body.Detail != nil {
		return &OpenAIError{Message: *body.Detail, HTTP: he, StatusCode: he.StatusCode}
	}
	return err
}

// eventError is the OpenAIError an event's data holds, or nil.
func eventError(data []byte) *OpenAIError {
	if !bytes.Contains(data, []byte(`"error"`)) {
		return nil
	}
	e := parseAPIError(data)
	if e != nil {
		e.StatusCode, _ = strconv.Atoi(e.Code)
		if http.StatusText(e.StatusCode) == "" {
			e.StatusCode = 0
		}
	}
	return e
}

func parseAPIError(b []byte) *OpenAIError {
	var body apiBody
	if json.Unmarshal(b, &body) != nil || body.Error == nil {
		return nil
	}
	return &OpenAIError{Message: body.Error.Message, Type: body.Error.Type,
		Param: jsonText(body.Error.Param), Code: jsonText(body.Error.Code)}
}

// jsonText is a JSON string's text, another value's JSON, or "" for null.
func jsonText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	return string(raw)
}
