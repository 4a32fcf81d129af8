package llm

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/rayvocab"
	"github.com/raytpu/raytpu/runtimeenv"
	"github.com/raytpu/raytpu/serve"
	"github.com/raytpu/raytpu/serve/internal/freeform"
	"github.com/raytpu/raytpu/serve/internal/servecheck"
	"github.com/raytpu/raytpu/serveconfig"
)

// rayvocabName is the deployment name Serve LLM derives from a model id,
// cut short for a message.
func rayvocabName(id string) string {
	n := rayvocab.ServeLLMServerName(id, "")
	if len(n) > 60 {
		n = n[:60] + "..."
	}
	return strconv.Quote(n)
}

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
	idPath := func() *field.Path { return p.Child("model_loading_config", "model_id") }
	if m.ModelID == "" {
		out.errs = append(out.errs, field.Required(idPath(), "the name clients ask for in the OpenAI API's \"model\""))
	} else if why := servecheck.Name(m.ModelID); why != "" {
		out.errs = append(out.errs, field.Invalid(idPath(), m.ModelID, why))
	}
	out.errs = append(out.errs, m.validate(p.Child("model_loading_config"))...)
	if c.LLMEngine != "" && c.LLMEngine != engineVLLM {
		out.errs = append(out.errs, field.NotSupported(p.Child("llm_engine"), c.LLMEngine, []string{engineVLLM}))
	}
	out.name = rayvocab.ServeLLMServerName(m.ModelID, c.DeploymentConfig.Name)
	derrs := c.DeploymentConfig.validate(p.Child("deployment_config"), out.name)
	if c.DeploymentConfig.Name == "" && m.ModelID != "" {
		// The deployment's name is derived from the model id: a problem
		// with it is the model id's, where the user wrote it.
		derrs = moveNameErrors(derrs, p.Child("deployment_config", "name"), idPath(), m.ModelID, servecheck.Name(m.ModelID) != "")
	}
	out.errs = append(out.errs, derrs...)
	out.errs = append(out.errs, c.validateEngineKwargs(p)...)
	if l := c.LoraConfig; l != nil {
		out.errs = append(out.errs, l.validate(p.Child("lora_config"))...)
	}
	out.errs = append(out.errs, validateEnv(p.Child("runtime_env"), &c.RuntimeEnv)...)
	if c.ExperimentalConfigs != nil {
		if _, ok := c.ExperimentalConfigs["num_router_replicas"]; ok {
			out.errs = append(out.errs, field.Forbidden(p.Child("experimental_configs").Key("num_router_replicas"),
				"renamed to num_ingress_replicas in Ray 2.60"))
		}
		out.errs = append(out.errs, checkJSON(p.Child("experimental_configs"), c.ExperimentalConfigs)...)
	}
	var aerrs field.ErrorList
	out.kind, out.accelType, aerrs = c.resolveAccelerator(p)
	out.errs = append(out.errs, aerrs...)
	out.errs = append(out.errs, c.PlacementGroupConfig.validate(p.Child("placement_group_config"), c.topology())...)
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
	for _, s := range [...]struct {
		name, v string
	}{{"model_source", m.ModelSource}, {"tokenizer_source", m.TokenizerSource}} {
		if why := servecheck.Name(s.v); why != "" {
			errs = append(errs, field.Invalid(p.Child(s.name), s.v, why))
		}
	}
	if scheme, _, ok := strings.Cut(m.ModelSource, "://"); ok && !isRemote(m.ModelSource) {
		errs = append(errs, field.NotSupported(p.Child("model_source"), m.ModelSource, remoteSchemes()).
			WithDetail(fmt.Sprintf("Serve LLM downloads only from buckets; %q would be read as a Hugging Face ID (give a Hugging Face ID or a local directory without a scheme)", scheme+"://")))
	}
	if len(m.ExtraFiles) > 0 && !isRemote(m.ModelSource) {
		errs = append(errs, field.Forbidden(p.Child("extra_files"), "needs a bucket model_source (s3://, gs://, abfss:// or azure://)"))
	}
	for i, f := range m.ExtraFiles {
		fp := p.Child("extra_files").Index(i)
		if f.BucketURI == "" {
			errs = append(errs, field.Required(fp.Child("bucket_uri"), "the file's URI"))
		} else if why := servecheck.Name(f.BucketURI); why != "" {
			errs = append(errs, field.Invalid(fp.Child("bucket_uri"), f.BucketURI, why))
		}
		if f.DestinationPath == "" {
			errs = append(errs, field.Required(fp.Child("destination_path"), "where the file goes on the node"))
		} else if why := servecheck.Name(f.DestinationPath); why != "" {
			errs = append(errs, field.Invalid(fp.Child("destination_path"), f.DestinationPath, why))
		}
	}
	return errs
}

func (l *LoraConfig) validate(p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if why := servecheck.Name(l.DynamicLoraLoadingPath); why != "" {
		errs = append(errs, field.Invalid(p.Child("dynamic_lora_loading_path"), l.DynamicLoraLoadingPath, why))
	} else if v := l.DynamicLoraLoadingPath; v != "" && !isRemote(v) {
		errs = append(errs, field.Invalid(p.Child("dynamic_lora_loading_path"), v,
			`Only AWS S3, Google Cloud Storage, and Azure Storage are supported: must start with "s3://", "gs://", "abfss://", or "azure://"`))
	}
	if l.MaxNumAdaptersPerReplica < 0 {
		errs = append(errs, field.Invalid(p.Child("max_num_adapters_per_replica"), l.MaxNumAdaptersPerReplica, "must be a positive integer, or 0 for 16"))
	}
	if l.MaxDownloadTries < 0 {
		errs = append(errs, field.Invalid(p.Child("max_download_tries"), l.MaxDownloadTries, "must be a positive integer, or 0 for 3"))
	}
	if t := l.DownloadTimeoutS; t != nil && !(*t > 0 && !math.IsInf(*t, 0)) {
		errs = append(errs, field.Invalid(p.Child("download_timeout_s"), *t, "must be a number of seconds greater than 0; leave it unset for 30"))
	}
	return errs
}

// validate checks deployment options at p as Serve's own schema does,
// for a deployment named name.
func (d *DeploymentConfig) validate(p *field.Path, name string) field.ErrorList {
	errs := servecheck.DeploymentOptions(d.serveDeployment(name), p)
	if r := d.RequestRouterConfig; r != nil {
		rp := p.Child("request_router_config")
		if why := servecheck.Text(r.RequestRouterClass); why != "" {
			errs = append(errs, field.Invalid(rp.Child("request_router_class"), r.RequestRouterClass, why))
		}
		for _, f := range [...]struct {
			name string
			v    float64
		}{
			{"request_routing_stats_period_s", r.RequestRoutingStatsPeriodS},
			{"request_routing_stats_timeout_s", r.RequestRoutingStatsTimeoutS},
			{"initial_backoff_s", r.InitialBackoffS},
			{"backoff_multiplier", r.BackoffMultiplier},
			{"max_backoff_s", r.MaxBackoffS},
		} {
			if f.v < 0 || math.IsNaN(f.v) || math.IsInf(f.v, 0) {
				errs = append(errs, field.Invalid(rp.Child(f.name), f.v, "must be a number greater than 0, or 0 for Serve's default"))
			}
		}
		errs = append(errs, checkJSON(rp.Child("request_router_kwargs"), r.RequestRouterKwargs)...)
	}
	return errs
}

// serveDeployment is d as serve's Deployment named name, with Serve LLM's
// default autoscaling (unless num_replicas is set), for serve's rules and
// replica count.
func (d *DeploymentConfig) serveDeployment(name string) *serve.Deployment {
	auto := d.AutoscalingConfig
	if auto == nil && d.NumReplicas.IsZero() {
		auto = &serveconfig.AutoscalingConfig{} // Serve LLM's default: 1 to 1 replicas
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
	errs := servecheck.RuntimeEnv(p, env)
	local := func(uri string) bool { return uri != "" && !strings.Contains(uri, "://") }
	const why = "Serve LLM passes an LLM config's runtime_env to Ray as it is: give a URI, or put local code in the application's runtime_env, which the backend uploads"
	if local(env.WorkingDir) {
		errs = append(errs, field.Invalid(p.Child("working_dir"), env.WorkingDir, why))
	}
	for i, m := range env.PyModules {
		if local(m) {
			errs = append(errs, field.Invalid(p.Child("py_modules").Index(i), m, why))
		}
	}
	return errs
}

// checkJSON reports at its own path what keeps v, a free-form value
// below p, from being sent: a cycle, depth, size or a value JSON cannot
// hold.
func checkJSON(p *field.Path, v map[string]any) field.ErrorList {
	if v == nil {
		return nil
	}
	return freeform.Check(p, v)
}

// moveNameErrors reports the errors errs holds at from (the derived
// deployment name) at to, the model id it is derived from; with
// reported, the model id has an error already and they are dropped.
func moveNameErrors(errs field.ErrorList, from, to *field.Path, id string, reported bool) field.ErrorList {
	at := from.String()
	out := errs[:0:0]
	for _, e := range errs {
		if e.Field != at {
			out = append(out, e)
			continue
		}
		if reported {
			continue
		}
		c := *e
		c.Field = to.String()
		name := rayvocab.ServeLLMServerName(id, "")
		if c.Type == field.TypeTooMany {
			c.BadValue = len(id)
			c.Detail = fmt.Sprintf("Serve LLM names the model's deployment after it (%s, %d characters), whose name %s; shorten the model id or set deployment_config.name", rayvocabName(id), len(name), e.Detail)
		} else {
			c.BadValue = id
			c.Detail = "Serve LLM names the model's deployment after it (" + rayvocabName(id) + "): " + e.Detail
		}
		out = append(out, &c)
	}
	return out
}
