package llm

import (
	"fmt"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/rayvocab"
	"github.com/raytpu/raytpu/runtimeenv"
	"github.com/raytpu/raytpu/serve"
	"github.com/raytpu/raytpu/serve/internal/servecheck"
)

// ImportPath is the application builder every OpenAIApp deploys:
// ray.serve.llm.build_openai_app, which takes LLMServingArgs as its args.
const ImportPath = rayvocab.ServeLLMOpenAIBuilder

// Deployment names Serve LLM gives an application's deployments.
const (
	// ServerPrefix prefixes each model's deployment name (LLMServer:<name>).
	ServerPrefix = rayvocab.ServeLLMServerPrefix
	// IngressName is the OpenAI ingress deployment's name.
	IngressName = "OpenAiIngress"
)

// OpenAIApp is a Serve application that serves LLMs behind an
// OpenAI-compatible API: Ray's build_openai_app with its LLMServingArgs
// (llm_configs, ingress_cls_config, ingress_deployment_config), plus the
// application's own name, route prefix and runtime_env as a Serve config
// file holds them.
type OpenAIApp struct {
	// Name of the application. Optional. Default: "default".
	Name string `json:"name,omitempty"`
	// RoutePrefix of the OpenAI API ("/" serves /v1/chat/completions).
	// Optional. Default: "/".
	RoutePrefix string `json:"route_prefix,omitempty"`
	// RuntimeEnv of the application, merged under every deployment's; a
	// local working_dir is uploaded by the backend. Optional.
	RuntimeEnv runtimeenv.RuntimeEnv `json:"runtime_env,omitzero"`
	// LLMConfigs are the models, one deployment each, with unique model
	// IDs. At least one is required.
	LLMConfigs []LLMConfig `json:"llm_configs"`
	// IngressClsConfig replaces the ingress class. Optional.
	IngressClsConfig *IngressClsConfig `json:"ingress_cls_config,omitempty"`
	// IngressDeploymentConfig overrides the ingress deployment's options,
	// overlaid on Serve LLM's (autoscaling, max_ongoing_requests 1e9).
	// Optional.
	IngressDeploymentConfig *DeploymentConfig `json:"ingress_deployment_config,omitempty"`
}

// The paths every Compile reports under; paths are immutable.
var (
	appPath     = field.NewPath("app")
	configsPath = appPath.Child("llm_configs")
)

// Compile validates a and returns its plan: the Serve application config
// exactly as a `serve deploy` config file holds it (import_path
// ray.serve.llm:build_openai_app, the LLMServingArgs in args, typed as
// serveconfig.Application), and one slice group per replica of every model
// with a topology: the whole slice Serve LLM's replica reserves, named by
// the model's deployment (LLMServer:<name>), sized for the most replicas
// the deployment may scale to. Problems come back together as a
// field.ErrorList with paths under "app" (app.llm_configs[0].accelerator_config.topology), spelled as
// a Serve LLM config file spells them.
// The plan belongs to the caller: it shares nothing with a.
func (a OpenAIApp) Compile() (*placement.Plan, error) {
	var errs field.ErrorList
	if len(a.LLMConfigs) == 0 {
		errs = append(errs, field.Required(configsPath, "at least one model: List of models is empty"))
	}
	cs := make([]compiled, len(a.LLMConfigs))
	ids := make(map[string]int, len(a.LLMConfigs))
	names := make(map[string]int, len(a.LLMConfigs))
	before := 0 // replicas that own a slice in the configs above
	for i := range a.LLMConfigs {
		c := &a.LLMConfigs[i]
		p := configsPath.Index(i)
		cs[i] = c.compile(p, before)
		errs = append(errs, cs[i].errs...)
		before += cs[i].replicas
		if id := c.ModelLoadingConfig.ModelID; id != "" {
			if j, dup := ids[id]; dup {
				errs = append(errs, field.Invalid(p.Child("model_loading_config", "model_id"), id,
					fmt.Sprintf("duplicate model ID; llm_configs[%d] has it (model IDs must be unique)", j)))
			} else {
				ids[id] = i
				if j, dup := names[cs[i].name]; dup {
					at, v := p.Child("deployment_config", "name"), any(cs[i].name)
					if c.DeploymentConfig.Name == "" {
						at, v = p.Child("model_loading_config", "model_id"), id // the name is derived from it
					}
					errs = append(errs, field.Invalid(at, v,
						fmt.Sprintf("duplicate deployment name %s; llm_configs[%d] has it (set deployment_config.name)", cs[i].name, j)))
				} else {
					names[cs[i].name] = i
				}
			}
		}
	}
	errs = append(errs, a.validateIngress()...)
	var args map[string]any
	if len(errs) == 0 {
		var err error
		if args, err = a.rayArgs(cs); err != nil {
			return nil, fmt.Errorf("serve/llm: args: %w", err)
		}
	}
	// Serve's own compile checks the application's name, route prefix and
	// runtime_env, and builds its config.
	plan, err := serve.Application{
		Name:        a.Name,
		RoutePrefix: a.RoutePrefix,
		ImportPath:  ImportPath,
		RuntimeEnv:  a.RuntimeEnv,
		Args:        args,
	}.Compile()
	errs = append(errs, field.Errors(err)...)
	if len(errs) > 0 {
		return nil, errs
	}
	if err != nil {
		return nil, err
	}
	for i := range a.LLMConfigs {
		if cs[i].shape == nil {
			continue
		}
		for r := range cs[i].replicas {
			g, gerrs := cs[i].shape.Group(1)
			if len(gerrs) > 0 {
				return nil, gerrs
			}
			g.Part = placement.Part{Role: placement.RoleReplica, Name: cs[i].name, Index: r}
			plan.Slices = append(plan.Slices, g)
		}
	}
	if plan.Slices == nil {
		plan.Slices = []*placement.SliceGroup{}
	}
	return plan, nil
}

// validateIngress checks the ingress options.
func (a *OpenAIApp) validateIngress() field.ErrorList {
	var errs field.ErrorList
	if c := a.IngressClsConfig; c != nil {
		if why := servecheck.Text(c.IngressCls); why != "" {
			errs = append(errs, field.Invalid(appPath.Child("ingress_cls_config", "ingress_cls"), c.IngressCls, why))
		}
	}
	if c := a.IngressClsConfig; c != nil && c.IngressExtraKwargs != nil {
		errs = append(errs, checkJSON(appPath.Child("ingress_cls_config", "ingress_extra_kwargs"), c.IngressExtraKwargs)...)
	}
	if d := a.IngressDeploymentConfig; d != nil {
		name := d.Name
		if name == "" {
			name = IngressName
		}
		errs = append(errs, d.validate(appPath.Child("ingress_deployment_config"), name)...)
	}
	return errs
}
