package raybackend

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/raytpu/raytpu/serveconfig"
)

// The diagnosis reads the reservations back from the config Ray echoes,
// which is the config Deploy sent.
func TestAppReservationsReadsTheSentConfig(t *testing.T) {
	t.Parallel()
	res := &serveconfig.SliceReservation{Version: 1, Topology: "2x2x2", AcceleratorVersion: "v4", PodType: "v4-16",
		ResourcesPerBundle: map[string]float64{"TPU": 4}, Strategy: "PACK", HeadReservationTimeoutS: 100}
	app := serveconfig.Application{Name: "a", ImportPath: "m:app", Deployments: []serveconfig.Deployment{
		{Name: "LLM", Reservation: res, UserConfig: map[string]any{"k": "v"}},
		{Name: "Router"},
	}}
	raw, err := app.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	got := appReservations(raw)
	if diff := cmp.Diff(map[string]reservation{"LLM": *res}, got); diff != "" {
		t.Errorf("reservations (-want +got):\n%s", diff)
	}
	if n := len(appReservations([]byte(`{"deployments": "not a list"}`))); n != 0 {
		t.Errorf("%d reservations from a config that is not Serve's", n)
	}
}
