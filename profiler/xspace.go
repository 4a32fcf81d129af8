package profiler

import (
	"errors"
	"fmt"
	"slices"
	"sort"

	"google.golang.org/protobuf/proto"

	"github.com/raytpu/raytpu/profiler/internal/tslpb"
)

// ErrEmptyTrace is what [Summary.Check] returns, wrapped, for a trace with
// no events.
var ErrEmptyTrace = errors.New("empty trace")

// Summary describes an XSpace: its planes and what each holds. A nil
// *Summary holds nothing: Events is 0, Plane is nil, and Check returns an
// error wrapping ErrEmptyTrace that says to pass the Summary Parse made.
type Summary struct {
	// Planes in the order of the XSpace.
	Planes []Plane `json:"planes"`
	// Hostnames the trace was taken on.
	Hostnames []string `json:"hostnames,omitempty"`
	// Errors and Warnings the profiler recorded while tracing.
	Errors   []string `json:"errors,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
}

// Plane summarises one XPlane: a device, or the host ("/host:CPU"). A
// nil *Plane (what Summary.Plane answers for a missing plane) counts 0
// events of every name.
type Plane struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	// Lines is the number of timelines (threads, streams).
	Lines int `json:"lines"`
	// Events is the number of events on every line.
	Events int `json:"events"`
	// EventMetadata and StatMetadata count the plane's metadata entries.
	EventMetadata int `json:"event_metadata"`
	StatMetadata  int `json:"stat_metadata"`
	// EventCounts is the number of events by name, names sorted.
	EventCounts []NameCount `json:"event_counts,omitempty"`
}

// NameCount is a number of events of one name.
type NameCount struct {
	Name  string `json:"name"`
	Count int    `json:"count"`
}

// Parse decodes a serialized XSpace (the content of an .xplane.pb file)
// and summarises it. It fails on bytes that are not an XSpace, and on an
// XSpace whose events name metadata its plane does not hold.
func Parse(b []byte) (*Summary, error) {
	var xs tslpb.XSpace
	if err := proto.Unmarshal(b, &xs); err != nil {
		return nil, fmt.Errorf("not an XSpace: %w", err)
	}
	return summarise(&xs)
}

// summarise is Parse of a decoded XSpace.
func summarise(xs *tslpb.XSpace) (*Summary, error) {
	s := &Summary{Hostnames: xs.GetHostnames(), Errors: xs.GetErrors(), Warnings: xs.GetWarnings()}
	for i, p := range xs.GetPlanes() {
		pl := Plane{
			ID: p.GetId(), Name: p.GetName(), Lines: len(p.GetLines()),
			EventMetadata: len(p.GetEventMetadata()), StatMetadata: len(p.GetStatMetadata()),
		}
		counts := map[string]int{}
		for _, l := range p.GetLines() {
			for _, e := range l.GetEvents() {
				md, ok := p.GetEventMetadata()[e.GetMetadataId()]
				if !ok {
					return nil, fmt.Errorf("XSpace plane %d (%q) line %q: an event names event metadata %d, which the plane does not hold", i, p.GetName(), l.GetName(), e.GetMetadataId())
				}
				for _, st := range e.GetStats() {
					if _, ok := p.GetStatMetadata()[st.GetMetadataId()]; !ok {
						return nil, fmt.Errorf("XSpace plane %d (%q) event %q: a stat names stat metadata %d, which the plane does not hold", i, p.GetName(), md.GetName(), st.GetMetadataId())
					}
				}
				pl.Events++
				counts[md.GetName()]++
			}
		}
		names := make([]string, 0, len(counts))
		for n := range counts {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			pl.EventCounts = append(pl.EventCounts, NameCount{Name: n, Count: counts[n]})
		}
		s.Planes = append(s.Planes, pl)
	}
	return s, nil
}

// Events is the number of events in every plane.
func (s *Summary) Events() int {
	if s == nil {
		return 0
	}
	n := 0
	for _, p := range s.Planes {
		n += p.Events
	}
	return n
}

// Plane returns the plane named name, or nil.
func (s *Summary) Plane(name string) *Plane {
	if s == nil {
		return nil
	}
	i := slices.IndexFunc(s.Planes, func(p Plane) bool { return p.Name == name })
	if i < 0 {
		return nil
	}
	return &s.Planes[i]
}

// Count is the number of events named name in the plane.
func (p *Plane) Count(name string) int {
	if p == nil {
		return 0
	}
	i, ok := slices.BinarySearchFunc(p.EventCounts, name, func(c NameCount, n string) int {
		switch {
		case c.Name < n:
			return -1
		case c.Name > n:
			return 1
		}
		return 0
	})
	if !ok {
		return 0
	}
	return p.EventCounts[i].Count
}

// Check returns an error wrapping ErrEmptyTrace when the trace has no
// plane or no event: the server traced while nothing ran, or every tracer
// was off. The profiler's own errors are part of the message.
func (s *Summary) Check() error {
	if s == nil {
		return fmt.Errorf("%w: nil *Summary: pass the Summary that profiler.Parse returns (or a Trace's)", ErrEmptyTrace)
	}
	if len(s.Planes) > 0 && s.Events() > 0 {
		return nil
	}
	msg := fmt.Sprintf("%d planes, %d events", len(s.Planes), s.Events())
	if len(s.Errors) > 0 {
		msg += fmt.Sprintf("; the profiler reported: %q", s.Errors)
	}
	return fmt.Errorf("%w (%s): did the worker run anything while it was traced?", ErrEmptyTrace, msg)
}
