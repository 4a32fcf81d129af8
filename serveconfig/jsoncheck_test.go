package serveconfig

import (
	"math"
	"testing"
)

// TestCheckJSONIsMarshalsError: CheckJSON fails exactly when Marshal does,
// with the same error, for the values a user's args or user_config hold.
func TestCheckJSONIsMarshalsError(t *testing.T) {
	t.Parallel()
	nan, inf := math.NaN(), math.Inf(-1)
	type custom struct {
		F float64
		C chan int `json:",omitempty"`
	}
	values := []any{
		nil, "s", "\x01\xff<é>", true, 3, 1.5, int64(7), uint8(2), float32(2.5), []string{"a"},
		nan, inf, float32(math.NaN()), make(chan int), func() {}, complex(1, 2),
		map[string]any{}, map[string]any(nil), []any(nil), []any{},
		map[string]any{"a": 1.0, "b": []any{"x", nil, true, map[string]any{"c": 2}}},
		map[string]any{"b": nan, "a": make(chan int)}, // the first key's error
		map[string]any{"a": nan, "b": make(chan int)},
		map[string]any{"z": []any{1.0, inf}, "y": map[string]any{"k": func() {}}},
		[]any{"ok", custom{F: 1}, custom{F: nan}},
		map[string]any{"r": &SliceReservation{HeadReservationTimeoutS: nan}},
		map[string]any{"r": &SliceReservation{ResourcesPerBundle: map[string]float64{"TPU": inf}}},
		map[string]any{"r": (*SliceReservation)(nil), "m": map[string]int{"a": 1}},
		map[string]any{"1": 1, "2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 7, "8": 8, "9": nan, "10": 10.0},
	}
	failing := 0
	for _, v := range values {
		_, merr := Marshal(v)
		cerr := CheckJSON(v)
		if (merr == nil) != (cerr == nil) || (merr != nil && merr.Error() != cerr.Error()) {
			t.Errorf("%#v: CheckJSON = %v, Marshal = %v", v, cerr, merr)
		}
		if merr != nil {
			failing++
		}
	}
	if failing < 8 {
		t.Fatalf("only %d values fail to marshal; the table lost its bad values", failing)
	}
}
