package train

import (
	"bytes"
	"testing"
)

// The module scan reads user source: it must never panic, and what it
// reports must point into the source.
func FuzzScanModule(f *testing.F) {
	f.Add([]byte("import jax\n\ndef train_func(config):\n    pass\n"))
	f.Add([]byte("from a import (\n  b as c,\n  d)\n\"\"\"doc\ndef x(): pass\n\"\"\"\ntry:\n    import jax.numpy as jnp\nexcept ImportError:\n    pass\n"))
	f.Add([]byte("from x import *\nasync def __getattr__(n): pass\nclass K: pass\ny: int = 3\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		s := scanModule(src)
		lines := bytes.Count(src, []byte("\n")) + 1
		if s.jaxLine < 0 || s.jaxLine > lines {
			t.Errorf("jax import at line %d of %d", s.jaxLine, lines)
		}
		seen := map[string]bool{}
		for _, n := range s.names {
			if seen[n] || n == "" {
				t.Errorf("name %q reported twice or empty: %q", n, s.names)
			}
			seen[n] = true
		}
		for _, fn := range s.functions {
			if !seen[fn] {
				t.Errorf("function %q not among the names %q", fn, s.names)
			}
		}
	})
}
