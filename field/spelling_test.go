package field_test

import (
	"testing"

	"github.com/raytpu/raytpu/field"
)

type spellInner struct {
	Topology string `json:"topology"`
}

type spellShaped struct{ Seconds int }

func (spellShaped) FileShape() any {
	return struct {
		TimeoutS int `json:"timeout_s"`
	}{}
}

type spellEmbedded struct {
	Steps int `json:"steps"`
}

type spellSpec struct {
	spellEmbedded
	AcceleratorConfig *spellInner           `json:"accelerator_config"`
	Deployments       []spellInner          `json:"deployments"`
	ByName            map[string]spellInner `json:"by_name"`
	NoTag             int
	Skipped           int         `json:"-"`
	Shaped            spellShaped `json:"shaped"`
}

// Go-spelled paths become the file's spelling by the JSON names of the
// fields they pass; what names no field is left as it is.
func TestJSONSpelling(t *testing.T) {
	t.Parallel()
	s := field.JSONSpelling("app", spellSpec{})
	for in, want := range map[string]string{
		"app.acceleratorConfig.topology":    "app.accelerator_config.topology",
		"app.deployments[LLM].topology":     "app.deployments[LLM].topology",
		"app.byName[a.b].topology":          "app.by_name[a.b].topology",
		"app.steps":                         "app.steps",
		"app.noTag":                         "app.NoTag",
		"app.skipped":                       "app.skipped",
		"app.unknown.acceleratorConfig":     "app.unknown.acceleratorConfig",
		"app.shaped.timeoutS":               "app.shaped.timeout_s",
		"other.acceleratorConfig":           "other.acceleratorConfig",
		"app":                               "app",
		"app.acceleratorConfig[0].topology": "app.accelerator_config[0].topology",
	} {
		if got := s(in); got != want {
			t.Errorf("%s: got %s, want %s", in, got, want)
		}
	}
}

// Respell rewrites copies and keeps type, value and line.
func TestRespell(t *testing.T) {
	t.Parallel()
	orig := field.Invalid(field.NewPath("app", "acceleratorConfig", "topology"), 16, "want a string")
	orig.Line = 4
	err := field.Respell(field.ErrorList{orig}, field.JSONSpelling("app", spellSpec{}))
	got := field.Errors(err)
	if len(got) != 1 || got[0].Field != "app.accelerator_config.topology" || got[0].Type != field.TypeInvalid || got[0].Line != 4 || got[0].BadValue != 16 {
		t.Fatalf("Respell = %#v", got)
	}
	if orig.Field != "app.acceleratorConfig.topology" {
		t.Errorf("Respell changed the original: %s", orig.Field)
	}
	if want := "app.accelerator_config.topology (line 4): Invalid value: 16: want a string"; got[0].Error() != want {
		t.Errorf("Error() = %q, want %q", got[0].Error(), want)
	}
}
