package train

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/runtimeenv"
)

// The checks before launch on the train loop's module: with a local
// working_dir, Compile reads the module that TrainLoopPerWorker names, the
// way the launcher will import it, and reports
//
//   - a module that is not in the working directory (neither
//     <module path>.py nor <module path>/__init__.py): Invalid at
//     trainer.train_loop_per_worker, with the nearest module there;
//   - a module that does not define the function: NotSupported at
//     trainer.train_loop_per_worker, with the functions it does define and
//     the nearest one ("did you mean train_func?");
//   - a module-level `import jax` or `from jax ...`: a warning, since the
//     job's driver imports the module to build the trainer and JAX there
//     would initialise the TPU backend and hold the host's TPU that the
//     worker on that host needs (Ray's advice: import JAX inside the train
//     function).
//
// The scan reads the source as text; it does not run Python. Its limits:
// it sees names bound at module level by def, async def, class, an
// assignment, `import ... as` and `from ... import` (including a
// parenthesised list), at column 0 or one level inside a top-level if,
// try, with or else block; it skips comments and triple-quoted strings. A
// name made by other means (exec, globals() writes, a module __getattr__,
// `from x import *`) is not seen, so a module using `import *` or defining
// __getattr__ is given the benefit of the doubt. Modules that may come from
// elsewhere (py_modules, pip, conda, an image, or a working_dir that is a
// URI) are not checked at all, nor is a working_dir that does not exist on
// this machine (the backend reports it when it packages the directory),
// nor anything inside the function.

// moduleScan is what the scan learnt about one module file.
type moduleScan struct {
	names     []string // names bound at module level, in order of first sight
	functions []string // of which defined by def / async def
	jaxLine   int      // first line of a module-level JAX import; 0 if none
	opaque    bool     // import * or a module __getattr__: any name may exist
}

var (
	defRe        = regexp.MustCompile(`^(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\(`)
	classRe      = regexp.MustCompile(`^class\s+([A-Za-z_]\w*)\b`)
	assignRe     = regexp.MustCompile(`^([A-Za-z_]\w*)\s*(?::[^=]*)?=[^=]`)
	importRe     = regexp.MustCompile(`^import\s+(.+)$`)
	fromImportRe = regexp.MustCompile(`^from\s+(\S+)\s+import\s+(.+)$`)
	identRe      = regexp.MustCompile(`^[A-Za-z_]\w*$`)
	blockRe      = regexp.MustCompile(`^(?:if|elif|else|try|except|finally|with)\b.*:\s*(?:#.*)?$`)
)

// scanModule reads Python source for its module-level names and imports.
func scanModule(src []byte) moduleScan {
	var s moduleScan
	seen := map[string]bool{}
	add := func(name string, fn bool) {
		if !identRe.MatchString(name) {
			return // not a name: a malformed statement binds nothing
		}
		if !seen[name] {
			seen[name] = true
			s.names = append(s.names, name)
		}
		if fn && !slices.Contains(s.functions, name) {
			s.functions = append(s.functions, name)
		}
	}
	var (
		inString  string // the open triple quote, if any
		inBlock   bool   // inside a top-level if/try/with/else block
		blockIndt int    // the indentation of that block's body; -1 until seen
		pending   string // a from-import whose parenthesised list continues
		lineNo    int
	)
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for sc.Scan() {
		lineNo++
		raw := sc.Text()
		if inString != "" {
			if strings.Count(raw, inString)%2 == 1 {
				inString = ""
			}
			continue
		}
		trimmed := strings.TrimSpace(raw)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		for _, q := range []string{`"""`, `'''`} {
			if strings.Count(trimmed, q)%2 == 1 {
				inString = q
			}
		}
		if pending != "" {
			pending += " " + trimmed
			if strings.Contains(trimmed, ")") {
				s.bindFrom(pending, lineNo, add)
				pending = ""
			}
			continue
		}
		indent := len(raw) - len(strings.TrimLeft(raw, " \t"))
		switch {
		case indent == 0:
			inBlock = blockRe.MatchString(trimmed)
			blockIndt = -1
		case inBlock && blockIndt < 0:
			blockIndt = indent
		}
		if indent != 0 && (!inBlock || indent != blockIndt) {
			continue
		}
		if m := defRe.FindStringSubmatch(trimmed); m != nil {
			add(m[1], true)
			if m[1] == "__getattr__" {
				s.opaque = true
			}
		} else if m := classRe.FindStringSubmatch(trimmed); m != nil {
			add(m[1], false)
		} else if m := fromImportRe.FindStringSubmatch(trimmed); m != nil {
			if strings.HasPrefix(strings.TrimSpace(m[2]), "(") && !strings.Contains(m[2], ")") {
				pending = trimmed
				continue
			}
			s.bindFrom(trimmed, lineNo, add)
		} else if m := importRe.FindStringSubmatch(trimmed); m != nil {
			for part := range strings.SplitSeq(stripComment(m[1]), ",") {
				mod, alias, hasAlias := strings.Cut(strings.TrimSpace(part), " as ")
				mod = strings.TrimSpace(mod)
				if isJAX(mod) && s.jaxLine == 0 {
					s.jaxLine = lineNo
				}
				if hasAlias {
					add(strings.TrimSpace(alias), false)
				} else {
					top, _, _ := strings.Cut(mod, ".")
					add(top, false)
				}
			}
		} else if m := assignRe.FindStringSubmatch(trimmed); m != nil {
			add(m[1], false)
		}
	}
	return s
}

// bindFrom records the names a `from X import ...` statement binds.
func (s *moduleScan) bindFrom(stmt string, line int, add func(string, bool)) {
	m := fromImportRe.FindStringSubmatch(stmt)
	if m == nil {
		return
	}
	if isJAX(m[1]) && s.jaxLine == 0 {
		s.jaxLine = line
	}
	list := strings.Trim(strings.TrimSpace(stripComment(m[2])), "()")
	for part := range strings.SplitSeq(list, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if part == "*" {
			s.opaque = true
			continue
		}
		name, alias, ok := strings.Cut(part, " as ")
		if ok {
			name = alias
		}
		add(strings.TrimSpace(name), false)
	}
}

func stripComment(s string) string {
	if i := strings.IndexByte(s, '#'); i >= 0 {
		return s[:i]
	}
	return s
}

// isJAX reports whether a module path is jax or below it.
func isJAX(mod string) bool { return mod == "jax" || strings.HasPrefix(mod, "jax.") }

// localWorkingDir returns the working directory when it is a local
// directory whose modules are all the job can import: no py_modules, pip
// or other package source that could provide the module.
func localWorkingDir(env runtimeenv.RuntimeEnv) (string, bool) {
	wd := env.WorkingDir
	if wd == "" || strings.Contains(wd, "://") || len(env.PyModules) > 0 || len(env.Pip) > 0 {
		return "", false
	}
	for _, k := range []string{"py_modules", "pip", "conda", "uv", "image_uri", "container"} {
		if _, ok := env.Extra[k]; ok {
			return "", false
		}
	}
	return wd, true
}

// checkTrainLoop runs the checks before launch on the module of
// importPath (already well formed) in the working directory of env.
// CodeModuleLevelJaxImport is the code of the warning that the train loop's
// module imports JAX at module level.
const CodeModuleLevelJaxImport = "ModuleLevelJaxImport"

func checkTrainLoop(importPath string, env runtimeenv.RuntimeEnv) (placement.Diagnosis, field.ErrorList) {
	wd, ok := localWorkingDir(env)
	if !ok {
		return nil, nil
	}
	p := trainerPath.Child("train_loop_per_worker")
	if st, err := os.Stat(wd); err != nil || !st.IsDir() {
		// Not here: a plan compiled for another machine, or a path the
		// backend reports when it packages the directory.
		return nil, nil
	}
	module, fn, _ := strings.Cut(importPath, ":")
	rel := filepath.Join(strings.Split(module, ".")...)
	candidates := []string{rel + ".py", filepath.Join(rel, "__init__.py")}
	var src []byte
	var file string
	for _, c := range candidates {
		if b, err := os.ReadFile(filepath.Join(wd, c)); err == nil {
			src, file = b, c
			break
		}
	}
	if file == "" {
		e := field.Invalid(p, importPath, fmt.Sprintf("module %s is not in the working directory %s (looked for %s)", module, wd, strings.Join(candidates, " and ")))
		if near := field.Nearest(filepath.Base(rel), pythonModules(filepath.Join(wd, filepath.Dir(rel)))); near != "" {
			e.Suggest([]string{strings.TrimSuffix(importPath[:len(module)], filepath.Base(rel)) + near + ":" + fn})
		}
		return nil, field.ErrorList{e}
	}
	s := scanModule(src)
	var warnings placement.Diagnosis
	if s.jaxLine > 0 {
		warnings = append(warnings, placement.Finding{Severity: placement.SeverityWarning, Code: CodeModuleLevelJaxImport, Field: p.String(), Message: fmt.Sprintf(
			"%s:%d imports jax at module level: the job's driver imports this module to build the trainer, and JAX there would take the TPU the worker on that host needs; import jax inside %s instead", file, s.jaxLine, fn)})
	}
	if !s.opaque && !slices.Contains(s.names, fn) {
		e := field.NotSupported(p, importPath, qualify(module, s.functions)).
			WithDetail(fmt.Sprintf("%s defines no %s at module level (a source scan; see the package doc for its limits)", file, fn))
		if near := field.Nearest(fn, s.functions); near != "" {
			e.Suggest([]string{module + ":" + near})
		}
		return warnings, field.ErrorList{e}
	}
	return warnings, nil
}

// qualify turns function names into import paths of module.
func qualify(module string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = module + ":" + n
	}
	return out
}

// pythonModules lists the importable module names in dir: *.py files and
// packages.
func pythonModules(dir string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		name := e.Name()
		switch {
		case !e.IsDir() && strings.HasSuffix(name, ".py"):
			out = append(out, strings.TrimSuffix(name, ".py"))
		case e.IsDir():
			if _, err := os.Stat(filepath.Join(dir, name, "__init__.py")); err == nil {
				out = append(out, name)
			}
		}
	}
	return out
}
