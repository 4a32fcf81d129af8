package rayruntime_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/rayruntime"
)

func TestParseResult(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, logs, want string
		err              error
	}{
		{"last line wins", "x\nRAYTPU_RESULT {\"a\":1}\nmore\nRAYTPU_RESULT {\"a\":2}\n", `{"a":2}`, nil},
		{"prefixed by Ray", "(pid=1) RAYTPU_RESULT {\"ok\":true}", `{"ok":true}`, nil},
		{"none", "Traceback...\n", "", rayruntime.ErrNoResult},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, err := rayruntime.ParseResult(c.logs)
			if !errors.Is(err, c.err) {
				t.Fatalf("err = %v, want %v", err, c.err)
			}
			if string(got) != c.want {
				t.Errorf("got %s, want %s", got, c.want)
			}
		})
	}
	if _, err := rayruntime.ParseResult("RAYTPU_RESULT {broken"); err == nil || errors.Is(err, rayruntime.ErrNoResult) {
		t.Errorf("malformed result: err = %v, want a decoding error", err)
	}
}

// An outcome line decodes into Outcome: kind, error and warnings.
func TestOutcome(t *testing.T) {
	t.Parallel()
	raw, err := rayruntime.ParseResult(`RAYTPU_RESULT {"kind": "Pipeline", "error": {"type": "ValueError", "message": "bad"}, "warnings": ["w"], "path": "/x"}`)
	if err != nil {
		t.Fatal(err)
	}
	var o rayruntime.Outcome
	if err := json.Unmarshal(raw, &o); err != nil {
		t.Fatal(err)
	}
	want := rayruntime.Outcome{Kind: "Pipeline", Error: &rayruntime.OutcomeError{Type: "ValueError", Message: "bad"}, Warnings: []string{"w"}}
	if d := cmp.Diff(want, o); d != "" {
		t.Errorf("outcome (-want +got):\n%s", d)
	}
}

func TestFiles(t *testing.T) {
	t.Parallel()
	for _, p := range []*placement.Plan{nil, {Name: "x"}, {Name: "x", Job: &placement.Job{Entrypoint: "python x.py"}}} {
		if _, err := rayruntime.Files(p); err == nil {
			t.Errorf("Files accepted %+v, a plan without a launcher job", p)
		}
	}
	p := &placement.Plan{APIVersion: placement.APIVersion, Name: "x", Job: &placement.Job{Launcher: rayruntime.EntryTrain}}
	files, err := rayruntime.Files(p)
	if err != nil {
		t.Fatal(err)
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range files {
			if !yield(n) {
				return
			}
		}
	})
	want := []string{rayruntime.LauncherFile, rayruntime.PlanFile, rayruntime.RecorderFile, rayruntime.RuntimeFile, rayruntime.ProtocolFile}
	slices.Sort(want)
	if d := cmp.Diff(want, names); d != "" {
		t.Errorf("files (-want +got):\n%s", d)
	}
	plan, _ := p.MarshalIndent()
	if !bytes.Equal(files[rayruntime.PlanFile], plan) {
		t.Errorf("plan file = %s", files[rayruntime.PlanFile])
	}
	if !bytes.Equal(files[rayruntime.ProtocolFile], rayruntime.Protocol()) {
		t.Error("the protocol file is not Protocol()")
	}
	if rayruntime.Entrypoint != "python "+rayruntime.LauncherFile {
		t.Errorf("Entrypoint %q does not run %s", rayruntime.Entrypoint, rayruntime.LauncherFile)
	}
	// Files hands out copies: a caller that writes into one changes no
	// other caller's files.
	files[rayruntime.LauncherFile][0] = 'X'
	again, _ := rayruntime.Files(p)
	if again[rayruntime.LauncherFile][0] == 'X' {
		t.Error("Files shares its bytes between calls")
	}
}
