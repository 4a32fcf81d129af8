package field

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/go-playground/validator/v10"
)

// Declarative rules: the public spec structs of raytpu state their simple
// constraints (required, ranges, one-of) as github.com/go-playground/validator
// `validate` struct tags, and ValidateStruct turns every violation into an
// *Error of this package, so that a rule written as a tag reports exactly
// like one written in code: one error per field, with the field's path, a
// Type, the bad value, and for one-of rules the valid values and the
// nearest one.
//
// Rules that need the TPU catalog or several fields at once stay in code.
//
// Tags map onto types as follows:
//
//	required, notblank                    TypeRequired
//	oneof=a b c                           TypeNotSupported (ValidValues a, b, c; Suggestion)
//	gte, gt, lte, lt, min, max, eq, ne    TypeInvalid ("must be at least 0", ...)
//	excludesall=chars                     TypeInvalid
//	anything else                         TypeInvalid
//
// notblank is raytpu's addition: a string that is not empty after trimming
// space. An optional `detail:"..."` tag on the field replaces the generated
// explanation, and `detail-<rule>:"..."` does for one rule.
//
// Field names in paths are the field's json tag name when it has one, else
// its Go name with the first word lowered (NumToKeep: numToKeep, UseGPU:
// useGPU, TPUResourcePerChip: tpuResourcePerChip).

// Locator returns the path of a validated struct's top-level field, given
// the field's name as described above. It lets a caller report a shared
// struct's fields under its own names: placement's "strategy" as train's
// "placementStrategy".
type Locator func(name string) *Path

// Under is the Locator that puts every field below p (nil: at the root).
func Under(p *Path) Locator {
	return func(name string) *Path {
		if p == nil {
			return NewPath(name)
		}
		return p.Child(name)
	}
}

// ValidateStruct checks the `validate` tags of v, a pointer to a struct, and
// returns every violation, each at its field's path below root.
func ValidateStruct(root *Path, v any) ErrorList {
	return ValidateStructAt(v, Under(root))
}

// ValidateStructAt is ValidateStruct with the path of each top-level field
// given by at, for a struct whose fields the caller names differently.
// Map entries come in key order.
func ValidateStructAt(v any, at Locator) ErrorList {
	err := structValidator().Struct(v)
	if err == nil {
		return nil
	}
	verrs, ok := err.(validator.ValidationErrors)
	if !ok {
		// Only a nil or non-struct argument gets here: a programming error.
		return ErrorList{Invalid(at(""), fmt.Sprintf("%T", v), err.Error())}
	}
	root := reflect.TypeOf(v)
	out := make(ErrorList, 0, len(verrs))
	for _, fe := range verrs {
		out = append(out, convert(fe, root, at))
	}
	sortMapRuns(out, verrs)
	return out
}

var structValidator = sync.OnceValue(func() *validator.Validate {
	v := validator.New(validator.WithRequiredStructEnabled())
	v.RegisterTagNameFunc(fieldName)
	if err := v.RegisterValidation("notblank", func(fl validator.FieldLevel) bool {
		f := fl.Field()
		return f.Kind() != reflect.String || strings.TrimSpace(f.String()) != ""
	}); err != nil {
		panic(err) // a constant tag name; cannot fail
	}
	return v
})

// fieldName is the name a struct field has in paths.
func fieldName(f reflect.StructField) string {
	if tag, _, _ := strings.Cut(f.Tag.Get("json"), ","); tag != "" && tag != "-" {
		return tag
	}
	return LowerCamel(f.Name)
}

// LowerCamel lowers the first word of a Go identifier: NumToKeep ->
// numToKeep, UseGPU -> useGPU, TPUResourcePerChip -> tpuResourcePerChip,
// ID -> id.
func LowerCamel(s string) string {
	n := 0
	for n < len(s) && 'A' <= s[n] && s[n] <= 'Z' {
		n++
	}
	switch {
	case n == 0:
		return s
	case n == len(s):
		return strings.ToLower(s)
	case n > 1:
		n-- // the last capital starts the next word
	}
	return strings.ToLower(s[:n]) + s[n:]
}

func convert(fe validator.FieldError, root reflect.Type, at Locator) *Error {
	p := pathOf(fe.Namespace(), at)
	value := fe.Value()
	if rv := reflect.ValueOf(value); rv.IsValid() && rv.Kind() == reflect.String {
		value = rv.String() // a named string type (placement.Strategy) reads as a string
	}
	tag, param := fe.Tag(), fe.Param()
	detail := detailTag(root, fe.StructNamespace(), tag)
	switch tag {
	case "required", "notblank":
		return Required(p, detail)
	case "oneof":
		e := NotSupported(p, value, strings.Fields(param))
		e.Detail = detail
		return e
	}
	if detail == "" {
		detail = ruleDetail(tag, param)
	}
	return Invalid(p, value, detail)
}

func ruleDetail(tag, param string) string {
	switch tag {
	case "gte", "min":
		return "must be at least " + param
	case "gt":
		return "must be greater than " + param
	case "lte", "max":
		return "must be at most " + param
	case "lt":
		return "must be less than " + param
	case "eq":
		return "must be " + param
	case "ne":
		return "must not be " + param
	case "excludesall":
		return fmt.Sprintf("must not contain any of %q", param)
	}
	return fmt.Sprintf("breaks the rule %s", strings.TrimSuffix(tag+"="+param, "="))
}

// pathOf turns a validator namespace (Type.field.sub[key].leaf) into a
// Path: the first name after the type through at, the rest as children and
// keys.
func pathOf(ns string, at Locator) *Path {
	segs := splitNamespace(ns)
	if len(segs) < 2 {
		return at(ns)
	}
	var p *Path
	for i, s := range segs[1:] {
		name, keys, _ := strings.Cut(s, "[")
		if i == 0 {
			p = at(name)
		} else if name != "" {
			p = p.Child(name)
		}
		for keys != "" {
			k, rest, _ := strings.Cut(keys, "]")
			p = p.Key(k)
			keys = strings.TrimPrefix(rest, "[")
		}
	}
	return p
}

// splitNamespace splits at dots outside brackets: map keys such as
// ray.io/tpu-slice-name keep theirs.
func splitNamespace(ns string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(ns); i++ {
		switch ns[i] {
		case '[':
			depth++
		case ']':
			depth--
		case '.':
			if depth == 0 {
				out = append(out, ns[start:i])
				start = i + 1
			}
		}
	}
	return append(out, ns[start:])
}

// detailTag reads the `detail-<rule>` tag, else the `detail` tag, of the
// field at the struct namespace ns (Type.Field.Sub[key]), or "".
func detailTag(t reflect.Type, ns, rule string) string {
	segs := splitNamespace(ns)
	var tag string
	for _, s := range segs[1:] {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return ""
		}
		name, _, keyed := strings.Cut(s, "[")
		f, ok := t.FieldByName(name)
		if !ok {
			return ""
		}
		t = f.Type
		if tag = f.Tag.Get("detail-" + rule); tag == "" {
			tag = f.Tag.Get("detail")
		}
		if keyed && (t.Kind() == reflect.Map || t.Kind() == reflect.Slice) {
			t = t.Elem()
		}
	}
	return tag
}

// sortMapRuns orders the errors of one map's entries by key: validator
// visits map entries in Go's random map order.
func sortMapRuns(out ErrorList, verrs validator.ValidationErrors) {
	parent := func(i int) string { return mapParent(verrs[i].StructNamespace()) }
	for i := 0; i < len(out); {
		j := i + 1
		if pi := parent(i); pi != "" {
			for j < len(out) && parent(j) == pi {
				j++
			}
		}
		if j-i > 1 {
			slices.SortStableFunc(out[i:j], func(a, b *Error) int { return strings.Compare(a.Field, b.Field) })
		}
		i = j
	}
}

// mapParent is the namespace of the map (or slice) whose entry ns names,
// "" when ns names no entry. The entry's bracket opens at the first '['
// after the previous entry's ']', so that a key holding '[' (Res[a[b])
// still names the map Res; a key holding ']' is ambiguous in validator's
// namespaces and is read as ending there.
func mapParent(ns string) string {
	if !strings.HasSuffix(ns, "]") {
		return ""
	}
	body := ns[:len(ns)-1]
	from := strings.LastIndexByte(body, ']') + 1
	open := strings.IndexByte(body[from:], '[')
	if open >= 0 {
		return ns[:from+open]
	}
	if open = strings.LastIndexByte(body, '['); open >= 0 {
		return ns[:open]
	}
	return ""
}
