package rayruntime

import (
	"encoding/json"
	"reflect"
	"strings"

	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/serveconfig"
)

// ProtocolVersion is the version of [Protocol]'s description.
const ProtocolVersion = 1

// How the Python side reads the keys of a wire type in [Protocol].
const (
	// ReadAll: the Python reads every key, by name.
	ReadAll = "all"
	// ReadPassThrough: the Python passes the object to a Ray call as its
	// keyword arguments, whatever keys it holds.
	ReadPassThrough = "passthrough"
	// ReadSome: the Python reads a few keys of a larger object (the plan).
	ReadSome = "some"
)

// wireTypes are the types Go writes and Python reads, in the order of the
// description, with how the Python reads them.
var wireTypes = []struct {
	name string
	read string
	typ  reflect.Type
}{
	{"Plan", ReadSome, reflect.TypeFor[placement.Plan]()},
	{"Job", ReadSome, reflect.TypeFor[placement.Job]()},
	{"TrainConfig", ReadAll, reflect.TypeFor[TrainConfig]()},
	{"TrainScaling", ReadAll, reflect.TypeFor[TrainScaling]()},
	{"TrainRun", ReadAll, reflect.TypeFor[TrainRun]()},
	{"TrainJax", ReadPassThrough, reflect.TypeFor[TrainJax]()},
	{"TrainProfiler", ReadAll, reflect.TypeFor[TrainProfiler]()},
	{"TrainDatasets", ReadAll, reflect.TypeFor[TrainDatasets]()},
	{"DataConfig", ReadPassThrough, reflect.TypeFor[DataConfig]()},
	{"IterJaxBatchesKwargs", ReadPassThrough, reflect.TypeFor[IterJaxBatchesKwargs]()},
	{"PipelineConfig", ReadAll, reflect.TypeFor[PipelineConfig]()},
	{"Dataset", ReadAll, reflect.TypeFor[Dataset]()},
	{"Op", ReadAll, reflect.TypeFor[Op]()},
	{"SliceReservation", ReadAll, reflect.TypeFor[serveconfig.SliceReservation]()},
	{"ReplicaProfiler", ReadAll, reflect.TypeFor[serveconfig.ProfilerConfig]()},
	{"Outcome", ReadAll, reflect.TypeFor[Outcome]()},
	{"OutcomeError", ReadAll, reflect.TypeFor[OutcomeError]()},
}

// protocol is the description Protocol encodes.
type protocol struct {
	Version            int               `json:"version"`
	Files              map[string]string `json:"files"`
	Entries            []string          `json:"entries"`
	ResultPrefix       string            `json:"result_prefix"`
	ProfilerPrefix     string            `json:"profiler_prefix"`
	IterJaxBatchesKey  string            `json:"iter_jax_batches_key"`
	CallableKwarg      string            `json:"callable_kwarg"`
	ReservationKey     string            `json:"reservation_key"`
	ReservationVersion int               `json:"reservation_version"`
	ProfilerKey        string            `json:"profiler_key"`
	SliceGroupPrefix   string            `json:"slice_group_prefix"`
	Ray                rayAPIs           `json:"ray"`
	Types              []wireType        `json:"types"`
}

type rayAPIs struct {
	CheckedVersion string       `json:"checked_version"`
	PrivateAPIs    []PrivateAPI `json:"private_apis"`
}

type wireType struct {
	Name string    `json:"name"`
	Read string    `json:"read"`
	Keys []wireKey `json:"keys"`
}

// wireKey is one JSON key of a wire type. Kind is its JSON value's kind
// (object, array, string, number, bool, any), Type names the wire type of
// its value, if any, and Shape says whether the value is one ("") or a
// "list" or "map" of them.
type wireKey struct {
	Name     string `json:"name"`
	Optional bool   `json:"optional"`
	Kind     string `json:"kind"`
	Type     string `json:"type,omitempty"`
	Shape    string `json:"shape,omitempty"`
}

// Protocol returns the description of the wire protocol between Go and
// the Python runtime, as JSON: the file names, entries, keys, line
// prefixes and reservation version of this package, the private Ray APIs
// the runtime relies on ([PrivateRayAPIs]) and, for every wire type, its
// JSON keys (derived from the Go types' json tags) and how the Python
// reads them. [Files] and [ModuleFiles] ship it as ProtocolFile beside
// the Python, which takes its keys and prefixes from it. The bytes are
// the same on every call.
func Protocol() []byte {
	p := protocol{
		Version: ProtocolVersion,
		Files: map[string]string{
			"launcher": LauncherFile, "recorder": RecorderFile, "runtime": RuntimeFile,
			"protocol": ProtocolFile, "plan": PlanFile, "replica_module": ModuleName,
		},
		Entries:      []string{EntryData, EntryTrain},
		ResultPrefix: ResultPrefix, ProfilerPrefix: ProfilerPrefix,
		IterJaxBatchesKey: IterJaxBatchesKey, CallableKwarg: CallableKwarg,
		ReservationKey: ReservationKey, ReservationVersion: ReservationVersion,
		ProfilerKey: ProfilerKey, SliceGroupPrefix: SliceGroupPrefix,
		Ray: rayAPIs{CheckedVersion: CheckedRayVersion, PrivateAPIs: PrivateRayAPIs()},
	}
	for _, w := range wireTypes {
		p.Types = append(p.Types, wireType{Name: w.name, Read: w.read, Keys: jsonKeys(w.typ)})
	}
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		panic("rayruntime: encoding the protocol: " + err.Error()) // plain data; cannot fail
	}
	return append(b, '\n')
}

// jsonKeys lists the JSON keys of struct type t in field order, as
// encoding/json names them: untagged embedded structs are flattened, "-"
// is skipped, omitempty and omitzero keys are optional (they may be absent; a
// nil pointer without omitempty is present, as null). A json.RawMessage
// field may name the wire type it holds in a `wire:"Name"` tag.
func jsonKeys(t reflect.Type) []wireKey {
	var out []wireKey
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			out = append(out, jsonKeys(f.Type)...)
			continue
		}
		if name == "" {
			name = f.Name
		}
		k := wireKey{Name: name, Optional: strings.Contains(","+opts+",", ",omitempty,") || strings.Contains(","+opts+",", ",omitzero,")}
		k.Kind = jsonKind(f.Type)
		k.Type, k.Shape = wireTypeOf(f)
		out = append(out, k)
	}
	return out
}

// jsonKind is the kind of JSON value encoding/json writes for t.
func jsonKind(t reflect.Type) string {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "object"
	case reflect.Slice:
		if t == reflect.TypeFor[json.RawMessage]() {
			return "object"
		}
		return "array"
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "bool"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return "number"
	}
	return "any"
}

// wireTypeOf names the wire type a field holds, and its shape.
func wireTypeOf(f reflect.StructField) (name, shape string) {
	if n := f.Tag.Get("wire"); n != "" {
		return n, ""
	}
	t := f.Type
	switch t.Kind() {
	case reflect.Slice:
		if t.Elem().Kind() != reflect.Uint8 {
			shape, t = "list", t.Elem()
		}
	case reflect.Map:
		shape, t = "map", t.Elem()
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	for _, w := range wireTypes {
		if w.typ == t {
			return w.name, shape
		}
	}
	return "", ""
}
