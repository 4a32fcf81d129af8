package tpurules_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/internal/testinfra/venvtest"
	"github.com/raytpu/raytpu/tpu"
)

// knownRayDivergence lists the answers where tpu deliberately differs from
// the installed Ray, keyed by "<generation> <topology> <function>", with
// Ray's answer and tpu's.
var knownRayDivergence = map[string][2]int{
	// Ray's get_chips_per_host falls back to 4 for a 1-chip v7x slice, a
	// shape Ray's own table does not list (slice placement rejects it);
	// GKE runs 1x1x1 on a tpu7x-standard-1t host, which has one chip.
	"v7x 1x1x1 get_chips_per_host": {4, 1},
}

// rawSpellings are non-canonical spellings of valid shapes. Ray strips and
// lower-cases a topology before looking it up; tpu also drops leading zeros
// (it parses the numbers), so "04x4" is 4x4 to tpu and unknown to Ray. The
// SDK only ever hands Ray the canonical Topology.String().
var rawSpellings = map[string][]string{
	"v6e": {" 4X4 ", "2X4", "04x4", "2x08"},
	"v4":  {"2X2X2", " 2x2x4\t", "02x2x2"},
}

// knownRayValidityDivergence lists "<generation> <topology>" pairs whose
// validity tpu decides differently from Ray on purpose, with Ray's verdict.
var knownRayValidityDivergence = map[string]bool{
	"v6e 04x4":  false,
	"v6e 2x08":  false,
	"v4 02x2x2": false,
}

const installRay = "run scripts/setup-venv.sh (or make test) to install Ray"

type rayRequest struct {
	Generations []rayGenRequest `json:"generations"`
	PodTypes    []string        `json:"podTypes"`
}

type rayGenRequest struct {
	Version         string   `json:"version"`
	Names           []string `json:"names"`
	AcceleratorType string   `json:"acceleratorType"`
	Topologies      []string `json:"topologies"`
}

type rayAnswer struct {
	RayVersion    string              `json:"rayVersion"`
	ValidTypes    []string            `json:"validTypes"`
	ValidTopology map[string][]string `json:"validTopology"`
	Generations   []struct {
		Version string `json:"version"`
		Results map[string]struct {
			Valid               map[string]bool `json:"valid"`
			ChipsPerHost        int             `json:"chipsPerHost"`
			PodType             string          `json:"podType"`
			VisibleChipsPerHost int             `json:"visibleChipsPerHost"`
		} `json:"results"`
	} `json:"generations"`
	PodTypes map[string]int `json:"podTypes"`
}

// crossCheckTopologies is every shape tpu knows for g plus a grid of shapes
// of both ranks, most of them invalid: wrong rank, unsorted, non-multiples
// of 4, beyond Ray's bounds, beyond GKE's cube limits.
func crossCheckTopologies(g *tpu.Generation) []string {
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, s := range g.ValidTopologies(tpu.TargetAny) {
		add(s)
	}
	d2 := []int{1, 2, 3, 4, 6, 8, 16, 32, 64}
	for _, a := range d2 {
		for _, b := range d2 {
			add(fmt.Sprintf("%dx%d", a, b))
		}
	}
	d3 := []int{1, 2, 3, 4, 6, 8, 12, 16, 20, 24, 28, 32}
	for _, a := range d3 {
		for _, b := range d3 {
			for _, c := range d3 {
				add(fmt.Sprintf("%dx%dx%d", a, b, c))
			}
		}
	}
	return out
}

// TestAgainstInstalledRay runs the installed Ray's own TPU functions over
// every generation and a few thousand topologies and compares each answer
// with tpu's: Ray's VALID_TPU_TYPES and VALID_TPU_TOPOLOGY tables,
// is_valid_tpu_accelerator_topology (under Ray's, Ray's accelerator-type
// and GCE's spelling of the generation) against CheckTopology(TargetRay),
// get_chips_per_host against DefaultChipsPerHost,
// infer_tpu_pod_type_from_topology against PodType,
// get_num_tpu_visible_chips_per_host against DefaultChipsPerHost, and
// get_total_chips_from_accelerator_type against ParsePodType.
func TestAgainstInstalledRay(t *testing.T) {
	t.Parallel()
	py := venvtest.Python(t)
	script := filepath.Join("testdata", "ray_tpu_rules.py")

	var req rayRequest
	gens := map[string]*tpu.Generation{}
	podTypes := map[string]bool{}
	for _, g := range tpu.Generations() {
		gens[g.RayVersion] = g
		names := []string{g.RayVersion, g.RayAcceleratorType()}
		if !slices.Contains(names, g.GCEPrefix) {
			names = append(names, g.GCEPrefix)
		}
		topos := append(crossCheckTopologies(g), rawSpellings[g.Name]...)
		req.Generations = append(req.Generations, rayGenRequest{
			Version: g.RayVersion, Names: names, AcceleratorType: g.RayAcceleratorType(), Topologies: topos,
		})
		for _, s := range g.ValidTopologies(tpu.TargetAny) {
			podTypes[g.PodType(tpu.MustParseTopology(s).Chips())] = true
		}
	}
	for pt := range podTypes {
		req.PodTypes = append(req.PodTypes, pt)
	}
	slices.Sort(req.PodTypes)
	body, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}

	cmd := exec.CommandContext(t.Context(), py, script)
	cmd.Stdin = bytes.NewReader(body)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if strings.Contains(stderr.String(), "ModuleNotFoundError") {
			t.Fatalf("%s: %v\n%s", installRay, err, stderr.String())
		}
		t.Fatalf("%s %s: %v\n%s", py, script, err, stderr.String())
	}
	var ans rayAnswer
	if err := json.Unmarshal(stdout.Bytes(), &ans); err != nil {
		t.Fatalf("decoding Ray's answer: %v\n%s", err, stdout.String())
	}
	t.Logf("compared against Ray %s", ans.RayVersion)

	// Ray's tables.
	var versions []string
	for _, g := range tpu.Generations() {
		versions = append(versions, g.RayVersion)
	}
	slices.Sort(versions)
	rayTypes := slices.Sorted(slices.Values(ans.ValidTypes))
	if diff := cmp.Diff(rayTypes, versions); diff != "" {
		t.Errorf("Ray's VALID_TPU_TYPES vs tpu's RayVersions (-ray +tpu):\n%s", diff)
	}
	for version, rayTopos := range ans.ValidTopology {
		g, ok := gens[version]
		if !ok {
			t.Errorf("Ray has topologies for %s, a generation tpu lacks", version)
			continue
		}
		ours := g.RayTopologies()
		slices.Sort(ours)
		if diff := cmp.Diff(rayTopos, ours); diff != "" {
			t.Errorf("%s: Ray's VALID_TPU_TOPOLOGY vs RayTopologies (-ray +tpu):\n%s", version, diff)
		}
	}

	// Per-topology answers.
	var disagreements []string
	disagree := func(format string, args ...any) {
		disagreements = append(disagreements, fmt.Sprintf(format, args...))
	}
	compared := 0
	for _, ga := range ans.Generations {
		g := gens[ga.Version]
		for topoStr, r := range ga.Results {
			compared++
			topo, err := tpu.ParseTopology(topoStr)
			if err != nil {
				disagree("%s %s: Ray answers for a topology tpu cannot parse: %v", g.Name, topoStr, err)
				continue
			}
			goValid := g.CheckTopology(topo, tpu.TargetRay) == ""
			for name, rayValid := range r.Valid {
				lg, ok := tpu.LookupGeneration(name)
				if !ok || lg.Name != g.Name {
					disagree("%s: Ray's name %q does not look up to %s in tpu", g.Name, name, g.Name)
					continue
				}
				if known, ok := knownRayValidityDivergence[g.Name+" "+topoStr]; ok {
					if rayValid != known || goValid == known {
						disagree("%s %s: known divergence changed: is_valid_tpu_accelerator_topology(%q) = %v, CheckTopology(TargetRay) valid = %v",
							g.Name, topoStr, name, rayValid, goValid)
					}
					continue
				}
				if rayValid != goValid {
					disagree("%s %s: is_valid_tpu_accelerator_topology(%q) = %v, CheckTopology(TargetRay) valid = %v",
						g.Name, topoStr, name, rayValid, goValid)
				}
			}

			goCPH := g.DefaultChipsPerHost(topo)
			key := g.Name + " " + topoStr + " get_chips_per_host"
			if known, ok := knownRayDivergence[key]; ok {
				if got := [2]int{r.ChipsPerHost, goCPH}; got != known {
					disagree("%s: known divergence changed: Ray %d, tpu %d; recorded Ray %d, tpu %d",
						key, r.ChipsPerHost, goCPH, known[0], known[1])
				}
			} else if r.ChipsPerHost != goCPH {
				disagree("%s %s: get_chips_per_host = %d, DefaultChipsPerHost = %d", g.Name, topoStr, r.ChipsPerHost, goCPH)
			}

			if want := g.PodType(topo.Chips()); r.PodType != want {
				disagree("%s %s: infer_tpu_pod_type_from_topology = %q, PodType = %q", g.Name, topoStr, r.PodType, want)
			}
			if goValid && r.VisibleChipsPerHost != goCPH {
				disagree("%s %s: get_num_tpu_visible_chips_per_host(%s) = %d, DefaultChipsPerHost = %d",
					g.Name, topoStr, r.PodType, r.VisibleChipsPerHost, goCPH)
			}
		}
	}
	for pt, rayChips := range ans.PodTypes {
		_, chips, err := tpu.ParsePodType(pt)
		if err != nil {
			disagree("ParsePodType(%q): %v; Ray reads %d chips", pt, err, rayChips)
		} else if chips != rayChips {
			disagree("%s: get_total_chips_from_accelerator_type = %d, ParsePodType = %d", pt, rayChips, chips)
		}
	}
	if compared < 1000 {
		t.Errorf("compared only %d topologies", compared)
	}
	slices.Sort(disagreements)
	const show = 40
	for i, d := range disagreements {
		if i == show {
			t.Errorf("... and %d more disagreements", len(disagreements)-show)
			break
		}
		t.Error(d)
	}
	t.Logf("compared %d (generation, topology) pairs and %d pod types with Ray %s", compared, len(ans.PodTypes), ans.RayVersion)
}
