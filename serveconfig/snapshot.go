package serveconfig

import "encoding/json"

// Snapshot returns a copy of v, a value of user_config or args, made of
// the types JSON decodes to (map[string]any, []any, string, bool, nil and
// numbers), sharing nothing that v's owner may change: maps and slices
// are copied, and a value of any other type (a struct, a typed map) is
// encoded and decoded again, numbers as json.Number. The copy marshals to
// the same bytes before and after a JSON round trip, which a struct, whose
// fields encode in declaration order, would not. The error is Marshal's.
func Snapshot(v any) (any, error) {
	switch v := v.(type) {
	case nil, string, bool, float64, int, json.Number:
		return v, nil
	case map[string]any:
		if v == nil {
			return v, nil
		}
		out := make(map[string]any, len(v))
		for k, x := range v {
			c, err := Snapshot(x)
			if err != nil {
				return nil, err
			}
			out[k] = c
		}
		return out, nil
	case []any:
		if v == nil {
			return v, nil
		}
		out := make([]any, len(v))
		for i, x := range v {
			c, err := Snapshot(x)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	}
	b, err := Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	err = decodeNumbers(b, &out)
	return out, err
}

// SnapshotMap is Snapshot of a map, returned as a map.
func SnapshotMap(m map[string]any) (map[string]any, error) {
	if m == nil {
		return nil, nil
	}
	c, err := Snapshot(m)
	if err != nil {
		return nil, err
	}
	return c.(map[string]any), nil
}
