// Package launcher embeds raytpu's Python launcher: the thin program that
// runs inside Ray, reads a compiled plan and calls the real Ray library
// (JaxTrainer.fit for train plans), then reports the outcome on one line of
// its output.
package launcher

import (
	"bufio"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/raytpu/raytpu/placement"
)

//go:embed _raytpu_launcher.py
var script []byte

// Names of the files the launcher needs at the root of the working dir.
const (
	ScriptFile = "_raytpu_launcher.py"
	PlanFile   = "_raytpu_plan.json"
)

// Entrypoint is the job entrypoint of a plan whose job runs the launcher.
const Entrypoint = "python " + ScriptFile

// ResultPrefix starts the launcher's outcome line.
const ResultPrefix = "RAYTPU_RESULT "

// ErrNoResult means the job's output holds no outcome line: the launcher
// never reached its end (killed, or the driver failed before it started).
var ErrNoResult = errors.New("launcher: no result line in job output")

// Files returns the launcher script and the plan, keyed by their file names
// at the root of the working directory.
func Files(p *placement.Plan) (map[string][]byte, error) {
	if p.Job == nil || p.Job.Launcher == "" {
		return nil, fmt.Errorf("launcher: plan %q has no launcher job", p.Name)
	}
	b, err := p.MarshalIndent()
	if err != nil {
		return nil, fmt.Errorf("launcher: encoding plan: %w", err)
	}
	return map[string][]byte{ScriptFile: script, PlanFile: b}, nil
}

// Script returns the embedded launcher source.
func Script() []byte { return append([]byte(nil), script...) }

// ParseResult returns the JSON of the last outcome line in logs.
func ParseResult(logs string) (json.RawMessage, error) {
	var last string
	sc := bufio.NewScanner(strings.NewReader(logs))
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if i := strings.Index(line, ResultPrefix); i >= 0 {
			last = line[i+len(ResultPrefix):]
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("launcher: reading job output: %w", err)
	}
	if last == "" {
		return nil, ErrNoResult
	}
	if !json.Valid([]byte(last)) {
		return nil, fmt.Errorf("launcher: result line is not JSON: %.200q", last)
	}
	return json.RawMessage(last), nil
}
