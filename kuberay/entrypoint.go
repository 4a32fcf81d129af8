package kuberay

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/rayruntime"
)

// jobEntrypoint is the shell command the Ray job runs on the head, made
// submittable through KubeRay's submitter (see submittable). A plan that
// runs raytpu's launcher runs rayruntime.Entrypoint in its working_dir
// when wd holds the launcher's files (packJobWorkingDir); otherwise it
// carries them in the command itself: a short Python step writes them
// into the job's working directory on the head (which belongs to this
// RayJob alone, as the RayJob creates its own RayCluster) and the
// launcher runs from there. (Workers on other nodes do not see files
// written so: a multi-host train job needs the packed working_dir.)
func jobEntrypoint(p *placement.Plan, wd *WorkingDir) (string, error) {
	if wd != nil && wd.Runtime {
		return rayruntime.Entrypoint, nil // the files are in the working_dir
	}
	if p.Job.Launcher == "" {
		if strings.TrimSpace(p.Job.Entrypoint) == "" {
			return "", fmt.Errorf("kuberay: %w: plan %q job has neither an entrypoint nor a launcher", backend.ErrUnsupported, p.Name)
		}
		return submittable(p.Job.Entrypoint), nil
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
	return submittable("python -c '" + py.String() + "' && " + rayruntime.Entrypoint), nil
}

// submittable wraps a shell command as `bash -c '<command>'`. KubeRay
// v1.5.0's submitter (K8sJobMode) pastes the entrypoint into its own
// `bash -ce` command line (`... ray job submit ... -- <entrypoint> ; fi ;
// ray job logs ...`), so an entrypoint's `&&`, `;` or `|` would end the
// submit there and run the rest in the submitter pod; one quoted word
// reaches `ray job submit` whole, which quotes it again for the head's
// shell.
func submittable(cmd string) string {
	return "bash -c '" + strings.ReplaceAll(cmd, "'", `'\''`) + "'"
}

// runtimeEnvYAML is the job's runtime_env as YAML, "" when empty; a
// packed local working_dir becomes the file:// URI of its mounted zip, or,
// for a job submitted to an existing cluster, the zip's path in the
// submitter pod, which `ray job submit` uploads. Excludes only shape
// local packing, done by then.
func runtimeEnvYAML(p *placement.Plan, wd *WorkingDir, submitted bool) (string, error) {
	env := p.Job.RuntimeEnv.Clone()
	env.Excludes = nil
	switch {
	case wd != nil && submitted && wd.remote == "":
		env.WorkingDir = wd.submittedPath()
	case wd != nil:
		env.WorkingDir = wd.URI()
	}
	b, err := json.Marshal(env)
	if err != nil {
		return "", fmt.Errorf("kuberay: encoding runtime_env: %w", err)
	}
	if string(b) == "{}" {
		return "", nil
	}
	y, err := yaml.JSONToYAML(b)
	if err != nil {
		return "", fmt.Errorf("kuberay: runtime_env as YAML: %w", err)
	}
	return string(y), nil
}
