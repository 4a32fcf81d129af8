package raytpu_test

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/internal/testinfra/golden"
)

// The documentation's Go is real Go: every ```go block in README.md,
// CONTRIBUTING.md and docs/**/*.md follows a line
//
//	<!-- snippet: docs/examples/train/train_test.go#NAME -->
//
// and holds exactly the region of that file between the line comments
// `// [snippet:NAME]` and `// [end:NAME]`, with the region's common leading
// tabs removed. The files under docs/examples are test files the suite
// compiles and runs, so a doc that drifts from the API fails here or there.
// UPDATE_GOLDEN=1 go test -run TestDocSnippets . rewrites the blocks from
// the Go files.

// docFiles are the Markdown files whose Go blocks are checked: the root's
// README.md and CONTRIBUTING.md, and every .md file under docs/.
func docFiles(root string) ([]string, error) {
	var files []string
	for _, name := range []string{"README.md", "CONTRIBUTING.md"} {
		if _, err := os.Stat(filepath.Join(root, name)); err == nil {
			files = append(files, name)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && p == filepath.Join(root, "docs") {
			return fs.SkipDir
		}
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	return files, err
}

func TestDocSnippets(t *testing.T) {
	t.Parallel()
	files, err := docFiles(".")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(files, "README.md") {
		t.Fatalf("no README.md among %v; the check would be vacuous", files)
	}
	read := func(p string) ([]byte, error) { return os.ReadFile(filepath.FromSlash(p)) }
	blocks := 0
	for _, name := range files {
		md, err := os.ReadFile(filepath.FromSlash(name))
		if err != nil {
			t.Fatal(err)
		}
		res := checkSnippets(name, md, read)
		blocks += res.blocks
		for _, p := range res.problems {
			t.Error(p)
		}
		if golden.Updating() && !bytes.Equal(res.updated, md) {
			if err := os.WriteFile(filepath.FromSlash(name), res.updated, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: rewrote its snippets", name)
		}
	}
	t.Logf("%d Markdown files, %d Go blocks", len(files), blocks)

	// A region's end marker on the line before an example's "// Output:"
	// joins its comment group, and go test then sees no output comment
	// and never runs the example: a blank line must separate them.
	err = filepath.WalkDir(filepath.Join("docs", "examples"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") {
			return err
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, msg := range markerBeforeOutput(src) {
			t.Errorf("%s:%s", filepath.ToSlash(p), msg)
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
}

// markerBeforeOutput lists the lines ("12: ...") of a Go file where a
// region marker comment directly precedes an example's output comment.
func markerBeforeOutput(src []byte) []string {
	var out []string
	lines := strings.Split(string(src), "\n")
	for i := 1; i < len(lines); i++ {
		s := strings.ToLower(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(lines[i]), "//")))
		if isMarker(lines[i-1]) && (strings.HasPrefix(s, "output:") || strings.HasPrefix(s, "unordered output:")) {
			out = append(out, fmt.Sprintf("%d: a region marker directly above the example's output comment joins its comment group, so go test never runs the example; put a blank line between them", i+1))
		}
	}
	return out
}

// snippetResult is what checkSnippets finds in one Markdown file: the
// number of Go blocks, the problems (file:line: what), and the file with
// every snippet block rewritten from its region.
type snippetResult struct {
	blocks   int
	problems []string
	updated  []byte
}

const (
	snippetOpen  = "<!-- snippet:"
	snippetClose = "-->"
	fence        = "```"
)

// checkSnippets checks the Go blocks of the Markdown file name (content
// md) against the regions they name; read reads a Go file by its path
// from the module's root.
func checkSnippets(name string, md []byte, read func(string) ([]byte, error)) snippetResult {
	var res snippetResult
	lines := strings.SplitAfter(string(md), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	var out strings.Builder
	bad := func(i int, format string, args ...any) {
		res.problems = append(res.problems, fmt.Sprintf("%s:%d: %s", name, i+1, fmt.Sprintf(format, args...)))
	}
	for i := 0; i < len(lines); i++ {
		line := strings.TrimRight(lines[i], "\r\n")
		trimmed := strings.TrimLeft(line, " ")
		switch {
		case strings.HasPrefix(trimmed, snippetOpen):
			out.WriteString(lines[i])
			ref, ok := strings.CutSuffix(strings.TrimSpace(trimmed[len(snippetOpen):]), snippetClose)
			if !ok {
				bad(i, "snippet line %q does not end with %q", line, snippetClose)
				continue
			}
			ref = strings.TrimSpace(ref)
			if i+1 >= len(lines) || !isGoFence(strings.TrimSpace(lines[i+1])) {
				bad(i, "snippet line %q is not followed by a ```go block", line)
				continue
			}
			open := i + 1
			indent := strings.TrimRight(lines[open], "\r\n")
			indent = indent[:len(indent)-len(strings.TrimLeft(indent, " "))]
			end := closingFence(lines, open)
			if end < 0 {
				bad(open, "```go block is not closed")
				out.WriteString(strings.Join(lines[open:], ""))
				i = len(lines)
				continue
			}
			res.blocks++
			got := strings.Join(lines[open+1:end], "")
			want, err := snippetFor(ref, read)
			out.WriteString(lines[open])
			switch {
			case err != nil:
				bad(i, "%v", err)
				out.WriteString(got)
			default:
				want = indentLines(want, indent)
				if got != want {
					bad(open, "```go block differs from %s (-block +region; UPDATE_GOLDEN=1 go test -run TestDocSnippets . rewrites it):\n%s", ref, cmp.Diff(got, want))
				}
				out.WriteString(want)
			}
			out.WriteString(lines[end])
			i = end
		case isGoFence(strings.TrimSpace(trimmed)):
			bad(i, "```go block without a %s PATH#NAME %s line before it: every Go block comes from a file the suite compiles", snippetOpen, snippetClose)
			end := closingFence(lines, i)
			if end < 0 {
				end = len(lines) - 1
			}
			res.blocks++
			out.WriteString(strings.Join(lines[i:end+1], ""))
			i = end
		case strings.HasPrefix(trimmed, fence):
			// Another fenced block (python, sh, text): skip to its end, so
			// that its content is never read as Markdown.
			end := closingFence(lines, i)
			if end < 0 {
				end = len(lines) - 1
			}
			out.WriteString(strings.Join(lines[i:end+1], ""))
			i = end
		default:
			out.WriteString(lines[i])
		}
	}
	res.updated = []byte(out.String())
	return res
}

// isGoFence reports whether a trimmed line opens a Go block.
func isGoFence(s string) bool {
	info, ok := strings.CutPrefix(s, fence)
	if !ok {
		return false
	}
	info = strings.TrimLeft(info, "`")
	lang, _, _ := strings.Cut(strings.TrimSpace(info), " ")
	return lang == "go"
}

// closingFence is the index of the line closing the fenced block opened at
// lines[open], or -1: a line of backticks only, at least as many as the
// opening's.
func closingFence(lines []string, open int) int {
	opening := strings.TrimSpace(lines[open])
	n := len(opening) - len(strings.TrimLeft(opening, "`"))
	for j := open + 1; j < len(lines); j++ {
		s := strings.TrimSpace(lines[j])
		if len(s) >= n && strings.Trim(s, "`") == "" {
			return j
		}
	}
	return -1
}

// indentLines puts indent before every non-empty line of s (a block
// inside a list item is indented as the item).
func indentLines(s, indent string) string {
	if indent == "" {
		return s
	}
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) != "" {
			lines[i] = indent + l
		}
	}
	return strings.Join(lines, "")
}

// snippetFor reads the region ref ("path/to/file.go#NAME") names.
func snippetFor(ref string, read func(string) ([]byte, error)) (string, error) {
	p, name, ok := strings.Cut(ref, "#")
	if !ok || p == "" || name == "" {
		return "", fmt.Errorf("snippet %q: want PATH#NAME", ref)
	}
	if path.IsAbs(p) || strings.Contains(p, `\`) || path.Clean(p) != p || strings.HasPrefix(p, "../") || p == ".." {
		return "", fmt.Errorf("snippet %q: the path is a clean slash-separated path from the module's root", ref)
	}
	if !strings.HasSuffix(p, ".go") {
		return "", fmt.Errorf("snippet %q: a snippet comes from a .go file", ref)
	}
	src, err := read(p)
	if err != nil {
		return "", fmt.Errorf("snippet %q: %w", ref, err)
	}
	s, err := extractRegion(src, name)
	if err != nil {
		return "", fmt.Errorf("snippet %q: %w", ref, err)
	}
	return s, nil
}

// extractRegion is the region NAME of a Go file: the lines between
// `// [snippet:NAME]` and `// [end:NAME]`, without the marker lines of
// other regions inside it, and with their common leading tabs removed.
func extractRegion(src []byte, name string) (string, error) {
	start, end := "// [snippet:"+name+"]", "// [end:"+name+"]"
	lines := strings.Split(strings.ReplaceAll(string(src), "\r\n", "\n"), "\n")
	from, to := -1, -1
	for i, l := range lines {
		switch strings.TrimSpace(l) {
		case start:
			if from >= 0 {
				return "", fmt.Errorf("region %s starts twice (lines %d and %d)", name, from, i+1)
			}
			from = i + 1
		case end:
			if from < 0 {
				return "", fmt.Errorf("region %s ends (line %d) before it starts", name, i+1)
			}
			if to >= 0 {
				return "", fmt.Errorf("region %s ends twice", name)
			}
			to = i
		}
	}
	switch {
	case from < 0:
		return "", fmt.Errorf("no region %s (a line %q)", name, start)
	case to < 0:
		return "", fmt.Errorf("region %s has no end (a line %q)", name, end)
	}
	var body []string
	for _, l := range lines[from:to] {
		if isMarker(l) {
			continue
		}
		body = append(body, strings.TrimRight(l, " \t"))
	}
	if len(body) == 0 {
		return "", fmt.Errorf("region %s is empty", name)
	}
	common := -1
	for _, l := range body {
		if l == "" {
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, "\t"))
		if common < 0 || n < common {
			common = n
		}
	}
	var b strings.Builder
	for _, l := range body {
		if l != "" {
			l = l[common:]
		}
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String(), nil
}

// isMarker reports whether a Go line is a region's start or end marker.
func isMarker(l string) bool {
	s := strings.TrimSpace(l)
	return (strings.HasPrefix(s, "// [snippet:") || strings.HasPrefix(s, "// [end:")) && strings.HasSuffix(s, "]")
}

func TestMarkerBeforeOutput(t *testing.T) {
	t.Parallel()
	bad := "func Example() {\n\t// [snippet:a]\n\tfmt.Println(1)\n\t// [end:a]\n\t// Output:\n\t// 1\n}\n"
	good := "func Example() {\n\t// [snippet:a]\n\tfmt.Println(1)\n\t// [end:a]\n\n\t// Output:\n\t// 1\n}\n"
	if got := markerBeforeOutput([]byte(bad)); len(got) != 1 || !strings.HasPrefix(got[0], "5: ") {
		t.Errorf("marker above the output comment: %q, want one problem at line 5", got)
	}
	if got := markerBeforeOutput([]byte(good)); len(got) != 0 {
		t.Errorf("marker, blank line, output comment: %q, want none", got)
	}
}

func TestExtractRegion(t *testing.T) {
	t.Parallel()
	src := "package x\n\nfunc f() {\n\t// [snippet:a]\n\tx := 1\n\n\tif x > 0 {\n\t\t// [snippet:inner]\n\t\tx++ \n\t\t// [end:inner]\n\t}\n\t// [end:a]\n}\n" +
		"// [snippet:top]\nvar y = 2\n// [end:top]\n" +
		"// [snippet:twice]\n// [snippet:twice]\n// [end:twice]\n" +
		"// [end:early]\n// [snippet:early]\n" +
		"// [snippet:open]\n" +
		"// [snippet:empty]\n// [end:empty]\n"
	cases := []struct {
		name, want string
		err        bool
	}{
		{name: "a", want: "x := 1\n\nif x > 0 {\n\tx++\n}\n"},
		{name: "inner", want: "x++\n"},
		{name: "top", want: "var y = 2\n"},
		{name: "missing", err: true},
		{name: "twice", err: true},
		{name: "early", err: true},
		{name: "open", err: true},
		{name: "empty", err: true},
	}
	for _, c := range cases {
		got, err := extractRegion([]byte(src), c.name)
		if (err != nil) != c.err {
			t.Errorf("%s: err = %v, want error %v", c.name, err, c.err)
			continue
		}
		if got != c.want {
			t.Errorf("%s: region\n%q\nwant\n%q", c.name, got, c.want)
		}
	}
}

func TestCheckSnippets(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		"docs/examples/x/x_test.go": "package x_test\n\nfunc Example() {\n\t// [snippet:hello]\n\tfmt.Println(\"hello\")\n\t// [end:hello]\n}\n",
	}
	read := func(p string) ([]byte, error) {
		if s, ok := files[p]; ok {
			return []byte(s), nil
		}
		return nil, fs.ErrNotExist
	}
	const marker = "<!-- snippet: docs/examples/x/x_test.go#hello -->\n"
	const good = "```go\nfmt.Println(\"hello\")\n```\n"
	cases := []struct {
		name, md    string
		problems    int
		blocks      int
		wantUpdated string // "" when the file is unchanged
	}{
		{name: "matching", md: "# T\n\n" + marker + good + "text\n", blocks: 1},
		{name: "drifted", md: marker + "```go\nfmt.Println(\"bye\")\n```\n", problems: 1, blocks: 1, wantUpdated: marker + good},
		{name: "empty block filled", md: marker + "```go\n```\n", problems: 1, blocks: 1, wantUpdated: marker + good},
		{name: "no marker", md: "```go\nx := 1\n```\n", problems: 1, blocks: 1},
		{name: "marker without block", md: marker + "\n" + good, problems: 2, blocks: 1},
		{name: "marker before a python block", md: marker + "```python\nprint()\n```\n", problems: 1},
		{name: "unknown region", md: "<!-- snippet: docs/examples/x/x_test.go#nope -->\n" + good, problems: 1, blocks: 1},
		{name: "unknown file", md: "<!-- snippet: docs/examples/y/y_test.go#hello -->\n" + good, problems: 1, blocks: 1},
		{name: "no name", md: "<!-- snippet: docs/examples/x/x_test.go -->\n" + good, problems: 1, blocks: 1},
		{name: "escaping path", md: "<!-- snippet: ../x/x_test.go#hello -->\n" + good, problems: 1, blocks: 1},
		{name: "not Go", md: "<!-- snippet: docs/x.md#hello -->\n" + good, problems: 1, blocks: 1},
		{name: "unclosed", md: marker + "```go\nfmt.Println(\"hello\")\n", problems: 1},
		{name: "go inside another fence is text", md: "````markdown\n```go\nx\n```\n````\n"},
		{name: "other languages pass", md: "```python\nimport ray\n```\n\n```sh\ngo test ./...\n```\n"},
		{name: "indented in a list", md: "1. Run it:\n   " + marker + "   ```go\n   fmt.Println(\"hello\")\n   ```\n", blocks: 1},
		{name: "gofmt-style fence info", md: marker + "```go title=x\nfmt.Println(\"hello\")\n```\n", blocks: 1},
		{name: "two blocks, one bad", md: marker + good + "\n```go\ny\n```\n", problems: 1, blocks: 2},
		{name: "no trailing newline", md: marker + "```go\nfmt.Println(\"hello\")\n```", blocks: 1},
	}
	for _, c := range cases {
		res := checkSnippets("t.md", []byte(c.md), read)
		if len(res.problems) != c.problems {
			t.Errorf("%s: problems %q, want %d", c.name, res.problems, c.problems)
		}
		if res.blocks != c.blocks {
			t.Errorf("%s: %d Go blocks, want %d", c.name, res.blocks, c.blocks)
		}
		want := c.wantUpdated
		if want == "" {
			want = c.md
		}
		if diff := cmp.Diff(want, string(res.updated)); diff != "" {
			t.Errorf("%s: rewritten file (-want +got):\n%s", c.name, diff)
		}
	}
	// A rewritten file checks clean.
	res := checkSnippets("t.md", []byte(marker+"```go\n```\n"), read)
	if again := checkSnippets("t.md", res.updated, read); len(again.problems) != 0 {
		t.Errorf("the rewritten file still has problems: %q", again.problems)
	}
}
