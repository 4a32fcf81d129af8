package kuberay_test

import (
	"strings"
	"testing"

	"github.com/raytpu/raytpu/kuberay"
)

// NameFor keeps a valid name, and gives every other name a valid one that
// no other name gets: a hash of the original follows whatever had to be
// dropped, lowered or cut.
func TestNameFor(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", 70)
	for in, want := range map[string]string{
		"chat":                  "chat",
		"llama-v6e":             "llama-v6e",
		"":                      "raytpu",
		"Bad_Name":              "bad-name-5076bbac",
		"chät-模型":               "ch-t-23da2ad8",
		"chöt-模型":               "ch-t-cbee4eb6",
		strings.Repeat("a", 47): strings.Repeat("a", 47),
	} {
		if got := kuberay.NameFor(in); got != want {
			t.Errorf("NameFor(%q) = %q, want %q", in, got, want)
		}
	}
	seen := map[string]string{}
	for _, in := range []string{"chät-模型", "chöt-模型", "Chat", "chat", "CHAT", long, long + "b", "x--y", "x__y", "模型", "型模"} {
		got := kuberay.NameFor(in)
		if msgs := kuberay.CheckName(got, kuberay.MaxRayJobName); msgs != nil {
			t.Errorf("NameFor(%q) = %q, not valid: %v", in, got, msgs)
		}
		if prev, dup := seen[got]; dup {
			t.Errorf("NameFor(%q) = NameFor(%q) = %q", in, prev, got)
		}
		seen[got] = in
	}
}

func TestCheckName(t *testing.T) {
	t.Parallel()
	for name, bad := range map[string]bool{"chat": false, "Bad_Name": true, "9lives": true, strings.Repeat("a", 47): false, strings.Repeat("a", 48): true, "a-": true} {
		if got := kuberay.CheckName(name, kuberay.MaxRayServiceName) != nil; got != bad {
			t.Errorf("CheckName(%q) refused %v, want %v", name, got, bad)
		}
	}
	if got, err := kuberay.SuggestName("Bad_Name", kuberay.MaxRayServiceName); got != "bad-name" || err != nil {
		t.Errorf("SuggestName = %q, %v", got, err)
	}
}
