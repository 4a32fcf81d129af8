package placement

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Severity ranks a finding.
type Severity string

// Severities.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
	SeverityInfo    Severity = "info"
)

// Finding is one observation about a placement.
type Finding struct {
	Severity Severity `json:"severity"`
	Code     string   `json:"code"`
	Message  string   `json:"message"`
	// Part is the workload part the finding is about, when the placement
	// was made for a plan whose slice groups name their parts.
	Part string `json:"part,omitempty"`
	// Field is the path of the option the finding is about, when a front
	// end's check found it (data.Predict: "iter.ragged").
	Field string `json:"field,omitempty"`
}

// Diagnosis lists the findings about a placement, most severe first
// within each step.
type Diagnosis []Finding

// HasErrors reports whether any finding is an error.
func (d Diagnosis) HasErrors() bool {
	return slices.ContainsFunc(d, func(f Finding) bool { return f.Severity == SeverityError })
}

// Codes lists the codes of the findings, in order.
func (d Diagnosis) Codes() []string {
	out := make([]string, len(d))
	for i, f := range d {
		out[i] = f.Code
	}
	return out
}

// Err returns the error findings as one error, or nil.
func (d Diagnosis) Err() error {
	var errs []error
	for _, f := range d {
		if f.Severity == SeverityError {
			errs = append(errs, errors.New(f.Code+": "+f.Message))
		}
	}
	return errors.Join(errs...)
}

// String renders one finding per line: "error SpansSlices: ...". An empty
// diagnosis found nothing to report and says so, as the CLI does: "ok: no
// findings".
func (d Diagnosis) String() string {
	if len(d) == 0 {
		return "ok: no findings\n"
	}
	var b strings.Builder
	for _, f := range d {
		b.WriteString(f.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// String renders the finding on one line: "error SpansSlices: ...", with
// the part and the field it is about when known ("error SpansSlices:
// deployment "llm" replica 0: ...", "warning DropDiscards: iter.ragged:
// ...").
func (f Finding) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: ", f.Severity, f.Code)
	for _, s := range []string{f.Part, f.Field} {
		if s != "" {
			b.WriteString(s + ": ")
		}
	}
	b.WriteString(f.Message)
	return b.String()
}
