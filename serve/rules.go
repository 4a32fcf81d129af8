package serve

import (
	"math"
	"strings"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/serve/internal/servecheck"
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

// importPathRule is Ray's ServeApplicationSchema.import_path_format_valid,
// and no control character.
func importPathRule(v string) string {
	if why := servecheck.Text(v); why != "" {
		return why
	}
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

// routePrefixRule is Ray's validate_route_prefix, and no control
// character or "/../".
func routePrefixRule(v string) string {
	if why := servecheck.Route(v); why != "" {
		return why
	}
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
