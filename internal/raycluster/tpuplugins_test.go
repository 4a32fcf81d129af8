package raycluster_test

import (
	"testing"

	"github.com/raytpu/raytpu/internal/raycluster"
)

// TestTPUPluginsConfigErrors: a Config whose emulators could not run is
// refused before any node starts.
func TestTPUPluginsConfigErrors(t *testing.T) {
	t.Parallel()
	bad := raycluster.TPUNodes("s", "v9-8", "2x2", 1, 4, 1)
	set := raycluster.TPUNodes("s", "v6e-4", "2x2", 1, 4, 1)
	set[0].Env[raycluster.EnvTPUDevicePluginAddr] = "127.0.0.1:2112"
	for _, tc := range []struct {
		name string
		cfg  raycluster.Config
		want string
	}{
		{"detach", raycluster.Config{TPUPlugins: true, Detach: true},
			"raycluster: Config.TPUPlugins with Detach needs Config.PluginCommand: emulators run in this process would die before the nodes"},
		{"bad pod type", raycluster.Config{TPUPlugins: true, Nodes: bad},
			`raycluster: node 0 (s/0): tpuplugin: TPU_ACCELERATOR_TYPE="v9-8": pod type "v9-8": unknown generation "v9" (valid: v2, v3, v4, v5e, v5p, v6e, v7x)`},
		{"address set", raycluster.Config{TPUPlugins: true, Nodes: set},
			"raycluster: node 0 (s/0): Env sets TPU_DEVICE_PLUGIN_ADDR and Config.TPUPlugins is on; set only one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := raycluster.Start(t.Context(), tc.cfg)
			if err == nil {
				c.Stop()
				t.Fatal("Start: no error")
			}
			if err.Error() != tc.want {
				t.Errorf("Start: %v\nwant: %s", err, tc.want)
			}
		})
	}
}
