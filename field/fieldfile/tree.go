package fieldfile

// The tree reads a parsed YAML document as PyYAML's SafeLoader constructs
// it: YAML 1.1 scalars (yaml11.go), merge keys flattened into the
// mappings that hold them, and aliases shared rather than copied, so that
// building it costs the file's size however far its aliases expand. Each
// value knows how many values it expands to and how deep it nests, which
// bounds the work of walking and converting it before it is done.

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

type kind uint8

const (
	kNull kind = iota
	kBool
	kInt   // s holds the decimal digits, of any size
	kFloat // f
	kStr   // s
	kTime  // s holds the isoformat of the date PyYAML makes
	kMap   // pairs
	kSeq   // items
	kBad   // s says what PyYAML or Ray makes of it and why raytpu refuses it
)

// value is one node of the document as PyYAML constructs it. Values are
// shared: an alias is an edge to the value of its anchor.
//
// A document may hold a value for every two bytes of its file, so a value
// is small: 64 bytes for a scalar, more only for a mapping or a list.
type value struct {
	kind   kind
	b      bool
	plain  bool  // an untagged plain scalar
	hasLit bool  // lit holds the scalar as written (s does otherwise)
	line   int32 // where it is written
	f      float64
	s      string
	lit    string
	c      *coll // a mapping's or a list's
}

// coll is what a mapping or a list holds.
type coll struct {
	size   int64  // the values it expands to, itself included
	height int32  // the levels it nests, itself one
	pairs  []pair // a mapping's: merged keys first, then its own
	items  []edge // a list's
	// merged is how many of pairs its merge keys (<<) gave, the first of
	// them at mergeAt; conflicts holds, by pair, the key of a second
	// merged value for it that differs.
	merged    int
	mergeAt   *yaml.Node
	conflicts map[int]*value
	// bad is a problem of a mapping's merge keys, at the key.
	bad *merr
}

// size is the number of values v expands to, itself included, where a
// scalar counts one value for every 8 bytes it holds beyond the first 8:
// an alias to a long string costs as much as that many values.
func (v *value) size() int64 {
	if v.c == nil {
		return 1 + int64(len(v.s)/scalarBytes)
	}
	return v.c.size
}

// own is what v counts itself, its children left out.
func (v *value) own() int64 {
	if v.c == nil {
		return v.size()
	}
	return 1
}

// scalarBytes is the bytes of a scalar that count as one value.
const scalarBytes = 8

// height is the number of levels v nests, itself one.
func (v *value) height() int32 {
	if v.c == nil {
		return 1
	}
	return v.c.height
}

// raw is a scalar as written.
func (v *value) raw() string {
	if v.hasLit {
		return v.lit
	}
	return v.s
}

// setLit keeps the scalar as written before s changes.
func (v *value) setLit() {
	if !v.hasLit {
		v.lit, v.hasLit = v.s, true
	}
}

type merr struct {
	msg  string
	line int
}

// edge leads to a value, through the alias that names it (nil when the
// value is written in place).
type edge struct {
	v   *value
	via *yaml.Node
}

type pair struct {
	key, val edge
}

// from is the merge key's value that gave pair i, nil for the mapping's own.
func (c *coll) from(i int) *yaml.Node {
	if i < c.merged {
		return c.mergeAt
	}
	return nil
}

// builder builds the values of one document. work counts what building
// costs beyond the nodes of the file (the pairs merge keys copy, the
// values compared, the pairs measured) against budget, copies the pairs
// merge keys copy against a quarter of it; past either, building stops
// and over names the merge key's value that passed it.
type builder struct {
	// src is the document's text, to find the non-specific tag (see
	// nonSpecific); lines holds the offsets its lines start at.
	src   []byte
	bang  bool
	lines []int
	// memo and building hold anchored nodes only: only they are shared.
	memo         map[*yaml.Node]*value
	building     map[*yaml.Node]bool
	work, copies int64
	budget       int64
	stopped      bool
	over         *yaml.Node
}

func newBuilder(src []byte, budget int64) *builder {
	return &builder{src: src, bang: bytes.IndexByte(src, '!') >= 0,
		memo: map[*yaml.Node]*value{}, building: map[*yaml.Node]bool{}, budget: budget}
}

// nonSpecific reports a quoted or block scalar written with the
// non-specific tag ! (v: ! 'yes'), which go.yaml.in/yaml/v3 drops and
// PyYAML resolves as it resolves a plain scalar. The node's column is
// where its properties (anchor and tag) start.
func (b *builder) nonSpecific(n *yaml.Node) bool {
	if !b.bang || n.Line < 1 || n.Column < 1 {
		return false
	}
	if b.lines == nil {
		b.lines = []int{0}
		for i, c := range b.src {
			if c == '\n' {
				b.lines = append(b.lines, i+1)
			}
		}
	}
	if n.Line > len(b.lines) {
		return false
	}
	s := b.src[b.lines[n.Line-1]:]
	for i := 1; i < n.Column && len(s) > 0; i++ { // columns count characters
		_, size := utf8.DecodeRune(s)
		s = s[size:]
	}
	for len(s) > 0 {
		switch s[0] {
		case ' ', '\t', '\r', '\n':
			s = s[1:]
		case '&':
			for len(s) > 0 && s[0] != ' ' && s[0] != '\t' && s[0] != '\r' && s[0] != '\n' {
				s = s[1:]
			}
		case '!':
			return len(s) == 1 || s[1] == ' ' || s[1] == '\t' || s[1] == '\r' || s[1] == '\n'
		default:
			return false
		}
	}
	return false
}

func leaf(k kind, n *yaml.Node) *value {
	return &value{kind: k, line: int32(n.Line), s: n.Value}
}

// edge builds the value n leads to. It consumes the node tree: each node
// is dropped from its parent once built, so that the parser's tree (twice
// the size of the values) is freed while the values grow; an anchored
// node stays reachable from its aliases, and is built once.
func (b *builder) edge(n *yaml.Node) edge {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return edge{v: leaf(kNull, n)}
		}
		return b.edge(n.Content[0])
	case yaml.AliasNode:
		t := n.Alias
		if t == nil {
			return edge{v: leaf(kNull, n), via: n}
		}
		if b.building[t] {
			v := leaf(kBad, n)
			v.lit, v.hasLit = "*"+n.Value, true
			v.s = fmt.Sprintf("the alias *%s refers to the %s that holds it (line %d): a value that holds itself, which JSON cannot hold", n.Value, nodeKindName(t), t.Line)
			return edge{v: v, via: n}
		}
		return edge{v: b.value(t), via: n}
	}
	return edge{v: b.value(n)}
}

func nodeKindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	}
	return "value"
}

func (b *builder) value(n *yaml.Node) *value {
	if b.stopped {
		return leaf(kNull, n) // the document is refused: build nothing more
	}
	anchored := n.Anchor != ""
	if anchored {
		if v, ok := b.memo[n]; ok {
			return v
		}
		b.building[n] = true
	}
	var v *value
	switch n.Kind {
	case yaml.MappingNode:
		v = b.mapping(n)
	case yaml.SequenceNode:
		v = &value{kind: kSeq, line: int32(n.Line), c: &coll{items: make([]edge, len(n.Content))}}
		for i, c := range n.Content {
			v.c.items[i] = b.edge(c)
			n.Content[i] = nil // built: the parser's node may go
		}
		if n.Style&yaml.TaggedStyle != 0 && n.Tag != "!!seq" {
			v = badTag(n)
		}
	default:
		v = scalar(n, isPlain(n) || (n.Style&yaml.TaggedStyle == 0 && b.nonSpecific(n)))
	}
	b.measure(v)
	if anchored {
		b.building[n] = false
		b.memo[n] = v
	}
	return v
}

// measure sets a mapping's or a list's size and height from its
// children's.
func (b *builder) measure(v *value) {
	c := v.c
	if c == nil {
		return
	}
	if b.charge(int64(len(c.pairs)+len(c.items)), c.mergeAt) {
		return
	}
	c.size, c.height = 1, 1
	for _, p := range c.pairs {
		c.size = addSat(c.size, addSat(p.key.v.size(), p.val.v.size()))
		c.height = max(c.height, 1+p.val.v.height())
	}
	for _, e := range c.items {
		c.size = addSat(c.size, e.v.size())
		c.height = max(c.height, 1+e.v.height())
	}
}

func addSat(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

func isMergeKey(k *yaml.Node) bool {
	return k.Kind == yaml.ScalarNode && isPlain(k) && k.Value == "<<"
}

// isPlain reports an untagged plain scalar, the only kind PyYAML resolves.
func isPlain(n *yaml.Node) bool {
	return n.Style&(yaml.TaggedStyle|yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) == 0
}

// mapping builds a mapping as SafeConstructor.flatten_mapping leaves it:
// the keys of its merge keys' mappings first, in the order given, then its
// own, which win. Where two merged mappings give one key different
// values, PyYAML 6.0.4 keeps the first for a key of one character and the
// last for a longer one (it compares the keys' string objects); the
// mapping records the conflict and the walker refuses it.
func (b *builder) mapping(n *yaml.Node) *value {
	if n.Style&yaml.TaggedStyle != 0 && n.Tag != "!!map" {
		return badTag(n)
	}
	v := &value{kind: kMap, line: int32(n.Line), c: &coll{}}
	var sources []*coll
	own := make([]pair, 0, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if isMergeKey(k) {
			if v.c.mergeAt == nil {
				v.c.mergeAt = val
			}
			sources = b.mergeSources(v, sources, k, val)
		} else {
			var key edge
			if k.Kind == yaml.ScalarNode && isPlain(k) && k.Value == "=" {
				// The value key: flatten_mapping makes it a string.
				key = edge{v: leaf(kStr, k)}
				key.v.plain = true
			} else {
				key = b.edge(k)
			}
			own = append(own, pair{key: key, val: b.edge(val)})
		}
		n.Content[i], n.Content[i+1] = nil, nil // built: the parser's nodes may go
	}
	if v.c.bad != nil || len(sources) == 0 {
		v.c.pairs = own
		return v
	}
	if len(sources) == 1 && len(own) == 0 {
		// <<: *defaults alone: the mapping is its source's.
		v.c.pairs, v.c.merged, v.c.conflicts = sources[0].pairs, len(sources[0].pairs), sources[0].conflicts
		return v
	}
	var mine map[string]bool
	if len(own) > 0 {
		mine = make(map[string]bool, len(own))
		for _, p := range own {
			if s, ok := keyString(p.key.v); ok {
				mine[s] = true
			}
		}
	}
	var index map[string]int
	if len(sources) > 1 {
		index = map[string]int{}
	}
	var merged []pair
	for _, src := range sources {
		for i, p := range src.pairs {
			if b.copy(v.c.mergeAt) {
				return v
			}
			s, ok := keyString(p.key.v)
			if ok && mine[s] {
				continue // the mapping's own key wins
			}
			if j, dup := index[s]; ok && dup {
				if v.c.conflicts[j] == nil && !b.equal(merged[j].val.v, p.val.v, v.c.mergeAt) {
					v.c.setConflict(j, p.key.v)
				}
				continue
			}
			if k := src.conflicts[i]; k != nil {
				v.c.setConflict(len(merged), k)
			}
			if ok && index != nil {
				index[s] = len(merged)
			}
			merged = append(merged, p)
		}
	}
	v.c.merged = len(merged)
	v.c.pairs = append(merged, own...)
	return v
}

func (c *coll) setConflict(i int, k *value) {
	if c.conflicts == nil {
		c.conflicts = map[int]*value{}
	}
	c.conflicts[i] = k
}

// mergeSources adds the mappings a merge key's value gives to sources: a
// mapping, or each mapping of a list, in order.
func (b *builder) mergeSources(v *value, sources []*coll, k, val *yaml.Node) []*coll {
	src := b.edge(val)
	if v.c.bad != nil {
		return sources
	}
	switch src.v.kind {
	case kMap:
		if src.v.c.bad != nil {
			v.setBad(src.v.c.bad.msg, k)
		}
		return append(sources, src.v.c)
	case kSeq:
		for i, e := range src.v.c.items {
			if e.v.kind != kMap {
				v.setBad(fmt.Sprintf("the merge key << takes a mapping or a list of mappings; item %d of its list is %s", i, describeValue(e.v)), k)
				return sources
			}
			if e.v.c.bad != nil {
				v.setBad(e.v.c.bad.msg, k)
			}
			sources = append(sources, e.v.c)
		}
		return sources
	case kBad:
		v.setBad(src.v.s, k)
	default:
		v.setBad("the merge key << takes a mapping (<<: *anchor) or a list of mappings, got "+describeValue(src.v), k)
	}
	return sources
}

func (v *value) setBad(msg string, at *yaml.Node) {
	if v.c.bad == nil {
		v.c.bad = &merr{msg: msg, line: at.Line}
	}
}

// charge counts n units of work done for the merge key whose value is at;
// it reports true once the budget is spent.
func (b *builder) charge(n int64, at *yaml.Node) bool {
	b.work += n
	return b.spent(b.work > b.budget, at)
}

// copy counts a pair a merge key copies.
func (b *builder) copy(at *yaml.Node) bool {
	b.copies++
	return b.spent(b.copies > b.budget/4, at)
}

func (b *builder) spent(over bool, at *yaml.Node) bool {
	if over && !b.stopped {
		b.stopped, b.over = true, at
	}
	return over
}

// equal reports whether two values are the same to Python.
func (b *builder) equal(x, y *value, at *yaml.Node) bool {
	if x == y {
		return true
	}
	if b.charge(1, at) || x.kind != y.kind {
		return false
	}
	switch x.kind {
	case kNull:
		return true
	case kBool:
		return x.b == y.b
	case kFloat:
		return x.f == y.f
	case kInt, kStr, kTime:
		return !b.charge(int64(len(x.s)/scalarBytes), at) && x.s == y.s
	case kSeq:
		if len(x.c.items) != len(y.c.items) {
			return false
		}
		for i := range x.c.items {
			if !b.equal(x.c.items[i].v, y.c.items[i].v, at) {
				return false
			}
		}
		return true
	case kMap:
		if len(x.c.pairs) != len(y.c.pairs) || x.c.bad != nil || y.c.bad != nil {
			return false
		}
		for i := range x.c.pairs {
			if !b.equal(x.c.pairs[i].key.v, y.c.pairs[i].key.v, at) || !b.equal(x.c.pairs[i].val.v, y.c.pairs[i].val.v, at) {
				return false
			}
		}
		return true
	}
	return false
}

func badTag(n *yaml.Node) *value {
	v := leaf(kBad, n)
	v.lit, v.hasLit = n.Tag, true
	if n.Kind == yaml.ScalarNode {
		v.lit += " " + n.Value
	}
	v.s = fmt.Sprintf("the tag %s: raytpu reads YAML as Ray's PyYAML safe_load does, and takes no tags but !!str, !!int, !!float, !!bool, !!null, !!map and !!seq (safe_load makes bytes of !!binary and dates of !!timestamp, which Ray cannot send as JSON, and refuses other tags)", n.Tag)
	return v
}

// scalar constructs a scalar as PyYAML does: an untagged plain scalar
// (or one tagged !) by the YAML 1.1 resolver, a quoted or block scalar as
// a string, a tagged one by its tag.
func scalar(n *yaml.Node, resolve bool) *value {
	v := leaf(kStr, n)
	v.s = n.Value
	t := tagStr
	switch {
	case n.Style&yaml.TaggedStyle != 0:
		switch n.Tag {
		case "!!str":
		case "!!bool":
			t = tagBool
		case "!!int":
			t = tagInt
		case "!!float":
			t = tagFloat
		case "!!null":
			t = tagNull
		default:
			return badTag(n)
		}
	case resolve:
		v.plain = true
		t = resolvePlain(n.Value)
		if t == tagStr && strings.HasSuffix(n.Value, "\n") && resolvePlain(strings.TrimSuffix(n.Value, "\n")) != tagStr {
			// Only a scalar tagged ! (! |) ends in a line break. Python's
			// $ matches before it, so PyYAML resolves the value and then
			// fails to construct it, or constructs it loosely.
			v.setLit()
			v.kind, v.s = kBad, "the tag ! on a value that ends in a line break: PyYAML reads it as something other than a string; drop the tag"
			return v
		}
	}
	var err error
	switch t {
	case tagBool:
		v.kind = kBool
		v.b, err = pyBool(n.Value)
	case tagInt:
		v.kind = kInt
		var s string
		if s, err = pyInt(n.Value); s != v.s {
			v.setLit()
			v.s = s
		}
	case tagFloat:
		v.kind = kFloat
		v.f, err = pyFloat(n.Value)
	case tagNull:
		v.kind = kNull
	case tagTimestamp:
		v.kind = kTime
		v.setLit()
		v.s, err = pyTimestamp(n.Value)
	case tagMerge:
		err = fmt.Errorf("<< is YAML 1.1's merge key, which goes only as a key (<<: *anchor); quote it to mean the string")
	case tagValue:
		err = fmt.Errorf("= is YAML 1.1's value key, which PyYAML reads only as a key; quote it to mean the string")
	}
	if err != nil {
		v.setLit()
		v.kind, v.s = kBad, err.Error()
	}
	return v
}

// keyString is the key JSON gives a mapping key, as Python's json.dumps
// writes the key PyYAML made: a string as it is, an integer in decimal, a
// float as repr writes it, true, false and null; false for a key JSON
// cannot hold.
func keyString(v *value) (string, bool) {
	switch v.kind {
	case kStr, kInt:
		return v.s, true
	case kBool:
		return strconv.FormatBool(v.b), true
	case kNull:
		return "null", true
	case kFloat:
		if math.IsNaN(v.f) || math.IsInf(v.f, 0) {
			return "", false
		}
		return pyRepr(v.f), true
	}
	return "", false
}

// keyProblem says why a key has no JSON spelling.
func keyProblem(v *value) string {
	switch v.kind {
	case kBad:
		return v.s
	case kMap, kSeq:
		return "a key must be a name, got " + describeValue(v) + " (PyYAML cannot use it as a key)"
	case kFloat:
		return "a key must be a name, got the number " + v.raw() + ", which JSON cannot hold (Ray's serve deploy refuses it)"
	case kTime:
		return "a key must be a name, got the date " + v.raw() + " (YAML 1.1, as Ray reads it, reads it as a date, which Ray cannot send as JSON); quote it"
	}
	return "a key must be a name, got " + describeValue(v)
}

// describeValue names what a value holds, for "want X, got Y".
func describeValue(v *value) string {
	switch v.kind {
	case kMap:
		return "a mapping"
	case kSeq:
		return "a list"
	case kNull:
		return "null"
	case kBool:
		if v.raw() != strconv.FormatBool(v.b) {
			return fmt.Sprintf("the boolean %s (YAML 1.1, as Ray reads it, reads %s as %v)", v.raw(), v.raw(), v.b)
		}
		return "the boolean " + v.raw()
	case kInt, kFloat:
		return "the number " + v.raw()
	case kTime:
		return "the date " + v.raw() + " (YAML 1.1, as Ray reads it, reads it as a date)"
	case kStr:
		return strconv.Quote(v.s)
	}
	return v.raw()
}
