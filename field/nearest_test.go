package field

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// nearestReference is NearestAll without its cut-offs: every candidate at
// the least edit distance, the ones that extend s if any do, within the
// limit.
func nearestReference(s string, valid []string) []string {
	bestD := 1 << 30
	ls := strings.ToLower(s)
	for _, v := range valid {
		bestD = min(bestD, levenshtein(ls, strings.ToLower(v), 1<<20))
	}
	var at, ext []string
	for _, v := range valid {
		lv := strings.ToLower(v)
		if levenshtein(ls, lv, 1<<20) != bestD {
			continue
		}
		if v == s {
			return nil
		}
		at = append(at, v)
		if bestD > 0 && strings.HasPrefix(lv, ls) {
			ext = append(ext, v)
		}
	}
	if len(ext) > 0 {
		at = ext
	}
	var out []string
	for _, v := range at {
		if bestD <= min(max(max(len(s), len(v))/3, 1), 3) {
			out = append(out, v)
		}
	}
	return out
}

// The cut-offs never change Nearest's answer.
func TestNearestMatchesReference(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("0123456789xXabAB-_é")
	word := func() string {
		var b strings.Builder
		for range r.IntN(10) {
			c := alphabet[r.IntN(len(alphabet))]
			b.WriteByte(c)
		}
		return b.String()
	}
	for i := range 20000 {
		valid := make([]string, r.IntN(30))
		for j := range valid {
			valid[j] = word()
		}
		s := word()
		if i%3 == 0 && len(valid) > 0 {
			s = valid[r.IntN(len(valid))] // near or exact hits too
			if len(s) > 1 {
				s = s[1:]
			}
		}
		want := nearestReference(s, valid)
		if got := NearestAll(s, valid); !slices.Equal(got, want) {
			t.Fatalf("NearestAll(%q, %q) = %q, want %q", s, valid, got, want)
		}
		first := ""
		if len(want) > 0 {
			first = want[0]
		}
		if got := Nearest(s, valid); got != first {
			t.Fatalf("Nearest(%q, %q) = %q, want %q", s, valid, got, first)
		}
	}
}

// A candidate that extends what was typed wins a tie; a tie between two
// is not decided by order.
func TestNearestPrefersExtensions(t *testing.T) {
	t.Parallel()
	gens := []string{"v2", "v3", "v4", "v5e", "v5p", "v6e", "v7x"}
	for s, want := range map[string][]string{
		"v6": {"v6e"}, "V6": {"v6e"}, "v5": {"v5e", "v5p"}, "v7": {"v7x"}, "v8": {"v2", "v3", "v4"},
		"v6e": nil, "V6E": {"v6e"}, "v6x": {"v6e", "v7x"},
	} {
		if got := NearestAll(s, gens); !slices.Equal(got, want) {
			t.Errorf("NearestAll(%q) = %q, want %q", s, got, want)
		}
	}
}
