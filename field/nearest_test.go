package field

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// nearestReference is Nearest without its cut-offs: the plain argmin of
// the edit distance over every candidate.
func nearestReference(s string, valid []string) string {
	best, bestD := "", 1<<30
	ls := strings.ToLower(s)
	for _, v := range valid {
		if d := levenshtein(ls, strings.ToLower(v), 1<<20); d < bestD {
			best, bestD = v, d
		}
	}
	limit := min(max(max(len(s), len(best))/3, 1), 3)
	if best == "" || bestD > limit || bestD == 0 && best == s {
		if best != "" && bestD == 0 && best != s {
			return best
		}
		return ""
	}
	return best
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
		if got, want := Nearest(s, valid), nearestReference(s, valid); got != want {
			t.Fatalf("Nearest(%q, %q) = %q, want %q", s, valid, got, want)
		}
	}
}
