package launcher_test

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/raytpu/raytpu/internal/launcher"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/train"
)

func TestParseResult(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, logs, want string
		err              error
	}{
		{"last line wins", "x\nRAYTPU_RESULT {\"a\":1}\nmore\nRAYTPU_RESULT {\"a\":2}\n", `{"a":2}`, nil},
		{"prefixed by Ray", "(pid=1) RAYTPU_RESULT {\"ok\":true}", `{"ok":true}`, nil},
		{"none", "Traceback...\n", "", launcher.ErrNoResult},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, err := launcher.ParseResult(c.logs)
			if !errors.Is(err, c.err) {
				t.Fatalf("err = %v, want %v", err, c.err)
			}
			if string(got) != c.want {
				t.Errorf("got %s, want %s", got, c.want)
			}
		})
	}
	if _, err := launcher.ParseResult("RAYTPU_RESULT {broken"); err == nil || errors.Is(err, launcher.ErrNoResult) {
		t.Errorf("malformed result: err = %v, want a decoding error", err)
	}
}

func TestFiles(t *testing.T) {
	t.Parallel()
	if _, err := launcher.Files(&placement.Plan{Name: "x"}); err == nil {
		t.Error("Files accepted a plan without a launcher job")
	}
	p := &placement.Plan{APIVersion: placement.APIVersion, Name: "x", Job: &placement.Job{Entrypoint: "python _raytpu_launcher.py", Launcher: "train"}}
	files, err := launcher.Files(p)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := p.MarshalIndent()
	if !bytes.Equal(files[launcher.PlanFile], want) {
		t.Errorf("plan file = %s", files[launcher.PlanFile])
	}
	if !bytes.Contains(files[launcher.ScriptFile], []byte("RAYTPU_RESULT")) {
		t.Error("launcher script lacks its result prefix")
	}
}

// The Go constant and the launcher's must name the same key, or train
// loops would find no iterator options.
func TestIterJaxBatchesKeyMatchesScript(t *testing.T) {
	t.Parallel()
	want := []byte(`ITER_JAX_BATCHES_KEY = "` + launcher.IterJaxBatchesKey + `"`)
	if !bytes.Contains(launcher.Script(), want) {
		t.Errorf("launcher script lacks %s", want)
	}
	for _, entry := range []string{`"train": run_train`, `"data": run_data`} {
		if !bytes.Contains(launcher.Script(), []byte(entry)) {
			t.Errorf("launcher script lacks entry %s", entry)
		}
	}
}

// Every keyword the train package writes into the launcher config is read
// by the launcher script.
func TestLauncherReadsEveryTrainKey(t *testing.T) {
	t.Parallel()
	for _, v := range []any{train.LauncherConfig{}, train.LauncherScaling{}, train.LauncherRun{}, train.LauncherJax{}} {
		typ := reflect.TypeOf(v)
		for i := range typ.NumField() {
			key, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			if !bytes.Contains(launcher.Script(), []byte(`"`+key+`"`)) && !bytes.Contains(launcher.Script(), []byte(key+"=")) {
				t.Errorf("%s.%s: the launcher never reads %q", typ.Name(), typ.Field(i).Name, key)
			}
		}
	}
}
