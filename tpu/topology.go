package tpu

import (
	"fmt"
	"strconv"
	"strings"
)

// Topology is a parsed chip grid: AxB for 2D generations, AxBxC for 3D.
// The zero value is invalid.
type Topology struct {
	dims [3]int
	n    int
}

// ParseTopology parses "AxB" or "AxBxC" (case-insensitive x, surrounding
// space ignored). Every dimension must be a positive integer.
func ParseTopology(s string) (Topology, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return Topology{}, fmt.Errorf("empty topology: want AxB or AxBxC, e.g. 4x4 or 2x2x2")
	}
	n := strings.Count(s, "x") + 1
	if n < 2 || n > 3 {
		return Topology{}, fmt.Errorf("topology %q has %d dimensions: want AxB or AxBxC, e.g. 4x4 or 2x2x2", s, n)
	}
	t := Topology{n: n}
	rest := s
	for i := range n {
		p, tail, _ := strings.Cut(rest, "x")
		rest = tail
		if p == "" || strings.TrimLeft(p, "0123456789") != "" {
			return Topology{}, fmt.Errorf("topology %q: dimension %d is %q, not a positive integer", s, i+1, p)
		}
		v, err := strconv.Atoi(p)
		if err != nil || v <= 0 || v > MaxTopologyDimension {
			return Topology{}, fmt.Errorf("topology %q: dimension %d is %q, not a positive integer up to %d", s, i+1, p, MaxTopologyDimension)
		}
		t.dims[i] = v
	}
	return t, nil
}

// MustParseTopology is ParseTopology for constants in tests and examples;
// it panics on a malformed string.
func MustParseTopology(s string) Topology {
	t, err := ParseTopology(s)
	if err != nil {
		panic(err)
	}
	return t
}

// Rank is 2 or 3 (0 for the zero value).
func (t Topology) Rank() int { return t.n }

// Dims returns the dimensions in order.
func (t Topology) Dims() []int { return append([]int(nil), t.dims[:t.n]...) }

// Chips is the product of the dimensions.
func (t Topology) Chips() int {
	if t.n == 0 {
		return 0
	}
	c := 1
	for _, d := range t.dims[:t.n] {
		c *= d
	}
	return c
}

// format builds the canonical form.
func (t Topology) format() string {
	var buf [24]byte // three dimensions up to 65536 and two x
	b := buf[:0]
	for i, d := range t.dims[:t.n] {
		if i > 0 {
			b = append(b, 'x')
		}
		b = strconv.AppendInt(b, int64(d), 10)
	}
	return string(b)
}

// IsZero reports whether t is the zero value.
func (t Topology) IsZero() bool { return t.n == 0 }

// MarshalText renders the canonical form.
func (t Topology) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// UnmarshalText parses the canonical form.
func (t *Topology) UnmarshalText(b []byte) error {
	v, err := ParseTopology(string(b))
	if err != nil {
		return err
	}
	*t = v
	return nil
}
