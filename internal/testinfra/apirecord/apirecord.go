// Package apirecord describes the exported API of the module's public
// packages, one feature a line in the format of Go's own api/*.txt files
// (cmd/api), so that a checked-in record shows every change to the public
// surface in a diff:
//
//	pkg github.com/raytpu/raytpu/tpu, func ParseTopology(string) (Topology, error)
//	pkg github.com/raytpu/raytpu/tpu, type Topology struct
//	pkg github.com/raytpu/raytpu/tpu, type Topology struct, Dims []int
//	pkg github.com/raytpu/raytpu/tpu, method (Topology) String() string
//
// It type-checks nothing itself: it reads the compiler's export data of
// each package (go list -export), which is what a user's build sees. It
// imports the standard library only.
package apirecord

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
)

// Public reports whether a package of the module at path (relative to
// the module, "" for its root) is public API: every package outside
// internal/ trees, examples, benchmarks and the docs' snippets, that is
// not a command.
func Public(rel string, isMain bool) bool {
	if isMain {
		return false
	}
	for _, part := range strings.Split(rel, "/") {
		if part == "internal" || part == "testdata" {
			return false
		}
	}
	for _, top := range []string{"examples", "bench", "docs"} {
		if rel == top || strings.HasPrefix(rel, top+"/") {
			return false
		}
	}
	return true
}

type listed struct {
	ImportPath string
	Export     string
}

// Describe returns the record's lines of pkgs, sorted.
func Describe(pkgs []*types.Package) []string {
	var lines []string
	for _, pkg := range pkgs {
		lines = append(lines, describePackage(pkg)...)
	}
	slices.Sort(lines)
	return slices.Compact(lines)
}

// Load reads the export data of the module's public packages under dir,
// in import path order, with `go list -export` and buildFlags (such as
// -race, so that the export data comes from the build cache the tests
// already filled).
func Load(dir string, buildFlags ...string) ([]*types.Package, error) {
	module, err := goList(dir, "list", "-m")
	if err != nil {
		return nil, err
	}
	module = bytes.TrimSpace(module)
	// First the public packages (cheap: no build), then the export data of
	// them and their dependencies only, so that commands and examples are
	// not built for this.
	all, err := goList(dir, "list", "-e", "-f", "{{.ImportPath}} {{.Name}}", "./...")
	if err != nil {
		return nil, err
	}
	var public []string
	for line := range strings.Lines(string(all)) {
		path, name, _ := strings.Cut(strings.TrimSpace(line), " ")
		rel, ok := strings.CutPrefix(path, string(module))
		if !ok {
			continue
		}
		if Public(strings.TrimPrefix(rel, "/"), name == "main") {
			public = append(public, path)
		}
	}
	args := append([]string{"list", "-e", "-export", "-deps", "-json=ImportPath,Export"}, buildFlags...)
	out, err := goList(dir, append(args, public...)...)
	if err != nil {
		return nil, err
	}
	exports := map[string]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, err
		}
		exports[p.ImportPath] = p.Export
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok || f == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	})
	slices.Sort(public)
	var pkgs []*types.Package
	for _, path := range public {
		pkg, err := imp.Import(path)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", path, err)
		}
		pkgs = append(pkgs, pkg)
	}
	return pkgs, nil
}

func goList(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go %s: %v: %s", strings.Join(args[:min(len(args), 3)], " "), err, stderr.Bytes())
	}
	return out, nil
}

// describePackage writes one line per exported feature of pkg.
func describePackage(pkg *types.Package) []string {
	prefix := "pkg " + pkg.Path() + ", "
	qual := func(other *types.Package) string {
		if other == pkg {
			return ""
		}
		return other.Name()
	}
	ts := func(t types.Type) string { return types.TypeString(t, qual) }
	var out []string
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		switch o := obj.(type) {
		case *types.Const:
			out = append(out, prefix+"const "+name+" "+ts(o.Type()))
		case *types.Var:
			out = append(out, prefix+"var "+name+" "+ts(o.Type()))
		case *types.Func:
			sig := o.Type().(*types.Signature)
			out = append(out, prefix+"func "+name+typeParams(sig.TypeParams(), qual)+signature(sig, qual))
		case *types.TypeName:
			out = append(out, describeType(prefix, o, qual)...)
		}
	}
	return out
}

func typeParams(tp *types.TypeParamList, qual types.Qualifier) string {
	if tp == nil || tp.Len() == 0 {
		return ""
	}
	var parts []string
	for t := range tp.TypeParams() {
		parts = append(parts, t.Obj().Name()+" "+types.TypeString(t.Constraint(), qual))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func describeType(prefix string, o *types.TypeName, qual types.Qualifier) []string {
	ts := func(t types.Type) string { return types.TypeString(t, qual) }
	name := o.Name()
	var out []string
	if o.IsAlias() {
		return []string{prefix + "type " + name + " = " + ts(types.Unalias(o.Type()))}
	}
	named, ok := o.Type().(*types.Named)
	if !ok {
		return []string{prefix + "type " + name + " " + ts(o.Type())}
	}
	head := prefix + "type " + name + typeParams(named.TypeParams(), qual)
	switch u := named.Underlying().(type) {
	case *types.Struct:
		out = append(out, head+" struct")
		for f := range u.Fields() {
			if !f.Exported() {
				continue
			}
			if f.Embedded() {
				out = append(out, head+" struct, embedded "+ts(f.Type()))
				continue
			}
			out = append(out, head+" struct, "+f.Name()+" "+ts(f.Type()))
		}
	case *types.Interface:
		out = append(out, head+" interface")
		for i := range u.NumExplicitMethods() {
			m := u.ExplicitMethod(i)
			if !m.Exported() {
				out = append(out, head+" interface, unexported methods")
				continue
			}
			out = append(out, head+" interface, "+m.Name()+signature(m.Type().(*types.Signature), qual))
		}
		for i := range u.NumEmbeddeds() {
			out = append(out, head+" interface, embedded "+ts(u.EmbeddedType(i)))
		}
	default:
		out = append(out, head+" "+ts(u))
	}
	for i := range named.NumMethods() {
		m := named.Method(i)
		if !m.Exported() {
			continue
		}
		sig := m.Type().(*types.Signature)
		recv := name
		if _, ptr := sig.Recv().Type().(*types.Pointer); ptr {
			recv = "*" + name
		}
		out = append(out, prefix+"method ("+recv+") "+m.Name()+signature(sig, qual))
	}
	return out
}

// signature writes sig's parameter and result types without their names,
// as cmd/api does: renaming a parameter is not an API change.
func signature(sig *types.Signature, qual types.Qualifier) string {
	tuple := func(t *types.Tuple, variadic bool) string {
		parts := make([]string, 0, t.Len())
		for i := range t.Len() {
			typ := t.At(i).Type()
			if variadic && i == t.Len()-1 {
				parts = append(parts, "..."+types.TypeString(typ.(*types.Slice).Elem(), qual))
				continue
			}
			parts = append(parts, types.TypeString(typ, qual))
		}
		return strings.Join(parts, ", ")
	}
	s := "(" + tuple(sig.Params(), sig.Variadic()) + ")"
	switch r := sig.Results(); r.Len() {
	case 0:
	case 1:
		s += " " + tuple(r, false)
	default:
		s += " (" + tuple(r, false) + ")"
	}
	return s
}
