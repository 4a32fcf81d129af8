package cli_test

import (
	"strings"
	"testing"

	"github.com/raytpu/raytpu/cmd/raytpu/internal/cli"
	"github.com/raytpu/raytpu/internal/testinfra/golden"
)

// `raytpu data plan` prints every host's predicted epoch; a raise certain
// to fail prints the table and exits 1.
func TestDataPlanGolden(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		args []string
		code int
	}{
		"data-plan-pad-sync.txt":    {[]string{"data", "plan", "-f", "testdata/data/pad-sync.yaml"}, cli.ExitOK},
		"data-plan-pad-sync.json":   {[]string{"data", "plan", "-f", "testdata/data/pad-sync.yaml", "-o", "json"}, cli.ExitOK},
		"data-plan-drop-uneven.txt": {[]string{"data", "plan", "-f", "testdata/data/drop-uneven.yaml"}, cli.ExitOK},
		"data-plan-parquet.txt":     {[]string{"data", "plan", "-f", "testdata/data/parquet.yaml"}, cli.ExitOK},
		"data-plan-raise-fails.txt": {[]string{"data", "plan", "-f", "testdata/data/raise.yaml"}, cli.ExitInvalid},
		// A local shuffle whose short mid-epoch batch is certain (known
		// blocks), one that is only bounded (split), and a dataset every
		// worker reads whole.
		"data-plan-shuffle-short.txt":  {[]string{"data", "plan", "-f", "testdata/data/shuffle-short.yaml"}, cli.ExitInvalid},
		"data-plan-shuffle-split.txt":  {[]string{"data", "plan", "-f", "testdata/data/shuffle-split.yaml"}, cli.ExitOK},
		"data-plan-shuffle-split.json": {[]string{"data", "plan", "-f", "testdata/data/shuffle-split.yaml", "-o", "json"}, cli.ExitOK},
		"data-plan-notsplit-drop.txt":  {[]string{"data", "plan", "-f", "testdata/data/notsplit-drop.yaml"}, cli.ExitOK},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			out, errOut, code := run(t, c.args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d; stderr: %s", code, c.code, errOut)
			}
			golden.Assert(t, name, []byte(out))
		})
	}
}

func TestDataPlanErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		args   []string
		code   int
		stderr []string
	}{
		{"raise names the numbers", []string{"data", "plan", "-f", "testdata/data/raise.yaml"}, cli.ExitInvalid,
			[]string{"pipeline.iter.ragged", "501 rows", "last batch of 53 rows"}},
		{"unknown key", []string{"data", "plan", "-f", "testdata/data/typo.yaml"}, cli.ExitInvalid, []string{"pipeline.iter.batch_size (line 4)", `unknown field: did you mean "batchSize"?`}},
		{"every problem at once", []string{"data", "plan", "-f", "testdata/data/invalid.yaml"}, cli.ExitInvalid,
			[]string{"pipeline.source: Forbidden", `pipeline.iter.ragged: Unsupported value: "shuffle"`}},
		{"shuffle short batch names the batch and the fix", []string{"data", "plan", "-f", "testdata/data/shuffle-short.yaml"}, cli.ExitInvalid,
			[]string{"pipeline.iter.localShuffleBufferSize", "The local batch size (10)", "at batch 5", "at least 30"}},
		{"localDevices on CPU named as configured", []string{"data", "plan", "-f", "testdata/data/cpu-devices.yaml"}, cli.ExitInvalid,
			[]string{"pipeline.iter.batchSize", "localDevices: 4 on each CPU worker"}},
		{"needs a file", []string{"data", "plan"}, cli.ExitUsage, []string{"-f DATASET.yaml"}},
		{"missing file", []string{"data", "plan", "-f", "testdata/data/nope.yaml"}, cli.ExitInvalid, []string{"nope.yaml"}},
		{"bad output", []string{"data", "plan", "-f", "testdata/data/raise.yaml", "-o", "svg"}, cli.ExitUsage, []string{`--output "svg"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, errOut, code := run(t, c.args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d; stderr: %s", code, c.code, errOut)
			}
			for _, s := range c.stderr {
				if !strings.Contains(errOut, s) {
					t.Errorf("stderr %q lacks %q", errOut, s)
				}
			}
		})
	}
}
