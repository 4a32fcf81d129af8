package serve

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/runtimeenv"
)

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// positiveRule checks an optional float whose zero value means "Ray's
// default": a set value must be a finite number above 0.
func positiveRule(v float64) string {
	if v != 0 && (v < 0 || !finite(v)) {
		return "must be a number greater than 0"
	}
	return ""
}

// nonNegativeRule checks an optional float where 0 is a valid setting.
func nonNegativeRule(v *float64) string {
	if v != nil && (*v < 0 || !finite(*v)) {
		return "must be a number, 0 or more"
	}
	return ""
}

// ruleAt appends the error of a failed rule at p.Child(name); the path is
// built, and v boxed, only then, so that a valid spec allocates nothing.
func ruleAt[T any](errs field.ErrorList, p *field.Path, name string, v T, why string) field.ErrorList {
	if why == "" {
		return errs
	}
	return append(errs, field.Invalid(p.Child(name), v, why))
}

// uriProtocols are the schemes Ray's parse_uri accepts in runtime_env
// (ray/_private/runtime_env/protocol.py).
var uriProtocols = []string{"abfss", "azure", "conda", "file", "gcs", "gs", "http", "https", "local", "pip", "s3", "uv"}

// ValidateRuntimeEnv checks a Serve runtime_env at p: runtimeenv's own
// rules, and Ray's rule that working_dir and py_modules are URIs. A plain
// path is a local directory, which a backend uploads (to gcs://) before the
// config reaches Ray; anything with a scheme must be one Ray knows.
func ValidateRuntimeEnv(p *field.Path, env *runtimeenv.RuntimeEnv) field.ErrorList {
	errs := env.Validate(p)
	check := func(fp *field.Path, uri string) {
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
		check(p.Child("workingDir"), env.WorkingDir)
	}
	for i, m := range env.PyModules {
		check(p.Child("pyModules").Index(i), m)
	}
	return errs
}

// importPathRule is Ray's ServeApplicationSchema.import_path_format_valid.
func importPathRule(v string) string {
	if strings.Contains(v, ":") {
		switch {
		case strings.Count(v, ":") > 1:
			return "an import path may have at most one colon"
		case strings.HasPrefix(v, ":") || strings.HasSuffix(v, ":"):
			return "an import path may not start or end with a colon"
		}
		return ""
	}
	switch {
	case !strings.Contains(v, "."):
		return `an import path must contain at least one dot or colon separating the module from the application, e.g. "module:app" or "module.app"`
	case strings.HasPrefix(v, ".") || strings.HasSuffix(v, "."):
		return "an import path may not start or end with a dot"
	}
	return ""
}

// routePrefixRule is Ray's validate_route_prefix.
func routePrefixRule(v string) string {
	switch {
	case !strings.HasPrefix(v, "/"):
		return `must start with "/"`
	case v != "/" && strings.HasSuffix(v, "/"):
		return `may not end with "/" unless it is just "/"`
	case strings.ContainsAny(v, "{}"):
		return `may not contain wildcards ("{" or "}")`
	}
	return ""
}
