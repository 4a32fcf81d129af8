package rayruntime_test

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

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

func TestFiles(t *testing.T) {
	t.Parallel()
	if _, err := rayruntime.Files(&placement.Plan{Name: "x"}); err == nil {
		t.Error("Files accepted a plan without a launcher job")
	}
	p := &placement.Plan{APIVersion: placement.APIVersion, Name: "x", Job: &placement.Job{Entrypoint: "python _raytpu_launcher.py", Launcher: "train"}}
	files, err := rayruntime.Files(p)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := p.MarshalIndent()
	if !bytes.Equal(files[rayruntime.PlanFile], want) {
		t.Errorf("plan file = %s", files[rayruntime.PlanFile])
	}
	if !bytes.Contains(files[rayruntime.ScriptFile], []byte("RAYTPU_RESULT")) {
		t.Error("launcher script lacks its result prefix")
	}
}

// The Go constant and the launcher's must name the same key, or train
// loops would find no iterator options.
func TestIterJaxBatchesKeyMatchesScript(t *testing.T) {
	t.Parallel()
	want := []byte(`ITER_JAX_BATCHES_KEY = "` + rayruntime.IterJaxBatchesKey + `"`)
	if !bytes.Contains(rayruntime.Script(), want) {
		t.Errorf("launcher script lacks %s", want)
	}
	for _, entry := range []string{`"train": run_train`, `"data": run_data`} {
		if !bytes.Contains(rayruntime.Script(), []byte(entry)) {
			t.Errorf("launcher script lacks entry %s", entry)
		}
	}
}

// Every keyword the train package writes into the launcher config is read
// by the launcher script.
func TestLauncherReadsEveryTrainKey(t *testing.T) {
	t.Parallel()
	for _, v := range []any{rayruntime.TrainConfig{}, rayruntime.TrainScaling{}, rayruntime.TrainRun{}, rayruntime.TrainJax{}} {
		typ := reflect.TypeOf(v)
		for i := range typ.NumField() {
			key, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			if !bytes.Contains(rayruntime.Script(), []byte(`"`+key+`"`)) && !bytes.Contains(rayruntime.Script(), []byte(key+"=")) {
				t.Errorf("%s.%s: the launcher never reads %q", typ.Name(), typ.Field(i).Name, key)
			}
		}
	}
}
