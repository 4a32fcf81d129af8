package kuberay

import (
	"encoding/base64"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/rayruntime"
)

// jobEntrypoint is the shell command the Ray job runs on the head. A plan
// that runs raytpu's launcher carries the launcher script and the plan in
// the command itself: a short Python step writes them into the job's
// working directory (which belongs to this RayJob alone, as the RayJob
// creates its own RayCluster) and the launcher runs from there.
func jobEntrypoint(p *placement.Plan) (string, error) {
	if p.Job.Launcher == "" {
		if strings.TrimSpace(p.Job.Entrypoint) == "" {
			return "", fmt.Errorf("kuberay: %w: plan %q job has neither an entrypoint nor a launcher", backend.ErrUnsupported, p.Name)
		}
		return p.Job.Entrypoint, nil
	}
	files, err := rayruntime.Files(p)
	if err != nil {
		return "", err
	}
	names := slices.Sorted(maps.Keys(files))
	var py strings.Builder
	py.WriteString("import base64 as b")
	for _, n := range names {
		// Base64 needs no quoting: written as is, not through %q, which
		// would scan every byte of it.
		py.WriteString(";open(" + strconv.Quote(n) + ",\"wb\").write(b.b64decode(\"")
		py.WriteString(base64.StdEncoding.EncodeToString(files[n]))
		py.WriteString("\"))")
	}
	return "python -c '" + py.String() + "' && " + rayruntime.Entrypoint, nil
}
