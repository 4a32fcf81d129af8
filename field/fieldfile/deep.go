package fieldfile

// A document nested deeper than the YAML parser's own limit (10000
// levels: a few kilobytes of brackets) fails to parse with no path. To
// name the field that nests so deep, the document is cut where it first
// nests past maxDepth, closed there, and decoded again: the walker then
// reports the field, as it does for any document deeper than maxDepth.

import (
	"bytes"
	"reflect"
	"strings"

	"github.com/raytpu/raytpu/field"
)

func isDepthError(err error) bool {
	return strings.Contains(err.Error(), "exceeded max depth")
}

// deepError reports a document too deep to parse at the field where it
// first nests deeper than maxDepth, or, when that is not found, as
// syntax says (at the file, with the parser's line).
func deepError(b []byte, root *field.Path, t reflect.Type, syntax *field.Error) field.ErrorList {
	if cut, ok := truncateDeep(b, maxDepth+8); ok {
		errs := Decode(cut, root, reflect.New(t).Interface())
		var deep field.ErrorList
		for _, e := range errs {
			if strings.HasPrefix(e.Detail, "nests deeper than") {
				deep = append(deep, e)
			}
		}
		if len(deep) > 0 {
			return deep
		}
	}
	syntax.BadValue = nil
	syntax.Detail = "nests deeper than the YAML parser's limit of 10000 levels; raytpu reads at most 64"
	return field.ErrorList{syntax}
}

// truncateDeep returns the part of b before the point where it first
// nests limit levels deep, through flow collections ([ and {) and block
// sequences written on one line (- - -), closed with a scalar and the
// brackets still open. It reads YAML roughly: quoted scalars and comments
// are skipped, block scalars are not; a guess that is wrong yields a
// document that does not show the depth, and the caller falls back.
func truncateDeep(b []byte, limit int) ([]byte, bool) {
	var flow []byte // the open brackets
	lineStart := true
	markers := 0 // block sequence entries (- ) opened on this line
	prev := byte('\n')
	for i := 0; i < len(b); i++ {
		c := b[i]
		tokenStart := prev == ' ' || prev == '\t' || prev == '\n' || prev == '[' || prev == '{' || prev == ','
		switch {
		case c == '\n':
			lineStart, markers = true, 0
		case c == ' ' || c == '\t':
		case c == '#' && (prev == ' ' || prev == '\t' || prev == '\n'):
			for i+1 < len(b) && b[i+1] != '\n' {
				i++
			}
		case (c == '"' || c == '\'') && tokenStart:
			i = skipQuoted(b, i)
		case (c == '[' || c == '{') && (len(flow) > 0 || tokenStart):
			flow = append(flow, c)
			if len(flow)+markers >= limit {
				return closeCut(b[:i+1], flow), true
			}
		case (c == ']' || c == '}') && len(flow) > 0:
			flow = flow[:len(flow)-1]
		case (c == '-' || c == '?') && len(flow) == 0 && lineStart && i+1 < len(b) && (b[i+1] == ' ' || b[i+1] == '\n'):
			markers++
			if markers >= limit {
				return append(bytes.Clone(b[:i+1]), " x\n"...), true
			}
		default:
			lineStart = false
		}
		if i < len(b) {
			prev = b[i]
		}
	}
	return nil, false
}

// skipQuoted returns the index of the quote that ends the quoted scalar
// starting at b[i] (the last byte when none does).
func skipQuoted(b []byte, i int) int {
	q := b[i]
	for j := i + 1; j < len(b); j++ {
		switch {
		case q == '"' && b[j] == '\\':
			j++
		case b[j] == q && q == '\'' && j+1 < len(b) && b[j+1] == '\'':
			j++
		case b[j] == q:
			return j
		}
	}
	return len(b) - 1
}

func closeCut(head []byte, flow []byte) []byte {
	out := append(bytes.Clone(head), 'x')
	for i := len(flow) - 1; i >= 0; i-- {
		if flow[i] == '[' {
			out = append(out, ']')
		} else {
			out = append(out, '}')
		}
	}
	return append(out, '\n')
}
