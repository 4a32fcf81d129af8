package sim_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/sim"
)

func TestParseSpec(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in     string
		want   string // String() of the result
		hosts  int
		slices []string
	}{
		{"v6e-16", "v6e-16", 4, []string{"v6e-16-0"}},
		{"2*v6e-16,v4-16,cpu:2", "2*v6e-16,v4-16,cpu:2", 12, []string{"v6e-16-0", "v6e-16-1", "v4-16-0"}},
		{" 2 * v6e-16 , cpu : 2 ", "2*v6e-16,cpu:2", 10, []string{"v6e-16-0", "v6e-16-1"}},
		{"v6e-16:4x4", "v6e-16", 4, []string{"v6e-16-0"}},
		{"v6e-16:2x8", "v6e-16:2x8", 4, []string{"v6e-16-0"}},
		{"V6E-16", "v6e-16", 4, []string{"v6e-16-0"}},
		{"tpu7x-16", "v7x-16", 2, []string{"v7x-16-0"}},
		{"v5e-8,v5litepod-8", "v5litepod-8,v5litepod-8", 2, []string{"v5litepod-8-0", "v5litepod-8-1"}},
		{"v6e-8", "v6e-8", 1, []string{"v6e-8-0"}},
		{"v6e-8:2x4@4", "v6e-8@4", 2, []string{"v6e-8-0"}},
		{"v6e-8@8", "v6e-8", 1, []string{"v6e-8-0"}},
		{"v4-16:2x2x2", "v4-16", 2, []string{"v4-16-0"}},
		{"v6e-16,v6e-16", "v6e-16,v6e-16", 8, []string{"v6e-16-0", "v6e-16-1"}},
		{"v6e-16{cpu=16,mem=64Gi}", "v6e-16{cpu=16,mem=64Gi}", 4, []string{"v6e-16-0"}},
		{"v6e-16{mem=32Gi, cpu=8}", "v6e-16", 4, []string{"v6e-16-0"}},
		{"v6e-16{memory=1500M}", "v6e-16{mem=1500000000}", 4, []string{"v6e-16-0"}},
		{"2*cpu{cpu=4}", "cpu:2{cpu=4}", 2, nil},
		{"cpu", "cpu:1", 1, nil},
		{"v7x-2", "v7x-2", 1, []string{"v7x-2-0"}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			s, err := sim.ParseSpec(tt.in)
			if err != nil {
				t.Fatalf("ParseSpec(%q): %v", tt.in, err)
			}
			if got := s.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
			again, err := sim.ParseSpec(s.String())
			if err != nil {
				t.Fatalf("ParseSpec(String()): %v", err)
			}
			if diff := cmp.Diff(s, again); diff != "" {
				t.Errorf("round trip (-first +second):\n%s", diff)
			}
			if got := s.NumHosts(); got != tt.hosts {
				t.Errorf("NumHosts() = %d, want %d", got, tt.hosts)
			}
			var slices []string
			for _, h := range s.Hosts() {
				if h.IsTPU() && h.WorkerID == 0 {
					slices = append(slices, h.SliceName)
				}
			}
			if diff := cmp.Diff(tt.slices, slices); diff != "" {
				t.Errorf("slices (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseSpecErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in       string
		want     []string // "path type"
		contains []string // the message names the item, bad value and valid values
	}{
		{"", []string{"spec Required"}, nil},
		{"v6e-12", []string{"spec[0].podType NotSupported"}, []string{`"v6e-12"`, `did you mean "v6e-16"`, `"v6e-8"`}},
		{"x9-16", []string{"spec[0].podType NotSupported"}, []string{`"x9-16"`, `"v6e"`, `"cpu"`}},
		{"v4-15", []string{"spec[0].podType NotSupported"}, []string{"multiple of 2", `"v4-16"`}},
		{"v6e-16:4x8", []string{"spec[0].topology NotSupported"}, []string{`in item "v6e-16:4x8"`, `did you mean "4x4"`, `"2x8"`}},
		{"v6e-16:4x", []string{"spec[0].topology Invalid"}, nil},
		{"v6e-16@3", []string{"spec[0].chipsPerHost NotSupported"}, []string{`"4"`, `"8"`}},
		{"v6e-16@x", []string{"spec[0].chipsPerHost Invalid"}, nil},
		{"0*v6e-16", []string{"spec[0].count Invalid"}, nil},
		{"cpu:0", []string{"spec[0].count Invalid"}, nil},
		{"2*cpu:2", []string{"spec[0].count Invalid"}, nil},
		{"cpu:2:2x2", []string{"spec[0].count Invalid"}, nil},
		{"v6e-16{gpu=1}", []string{"spec[0].options NotSupported"}, []string{`did you mean "cpu"`}},
		{"v6e-16{cpu=0}", []string{"spec[0].cpu Invalid"}, nil},
		{"v6e-16{mem=lots}", []string{"spec[0].memory Invalid"}, nil},
		{"v6e-16{cpu=1,cpu=2}", []string{"spec[0].options Invalid"}, nil},
		{"v6e-16{cpu=1", []string{"spec Invalid"}, nil},
		{"v6e-16,,v4-8", []string{"spec[1] Required"}, nil},
		{"v6e-16,v6e-12,cpu:1,v4-8:2x2x3", []string{"spec[1].podType NotSupported", "spec[3].topology NotSupported"}, []string{`in item "v6e-12"`, `in item "v4-8:2x2x3"`}},
		{"100000*v6e-256", []string{"spec Invalid"}, []string{"at most"}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			_, err := sim.ParseSpec(tt.in)
			if err == nil {
				t.Fatalf("ParseSpec(%q) succeeded", tt.in)
			}
			if diff := cmp.Diff(tt.want, fieldErrors(err)); diff != "" {
				t.Errorf("errors (-want +got):\n%s\n%v", diff, err)
			}
			for _, s := range tt.contains {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %s", err, s)
				}
			}
		})
	}
}

func TestParseSpecYAML(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, yaml, short string
	}{
		{"basic", "nodes:\n  - podType: v6e-16\n    count: 2\n  - podType: v4-16\n  - podType: cpu\n    count: 2\n", "2*v6e-16,v4-16,cpu:2"},
		{"options", "nodes:\n- {podType: v6e-8, topology: 2x4, chipsPerHost: 4, cpu: 16, memory: 64Gi}\n", "v6e-8@4{cpu=16,mem=64Gi}"},
		{"memory in bytes", "nodes:\n- podType: cpu\n  memory: 1073741824\n", "cpu:1{mem=1Gi}"},
		{"gce names", "nodes:\n- podType: tpu7x-16\n", "v7x-16"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := sim.ParseSpecYAML([]byte(tt.yaml))
			if err != nil {
				t.Fatal(err)
			}
			want, err := sim.ParseSpec(tt.short)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-short +yaml):\n%s", diff)
			}
		})
	}
}

func TestParseSpecYAMLErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, yaml string
		want       []string
	}{
		{"empty", "", []string{"nodes Required"}},
		{"no nodes", "nodes: []\n", []string{"nodes Required"}},
		{"unknown field", "nodes:\n- podType: v6e-16\n  chips: 4\n", []string{"nodes[0].chips NotSupported"}},
		{"unknown top-level field", "slices: []\n", []string{"slices NotSupported"}},
		{"not a list", "nodes: 3\n", []string{"nodes Invalid"}},
		{"not yaml", "nodes: [\n", []string{"file Invalid"}},
		{"two documents", "nodes: [{podType: cpu}]\n---\nnodes: []\n", []string{"file Invalid"}},
		{"keys are case-sensitive", "nodes:\n- PodType: cpu\n", []string{"nodes[0].PodType NotSupported"}},
		{"a number where a string goes", "nodes:\n- podType: cpu\n  topology: 16\n", []string{"nodes[0].topology Invalid"}},
		{"every item", "nodes:\n- {podType: v6e-12}\n- {podType: cpu, count: 0, topology: 2x2}\n- {podType: v6e-16, memory: big}\n",
			[]string{"nodes[1].count Invalid", "nodes[2].memory Invalid", "nodes[0].podType NotSupported", "nodes[1].topology Forbidden"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := sim.ParseSpecYAML([]byte(tt.yaml))
			if diff := cmp.Diff(tt.want, fieldErrors(err)); diff != "" {
				t.Errorf("errors (-want +got):\n%s\n%v", diff, err)
			}
		})
	}
}

func FuzzParseSpec(f *testing.F) {
	for _, s := range []string{"2*v6e-16,v4-16,cpu:2", "v6e-8:2x4@4{cpu=16,mem=64Gi}", "tpu7x-16", "cpu:3{mem=1Ti}", "v5p-16:2x2x4", "v6e-16{", "3*", ",,", "v4-4096:8x8x16", "v4-16:2x2x2{max=2}", "0*v6e-8@4{min=0,max=3},cpu", "2*v4-16{min=1,max=4}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := sim.ParseSpec(in)
		if err != nil {
			return
		}
		out := s.String()
		again, err := sim.ParseSpec(out)
		if err != nil {
			t.Fatalf("ParseSpec(%q) ok, but its String() %q fails: %v", in, out, err)
		}
		if diff := cmp.Diff(s, again); diff != "" {
			t.Fatalf("round trip of %q via %q (-first +second):\n%s", in, out, diff)
		}
		if again.String() != out {
			t.Fatalf("String() not stable: %q then %q", out, again.String())
		}
		// Only autoscaled groups may have no slice now.
		autoscaledOnly := !slices.ContainsFunc(s.Items, func(it sim.Item) bool { return !it.Autoscaled() })
		if n := s.NumHosts(); n < 0 || (n == 0 && !autoscaledOnly) || n > sim.MaxHosts {
			t.Fatalf("%q: %d hosts", in, n)
		}
		if s.NumHosts() <= 512 {
			if got := len(s.Hosts()); got != s.NumHosts() {
				t.Fatalf("%q: Hosts() has %d, NumHosts() %d", in, got, s.NumHosts())
			}
		}
	})
}

func FuzzParseSpecYAML(f *testing.F) {
	for _, s := range []string{
		"nodes:\n- podType: v6e-16\n  count: 2\n- podType: cpu\n",
		"nodes:\n- {podType: v6e-8, topology: 2x4, chipsPerHost: 4, cpu: 16, memory: 64Gi}\n",
		"nodes: [{podType: tpu7x-16, memory: 1024}]",
		"nodes:\n- podType: v4-16\n  bogus: 1\n",
		"",
		"nodes: 3",
		"nodes:\n- {podType: v4-16, topology: 2x2x2, count: 0, minSlices: 0, maxSlices: 2}\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		s, err := sim.ParseSpecYAML(in)
		if err != nil {
			return
		}
		again, err := sim.ParseSpec(s.String())
		if err != nil {
			t.Fatalf("ParseSpecYAML(%q) ok, but its String() %q fails: %v", in, s.String(), err)
		}
		if diff := cmp.Diff(s, again); diff != "" {
			t.Fatalf("round trip of %q via %q (-yaml +short):\n%s", in, s.String(), diff)
		}
	})
}
