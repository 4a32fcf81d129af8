package cli

import (
	"bytes"
	"encoding/json"
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/raytpu/raytpu/serve"
)

// readApplication reads a Serve application file: YAML (or JSON) with the
// field names of serve.Application's JSON form. A key the application does
// not have is an error naming it, never dropped.
func readApplication(path string) (serve.Application, error) {
	var app serve.Application
	raw, err := readFile(path)
	if err != nil {
		return app, err
	}
	var doc any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return app, fmt.Errorf("%s: %w", path, err)
	}
	js, err := json.Marshal(doc)
	if err != nil {
		return app, fmt.Errorf("%s: %w", path, err)
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&app); err != nil {
		return app, fmt.Errorf("%s: not a Serve application: %w", path, err)
	}
	return app, nil
}
