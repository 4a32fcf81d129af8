package field

import (
	"math/bits"
	"strings"
)

// Nearest returns the element of valid closest to s by edit distance
// (case-insensitive), or "" when nothing is within a third of the longer
// string's length (at least 1 edit, at most 3). Among equally near
// candidates one that extends s (starts with it: "v6" -> "v6e") is
// preferred; when several remain, Nearest returns the first of them and
// NearestAll returns each.
func Nearest(s string, valid []string) string {
	var buf [4]string
	if all := nearestAll(s, valid, buf[:0]); len(all) > 0 {
		return all[0]
	}
	return ""
}

// NearestAll returns every element of valid as near to s as Nearest's
// answer, in the order of valid: nil when nothing is near, one value when
// one is nearest, several on a tie ("v5" is as near to v5e as to v5p).
func NearestAll(s string, valid []string) []string {
	return nearestAll(s, valid, nil)
}

// nearestAll is NearestAll appending to out.
//
// Nearest is on the path of every NotSupported error, some of which offer
// hundreds of values (a TPU generation's topologies), so it skips
// candidates it can prove too far before computing an edit distance.
func nearestAll(s string, valid []string, out []string) []string {
	// Nothing farther than limitMax, the limit for the longest candidate,
	// is ever returned, so the search starts with that bound and tightens
	// it as nearer candidates are found. A candidate is cut short by its
	// length, by the characters it lacks or adds, then inside the edit
	// distance. Candidates as near as the best are kept.
	maxLen := 0
	for _, v := range valid {
		maxLen = max(maxLen, len(v))
	}
	limitMax := min(max(max(len(s), maxLen)/3, 1), 3)
	bestD := limitMax
	extends := false // some kept candidate extends s
	start := len(out)
	ls := strings.ToLower(s)
	sp, ascii := profileOf(ls)
	for _, v := range valid {
		bound := bestD
		if ascii {
			if mask, ok := maskOf(v); ok {
				// Lowering keeps an ASCII string's length.
				if abs(len(ls)-len(v)) > bound || bits.OnesCount32(sp.mask&^mask) > bound ||
					bits.OnesCount32(mask&^sp.mask) > bound || sp.bagDistance(ls, v) > bound {
					continue
				}
			}
		}
		lv := strings.ToLower(v)
		if abs(len(ls)-len(lv)) > bound {
			continue
		}
		d := levenshtein(ls, lv, bound)
		if d > bound {
			continue
		}
		ext := d > 0 && strings.HasPrefix(lv, ls)
		switch {
		case d < bestD:
			out, bestD, extends = append(out[:start], v), d, ext
		case ext && !extends:
			out, extends = append(out[:start], v), true
		case ext == extends:
			out = append(out, v)
		}
	}
	// The limit of each: a third of the longer string. s itself is valid,
	// so no suggestion; a match in another case is one.
	keep := out[:start]
	for _, v := range out[start:] {
		if bestD == 0 && v == s {
			return out[:start]
		}
		if bestD <= min(max(max(len(s), len(v))/3, 1), 3) {
			keep = append(keep, v)
		}
	}
	return keep
}

// bucket folds an ASCII byte, letters case-insensitively, into one of 31
// buckets (digits and x each get their own); noBucket marks other bytes.
// Folding merges bytes, so every count below stays a lower bound of the
// edit distance.
var bucket = func() (t [256]uint8) {
	for c := range 256 {
		switch {
		case c >= 128:
			t[c] = noBucket
		case 'A' <= c && c <= 'Z':
			t[c] = uint8((c + 'a' - 'A') % 31)
		default:
			t[c] = uint8(c % 31)
		}
	}
	return t
}()

const noBucket = 255

// profile is the buckets of an ASCII string: which occur, and how often.
type profile struct {
	mask uint32
	bag  [32]int8
}

func profileOf(s string) (p profile, ok bool) {
	for i := 0; i < len(s); i++ {
		b := bucket[s[i]]
		if b == noBucket || p.bag[b] == 127 {
			return p, false
		}
		p.mask |= 1 << b
		p.bag[b]++
	}
	return p, true
}

// maskOf is the set of buckets of an ASCII string; ok is false otherwise.
func maskOf(s string) (m uint32, ok bool) {
	for i := 0; i < len(s); i++ {
		b := bucket[s[i]]
		if b == noBucket {
			return 0, false
		}
		m |= 1 << b
	}
	return m, true
}

// bagDistance is a lower bound of the edit distance of a (profiled in p)
// and the ASCII string b: the larger of what a has in excess and what b
// has, counted by bucket.
func (p *profile) bagDistance(a, b string) int {
	bag := p.bag
	for i := 0; i < len(b); i++ {
		bag[bucket[b[i]]]--
	}
	pos, neg := 0, 0
	for i := 0; i < len(a)+len(b); i++ {
		var c byte
		if i < len(a) {
			c = a[i]
		} else {
			c = b[i-len(a)]
		}
		k := bucket[c]
		switch d := int(bag[k]); {
		case d > 0:
			pos += d
		case d < 0:
			neg -= d
		}
		bag[k] = 0
	}
	return max(pos, neg)
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// levenshtein is the edit distance of a and b, or bound+1 once it is sure
// to exceed bound.
func levenshtein(a, b string, bound int) int {
	// Two rows on the stack for the short strings of spec values.
	var buf [2 * 48]int
	var prev, cur []int
	if n := len(b) + 1; n <= len(buf)/2 {
		prev, cur = buf[:n], buf[n:2*n]
	} else {
		prev, cur = make([]int, n), make([]int, n)
	}
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			rowMin = min(rowMin, cur[j])
		}
		if rowMin > bound {
			return bound + 1
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
