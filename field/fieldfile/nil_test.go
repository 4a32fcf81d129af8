package fieldfile_test

import (
	"testing"

	"github.com/raytpu/raytpu/field/fieldfile"
)

func TestNilKindError(t *testing.T) {
	var e *fieldfile.KindError
	if e.Error() != "<nil>" || e.Unwrap() != nil {
		t.Errorf("nil KindError: %q, %v", e.Error(), e.Unwrap())
	}
}
