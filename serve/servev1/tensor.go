package servev1

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Float32Tensor returns a float32 Tensor of the given shape holding values
// as raw little-endian bytes. A nil shape means a vector of len(values).
// It fails when the shape does not hold exactly len(values) elements.
func Float32Tensor(values []float32, shape ...int64) (*Tensor, error) {
	if shape == nil {
		shape = []int64{int64(len(values))}
	}
	if n, err := elements(shape); err != nil {
		return nil, err
	} else if n != int64(len(values)) {
		return nil, fmt.Errorf("servev1: shape %v holds %d elements, got %d values", shape, n, len(values))
	}
	raw := make([]byte, 4*len(values))
	for i, v := range values {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
	}
	return &Tensor{Dtype: "float32", Shape: append([]int64(nil), shape...), Raw: raw}, nil
}

// Float32s returns the elements of a float32 or float64 tensor as float32,
// from raw or, when raw is empty, from float_val. It fails on any other
// dtype or when the element count does not match the shape.
func (t *Tensor) Float32s() ([]float32, error) {
	n, err := elements(t.GetShape())
	if err != nil {
		return nil, err
	}
	var out []float32
	switch dt := t.GetDtype(); {
	case len(t.GetRaw()) == 0 && (dt == "" || dt == "float32"):
		out = append([]float32(nil), t.GetFloatVal()...)
	case dt == "float32" || dt == "":
		if len(t.Raw)%4 != 0 {
			return nil, fmt.Errorf("servev1: float32 tensor has %d raw bytes, not a multiple of 4", len(t.Raw))
		}
		out = make([]float32, len(t.Raw)/4)
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(t.Raw[4*i:]))
		}
	case dt == "float64":
		if len(t.Raw)%8 != 0 {
			return nil, fmt.Errorf("servev1: float64 tensor has %d raw bytes, not a multiple of 8", len(t.Raw))
		}
		out = make([]float32, len(t.Raw)/8)
		for i := range out {
			out[i] = float32(math.Float64frombits(binary.LittleEndian.Uint64(t.Raw[8*i:])))
		}
	default:
		return nil, fmt.Errorf("servev1: tensor dtype %q: want float32 or float64", dt)
	}
	if int64(len(out)) != n {
		return nil, fmt.Errorf("servev1: tensor of shape %v needs %d elements, has %d", t.GetShape(), n, len(out))
	}
	return out, nil
}

// elements is the element count of shape (1 for a scalar).
func elements(shape []int64) (int64, error) {
	n := int64(1)
	for i, d := range shape {
		if d < 0 {
			return 0, fmt.Errorf("servev1: shape[%d] is %d: dimensions must be ≥ 0", i, d)
		}
		if d > 0 && n > math.MaxInt64/d {
			return 0, fmt.Errorf("servev1: shape %v holds more than %d elements", shape, int64(math.MaxInt64))
		}
		n *= d
	}
	return n, nil
}
