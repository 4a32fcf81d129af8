package profiler

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// RunName is the default run directory name of a capture started at t,
// in the form TensorBoard's own capture uses (2006_01_02_15_04_05).
func RunName(t time.Time) string { return t.UTC().Format("2006_01_02_15_04_05") }

// WriteLogDir writes the trace to <logdir>/plugins/profile/<run>/<host>.xplane.pb,
// where TensorBoard's profile plugin and XProf find it (tensorboard
// --logdir <logdir>, xprof <logdir>), and returns the file's path. An
// empty run is RunName(time.Now()). It never overwrites a file.
func (t *Trace) WriteLogDir(logdir, run string) (string, error) {
	if t == nil {
		return "", fmt.Errorf("profiler: WriteLogDir: nil *Trace: pass the Trace that profiler.Capture returns")
	}
	if run == "" {
		run = RunName(time.Now())
	}
	for _, part := range []struct{ what, v string }{{"run", run}, {"host", t.Host}} {
		if msg := checkFileName(part.v); msg != "" {
			return "", fmt.Errorf("profiler: %s %q %s", part.what, part.v, msg)
		}
	}
	dir := filepath.Join(logdir, "plugins", "profile", run)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("profiler: %w", err)
	}
	path := filepath.Join(dir, t.Host+".xplane.pb")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", fmt.Errorf("profiler: %w", err)
	}
	if _, err := f.Write(t.XSpace); err != nil {
		f.Close()
		return "", fmt.Errorf("profiler: %w", err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("profiler: %w", err)
	}
	return path, nil
}

// checkFileName returns why s cannot be one path element, or "".
func checkFileName(s string) string {
	switch {
	case s == "":
		return "must not be empty"
	case s == "." || s == "..":
		return "must not be . or .."
	case strings.ContainsAny(s, `/\`+"\x00"):
		return "must not contain a path separator"
	}
	return ""
}
