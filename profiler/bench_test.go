package profiler_test

import (
	"fmt"
	"testing"

	"github.com/raytpu/raytpu/profiler"
	"github.com/raytpu/raytpu/profiler/internal/tslpb"
)

// synthetic is an XSpace shaped like 1 s of a CPU JAX worker running a
// jitted step (as captured in the tests): one host plane, 5 lines, events
// spread over 18 names, every event with two stats.
func synthetic(b *testing.B, events int) []byte {
	b.Helper()
	p := &tslpb.XPlane{Id: 1, Name: "/host:CPU", EventMetadata: map[int64]*tslpb.XEventMetadata{}, StatMetadata: map[int64]*tslpb.XStatMetadata{}}
	for i := int64(1); i <= 18; i++ {
		p.EventMetadata[i] = &tslpb.XEventMetadata{Id: i, Name: fmt.Sprintf("Event%d", i)}
	}
	for i := int64(1); i <= 2; i++ {
		p.StatMetadata[i] = &tslpb.XStatMetadata{Id: i, Name: fmt.Sprintf("stat%d", i)}
	}
	for l := 0; l < 5; l++ {
		line := &tslpb.XLine{Id: int64(l), Name: fmt.Sprintf("thread %d", l)}
		for e := l; e < events; e += 5 {
			line.Events = append(line.Events, &tslpb.XEvent{
				MetadataId: int64(e%18 + 1), Data: &tslpb.XEvent_OffsetPs{OffsetPs: int64(e) * 1000}, DurationPs: 500,
				Stats: []*tslpb.XStat{{MetadataId: 1, Value: &tslpb.XStat_Int64Value{Int64Value: int64(e)}}, {MetadataId: 2, Value: &tslpb.XStat_Uint64Value{Uint64Value: 7}}},
			})
		}
		p.Lines = append(p.Lines, line)
	}
	return marshal(b, &tslpb.XSpace{Planes: []*tslpb.XPlane{p}, Hostnames: []string{"h"}})
}

// BenchmarkParse decodes and summarises a trace of 50,000 events, about
// what 1 s of a busy CPU JAX worker gives.
func BenchmarkParse(b *testing.B) {
	raw := synthetic(b, 50_000)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		s, err := profiler.Parse(raw)
		if err != nil || s.Events() != 50_000 {
			b.Fatalf("Parse = %v events, %v", s.Events(), err)
		}
	}
}
