// Package nilness tells an interface holding a nil pointer (a typed nil)
// from a usable value, so that the front ends refuse a nil backend with an
// error before calling it.
package nilness

import "reflect"

// Is reports whether v is nil, or an interface whose dynamic value is a
// nil pointer, map, slice, func, channel or interface.
func Is(v any) bool {
	if v == nil {
		return true
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface, reflect.UnsafePointer:
		return rv.IsNil()
	}
	return false
}
