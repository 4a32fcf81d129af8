package sim

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Bytes is a memory size in bytes. Its text form is an integer with an
// optional unit: Ki, Mi, Gi, Ti (powers of 1024) or K, M, G, T (of 1000).
type Bytes int64

var byteUnits = []struct {
	suffix string
	mult   int64
}{
	{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"Ti", 1 << 40},
	{"K", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12},
}

// ParseBytes parses a size such as 64Gi, 1500M or 4096.
func ParseBytes(s string) (Bytes, error) {
	s = strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range byteUnits {
		if num, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = num, u.mult
			break
		}
	}
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, fmt.Errorf("size %q: want an integer with an optional unit (Ki, Mi, Gi, Ti, K, M, G, T)", s)
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return Bytes(n * mult), nil
}

// String renders the size with the largest binary unit that divides it
// (64Gi), else in bytes.
func (b Bytes) String() string {
	if b != 0 {
		for _, u := range []struct {
			suffix string
			mult   int64
		}{{"Ti", 1 << 40}, {"Gi", 1 << 30}, {"Mi", 1 << 20}, {"Ki", 1 << 10}} {
			if int64(b)%u.mult == 0 {
				return strconv.FormatInt(int64(b)/u.mult, 10) + u.suffix
			}
		}
	}
	return strconv.FormatInt(int64(b), 10)
}

// MarshalText renders String.
func (b Bytes) MarshalText() ([]byte, error) { return []byte(b.String()), nil }

// UnmarshalText parses with ParseBytes.
func (b *Bytes) UnmarshalText(t []byte) error {
	if b == nil {
		return errors.New("sim: UnmarshalText into a nil *Bytes")
	}
	v, err := ParseBytes(string(t))
	if err != nil {
		return err
	}
	*b = v
	return nil
}
