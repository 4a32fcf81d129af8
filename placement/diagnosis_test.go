package placement_test

import (
	"testing"

	"github.com/raytpu/raytpu/placement"
)

// The diagnosis and its wording are total: nil, zero and negative inputs
// get an answer, never a panic, and an empty diagnosis says ok.
func TestDiagnosisZeroInputs(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, got, want string
	}{
		{"nil diagnosis", placement.Diagnosis(nil).String(), "ok: no findings\n"},
		{"empty diagnosis", placement.Diagnosis{}.String(), "ok: no findings\n"},
		{"zero finding", placement.Finding{}.String(), " : "},
		{"nil resources", placement.FormatResources(nil), "{}"},
		{"nil selector", placement.FormatSelector(nil), "{}"},
		{"negative count", placement.Plural(-1, "host"), "-1 hosts"},
		{"zero count", placement.Plural(0, "host"), "0 hosts"},
		{"empty group name", placement.GroupName("", ""), "placement group "},
	} {
		if c.got != c.want {
			t.Errorf("%s: %q, want %q", c.name, c.got, c.want)
		}
	}
	if err := placement.Diagnosis(nil).Err(); err != nil {
		t.Errorf("Err of a nil diagnosis = %v", err)
	}
	if placement.Diagnosis(nil).HasErrors() || len(placement.Diagnosis(nil).Codes()) != 0 {
		t.Error("a nil diagnosis has errors or codes")
	}
	for _, l := range []placement.RawLanding{{}, {Hosts: -3, Bundles: -1}, {Hosts: 2, Shares: []placement.SliceShare{{}}}, {Hosts: 2, Shares: []placement.SliceShare{{}, {}}}} {
		_ = l.Diagnose() // no panic with a nil Generation or zero shares
	}
	for _, f := range []placement.Finding{placement.PendingFinding("", ""), placement.InfeasibleFinding("", "")} {
		if f.Code == "" || f.Severity == "" {
			t.Errorf("a finding of empty inputs has no code or severity: %+v", f)
		}
	}
}
