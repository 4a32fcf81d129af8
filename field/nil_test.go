package field_test

import (
	"reflect"
	"testing"

	"github.com/raytpu/raytpu/field"
)

// A nil *Error renders "<nil>" and stays nil; FileType and FileFields of a
// nil or non-struct type are nil.
func TestNilError(t *testing.T) {
	var e *field.Error
	if e.Error() != "<nil>" {
		t.Errorf("nil Error: %q", e.Error())
	}
	e.Suggest([]string{"a"})
	if e.WithDetail("x") != nil {
		t.Error("nil Error: WithDetail is not nil")
	}
	if field.FileType(nil) != nil || field.FileFields(nil) != nil || field.FileFields(reflect.TypeFor[int]()) != nil {
		t.Error("FileType or FileFields of nil or int answered")
	}
}
