package data_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/raytpu/raytpu/data"
	"github.com/raytpu/raytpu/field"
)

// verdicts is what validation says about valid and invalid batch formats,
// save modes and dtypes: each error with its path, type and valid values.
func verdicts() string {
	var b strings.Builder
	report := func(what string, err error) {
		fmt.Fprintf(&b, "%s:", what)
		for _, e := range field.Errors(err) {
			fmt.Fprintf(&b, " %s %s %q %q;", e.Field, e.Type, e.ValidValues, e.Suggestion)
		}
		b.WriteByte('\n')
	}
	for _, format := range []string{"numpy", "pandas", "nmupy"} {
		for _, mode := range []string{"overwrite", "error", "overwrit"} {
			_, err := data.Pipeline{Name: "p", Dataset: data.From(data.Range{N: 10}).
				MapBatches(data.MapBatches{Fn: "m:f", BatchFormat: format}).
				Write(data.WriteParquet{Path: "/tmp/out", Mode: mode})}.Compile()
			report(format+" "+mode, err)
		}
	}
	for _, dtype := range []string{"float32", "bfloat16", "float23"} {
		_, err := data.Predict(field.NewPath("iter"), data.From(data.Range{N: 100}),
			data.IterJaxBatches{BatchSize: 8, DType: dtype}, data.Hosts{Workers: 1, Accelerator: "v4"})
		report(dtype, err)
	}
	return b.String()
}

// TestValidationListsAreCopies: BatchFormats, SaveModes and DTypeNames
// return fresh slices; changing them changes neither a later call nor
// what validation accepts and lists as valid.
func TestValidationListsAreCopies(t *testing.T) {
	t.Parallel()
	want := verdicts()
	if !strings.Contains(want, "NotSupported") {
		t.Fatalf("no invalid value was reported; the check would be vacuous:\n%s", want)
	}
	lists := map[string]func() []string{"BatchFormats": data.BatchFormats, "SaveModes": data.SaveModes, "DTypeNames": data.DTypeNames}
	for name, list := range lists {
		before := strings.Join(list(), ",")
		got := list()
		for i := range got {
			got[i] = "nmupy"
		}
		if after := strings.Join(list(), ","); after != before {
			t.Errorf("%s after changing a returned list: %s, want %s", name, after, before)
		}
	}
	if got := verdicts(); got != want {
		t.Errorf("validation after changing the returned lists:\n%s\nwant\n%s", got, want)
	}
}
