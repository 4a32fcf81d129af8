package serve_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/raytpu/raytpu/serve"
)

// TestHeadReservationTimeoutSeconds: accelerator_config carries the head
// reservation timeout as head_reservation_timeout_s, in seconds (Ray's
// name and unit), while the Go field stays a time.Duration.
func TestHeadReservationTimeoutSeconds(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want time.Duration
	}{
		{`{"topology": "4x4", "head_reservation_timeout_s": 30}`, 30 * time.Second},
		{`{"topology": "4x4", "head_reservation_timeout_s": 2.5}`, 2500 * time.Millisecond},
		{`{"topology": "4x4", "head_reservation_timeout_s": -2}`, -2 * time.Second},
		{`{"topology": "4x4"}`, 0},
	} {
		var a serve.AcceleratorConfig
		if err := json.Unmarshal([]byte(c.in), &a); err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if a.HeadReservationTimeout != c.want || a.Topology != "4x4" {
			t.Errorf("%s: %+v, want timeout %v", c.in, a, c.want)
		}
		b, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		var again serve.AcceleratorConfig
		if err := json.Unmarshal(b, &again); err != nil || again != a {
			t.Errorf("round trip of %s through %s: %+v, %v", c.in, b, again, err)
		}
	}
	b, _ := json.Marshal(serve.AcceleratorConfig{Accelerator: "v6e", Topology: "4x4", HeadReservationTimeout: 30 * time.Second})
	if want := `{"accelerator_type":"v6e","topology":"4x4","head_reservation_timeout_s":30}`; string(b) != want {
		t.Errorf("Marshal = %s, want %s", b, want)
	}
	// -1 waits indefinitely: its own field, not a negative duration.
	var forever serve.AcceleratorConfig
	if err := json.Unmarshal([]byte(`{"topology": "4x4", "head_reservation_timeout_s": -1}`), &forever); err != nil ||
		!forever.NoHeadReservationTimeout || forever.HeadReservationTimeout != 0 {
		t.Errorf("-1: %+v, %v", forever, err)
	}
	if b, _ := json.Marshal(forever); string(b) != `{"topology":"4x4","head_reservation_timeout_s":-1}` {
		t.Errorf("Marshal of NoHeadReservationTimeout = %s", b)
	}
	for _, bad := range []string{
		`{"head_reservation_timeout": 30}`,      // the old key, a Duration in nanoseconds
		`{"head_reservation_timeout_s": "30s"}`, // seconds are a number
		`{"head_reservation_timeout_s": 1e300}`, // past what a Duration holds
		`{"head_reservation_timeout_s": 1e-12}`, // below a nanosecond
		`{"topolgy": "4x4"}`,                    // an unknown key
	} {
		var a serve.AcceleratorConfig
		if err := json.Unmarshal([]byte(bad), &a); err == nil {
			t.Errorf("%s: accepted as %+v", bad, a)
		}
	}
}
