package fieldfile_test

// Issue 46's reproductions: each input ends fast, in little memory, with
// an error that names the field (and the alias, or the file).

import (
	"errors"
	"io/fs"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/field/fieldfile"
	"github.com/raytpu/raytpu/internal/testinfra/alloctest"
	"github.com/raytpu/raytpu/internal/testinfra/badfile"
)

// serveApp is the shape of a Serve application file, with its free-form
// fields.
type serveApp struct {
	Name        string            `json:"name"`
	ImportPath  string            `json:"import_path"`
	Args        map[string]any    `json:"args"`
	Deployments []serveDeployment `json:"deployments"`
}

type serveDeployment struct {
	Name               string             `json:"name"`
	NumReplicas        int                `json:"num_replicas"`
	MaxOngoingRequests int                `json:"max_ongoing_requests"`
	UserConfig         map[string]any     `json:"user_config"`
	Resources          map[string]float64 `json:"resources"`
}

// The 324-byte file of seven levels of nine aliases expanded to 43
// million values (2.25 GB, 21 s in raytpu render); it is refused at the
// alias that passes the budget, having allocated a few megabytes.
func TestAliasBombIsRefusedAtItsAlias(t *testing.T) {
	b := badfile.AliasBomb(7, 9)
	if len(b) != 324 {
		t.Fatalf("the bomb is %d bytes, issue 46's 324", len(b))
	}
	var errs field.ErrorList
	alloctest.Below(t, 20*alloctest.MiB, func() {
		var a serveApp
		errs = fieldfile.Decode(b, field.NewPath("app"), &a)
	})
	want := []field.Ref{{Field: "app.args[e][0]", Type: field.TypeTooMany}}
	if diff := cmp.Diff(want, field.Refs(errs)); diff != "" {
		t.Fatalf("(-want +got):\n%s\n%v", diff, errs)
	}
	if errs[0].Line != 8 || !strings.Contains(errs[0].Error(), "*d expands to") {
		t.Errorf("want the alias *d on line 8: %v", errs[0])
	}
	// One level more or less changes nothing but where it stops.
	for _, levels := range []int{8, 30} {
		var a serveApp
		if errs := fieldfile.Decode(badfile.AliasBomb(levels, 9), field.NewPath("app"), &a); len(errs) != 1 || errs[0].Type != field.TypeTooMany {
			t.Errorf("%d levels: %v", levels, errs)
		}
	}
	// A few levels stay within the budget.
	var a serveApp
	if errs := fieldfile.Decode(badfile.AliasBomb(2, 9), field.NewPath("app"), &a); len(errs) > 0 {
		t.Errorf("2 levels: %v", errs)
	} else if got := len(a.Args["c"].([]any)); got != 9 {
		t.Errorf("args.c has %d items", got)
	}
}

// Merge keys that copy a large mapping into many mappings are bounded as
// aliases are.
func TestMergeBombIsRefused(t *testing.T) {
	var b strings.Builder
	b.WriteString("name: m\nargs:\n  base: &b {")
	for i := range 2000 {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("k")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString(strings.Repeat("y", i/7))
		b.WriteString(": 1")
	}
	b.WriteString("}\n  copies:\n")
	for range 2000 {
		b.WriteString("  - {<<: *b}\n")
	}
	var errs field.ErrorList
	alloctest.Below(t, 100*alloctest.MiB, func() {
		var a serveApp
		errs = fieldfile.Decode([]byte(b.String()), field.NewPath("app"), &a)
	})
	if len(errs) != 1 || errs[0].Type != field.TypeTooMany {
		t.Fatalf("want one TooMany, got %v", errs)
	}
}

// A file larger than raytpu reads is refused before it is read (issue
// 46's 52 MB file was parsed first, 250-360 MB); a named pipe given as a
// file is refused before it is opened for reading (it blocked forever).
func TestReadFileRefusesBeforeReading(t *testing.T) {
	large := badfile.Large(t, 52_000_000)
	fifo := badfile.FIFO(t)
	dir := t.TempDir()
	for _, c := range []struct {
		path string
		want error
	}{{large, fieldfile.ErrTooLarge}, {fifo, fieldfile.ErrNotRegular}, {dir, fieldfile.ErrNotRegular}} {
		done := make(chan error, 1)
		var n uint64
		go func() {
			var err error
			n = alloctest.Bytes(func() {
				var a serveApp
				err = fieldfile.Load(c.path, fieldfile.ServeApplication, field.NewPath("app"), &a)
			})
			done <- err
		}()
		select {
		case err := <-done:
			var pe *fs.PathError
			if !errors.Is(err, c.want) || !errors.As(err, &pe) || pe.Path != c.path {
				t.Errorf("Load(%s) = %v, want %v naming the path", c.path, err, c.want)
			}
			if n > alloctest.MiB {
				t.Errorf("Load(%s) allocated %d bytes", c.path, n)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("Load(%s) still running after 30s (a read that blocks)", c.path)
		}
	}
	if _, err := fieldfile.ReadFile(t.TempDir() + "/missing.yaml"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// A document nested deeper than the YAML parser reads (10,000 levels in
// 20 KB) is reported at the field, as one deeper than raytpu's 64 levels
// is; before, the parser's "exceeded max depth" named no field.
func TestDeepNestingNamesTheField(t *testing.T) {
	for _, c := range []struct {
		name string
		in   []byte
		line int
	}{
		{"65 levels", badfile.Deep(65), 4},
		{"10001 levels", badfile.Deep(10001), 4},
		{"block lists", []byte("name: deep\nargs:\n  x:\n    " + strings.Repeat("- ", 10001) + "a\n"), 4},
		{"a mapping", []byte("name: deep\nargs:\n  x: " + strings.Repeat("{a: ", 10001) + "1" + strings.Repeat("}", 10001) + "\n"), 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			var a serveApp
			errs := fieldfile.Decode(c.in, field.NewPath("app"), &a)
			want := []field.Ref{{Field: "app.args[x]", Type: field.TypeInvalid}}
			if diff := cmp.Diff(want, field.Refs(errs)); diff != "" {
				t.Fatalf("(-want +got):\n%s\n%v", diff, errs)
			}
			if !strings.Contains(errs[0].Detail, "nests deeper than 64 levels") || errs[0].Line != c.line {
				t.Errorf("%v", errs[0])
			}
		})
	}
	// A deep typed path is named too.
	var ds []any
	if errs := fieldfile.Decode([]byte(strings.Repeat("[", 20000)+strings.Repeat("]", 20000)), field.NewPath("v"), &ds); len(errs) != 1 || errs[0].Field != "v[0]" {
		t.Errorf("%v", errs)
	}
}

// The densest file raytpu reads (half a million values in 1 MiB) is read
// in bounded memory.
func TestDensestFileIsBounded(t *testing.T) {
	head := "name: dense\nargs:\n  x: ["
	n := (fieldfile.MaxFileSize - len(head) - 3) / 2
	b := []byte(head + strings.TrimSuffix(strings.Repeat("1,", n), ",") + "]\n")
	runtime.GC()
	var a serveApp
	start := time.Now()
	errs := fieldfile.Decode(b, field.NewPath("app"), &a)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if got := len(a.Args["x"].([]any)); got != n {
		t.Errorf("%d values, want %d", got, n)
	}
	t.Logf("%d values in %v", n, time.Since(start))
}

// An alias to a long string costs what the string costs: 30,000 aliases
// to a 100 KB string would be 3 GB of JSON.
func TestLongStringAliasesAreBounded(t *testing.T) {
	b := []byte("name: long\nargs:\n  s: &s " + strings.Repeat("x", 100_000) + "\n  l: [" + strings.TrimSuffix(strings.Repeat("*s, ", 30_000), ", ") + "]\n")
	var errs field.ErrorList
	alloctest.Below(t, 20*alloctest.MiB, func() {
		var a serveApp
		errs = fieldfile.Decode(b, field.NewPath("app"), &a)
	})
	want := []field.Ref{{Field: "app.args[l][82]", Type: field.TypeTooMany}}
	if diff := cmp.Diff(want, field.Refs(errs)); diff != "" {
		t.Fatalf("(-want +got):\n%s\n%v", diff, errs)
	}
}
