// Package runtimeenv is Ray's runtime_env, the one type every part of
// raytpu uses for it: front ends set it on a spec, the compiled plan
// carries it, and backends package its local directories and send it.
//
// It marshals to the JSON object Ray's Python client sends, keys sorted, so
// a plan that holds one stays byte-identical from run to run.
//
// runtimeenv imports only field.
package runtimeenv

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/raytpu/raytpu/field"
)

// RuntimeEnv is a Ray runtime_env. The common fields are typed; Extra
// carries any other key (conda, uv, container, image_uri, ...) verbatim.
// It marshals to the same JSON object Ray's Python client sends.
type RuntimeEnv struct {
	// WorkingDir is a package URI (gcs://_ray_pkg_<hash>.zip, https://...)
	// or, before a backend packages it, a local directory.
	WorkingDir string
	// PyModules are package URIs or, before a backend packages them, local
	// directories.
	PyModules []string
	// Pip lists pip requirements.
	Pip []string
	// EnvVars are environment variables for the job's processes.
	EnvVars map[string]string
	// Excludes are gitignore-style patterns left out of local WorkingDir
	// and PyModules uploads.
	Excludes []string
	// Config is runtime_env's "config" field.
	Config *Config
	// Extra holds every other key, and a typed key whose value has another
	// shape (such as pip as a dict) when the typed field is empty.
	Extra map[string]any
}

// Config is runtime_env["config"].
type Config struct {
	SetupTimeoutSeconds int   `json:"setup_timeout_seconds,omitempty"`
	EagerInstall        *bool `json:"eager_install,omitempty"`
}

// IsEmpty reports whether e sets nothing: it marshals to {}. A nil env
// sets nothing: true.
func (e *RuntimeEnv) IsEmpty() bool {
	if e == nil {
		return true
	}
	return e.WorkingDir == "" && len(e.PyModules) == 0 && len(e.Pip) == 0 && len(e.EnvVars) == 0 &&
		len(e.Excludes) == 0 && e.Config == nil && len(e.Extra) == 0
}

// Clone returns a deep copy (Extra values are copied one level deep).
func (e *RuntimeEnv) Clone() *RuntimeEnv {
	if e == nil {
		return nil
	}
	c := *e
	c.PyModules = slices.Clone(e.PyModules)
	c.Pip = slices.Clone(e.Pip)
	c.EnvVars = maps.Clone(e.EnvVars)
	c.Excludes = slices.Clone(e.Excludes)
	c.Extra = maps.Clone(e.Extra)
	if e.Config != nil {
		cfg := *e.Config
		c.Config = &cfg
	}
	return &c
}

// MarshalJSON writes the object with keys in a stable order.
func (e RuntimeEnv) MarshalJSON() ([]byte, error) {
	m := map[string]any{}
	if e.WorkingDir != "" {
		m["working_dir"] = e.WorkingDir
	}
	if len(e.PyModules) > 0 {
		m["py_modules"] = e.PyModules
	}
	if len(e.Pip) > 0 {
		m["pip"] = e.Pip
	}
	if len(e.EnvVars) > 0 {
		m["env_vars"] = e.EnvVars
	}
	if len(e.Excludes) > 0 {
		m["excludes"] = e.Excludes
	}
	if e.Config != nil {
		m["config"] = e.Config
	}
	for k, v := range e.Extra {
		if _, dup := m[k]; dup {
			return nil, fmt.Errorf("runtimeenv: RuntimeEnv.Extra[%q] duplicates a typed field that is set", k)
		}
		m[k] = v
	}
	// encoding/json sorts map keys, so the output is stable.
	return json.Marshal(m)
}

// UnmarshalJSON reads typed fields where their JSON fits and keeps every
// other key (or a typed key whose value has another shape, such as a pip
// dict) in Extra.
func (e *RuntimeEnv) UnmarshalJSON(b []byte) error {
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		return nil
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*e = RuntimeEnv{}
	put := func(k string, v json.RawMessage) error {
		var x any
		if err := json.Unmarshal(v, &x); err != nil {
			return err
		}
		if e.Extra == nil {
			e.Extra = map[string]any{}
		}
		e.Extra[k] = x
		return nil
	}
	for k, v := range raw {
		var err error
		switch k {
		case "working_dir":
			err = json.Unmarshal(v, &e.WorkingDir)
		case "py_modules":
			err = json.Unmarshal(v, &e.PyModules)
		case "pip":
			err = json.Unmarshal(v, &e.Pip)
		case "env_vars":
			err = json.Unmarshal(v, &e.EnvVars)
		case "excludes":
			err = json.Unmarshal(v, &e.Excludes)
		case "config":
			err = json.Unmarshal(v, &e.Config)
		default:
			if err := put(k, v); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			// A shape the typed field cannot hold: keep it verbatim.
			switch k {
			case "working_dir":
				e.WorkingDir = ""
			case "py_modules":
				e.PyModules = nil
			case "pip":
				e.Pip = nil
			case "env_vars":
				e.EnvVars = nil
			case "excludes":
				e.Excludes = nil
			case "config":
				e.Config = nil
			}
			if perr := put(k, v); perr != nil {
				return perr
			}
		}
	}
	return nil
}

// Validate reports the problems of e under path p: environment variable
// names Ray cannot set, and Extra keys that repeat a typed field that is set.
// A nil env is no runtime env, which is valid: nil.
func (e *RuntimeEnv) Validate(p *field.Path) field.ErrorList {
	if e == nil {
		return nil
	}
	var errs field.ErrorList
	// Keys are sorted only when one is bad, so that a valid env costs no
	// allocation.
	if anyKey(e.EnvVars, badEnvName) {
		for _, k := range slices.Sorted(maps.Keys(e.EnvVars)) {
			if badEnvName(k) {
				errs = append(errs, field.Invalid(p.Child("envVars").Key(k), k, "not a valid environment variable name"))
			}
		}
	}
	if anyKey(e.Extra, e.typedSet) {
		for _, k := range slices.Sorted(maps.Keys(e.Extra)) {
			if e.typedSet(k) {
				errs = append(errs, field.Forbidden(p.Child("extra").Key(k), "repeats the typed field that is set; set one of the two"))
			}
		}
	}
	return errs
}

func badEnvName(k string) bool { return k == "" || strings.ContainsAny(k, "=\x00") }

func anyKey[V any](m map[string]V, bad func(string) bool) bool {
	for k := range m {
		if bad(k) {
			return true
		}
	}
	return false
}

// typedSet reports whether the typed field behind JSON key k is set.
func (e *RuntimeEnv) typedSet(k string) bool {
	switch k {
	case "working_dir":
		return e.WorkingDir != ""
	case "py_modules":
		return len(e.PyModules) > 0
	case "pip":
		return len(e.Pip) > 0
	case "env_vars":
		return len(e.EnvVars) > 0
	case "excludes":
		return len(e.Excludes) > 0
	case "config":
		return e.Config != nil
	}
	return false
}
