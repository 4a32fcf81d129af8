package rayruntime

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/raytpu/raytpu/placement"
)

// Names of the files the launcher needs at the root of the job's working
// directory, as [Files] returns them.
const (
	// LauncherFile is the program the [Entrypoint] runs.
	LauncherFile = "_raytpu_launcher.py"
	// RecorderFile holds the Ray Train callback that records the run.
	RecorderFile = "_raytpu_recorder.py"
	// RuntimeFile holds the helpers the launcher and the replica runtime
	// share; it reads ProtocolFile from its own directory.
	RuntimeFile = "_raytpu_runtime.py"
	// ProtocolFile is [Protocol]'s description, read by the Python side.
	ProtocolFile = "raytpu_protocol.json"
	// PlanFile is the compiled plan the launcher reads.
	PlanFile = "_raytpu_plan.json"
)

// The launcher's entries: the value of a plan's job.launcher, which says
// what its launcherConfig holds (a [TrainConfig] or a [PipelineConfig]).
const (
	EntryTrain = "train"
	EntryData  = "data"
)

// CallableKwarg is the keyword argument of a Ray Data call ([Op]) whose
// value, a "module:attr" string, the launcher imports before the call.
const CallableKwarg = "fn"

// Entrypoint is the job entrypoint of a plan whose job runs the launcher.
const Entrypoint = "python " + LauncherFile

// IterJaxBatchesKey is the train_loop_config key under which the "train"
// entry passes each dataset's iter_jax_batches keyword arguments.
const IterJaxBatchesKey = "_raytpu_iter_jax_batches"

// ResultPrefix starts the launcher's outcome line.
const ResultPrefix = "RAYTPU_RESULT "

// ErrNoResult means the job's output holds no outcome line: the launcher
// never reached its end (killed, or the driver failed before it started).
var ErrNoResult = errors.New("rayruntime: no result line in job output")

// Files returns the files a job that runs plan p needs at the root of its
// working directory, keyed by file name: the launcher and the modules it
// imports, the protocol description and the plan itself. A backend writes
// them there (or adds them to the working_dir package it uploads) and
// runs [Entrypoint]. p must have a launcher job (p.Job.Launcher set).
func Files(p *placement.Plan) (map[string][]byte, error) {
	if p == nil || p.Job == nil || p.Job.Launcher == "" {
		name := ""
		if p != nil {
			name = p.Name
		}
		return nil, fmt.Errorf("rayruntime: plan %q has no launcher job (plan.job.launcher is empty; want %q or %q)", name, EntryTrain, EntryData)
	}
	b, err := p.MarshalIndent()
	if err != nil {
		return nil, fmt.Errorf("rayruntime: encoding plan %q: %w", p.Name, err)
	}
	out := map[string][]byte{PlanFile: b, ProtocolFile: Protocol()}
	for _, name := range []string{LauncherFile, RecorderFile, RuntimeFile} {
		out[name] = source(name)
	}
	return out, nil
}

// ParseResult returns the JSON of the last outcome line in logs: the line
// the launcher prints last, after [ResultPrefix]. Any prefix Ray puts
// before it on the line ("(pid=1) ") is ignored. The outcome is an object
// with "kind" (JaxTrainer, Pipeline), "error" ({"type", "message"}) when
// the workload failed, "warnings" (problems the launcher worked around,
// each also logged with its traceback) and the entry's own keys (see
// [Outcome]).
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
		return nil, fmt.Errorf("rayruntime: reading job output: %w", err)
	}
	if last == "" {
		return nil, ErrNoResult
	}
	if !json.Valid([]byte(last)) {
		return nil, fmt.Errorf("rayruntime: result line is not JSON: %.200q", last)
	}
	return json.RawMessage(last), nil
}

// Outcome is what every outcome line holds, whatever the entry: decode
// the JSON of [ParseResult] into it, or into the entry's own result type
// (train.Result, data.Result), which has these keys too.
type Outcome struct {
	// Kind is "JaxTrainer" or "Pipeline"; empty when the launcher failed
	// before it knew the entry.
	Kind string `json:"kind,omitempty"`
	// Error is the Python exception that ended the workload, if any.
	Error *OutcomeError `json:"error,omitempty"`
	// Warnings are the problems the launcher worked around (a callback
	// that failed inside Ray's controller, a profiler report it could not
	// print); each was also logged with its traceback on standard error.
	Warnings []string `json:"warnings,omitempty"`
}

// CodeRuntimeWarning is the code of the findings [WarningFindings] makes.
const CodeRuntimeWarning = "RuntimeWarning"

// WarningFindings are the launcher's warnings as findings (severity
// warning, code [CodeRuntimeWarning]), the type every front end reports
// in: train.Result and data.Result list them with the compile warnings.
func WarningFindings(warnings []string) placement.Diagnosis {
	var d placement.Diagnosis
	for _, w := range warnings {
		d = append(d, placement.Finding{Severity: placement.SeverityWarning, Code: CodeRuntimeWarning, Message: w})
	}
	return d
}

// OutcomeError is a Python exception: its type name and message.
type OutcomeError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}
