// Package badfile makes the files a careless or hostile user gives raytpu,
// for the tests that prove each is refused quickly, with little memory and
// with a clear message: a named pipe given as a file, a file larger than
// raytpu reads, a YAML alias bomb and a document nested too deep.
package badfile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FIFO returns the path of a named pipe in a temporary directory, which
// nothing writes to: a reader that opens it blocks forever.
func FIFO(tb testing.TB) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "fifo.yaml")
	if err := mkfifo(path); err != nil {
		tb.Fatalf("badfile: making a named pipe: %v", err)
	}
	return path
}

// Large returns the path of a file of size bytes in a temporary
// directory; the file is sparse (it costs no disk), and holds zero bytes.
func Large(tb testing.TB, size int64) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "large.yaml")
	f, err := os.Create(path)
	if err == nil {
		err = f.Truncate(size)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		tb.Fatalf("badfile: %v", err)
	}
	return path
}

// Write writes b to a file in a temporary directory and returns its path.
func Write(tb testing.TB, name string, b []byte) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), name)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		tb.Fatalf("badfile: %v", err)
	}
	return path
}

// AliasBomb is a Serve application file whose args hold a list of width
// scalars and levels more lists, each of width aliases to the one before:
// a few hundred bytes that expand to width^(levels+1) values.
// AliasBomb(7, 9) is issue 46's 324-byte file, which raytpu expanded to
// 43 million values (2.25 GB).
func AliasBomb(levels, width int) []byte {
	var b strings.Builder
	b.WriteString("name: bomb1\nimport_path: m:app\nargs:\n")
	fmt.Fprintf(&b, "  a: &a [%s]\n", strings.TrimSuffix(strings.Repeat("x,", width), ","))
	prev := "a"
	for i := 1; i <= levels; i++ {
		name := string(rune('a' + i))
		if i >= 26 {
			name = fmt.Sprintf("l%d", i)
		}
		fmt.Fprintf(&b, "  %s: &%s [%s]\n", name, name, strings.TrimSuffix(strings.Repeat("*"+prev+",", width), ","))
		prev = name
	}
	return []byte(b.String())
}

// Deep is a Serve application file whose args nest levels lists deep,
// written on one line ([[[...]]]).
func Deep(levels int) []byte {
	return []byte("name: deep\nimport_path: m:app\nargs:\n  x: " + strings.Repeat("[", levels) + strings.Repeat("]", levels) + "\n")
}
