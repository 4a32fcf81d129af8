package serveconfig

import (
	"math"
)

// CheckJSON returns the error Marshal(v) returns, without writing any
// JSON: a user's args or user_config is checked when it is compiled, and
// encoded only when its config is sent. It walks v as jsonEnc.any does, in the
// same order, and hands what jsonEnc would hand to encoding/json to
// encoding/json, so the first error is the same one.
func CheckJSON(v any) error {
	switch v := v.(type) {
	case nil, string, bool, int:
		return nil // written by hand, never an error
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			_, err := marshalReflect(v)
			return err
		}
		return nil
	case map[string]any:
		var buf [8]string
		for _, k := range sortedKeys(buf[:], v) {
			if err := CheckJSON(v[k]); err != nil {
				return err
			}
		}
		return nil
	case []any:
		for _, x := range v {
			if err := CheckJSON(x); err != nil {
				return err
			}
		}
		return nil
	}
	// *SliceReservation and every other type: what encoding/json says.
	_, err := marshalReflect(v)
	return err
}
