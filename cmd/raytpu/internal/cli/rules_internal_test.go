package cli

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/raytpu/raytpu/field"
)

func TestTerminalSafe(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"chat":            "chat",
		"chat\a\x1b\x00":  `chat\a\x1b\x00`,
		"tab\there":       `tab\there`,
		"naïve ✓":         "naïve ✓",
		"bad\xffutf8":     `bad\xffutf8`,
		"c1\u009b31m":     `c1\u009b31m`,
		"line\u2028break": `line\u2028break`,
		`back\slash "q"`:  `back\slash "q"`,
	} {
		if got := terminalSafe(in); got != want {
			t.Errorf("terminalSafe(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCapText(t *testing.T) {
	t.Parallel()
	if got := capText("short", 10); got != "short" {
		t.Errorf("got %q", got)
	}
	got := capText(strings.Repeat("é", 10), 5) // 2-byte runes: cut on a boundary
	if got != "éé… (16 more bytes)" {
		t.Errorf("got %q", got)
	}
}

func TestFlagErrors(t *testing.T) {
	t.Parallel()
	err := field.ErrorList{
		field.Invalid(field.NewPath("numSlices"), -2, "must be at least 1"),
		field.Invalid(field.NewPath("spec").Index(0).Child("podType"), "x", "unknown"),
	}
	got := flagErrors(err, map[string]string{"numSlices": "--num-slices", "spec": "--cluster"})
	var ue usageError
	if !asUsage(got, &ue) {
		t.Fatalf("%v: not a usage error", got)
	}
	want := "--num-slices: Invalid value: -2: must be at least 1\n--cluster[0].podType: Invalid value: \"x\": unknown"
	if got.Error() != want {
		t.Errorf("got %q, want %q", got.Error(), want)
	}
	// Errors of no flag are left as they are.
	other := field.ErrorList{field.Required(field.NewPath("name"), "")}
	if got := flagErrors(other, map[string]string{"numSlices": "--num-slices"}); len(field.Errors(got)) != 1 {
		t.Errorf("got %v, want the field errors back", got)
	}
}

func asUsage(err error, ue *usageError) bool {
	u, ok := err.(usageError)
	*ue = u
	return ok
}

func TestReadFileRefusesNonRegular(t *testing.T) {
	t.Parallel()
	if _, err := readFile(t.TempDir()); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a directory: err %v, want not a regular file", err)
	}
	// A FIFO with no writer would block an open for reading forever.
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatalf("making a FIFO: %v", err)
	}
	done := make(chan error, 1)
	go func() { _, err := readFile(fifo); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("a FIFO: err %v, want not a regular file", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("readFile of a FIFO blocks")
	}
}
