package cli

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/raytpu/raytpu/kuberay"
	"github.com/raytpu/raytpu/placement"
)

// kubeFlags are the flags render and apply share.
type kubeFlags struct {
	file      string
	name      string
	namespace string
	image     string
}

func addKubeFlags(cmd *cobra.Command, f *kubeFlags) {
	fl := cmd.Flags()
	fl.StringVarP(&f.file, "file", "f", "", "a Serve application file (YAML), or a compiled plan (JSON or YAML, as `raytpu plan -o json` prints it)")
	fl.StringVar(&f.name, "name", "", "name of the object (default: from the plan's name)")
	fl.StringVar(&f.namespace, "namespace", "", "namespace of the object (default: render \"default\"; apply the kubeconfig context's)")
	fl.StringVar(&f.image, "image", "", "image of every Ray container (default: the official Ray images, the -tpu variant on TPU workers)")
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

A job whose working_dir is a local directory cannot be rendered alone: its
files travel in a ConfigMap that 'raytpu apply' writes.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := out.check(); err != nil {
				return err
			}
			p, err := readWorkload(f)
			if err != nil {
				return err
			}
			obj, err := kuberay.RenderPlan(p, kuberay.Options{Name: f.name, Namespace: f.namespace, Image: f.image})
			if err != nil {
				return err
			}
			var b []byte
			if out.value == "json" {
				b, err = kuberay.MarshalJSON(obj)
			} else {
				b, err = kuberay.MarshalYAML(obj)
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

// readWorkload reads -f: a compiled plan (apiVersion raytpu.dev/v1alpha1),
// a `raytpu plan -o json` report (its "plan"), or a Serve application file,
// compiled. --name renames the plan.
func readWorkload(f kubeFlags) (*placement.Plan, error) {
	if f.file == "" {
		return nil, usagef("-f FILE is required: a Serve application file or a compiled plan")
	}
	raw, err := readFile(f.file)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", f.file, err)
	}
	var p *placement.Plan
	switch {
	case doc["apiVersion"] == placement.APIVersion:
		p, err = decodePlan(f.file, doc)
	case doc["plan"] != nil:
		inner, ok := doc["plan"].(map[string]any)
		if !ok || inner["apiVersion"] != placement.APIVersion {
			return nil, fmt.Errorf("%s: \"plan\" is not a raytpu plan (apiVersion %s)", f.file, placement.APIVersion)
		}
		p, err = decodePlan(f.file, inner)
	default:
		app, aerr := readApplication(f.file)
		if aerr != nil {
			return nil, aerr
		}
		p, err = app.Compile()
	}
	if err != nil {
		return nil, err
	}
	if f.name != "" {
		p.Name = f.name
	}
	return p, nil
}

// decodePlan decodes a plan document strictly: a key the plan does not
// have is an error naming it.
func decodePlan(path string, doc map[string]any) (*placement.Plan, error) {
	js, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	var p placement.Plan
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("%s: not a raytpu plan: %w", path, err)
	}
	return &p, nil
}
