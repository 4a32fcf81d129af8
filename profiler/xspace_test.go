package profiler_test

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/profiler"
	"github.com/raytpu/raytpu/profiler/internal/tslpb"
)

func marshal(t testing.TB, xs *tslpb.XSpace) []byte {
	t.Helper()
	b, err := proto.Marshal(xs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParse(t *testing.T) {
	t.Parallel()
	ev := func(md int64, stats ...int64) *tslpb.XEvent {
		e := &tslpb.XEvent{MetadataId: md}
		for _, s := range stats {
			e.Stats = append(e.Stats, &tslpb.XStat{MetadataId: s})
		}
		return e
	}
	plane := func(events ...*tslpb.XEvent) *tslpb.XPlane {
		return &tslpb.XPlane{
			Id: 1, Name: "/host:CPU",
			Lines:         []*tslpb.XLine{{Id: 1, Name: "main", Events: events}},
			EventMetadata: map[int64]*tslpb.XEventMetadata{1: {Id: 1, Name: "b"}, 2: {Id: 2, Name: "a"}},
			StatMetadata:  map[int64]*tslpb.XStatMetadata{7: {Id: 7, Name: "s"}},
		}
	}
	for _, tc := range []struct {
		name    string
		xs      *tslpb.XSpace
		want    *profiler.Summary
		wantErr bool
		empty   bool
	}{
		{
			name: "counts by name, sorted",
			xs:   &tslpb.XSpace{Planes: []*tslpb.XPlane{plane(ev(1), ev(2, 7), ev(1))}, Hostnames: []string{"h"}},
			want: &profiler.Summary{Hostnames: []string{"h"}, Planes: []profiler.Plane{{
				ID: 1, Name: "/host:CPU", Lines: 1, Events: 3, EventMetadata: 2, StatMetadata: 1,
				EventCounts: []profiler.NameCount{{Name: "a", Count: 1}, {Name: "b", Count: 2}},
			}}},
		},
		{name: "event with unknown metadata", xs: &tslpb.XSpace{Planes: []*tslpb.XPlane{plane(ev(9))}}, wantErr: true},
		{name: "stat with unknown metadata", xs: &tslpb.XSpace{Planes: []*tslpb.XPlane{plane(ev(1, 8))}}, wantErr: true},
		{
			name:  "no events",
			xs:    &tslpb.XSpace{Planes: []*tslpb.XPlane{plane()}, Errors: []string{"tracer off"}},
			want:  &profiler.Summary{Errors: []string{"tracer off"}, Planes: []profiler.Plane{{ID: 1, Name: "/host:CPU", Lines: 1, EventMetadata: 2, StatMetadata: 1}}},
			empty: true,
		},
		{name: "no planes", xs: &tslpb.XSpace{}, want: &profiler.Summary{}, empty: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := profiler.Parse(marshal(t, tc.xs))
			if tc.wantErr {
				if err == nil {
					t.Fatalf("Parse = %+v, want an error", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Parse (-want +got):\n%s", diff)
			}
			if err := got.Check(); errors.Is(err, profiler.ErrEmptyTrace) != tc.empty {
				t.Errorf("Check = %v, want empty=%v", err, tc.empty)
			}
		})
	}
}

func TestParseRejectsNonXSpace(t *testing.T) {
	t.Parallel()
	for _, b := range [][]byte{[]byte("not a protobuf \xff\xff"), {0x0a, 0x05, 0x01}} {
		if s, err := profiler.Parse(b); err == nil {
			t.Errorf("Parse(%q) = %+v, want an error", b, s)
		}
	}
}

func FuzzParse(f *testing.F) {
	b, err := os.ReadFile("testdata/jit_step.xplane.pb")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := profiler.Parse(b)
		if err != nil {
			return
		}
		n := 0
		for _, p := range s.Planes {
			for _, c := range p.EventCounts {
				n += c.Count
			}
		}
		if n != s.Events() {
			t.Errorf("event counts add up to %d, Events() = %d", n, s.Events())
		}
	})
}

func TestOptionsValidate(t *testing.T) {
	t.Parallel()
	lvl := func(n int) *int { return &n }
	for _, tc := range []struct {
		name string
		opts profiler.Options
		want []string // "path Type"
	}{
		{name: "ok", opts: profiler.Options{Duration: 2 * time.Second}},
		{name: "ok levels", opts: profiler.Options{Duration: time.Millisecond, HostTracerLevel: lvl(0), Host: "h-1"}},
		{name: "zero duration", opts: profiler.Options{}, want: []string{"p.duration Invalid"}},
		{name: "too long", opts: profiler.Options{Duration: time.Hour}, want: []string{"p.duration Invalid"}},
		{name: "sub-millisecond", opts: profiler.Options{Duration: 1500 * time.Microsecond}, want: []string{"p.duration Invalid"}},
		{
			name: "every field",
			opts: profiler.Options{Duration: -1, HostTracerLevel: lvl(4), MaxTraceBytes: -1, Host: "a/b"},
			want: []string{"p.duration Invalid", "p.hostTracerLevel NotSupported", "p.maxTraceBytes Invalid", "p.host Invalid"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			for _, e := range field.Errors(tc.opts.Validate(field.NewPath("p"))) {
				got = append(got, e.Field+" "+string(e.Type))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Validate (-want +got):\n%s", diff)
			}
		})
	}
}

// Nil summaries, planes and traces answer without panicking.
func TestNilReceivers(t *testing.T) {
	var s *profiler.Summary
	if s.Events() != 0 || s.Plane("/host:CPU") != nil || s.Plane("x").Count("y") != 0 {
		t.Error("a nil Summary or Plane holds something")
	}
	if err := s.Check(); !errors.Is(err, profiler.ErrEmptyTrace) {
		t.Errorf("nil Summary: Check = %v, want ErrEmptyTrace", err)
	}
	var tr *profiler.Trace
	if _, err := tr.WriteLogDir(t.TempDir(), "run"); err == nil {
		t.Error("nil Trace: WriteLogDir succeeded")
	}
}
