// Package servecheck holds the rules packages serve and serve/llm share
// that are no part of their API: a runtime_env's URIs, the slice replica
// limits, the characters a name or id may hold, and serve's deployment
// options check, which serve/llm applies to its deployment_config.
package servecheck

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/runtimeenv"
	"github.com/raytpu/raytpu/serve/internal/freeform"
)

// DeploymentOptions checks a *serve.Deployment's options at p (Ray's
// DeploymentSchema rules, without its accelerator config); package serve
// sets it when it loads, so that serve/llm checks its deployment_config
// with the very same rules.
var DeploymentOptions func(d any, p *field.Path) field.ErrorList

// uriProtocols are the schemes Ray's parse_uri accepts in runtime_env
// (ray/_private/runtime_env/protocol.py).
var uriProtocols = []string{"abfss", "azure", "conda", "file", "gcs", "gs", "http", "https", "local", "pip", "s3", "uv"}

// RuntimeEnv checks a Serve runtime_env at p: runtimeenv's own rules, its
// free-form keys as any free-form value, and Ray's rule that working_dir
// and py_modules are URIs. A plain path is a local directory, which a
// backend uploads (to gcs://) before the config reaches Ray; anything with
// a scheme must be one Ray knows.
func RuntimeEnv(p *field.Path, env *runtimeenv.RuntimeEnv) field.ErrorList {
	if env == nil {
		return nil
	}
	errs := env.Validate(p)
	// runtimeenv spells its paths in Go (envVars, extra[conda]); a Serve
	// config spells them as Ray's runtime_env does (env_vars, conda).
	at := p.String()
	for i, e := range errs {
		if rest, ok := strings.CutPrefix(e.Field, at+".envVars"); ok {
			c := *e
			c.Field = at + ".env_vars" + rest
			errs[i] = &c
		} else if rest, ok := strings.CutPrefix(e.Field, at+".extra["); ok {
			if k, after, ok := strings.Cut(rest, "]"); ok {
				c := *e
				c.Field = at + "." + k + after
				errs[i] = &c
			}
		}
	}
	check := func(fp *field.Path, uri string) {
		if why := Text(uri); why != "" {
			errs = append(errs, field.Invalid(fp, uri, why))
			return
		}
		scheme, rest, ok := strings.Cut(uri, "://")
		if !ok {
			return // a local directory, uploaded by the backend
		}
		if !slices.Contains(uriProtocols, strings.ToLower(scheme)) {
			errs = append(errs, field.NotSupported(fp, uri, uriProtocols).
				WithDetail(fmt.Sprintf("unknown URI scheme %q", scheme)))
			return
		}
		if strings.EqualFold(scheme, "local") && !strings.HasPrefix(rest, "/") {
			errs = append(errs, field.Invalid(fp, uri, "a local:// URI names an absolute directory present on every node: local:///path/in/image"))
		}
	}
	if env.WorkingDir != "" {
		check(p.Child("working_dir"), env.WorkingDir)
	}
	for i, m := range env.PyModules {
		check(p.Child("py_modules").Index(i), m)
	}
	for _, k := range slices.Sorted(maps.Keys(env.Extra)) {
		errs = append(errs, freeform.Check(p.Child(k), env.Extra[k])...)
	}
	return errs
}

// SliceReplicaLimit reports n replicas that each own a slice of perSlice
// bundles past the limits, after before such replicas of the deployments
// above in the same application: MaxSliceReplicas over the application,
// MaxBundles over the deployment's slices. The error is at at(), the
// field that set n; at is called only for an error. nil: within limits.
func SliceReplicaLimit(at func() *field.Path, n, before, perSlice int) *field.Error {
	switch {
	case before+n > placement.MaxSliceReplicas:
		src := placement.SourceSliceReplicas
		if before > 0 {
			src = fmt.Sprintf("%s; the deployments above hold %d", src, before)
		}
		return field.TooMany(at(), n, placement.MaxSliceReplicas-before, src)
	case perSlice > 0 && n*perSlice > placement.MaxBundles:
		return field.TooMany(at(), n, placement.MaxBundles/perSlice, fmt.Sprintf(
			"%d replicas of %d hosts are %d bundles; %s, at most %d", n, perSlice, n*perSlice, placement.SourceBundles, placement.MaxBundles))
	}
	return nil
}

// Text is why a string a user gives (a URI, a class path) cannot be sent
// as it is: it holds a control character (NUL, ESC, BEL, a newline),
// which would reach a terminal or a log raw. "" when it is fine.
func Text(s string) string {
	for _, r := range s {
		if unicode.IsControl(r) {
			return fmt.Sprintf("holds the control character %q: names, ids and paths are printable text", r)
		}
	}
	return ""
}

// Name is why a name or id a user gives (an application or deployment
// name, a model id) cannot be used: a control character, or a path
// segment "." or ".." (as in "a/../b"), which would climb out of the
// directory or URL route it names. "" when it is fine.
func Name(s string) string {
	if why := Text(s); why != "" {
		return why
	}
	for seg := range strings.FieldsFuncSeq(s, func(r rune) bool { return r == '/' || r == '\\' }) {
		if seg == ".." || seg == "." {
			return fmt.Sprintf("holds the path segment %q: a name or id may not climb directories (no \"/../\")", seg)
		}
	}
	return ""
}

// Route is why a route prefix cannot be used: a control character, or a
// "." or ".." segment. "" when it is fine.
func Route(s string) string { return Name(s) }
