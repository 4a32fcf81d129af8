package field

import (
	"reflect"
	"strings"
)

// A path has two spellings. A spec built in Go is reported in the Go
// spelling of its fields (app.deployments[LLM].acceleratorConfig.topology),
// the names a Go programmer wrote. A spec read from a file is reported in
// the spelling of the file (app.deployments[LLM].accelerator_config.topology):
// each field's JSON name, which is also its YAML key. Validation always
// builds Go-spelled paths; a file loader turns them into the file's
// spelling with Respell and a Spelling, and reports the errors it finds
// while reading the file directly in the file's spelling. FileName and
// FileType are the one rule for a Go field's name and type in a file.

// Spelling maps a path in Go spelling to the spelling of a file.
type Spelling func(goPath string) string

// FileShaper is implemented by a type whose form in a file is not its Go
// fields (a field stored in other units, under another key): FileShape
// returns a value of the type the file form decodes as, whose JSON names
// and field types are the file's keys and value types.
type FileShaper interface {
	FileShape() any
}

var fileShaperType = reflect.TypeFor[FileShaper]()

// FileType returns the type whose fields a file holding a t spells out:
// t itself, or its FileShape's type, with pointers removed (nil for a nil
// t).
func FileType(t reflect.Type) reflect.Type {
	if t == nil {
		return nil
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Implements(fileShaperType) {
		if v, ok := reflect.Zero(t).Interface().(FileShaper); ok {
			if s := v.FileShape(); s != nil {
				return FileType(reflect.TypeOf(s))
			}
		}
	}
	return t
}

// FileName returns the key of a struct field in a file: its JSON name, or
// its Go name when it has no JSON tag. ok is false for a field a file
// never holds (unexported, or tagged "-") and for an embedded struct
// whose fields are promoted (see FileFields).
func FileName(f reflect.StructField) (name string, ok bool) {
	if !f.IsExported() {
		return "", false
	}
	tag := f.Tag.Get("json")
	if tag == "-" {
		return "", false
	}
	name, _, _ = strings.Cut(tag, ",")
	if f.Anonymous && name == "" {
		t := f.Type
		if t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() == reflect.Struct {
			return "", false
		}
	}
	if name == "" {
		name = f.Name
	}
	return name, true
}

// FileFields returns the fields of struct type t that a file holds, with
// an embedded struct's fields promoted as encoding/json promotes them, in
// declaration order. A nil t or one that is not a struct has none: nil.
func FileFields(t reflect.Type) []reflect.StructField {
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	var out []reflect.StructField
	for _, f := range reflect.VisibleFields(t) {
		if _, ok := FileName(f); ok {
			out = append(out, f)
		}
	}
	return out
}

// JSONSpelling returns the spelling of a file that holds a value of v's
// type, reported under the path root: each Go-spelled field name below
// root becomes the field's name in the file (acceleratorConfig becomes
// accelerator_config). An element that names no field, and everything
// after it, is left as it is; so is a path outside root.
func JSONSpelling(root string, v any) Spelling {
	t := reflect.TypeOf(v)
	return func(p string) string {
		elems := splitPath(p)
		if t == nil || len(elems) == 0 || (root != "" && elems[0] != root) {
			return p
		}
		i := 0
		if root != "" {
			i = 1
		}
		cur := t
		for ; i < len(elems); i++ {
			e := elems[i]
			ft := FileType(cur)
			if strings.HasPrefix(e, "[") {
				switch ft.Kind() {
				case reflect.Slice, reflect.Array, reflect.Map:
					cur = ft.Elem()
					continue
				}
				break
			}
			f, ok := fieldNamed(ft, e)
			if !ok {
				break
			}
			elems[i], _ = FileName(f)
			cur = f.Type
		}
		return joinPath(elems)
	}
}

// fieldNamed finds the field of struct t a Go-spelled path element names:
// by its file name, else by its Go name in any case (acceleratorConfig for
// AcceleratorConfig).
func fieldNamed(t reflect.Type, e string) (reflect.StructField, bool) {
	if t.Kind() != reflect.Struct {
		return reflect.StructField{}, false
	}
	fields := FileFields(t)
	for _, f := range fields {
		if n, _ := FileName(f); n == e {
			return f, true
		}
	}
	for _, f := range fields {
		if strings.EqualFold(f.Name, e) {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// Respell returns err with the path of every *Error in it rewritten by s,
// as an ErrorList of copies (err itself is not changed). An error holding
// no *Error is returned as it is.
func Respell(err error, s Spelling) error {
	errs := Errors(err)
	if len(errs) == 0 || s == nil {
		return err
	}
	out := make(ErrorList, len(errs))
	for i, e := range errs {
		c := *e
		c.ValidValues = append([]string(nil), e.ValidValues...)
		c.Field = s(e.Field)
		out[i] = &c
	}
	return out
}

// splitPath splits a rendered path into its names and bracketed indices
// or keys: "a.b[x.y].c" is a, b, [x.y], c.
func splitPath(p string) []string {
	var out []string
	for len(p) > 0 {
		switch p[0] {
		case '.':
			p = p[1:]
		case '[':
			// A key ends at the "]" that ends the path or precedes "." or "[".
			end := len(p) - 1
			for j := 1; j < len(p); j++ {
				if p[j] == ']' && (j == len(p)-1 || p[j+1] == '.' || p[j+1] == '[') {
					end = j
					break
				}
			}
			out = append(out, p[:end+1])
			p = p[end+1:]
		default:
			j := strings.IndexAny(p, ".[")
			if j < 0 {
				j = len(p)
			}
			out = append(out, p[:j])
			p = p[j:]
		}
	}
	return out
}

func joinPath(elems []string) string {
	var b strings.Builder
	for _, e := range elems {
		if b.Len() > 0 && !strings.HasPrefix(e, "[") {
			b.WriteByte('.')
		}
		b.WriteString(e)
	}
	return b.String()
}
