package ray

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

type entry struct {
	rel     string // slash-separated, relative to the root; "." for the root
	abs     string // path to open; "" for Extra files
	dir     bool
	empty   bool // an empty directory (gets a zip entry)
	special bool // not a regular file or directory, or a dangling link: hashed by name only, not zipped
	size    int64
	mode    fs.FileMode
	mtime   time.Time
	data    []byte // content of an Extra file
}

// walk lists what Ray would put in the package of dir, applying excludes
// and ignore files, and refusing symlinks that lead outside dir.
func walk(dir string, o PackageOptions) ([]entry, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("ray: package %s: %w", dir, err)
	}
	if !st.IsDir() {
		if !o.allowFile || !st.Mode().IsRegular() {
			return nil, fmt.Errorf("ray: package %s: not a directory", dir)
		}
		// A single-file py_module: the package holds just the file, hashed
		// by its name and content (Ray's get_uri_for_file).
		return []entry{{rel: filepath.Base(dir), abs: dir, size: st.Size(), mode: st.Mode(), mtime: st.ModTime()}}, nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("ray: package %s: %w", dir, err)
	}
	var excludes []string
	if !o.NoDefaultExcludes {
		excludes = append(excludes, DefaultExcludes...)
	}
	excludes = append(excludes, o.Excludes...)
	root, err := compileSpec("", excludes)
	if err != nil {
		return nil, fmt.Errorf("ray: package %s: excludes: %w", dir, err)
	}
	w := &walker{rootAbs: abs, rootReal: real, opts: o, specs: []*pathSpec{root}, onPath: map[string]bool{}}
	if err := w.walk(abs, "."); err != nil {
		return nil, err
	}
	if len(o.Extra) > 0 {
		out := w.entries[:0]
		for _, e := range w.entries {
			if _, ok := o.Extra[e.rel]; !ok {
				out = append(out, e)
			}
		}
		w.entries = out
		now := time.Now()
		for _, name := range slices.Sorted(mapsKeys(o.Extra)) {
			data := o.Extra[name]
			w.entries = append(w.entries, entry{rel: name, size: int64(len(data)), mode: 0o644, mtime: now, data: data})
		}
	}
	return w.entries, nil
}

func mapsKeys(m map[string][]byte) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

type walker struct {
	rootAbs, rootReal string
	opts              PackageOptions
	specs             []*pathSpec
	entries           []entry
	onPath            map[string]bool // real paths of the directories being walked (cycle check)
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

func (w *walker) walk(abs, rel string) error {
	// Excluded paths are never looked at (an excluded symlink may point
	// anywhere).
	if w.excluded(rel) {
		return nil
	}
	lst, err := os.Lstat(abs)
	if err != nil {
		return fmt.Errorf("ray: package: %w", err)
	}
	info := lst
	special := false
	if lst.Mode()&fs.ModeSymlink != 0 {
		target, terr := os.Readlink(abs)
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			// Dangling: decide from the link text where it points.
			if terr == nil {
				if !filepath.IsAbs(target) {
					target = filepath.Join(filepath.Dir(abs), target)
				}
				t := filepath.Clean(target)
				if !within(w.rootAbs, t) && !within(w.rootReal, t) {
					return fmt.Errorf("ray: package: symlink %s points outside %s (to %s)", abs, w.rootAbs, target)
				}
			}
			special = true
		} else {
			if !within(w.rootReal, real) {
				return fmt.Errorf("ray: package: symlink %s points outside %s (to %s)", abs, w.rootAbs, real)
			}
			if info, err = os.Stat(abs); err != nil {
				return fmt.Errorf("ray: package: %w", err)
			}
		}
	}
	isDir := !special && info.IsDir()
	if !special && !isDir && !info.Mode().IsRegular() {
		special = true
	}
	pushed := 0
	if isDir {
		base := rel
		if base == "." {
			base = ""
		}
		names := []string{".rayignore"}
		if !w.opts.IgnoreGitignore {
			names = []string{".gitignore", ".rayignore"}
		}
		for _, name := range names {
			p := filepath.Join(abs, name)
			if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
				continue
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return fmt.Errorf("ray: package: %w", err)
			}
			spec, err := compileSpec(base, strings.Split(string(b), "\n"))
			if err != nil {
				return fmt.Errorf("ray: package: %s: %w", p, err)
			}
			w.specs = append(w.specs, spec)
			pushed++
		}
	}
	defer func() { w.specs = w.specs[:len(w.specs)-pushed] }()
	// A directory's own ignore files apply to it too (as ".").
	if pushed > 0 && w.excluded(rel) {
		return nil
	}
	e := entry{rel: rel, abs: abs, dir: isDir, special: special, mode: info.Mode(), mtime: info.ModTime()}
	if !isDir && !special {
		e.size = info.Size()
	}
	if !isDir {
		w.entries = append(w.entries, e)
		return nil
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return fmt.Errorf("ray: package: %w", err)
	}
	if w.onPath[real] {
		return fmt.Errorf("ray: package: symlink loop at %s", abs)
	}
	w.onPath[real] = true
	defer delete(w.onPath, real)
	ents, err := os.ReadDir(abs)
	if err != nil {
		return fmt.Errorf("ray: package: %w", err)
	}
	e.empty = len(ents) == 0
	w.entries = append(w.entries, e)
	for _, d := range ents {
		childRel := d.Name()
		if rel != "." {
			childRel = rel + "/" + d.Name()
		}
		if err := w.walk(filepath.Join(abs, d.Name()), childRel); err != nil {
			return err
		}
	}
	return nil
}
