package llm

import (
	"fmt"
	"slices"
	"strings"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/rayvocab"
	"github.com/raytpu/raytpu/runtimeenv"
	"github.com/raytpu/raytpu/serve"
	"github.com/raytpu/raytpu/serveconfig"
)

// engineVLLM is the only llm_engine Ray 2.60 knows.
const engineVLLM = "vLLM"

// remoteSchemes are the bucket URIs Serve LLM downloads from
// (is_remote_path).
func remoteSchemes() []string { return []string{"s3://", "gs://", "abfss://", "azure://"} }

// isRemote is Serve LLM's is_remote_path.
func isRemote(uri string) bool {
	return slices.ContainsFunc(remoteSchemes(), func(s string) bool { return strings.HasPrefix(uri, s) })
}

// compiled is one LLMConfig's part of Compile: its errors, or what the
// Ray config and its replicas' slice groups are built from.
type compiled struct {
	errs field.ErrorList
	// name is the model's deployment name (LLMServer:<name>).
	name string
	// kind is the accelerator kind, explicit or inferred; accelType
	// Ray's accelerator type ("" for none or when unknown).
	kind      Kind
	accelType string
	// shape is the slice each replica reserves (nil without a topology),
	// replicas the most replicas that reserve one.
	shape    *placement.Shape
	replicas int
}

// compile checks c at p; before is the number of replicas that own a
// slice in the configs above, for the application's limit.
func (c *LLMConfig) compile(p *field.Path, before int) compiled {
	var out compiled
	m := &c.ModelLoadingConfig
	if m.ModelID == "" {
		out.errs = append(out.errs, field.Required(p.Child("modelLoadingConfig", "modelID"), "the name clients ask for in the OpenAI API's \"model\""))
	}
	out.errs = append(out.errs, m.validate(p.Child("modelLoadingConfig"))...)
	if c.LLMEngine != "" && c.LLMEngine != engineVLLM {
		out.errs = append(out.errs, field.NotSupported(p.Child("llmEngine"), c.LLMEngine, []string{engineVLLM}))
	}
	out.name = rayvocab.ServeLLMServerName(m.ModelID, c.DeploymentConfig.Name)
	out.errs = append(out.errs, c.DeploymentConfig.validate(p.Child("deploymentConfig"), out.name)...)
	out.errs = append(out.errs, c.validateEngineKwargs(p)...)
	if l := c.LoraConfig; l != nil {
		out.errs = append(out.errs, l.validate(p.Child("loraConfig"))...)
	}
	out.errs = append(out.errs, validateEnv(p.Child("runtimeEnv"), &c.RuntimeEnv)...)
	if c.ExperimentalConfigs != nil {
		if _, ok := c.ExperimentalConfigs["num_router_replicas"]; ok {
			out.errs = append(out.errs, field.Forbidden(p.Child("experimentalConfigs").Key("num_router_replicas"),
				"renamed to num_ingress_replicas in Ray 2.60"))
		}
		out.errs = append(out.errs, checkJSON(p.Child("experimentalConfigs"), c.ExperimentalConfigs)...)
	}
	var aerrs field.ErrorList
	out.kind, out.accelType, aerrs = c.resolveAccelerator(p)
	out.errs = append(out.errs, aerrs...)
	out.errs = append(out.errs, c.PlacementGroupConfig.validate(p.Child("placementGroupConfig"), c.topology())...)
	if c.topology() != "" && out.accelType != "" && len(out.errs) == 0 {
		out.shape, out.replicas, out.errs = c.compileSlice(p, out.accelType, before)
	}
	return out
}

// topology is the slice topology ("" for none).
func (c *LLMConfig) topology() string {
	if c.AcceleratorConfig == nil {
		return ""
	}
	return c.AcceleratorConfig.Topology
}

func (m *ModelLoadingConfig) validate(p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if scheme, _, ok := strings.Cut(m.ModelSource, "://"); ok && !isRemote(m.ModelSource) {
		errs = append(errs, field.NotSupported(p.Child("modelSource"), m.ModelSource, remoteSchemes()).
			WithDetail(fmt.Sprintf("Serve LLM downloads only from buckets; %q would be read as a Hugging Face ID (give a Hugging Face ID or a local directory without a scheme)", scheme+"://")))
	}
	if len(m.ExtraFiles) > 0 && !isRemote(m.ModelSource) {
		errs = append(errs, field.Forbidden(p.Child("extraFiles"), "needs a bucket modelSource (s3://, gs://, abfss:// or azure://)"))
	}
	for i, f := range m.ExtraFiles {
		if f.BucketURI == "" {
			errs = append(errs, field.Required(p.Child("extraFiles").Index(i).Child("bucketURI"), "the file's URI"))
		}
		if f.DestinationPath == "" {
			errs = append(errs, field.Required(p.Child("extraFiles").Index(i).Child("destinationPath"), "where the file goes on the node"))
		}
	}
	return errs
}

func (l *LoraConfig) validate(p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if v := l.DynamicLoraLoadingPath; v != "" && !isRemote(v) {
		errs = append(errs, field.Invalid(p.Child("dynamicLoraLoadingPath"), v,
			`Only AWS S3, Google Cloud Storage, and Azure Storage are supported: must start with "s3://", "gs://", "abfss://", or "azure://"`))
	}
	if l.MaxNumAdaptersPerReplica < 0 {
		errs = append(errs, field.Invalid(p.Child("maxNumAdaptersPerReplica"), l.MaxNumAdaptersPerReplica, "must be a positive integer, or 0 for 16"))
	}
	return errs
}

// validate checks deployment options at p as Serve's own schema does,
// for a deployment named name.
func (d *DeploymentConfig) validate(p *field.Path, name string) field.ErrorList {
	errs := d.serveDeployment(name).ValidateOptions(p)
	if r := d.RequestRouterConfig; r != nil {
		rp := p.Child("requestRouterConfig")
		for _, f := range [...]struct {
			name string
			v    float64
		}{
			{"requestRoutingStatsPeriodS", r.RequestRoutingStatsPeriodS},
			{"requestRoutingStatsTimeoutS", r.RequestRoutingStatsTimeoutS},
			{"initialBackoffS", r.InitialBackoffS},
			{"backoffMultiplier", r.BackoffMultiplier},
			{"maxBackoffS", r.MaxBackoffS},
		} {
			if f.v < 0 {
				errs = append(errs, field.Invalid(rp.Child(f.name), f.v, "must be a number greater than 0, or 0 for Serve's default"))
			}
		}
		errs = append(errs, checkJSON(rp.Child("requestRouterKwargs"), r.RequestRouterKwargs)...)
	}
	return errs
}

// serveDeployment is d as serve's Deployment named name, with Serve LLM's
// default autoscaling (unless num_replicas is set), for serve's rules and
// replica count.
func (d *DeploymentConfig) serveDeployment(name string) *serve.Deployment {
	auto := d.AutoscalingConfig
	if auto == nil && d.NumReplicas == 0 {
		auto = &serve.AutoscalingConfig{} // Serve LLM's default: 1 to 1 replicas
	}
	return &serve.Deployment{
		Name:                      name,
		NumReplicas:               d.NumReplicas,
		AutoscalingConfig:         auto,
		MaxOngoingRequests:        d.MaxOngoingRequests,
		MaxQueuedRequests:         d.MaxQueuedRequests,
		UserConfig:                d.UserConfig,
		HealthCheckPeriodS:        d.HealthCheckPeriodS,
		HealthCheckTimeoutS:       d.HealthCheckTimeoutS,
		GracefulShutdownWaitLoopS: d.GracefulShutdownWaitLoopS,
		GracefulShutdownTimeoutS:  d.GracefulShutdownTimeoutS,
		RayActorOptions:           d.RayActorOptions,
	}
}

// validateEnv checks an LLM config's runtime_env: serve's rules, and no
// local directory, which no backend uploads from inside args.
func validateEnv(p *field.Path, env *runtimeenv.RuntimeEnv) field.ErrorList {
	errs := serve.ValidateRuntimeEnv(p, env)
	local := func(uri string) bool { return uri != "" && !strings.Contains(uri, "://") }
	const why = "Serve LLM passes an LLM config's runtime_env to Ray as it is: give a URI, or put local code in the application's runtimeEnv, which the backend uploads"
	if local(env.WorkingDir) {
		errs = append(errs, field.Invalid(p.Child("workingDir"), env.WorkingDir, why))
	}
	for i, m := range env.PyModules {
		if local(m) {
			errs = append(errs, field.Invalid(p.Child("pyModules").Index(i), m, why))
		}
	}
	return errs
}

// checkJSON reports v at p when it does not marshal to JSON.
func checkJSON(p *field.Path, v map[string]any) field.ErrorList {
	if v == nil {
		return nil
	}
	if err := serveconfig.CheckJSON(v); err != nil {
		return field.ErrorList{field.Invalid(p, fmt.Sprintf("%T", v), "must be JSON-serialisable: "+err.Error())}
	}
	return nil
}
