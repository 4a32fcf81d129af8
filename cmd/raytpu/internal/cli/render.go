package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/field/fieldfile"
	"github.com/raytpu/raytpu/kuberay"
	"github.com/raytpu/raytpu/placement"
)

// kubeFlags are the flags render and apply share.
type kubeFlags struct {
	file      string
	name      string
	namespace string
	image     string
	cluster   string
	queue     string
	bucket    string
	auto      autoscaleFlags
	capacity  capacityFlags
}

func addKubeFlags(cmd *cobra.Command, f *kubeFlags) {
	fl := cmd.Flags()
	fl.StringVarP(&f.file, "file", "f", "", "a Serve application file (YAML), or a compiled plan (JSON or YAML, as raytpu plan -o json prints it)")
	fl.StringVar(&f.name, "name", "", "name of the object, used as it is or refused when it is not a valid KubeRay name (default: derived from the plan's name, with a hash of it when it had to change)")
	fl.StringVar(&f.namespace, "namespace", "", "namespace of the object (default: render \"default\"; apply the kubeconfig context's)")
	fl.StringVar(&f.image, "image", "", "image of every Ray container (default: the official Ray images, the -tpu variant on TPU workers)")
	fl.StringVar(&f.cluster, "ray-cluster", "", "run a job on this existing RayCluster of the namespace (the RayJob's clusterSelector) instead of creating one; a local working_dir reaches it through the submitter pod")
	fl.StringVar(&f.queue, "queue", "", "the Kueue LocalQueue of the namespace a job's RayJob or a slice plan's RayCluster waits in for quota: label kueue.x-k8s.io/queue-name, created suspended for Kueue to admit (not with --autoscale or --ray-cluster; a Serve application cannot be queued)")
	fl.StringVar(&f.bucket, "package-bucket", "", "upload a local working_dir (with raytpu's launcher files) to this Cloud Storage bucket, gs://bucket[/prefix], as gs://bucket[/prefix]/_ray_pkg_<hash>.zip, instead of a ConfigMap (which holds at most 1 MiB); an object of that name already there is not uploaded again; credentials are found as every Google client finds them")
	addAutoscaleFlags(cmd, &f.auto)
	addCapacityFlags(fl, &f.capacity)
}

func newRenderCmd() *cobra.Command {
	var f kubeFlags
	var out output
	cmd := &cobra.Command{
		Use:   "render -f FILE [-o yaml|json]",
		Short: "Print the KubeRay object a workload runs as, ready for kubectl apply",
		Long: `Render a workload as the KubeRay custom resource it runs as on Kubernetes:
a Serve application as a RayService (serveConfigV2 is the compiled config),
a compiled job plan (JaxTrainer, Pipeline, BatchInference) as a RayJob, a
slice plan as a RayCluster. Each holds one TPU worker group per slice group.
The object is validated against KubeRay's and GKE's TPU webhook rules before
it is printed; the output is byte-identical from run to run and kubectl
apply -f takes it as is.

--capacity picks where the TPU workers' nodes come from on GKE: spot
(Spot VMs), reservation (--reservation NAME, and --reservation-project
for a reservation shared from another project) or flex-start (the
Dynamic Workload Scheduler; TPU v5e, v5p, v6e); default on-demand, or
the capacity of a plan compiled with 'raytpu plan --capacity'. Each TPU
worker group gets GKE's node selectors and tolerations for it, the CPU
head none.

--autoscale renders Ray's autoscaler: every TPU worker group then starts at
--min-slices (default 0) and the autoscaler adds whole slices, numOfHosts
pods each, up to --max-slices (default: what the plan needs) when work
waits for them, and removes a slice once it idled for --idle-timeout.
'raytpu plan --cluster "v4-16:2x2x2{max=2}"' predicts what it will do.

Files the Ray containers mount are printed first, as ConfigMaps in the
same stream ("---" between YAML documents; a v1 List in JSON): a local
working_dir (<name>-working-dir, packed as 'raytpu apply' packs it) and,
for a Serve application whose deployments own TPU slices, raytpu's replica
runtime (<name>-replica-runtime). 'raytpu apply' makes the object own
them; rendered, they have no owner, so delete them with the object:
kubectl delete -f of the same file.

--package-bucket puts a local working_dir in Cloud Storage instead: it is
uploaded (once: named by its content as Ray names its packages) before the
object is printed, the object's runtime_env names its gs:// URI, and no
ConfigMap holds it; the uploaded URIs are printed on stderr.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := out.check(); err != nil {
				return err
			}
			auto, err := f.auto.autoscaling(cmd)
			if err != nil {
				return err
			}
			opts, err := f.options(auto, f.namespace)
			if err != nil {
				return err
			}
			p, err := readWorkload(f)
			if err != nil {
				return err
			}
			m, err := kuberay.Render(p, opts, kuberay.RenderInput{Name: f.name})
			if err != nil {
				return optionFlagErrors(err)
			}
			uploaded, err := m.Upload(cmd.Context())
			if err != nil {
				return err
			}
			for _, u := range uploaded {
				fmt.Fprintf(cmd.ErrOrStderr(), "uploaded %s\n", u)
			}
			var b []byte
			if out.value == "json" {
				b, err = m.JSON()
			} else {
				b, err = m.YAML()
			}
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(b)
			return err
		},
	}
	addKubeFlags(cmd, &f)
	addOutput(cmd, &out, "yaml", "json")
	return cmd
}

// options are the kuberay options the flags give, checked before anything
// is read or contacted: a bad value is a usage error naming its flag.
func (f kubeFlags) options(auto *kuberay.Autoscaling, namespace string) (kuberay.Options, error) {
	o := kuberay.Options{Namespace: namespace, Image: f.image, Autoscaling: auto, Cluster: f.cluster, Capacity: f.capacity.capacity(), Queue: f.queue, PackageBucket: f.bucket}
	if err := kuberay.CheckOptions(o); err != nil {
		return o, optionFlagErrors(err)
	}
	return o, nil
}

// optionFlags are the flags that set each kuberay option, by its field
// path.
var optionFlags = map[string]string{
	"options.namespace":                   "--namespace",
	"options.image":                       "--image",
	"options.cluster":                     "--ray-cluster",
	"options.queue":                       "--queue",
	"options.packageBucket":               "--package-bucket",
	"options.autoscaling":                 "--autoscale",
	"options.autoscaling.minSlices":       "--min-slices",
	"options.autoscaling.maxSlices":       "--max-slices",
	"options.autoscaling.idleTimeout":     "--idle-timeout",
	"options.autoscaling.upscalingMode":   "--upscaling-mode",
	"options.autoscaling.version":         "--autoscaler-version",
	"options.autoscaling.headCPU":         "--head-cpus",
	"options.autoscaling.workerCPU":       "--worker-cpus",
	"options.capacity":                    "--capacity",
	"options.capacity.class":              "--capacity",
	"options.capacity.reservation":        "--reservation",
	"options.capacity.reservationProject": "--reservation-project",
	"input.name":                          "--name",
}

// flagFor is the flag that sets the option at path, "" for none.
func flagFor(path string) string {
	if strings.HasPrefix(path, "options.autoscaling.groups[") {
		return "--group-slices"
	}
	return optionFlags[path]
}

// optionFlagErrors turns the errors of kuberay options into a usage error
// naming each flag as typed, with the value and what is valid; an error
// that no flag caused (the plan's, the manifest's) is returned as it is.
func optionFlagErrors(err error) error {
	errs := field.Errors(err)
	if len(errs) == 0 {
		return err
	}
	var msgs []string
	for _, e := range errs {
		fl := flagFor(e.Field)
		if fl == "" {
			return err
		}
		msg := fl
		switch v := e.BadValue; {
		case e.Type == field.TypeForbidden || e.Type == field.TypeRequired:
		case isString(v):
			msg += fmt.Sprintf(" %q", v)
		default:
			msg += fmt.Sprintf(" %v", v)
		}
		if path, ok := strings.CutPrefix(e.Field, "options.autoscaling.groups["); ok {
			if group, bound, _ := strings.Cut(path, "]"); bound != "" {
				msg += fmt.Sprintf(" (group %q, %s)", group, strings.TrimPrefix(bound, "."))
			}
		}
		switch e.Type {
		case field.TypeNotSupported:
			msg += ": supported: " + strings.Join(e.ValidValues, ", ")
			if e.Suggestion != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", e.Suggestion)
			}
			if e.Detail != "" {
				msg += "; " + e.Detail
			}
		default:
			msg += ": " + e.Detail
		}
		msgs = append(msgs, msg)
	}
	return usagef("%s", strings.Join(msgs, "\n"))
}

func isString(v any) bool { _, ok := v.(string); return ok }

// readWorkload reads -f: a compiled plan (apiVersion raytpu.dev/v1alpha1),
// a `raytpu plan -o json` report (its "plan"), or a Serve application file,
// compiled. A file with an apiVersion is taken for a compiled plan, one
// with a "plan" for a report; anything else is a Serve application. Each
// is read strictly (package fieldfile). --name renames the plan.
func readWorkload(f kubeFlags) (*placement.Plan, error) {
	if f.file == "" {
		return nil, usagef("-f FILE is required: a Serve application file or a compiled plan")
	}
	raw, err := readFile(f.file)
	if err != nil {
		return nil, err
	}
	var probe map[string]any
	_ = yaml.Unmarshal(raw, &probe) // only picks the kind; the loader reports what is wrong
	var p *placement.Plan
	var namePath *field.Path
	switch {
	case probe["apiVersion"] != nil:
		p, err = decodePlan(f.file, raw)
		namePath = field.NewPath("name")
	case probe["plan"] != nil:
		p, err = decodePlanReport(f.file, raw)
		namePath = field.NewPath("plan", "name")
	default:
		p, err = loadApplication(f.file)
	}
	if err != nil {
		return nil, err
	}
	if namePath != nil && p.Name == "" && f.name == "" {
		// raytpu plan -o json without --name writes a plan without one.
		return nil, &fieldfile.KindError{File: f.file, Want: fieldfile.CompiledPlan, Err: field.ErrorList{
			field.Required(namePath, "the workload's name: give --name here, or --name to raytpu plan when compiling")}}
	}
	if f.name != "" {
		// A name the user gives is used as it is, by render and apply
		// alike, or refused: never changed.
		kind, maxName := kubeKind(p.Kind)
		if err := kuberay.CheckName(f.name, maxName); err != nil {
			suggest, _ := kuberay.SuggestName(f.name, maxName)
			return nil, usagef("--name %q: not a valid %s name: %v (e.g. %q)", f.name, kind, err, suggest)
		}
		p.Name = f.name
	}
	return p, nil
}

// kubeKind is the KubeRay kind a plan of kind k runs as, and the longest
// name that kind takes.
func kubeKind(k placement.Kind) (kind string, maxName int) {
	switch k {
	case placement.KindApplication:
		return kuberay.KindRayService, kuberay.MaxRayServiceName
	case placement.KindSlicePlacementGroup:
		return kuberay.KindRayCluster, kuberay.MaxRayClusterName
	}
	return kuberay.KindRayJob, kuberay.MaxRayJobName
}

// planReportFile is the JSON of `raytpu plan -o json` (a slice plan or an
// application's): the plan, and what render does not read.
type planReportFile struct {
	Plan       *placement.Plan `json:"plan"`
	Cluster    any             `json:"cluster"`
	Placement  any             `json:"placement"`
	Comparison any             `json:"comparison"`
	Request    any             `json:"comparisonRequest"`
	Status     any             `json:"status"`
	Autoscale  any             `json:"autoscaling"`
	Quota      any             `json:"quota"`
}

// decodePlan decodes a compiled plan strictly; its apiVersion and kind
// must be ones this raytpu knows.
func decodePlan(path string, raw []byte) (*placement.Plan, error) {
	var p placement.Plan
	if errs := fieldfile.Decode(raw, nil, &p); len(errs) > 0 {
		return nil, &fieldfile.KindError{File: path, Want: fieldfile.CompiledPlan, Err: errs}
	}
	if errs := checkPlanHeader(nil, &p); len(errs) > 0 {
		return nil, &fieldfile.KindError{File: path, Want: fieldfile.CompiledPlan, Err: errs}
	}
	return &p, nil
}

// decodePlanReport decodes the plan of a `raytpu plan -o json` report.
func decodePlanReport(path string, raw []byte) (*placement.Plan, error) {
	var r planReportFile
	if errs := fieldfile.Decode(raw, nil, &r); len(errs) > 0 {
		return nil, &fieldfile.KindError{File: path, Want: fieldfile.CompiledPlan, Err: errs}
	}
	if errs := checkPlanHeader(field.NewPath("plan"), r.Plan); len(errs) > 0 {
		return nil, &fieldfile.KindError{File: path, Want: fieldfile.CompiledPlan, Err: errs}
	}
	return r.Plan, nil
}

// checkPlanHeader checks a decoded plan's apiVersion and kind.
func checkPlanHeader(root *field.Path, p *placement.Plan) field.ErrorList {
	at := func(name string) *field.Path {
		if root == nil {
			return field.NewPath(name)
		}
		return root.Child(name)
	}
	var errs field.ErrorList
	if p == nil {
		return field.ErrorList{field.Required(at("apiVersion"), placement.APIVersion)}
	}
	if p.APIVersion != placement.APIVersion {
		errs = append(errs, field.NotSupported(at("apiVersion"), p.APIVersion, []string{placement.APIVersion}).
			WithDetail("a compiled plan of this raytpu (as raytpu plan -o json prints it)"))
	}
	kinds := make([]string, 0, len(placement.Kinds()))
	for _, k := range placement.Kinds() {
		kinds = append(kinds, string(k))
	}
	if !slices.Contains(kinds, string(p.Kind)) {
		errs = append(errs, field.NotSupported(at("kind"), string(p.Kind), kinds))
	}
	return errs
}
