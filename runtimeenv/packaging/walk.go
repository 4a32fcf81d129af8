package packaging

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

type entry struct {
	rel     string // slash-separated, relative to the root; "." for the root
	src     string // path to open: inside the root with no symlink in it, or the single file; "" for Extra files
	dir     bool
	empty   bool // an empty directory (gets a zip entry)
	special bool // a dangling link inside the tree: hashed by name only, not zipped
	size    int64
	mode    fs.FileMode
	mtime   time.Time
	data    []byte // content of an Extra file
}

// Walk lists what Ray would put in the package of dir, applying excludes
// and ignore files. It follows a symbolic link that stays inside dir (as
// Ray does: the package holds what it points to under the link's name)
// and refuses, without opening anything there, one that leads outside it
// (ErrOutside, naming the link and its target), a link back to a
// directory that holds it (ErrLoop), and a named pipe, socket or device
// file (ErrNotRegular, naming it). A dangling link inside dir is hashed by
// its name and left out of the zip, as Ray does. Excluded paths are never
// looked at. The Tree must be closed.
func Walk(dir string, opts Options) (*Tree, error) {
	if err := opts.normalize(); err != nil {
		return nil, err
	}
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("packaging: %w", err)
	}
	if !st.IsDir() {
		if !opts.AllowFile || !st.Mode().IsRegular() {
			return nil, fmt.Errorf("packaging: %s: not a directory", dir)
		}
		// A single-file py_module: the package holds just the file, hashed
		// by its name and content (Ray's get_uri_for_file).
		e := entry{rel: filepath.Base(dir), src: dir, size: st.Size(), mode: st.Mode(), mtime: st.ModTime()}
		return &Tree{dir: dir, opts: opts, entries: []entry{e}, total: e.size}, nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("packaging: %w", err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("packaging: %w", err)
	}
	var excludes []string
	if !opts.NoDefaultExcludes {
		excludes = append(excludes, defaultExcludes...)
	}
	excludes = append(excludes, opts.Excludes...)
	spec, err := compileSpec("", excludes)
	if err != nil {
		return nil, fmt.Errorf("packaging: %s: excludes: %w", dir, err)
	}
	root, err := os.OpenRoot(real)
	if err != nil {
		return nil, fmt.Errorf("packaging: %w", err)
	}
	w := &walker{root: root, rootAbs: abs, rootReal: real, opts: opts, specs: []*pathSpec{spec}, onPath: map[string]bool{}}
	if err := w.walk(".", "."); err != nil {
		root.Close()
		return nil, err
	}
	if len(opts.Extra) > 0 {
		w.entries = slices.DeleteFunc(w.entries, func(e entry) bool { _, ok := opts.Extra[e.rel]; return ok })
		now := time.Now()
		for _, name := range slices.Sorted(maps.Keys(opts.Extra)) {
			data := opts.Extra[name]
			w.entries = append(w.entries, entry{rel: name, size: int64(len(data)), mode: 0o644, mtime: now, data: data})
		}
	}
	t := &Tree{dir: dir, opts: opts, root: root, entries: w.entries}
	for _, e := range t.entries {
		t.total += e.size
	}
	return t, nil
}

type walker struct {
	root              *os.Root
	rootAbs, rootReal string
	opts              Options
	specs             []*pathSpec
	entries           []entry
	onPath            map[string]bool // sources of the directories being walked (loop check)
}

func within(root, p string) bool {
	return p == root || strings.HasPrefix(p, root+string(filepath.Separator))
}

func (w *walker) excluded(rel string) bool {
	for _, s := range w.specs {
		if s.match(rel) {
			return true
		}
	}
	return false
}

// display is the path to name in an error: under the directory as given.
func (w *walker) display(rel string) string {
	return filepath.Join(w.rootAbs, filepath.FromSlash(rel))
}

// outside is the error for a link at rel that leads to target.
func (w *walker) outside(rel, target string) error {
	return &refusal{ErrOutside, fmt.Sprintf("packaging: symlink %s points outside %s (to %s); only links that stay inside the directory are followed",
		w.display(rel), w.rootAbs, target)}
}

// refusal is an error of the walk that matches one of the sentinels
// without repeating its text.
type refusal struct {
	kind error
	msg  string
}

func (r *refusal) Error() string { return r.msg }
func (r *refusal) Unwrap() error { return r.kind }

// resolve follows the symbolic link at src (inside the root) and returns
// the path inside the root, free of links, that it leads to. dangling is
// set when it leads nowhere (a missing target, or a chain of links that
// never ends) but its text stays inside the directory. Only link metadata
// is read on the way; nothing outside the directory is opened.
func (w *walker) resolve(rel, src string) (to string, dangling bool, err error) {
	at := filepath.Join(w.rootReal, src)
	real, err := filepath.EvalSymlinks(at)
	if err != nil {
		// Decide from the link's text where it points.
		text, terr := w.root.Readlink(src)
		if terr != nil {
			return "", false, fmt.Errorf("packaging: %w", terr)
		}
		t := text
		if !filepath.IsAbs(t) {
			t = filepath.Join(filepath.Dir(at), t)
		}
		t = filepath.Clean(t)
		if !within(w.rootAbs, t) && !within(w.rootReal, t) {
			return "", false, w.outside(rel, text)
		}
		return "", true, nil
	}
	if !within(w.rootReal, real) {
		return "", false, w.outside(rel, real)
	}
	to, err = filepath.Rel(w.rootReal, real)
	if err != nil {
		return "", false, fmt.Errorf("packaging: %w", err)
	}
	return to, false, nil
}

// notRegular is the error for a file that is neither regular nor a
// directory.
func (w *walker) notRegular(rel string, mode fs.FileMode) error {
	kind := "special file"
	switch {
	case mode&fs.ModeNamedPipe != 0:
		kind = "named pipe (FIFO)"
	case mode&fs.ModeSocket != 0:
		kind = "socket"
	case mode&fs.ModeCharDevice != 0:
		kind = "character device"
	case mode&fs.ModeDevice != 0:
		kind = "device"
	}
	return &refusal{ErrNotRegular, fmt.Sprintf("packaging: %s is a %s, not a regular file or directory; exclude it (excludes, .rayignore)", w.display(rel), kind)}
}

// walk visits rel, found at src: a path inside the root with no symbolic
// link in it.
func (w *walker) walk(rel, src string) error {
	// Excluded paths are never looked at (an excluded symlink may point
	// anywhere).
	if w.excluded(rel) {
		return nil
	}
	info, err := w.root.Lstat(src)
	if err != nil {
		return fmt.Errorf("packaging: %w", err)
	}
	special := false
	if info.Mode()&fs.ModeSymlink != 0 {
		to, dangling, err := w.resolve(rel, src)
		switch {
		case err != nil:
			return err
		case dangling:
			special = true
		default:
			src = to
			if info, err = w.root.Lstat(src); err != nil {
				return fmt.Errorf("packaging: %w", err)
			}
		}
	}
	isDir := !special && info.IsDir()
	if !special && !isDir && !info.Mode().IsRegular() {
		return w.notRegular(rel, info.Mode())
	}
	pushed := 0
	if isDir {
		if pushed, err = w.pushIgnoreFiles(rel, src); err != nil {
			return err
		}
	}
	defer func() { w.specs = w.specs[:len(w.specs)-pushed] }()
	// A directory's own ignore files apply to it too (as ".").
	if pushed > 0 && w.excluded(rel) {
		return nil
	}
	e := entry{rel: rel, src: src, dir: isDir, special: special}
	if !special {
		e.mode, e.mtime = info.Mode(), info.ModTime()
	}
	if !isDir {
		if !special {
			e.size = info.Size()
		}
		w.entries = append(w.entries, e)
		return nil
	}
	if w.onPath[src] {
		return &refusal{ErrLoop, fmt.Sprintf("packaging: symlink loop: %s leads back to %s, which holds it; exclude it (excludes, .rayignore)",
			w.display(rel), filepath.Join(w.rootReal, src))}
	}
	w.onPath[src] = true
	defer delete(w.onPath, src)
	f, err := w.root.Open(src)
	if err != nil {
		return fmt.Errorf("packaging: %w", err)
	}
	ents, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return fmt.Errorf("packaging: %w", err)
	}
	slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	e.empty = len(ents) == 0
	w.entries = append(w.entries, e)
	for _, d := range ents {
		childRel := d.Name()
		if rel != "." {
			childRel = rel + "/" + d.Name()
		}
		if err := w.walk(childRel, filepath.Join(src, d.Name())); err != nil {
			return err
		}
	}
	return nil
}

// pushIgnoreFiles reads the ignore files of the directory rel (at src)
// onto the stack of specs and returns how many it pushed. An ignore file
// that is a link is followed only inside the directory.
func (w *walker) pushIgnoreFiles(rel, src string) (int, error) {
	base := rel
	if base == "." {
		base = ""
	}
	names := []string{".rayignore"}
	if !w.opts.IgnoreGitignore {
		names = []string{".gitignore", ".rayignore"}
	}
	pushed := 0
	for _, name := range names {
		p := filepath.Join(src, name)
		prel := name
		if base != "" {
			prel = base + "/" + name
		}
		st, err := w.root.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return pushed, fmt.Errorf("packaging: %w", err)
		}
		if st.Mode()&fs.ModeSymlink != 0 {
			to, dangling, err := w.resolve(prel, p)
			if err != nil {
				return pushed, err
			}
			if dangling {
				continue
			}
			p = to
			if st, err = w.root.Lstat(p); err != nil {
				return pushed, fmt.Errorf("packaging: %w", err)
			}
		}
		if !st.Mode().IsRegular() {
			continue
		}
		b, err := w.root.ReadFile(p)
		if err != nil {
			return pushed, fmt.Errorf("packaging: %w", err)
		}
		spec, err := compileSpec(base, strings.Split(string(b), "\n"))
		if err != nil {
			return pushed, fmt.Errorf("packaging: %s: %w", w.display(prel), err)
		}
		w.specs = append(w.specs, spec)
		pushed++
	}
	return pushed, nil
}
