package serveconfig

import (
	"bytes"
	"encoding/json"
	"slices"
)

// marshal encodes v compactly without HTML escaping, as Ray is sent any
// part of a Serve config: the bytes encoding/json's Encoder writes with
// SetEscapeHTML(false), without its trailing newline. An [Application], a
// [Deployment] and a map[string]any take the hand-written encoder.
func marshal(v any) ([]byte, error) {
	switch v := v.(type) {
	case Application:
		return v.MarshalJSON()
	case *Application:
		return v.MarshalJSON()
	case map[string]any:
		e := jsonEnc{}
		e.any(v)
		return e.b, e.err
	}
	return marshalReflect(v)
}

// marshalReflect is Marshal through encoding/json.
func marshalReflect(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return slices.Clip(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), nil
}
