package packaging

import (
	"fmt"
	"regexp"
	"strings"
)

// pattern is one compiled gitignore-style line.
type pattern struct {
	re      *regexp.Regexp
	exclude bool // true for a plain pattern, false for a "!" negation
}

// pathSpec matches slash-separated paths relative to its base directory
// the way Ray's runtime_env "excludes", .gitignore and .rayignore do (Ray's
// vendored pathspec "gitwildmatch"): the last matching line decides.
type pathSpec struct {
	base     string // relative path of the directory the spec applies to ("" = root)
	patterns []pattern
}

func compileSpec(base string, lines []string) (*pathSpec, error) {
	ps := &pathSpec{base: base}
	for _, l := range lines {
		re, exclude, ok := wildmatchRegex(l)
		if !ok {
			continue
		}
		c, err := regexp.Compile(re)
		if err != nil {
			return nil, fmt.Errorf("pattern %q: %v", strings.TrimSpace(l), err)
		}
		ps.patterns = append(ps.patterns, pattern{re: c, exclude: exclude})
	}
	return ps, nil
}

// match reports whether rel (relative to the walk root) is excluded.
func (ps *pathSpec) match(rel string) bool {
	p := rel
	switch {
	case ps.base == "":
	case rel == ps.base:
		p = "."
	case strings.HasPrefix(rel, ps.base+"/"):
		p = rel[len(ps.base)+1:]
	default:
		return false
	}
	if p == "" {
		p = "."
	}
	matched := false
	for _, pt := range ps.patterns {
		if pt.re.MatchString(p) {
			matched = pt.exclude
		}
	}
	return matched
}

// wildmatchRegex translates one gitignore line into a regular expression.
// ok is false for blank lines, comments and "/".
func wildmatchRegex(line string) (re string, exclude, ok bool) {
	p := strings.TrimSpace(line)
	if p == "" || strings.HasPrefix(p, "#") || p == "/" {
		return "", false, false
	}
	exclude = true
	if strings.HasPrefix(p, "!") {
		exclude = false
		p = p[1:]
	}
	p = strings.TrimPrefix(p, `\`)
	segs := strings.Split(p, "/")
	switch {
	case segs[0] == "":
		// Anchored to the base directory: drop the empty first segment.
		segs = segs[1:]
	case len(segs) == 1 || len(segs) == 2 && segs[1] == "":
		// A bare name (or "name/") matches at any depth.
		if segs[0] != "**" {
			segs = append([]string{"**"}, segs...)
		}
	}
	if len(segs) > 1 && segs[len(segs)-1] == "" {
		// "dir/" matches everything below dir (not dir itself).
		segs[len(segs)-1] = "**"
	}
	var b strings.Builder
	b.WriteString("^")
	needSlash := false
	last := len(segs) - 1
	for i, s := range segs {
		switch {
		case s == "**" && i == 0 && i == last:
			b.WriteString(".+")
		case s == "**" && i == 0:
			b.WriteString("(?:.+/)?")
			needSlash = false
		case s == "**" && i == last:
			b.WriteString("/.*")
		case s == "**":
			b.WriteString("(?:/.+)?")
			needSlash = true
		case s == "*":
			if needSlash {
				b.WriteString("/")
			}
			b.WriteString("[^/]+")
			needSlash = true
		default:
			if needSlash {
				b.WriteString("/")
			}
			b.WriteString(globSegment(s))
			if i == last && exclude {
				b.WriteString("(?:/.*)?")
			}
			needSlash = true
		}
	}
	b.WriteString("$")
	return b.String(), exclude, true
}

// globSegment translates one path segment's glob (*, ?, [...], \x).
func globSegment(s string) string {
	var b strings.Builder
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		switch c {
		case '\\':
			if i+1 < len(rs) {
				i++
				b.WriteString(regexp.QuoteMeta(string(rs[i])))
			}
		case '*':
			b.WriteString("[^/]*")
		case '?':
			b.WriteString("[^/]")
		case '[':
			// Find the closing bracket; "[!" and "[]" open a class whose
			// first character is literal.
			j := i + 1
			if j < len(rs) && rs[j] == '!' {
				j++
			}
			if j < len(rs) && rs[j] == ']' {
				j++
			}
			for j < len(rs) && rs[j] != ']' {
				j++
			}
			if j >= len(rs) {
				b.WriteString(`\[`)
				continue
			}
			k := i + 1
			b.WriteString("[")
			switch rs[k] {
			case '!':
				b.WriteString("^")
				k++
			case '^':
				b.WriteString(`\^`)
				k++
			}
			b.WriteString(strings.ReplaceAll(string(rs[k:j+1]), `\`, `\\`))
			i = j
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	return b.String()
}
