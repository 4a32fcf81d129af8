package cli

import (
	"errors"

	"go.yaml.in/yaml/v3"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/field/fieldfile"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/serve"
	"github.com/raytpu/raytpu/serve/llm"
)

// appPath is the root of a Serve application's paths, as serve reports them.
var appPath = field.NewPath("app")

// appSpelling spells serve's paths as an application file does
// (accelerator_config, not acceleratorConfig); llmAppSpelling serve/llm's
// as a Serve LLM application file does (llm_configs[0].engine_kwargs).
var (
	appSpelling    = field.JSONSpelling(appPath.String(), serve.Application{})
	llmAppSpelling = field.JSONSpelling(appPath.String(), llm.OpenAIApp{})
)

// readApplication reads a Serve application file strictly (see package
// fieldfile): YAML (or JSON) with the field names of serve.Application's
// JSON form, which are Ray's.
func readApplication(path string) (serve.Application, error) {
	var app serve.Application
	err := fieldfile.Load(path, fieldfile.ServeApplication, appPath, &app)
	return app, err
}

// compileApplication compiles an application read from path, with every
// problem in the file's spelling and naming the file.
func compileApplication(path string, app serve.Application) (*placement.Plan, error) {
	p, err := app.Compile()
	if err != nil {
		return nil, fileError(path, fieldfile.ServeApplication, err, appSpelling)
	}
	return p, nil
}

// loadApplication reads and compiles a Serve application file: a Serve
// LLM application (llm.OpenAIApp's JSON form) when it holds llm_configs,
// a Serve application (serve.Application's) otherwise.
func loadApplication(path string) (*placement.Plan, error) {
	if err := checkRegularFile(path); err != nil {
		return nil, err
	}
	if isLLMApplication(path) {
		return loadLLMApplication(path)
	}
	app, err := readApplication(path)
	if err != nil {
		return nil, err
	}
	return compileApplication(path, app)
}

// isLLMApplication reports whether the file at path is a mapping with the
// key llm_configs, which only a Serve LLM application has. A file that
// cannot be read or parsed is not: the strict loader reports why.
func isLLMApplication(path string) bool {
	raw, err := readFile(path)
	if err != nil {
		return false
	}
	var probe map[string]yaml.Node
	if yaml.Unmarshal(raw, &probe) != nil {
		return false
	}
	_, ok := probe["llm_configs"]
	return ok
}

// loadLLMApplication reads a Serve LLM application file strictly and
// compiles it, with every problem in the file's spelling.
func loadLLMApplication(path string) (*placement.Plan, error) {
	var app llm.OpenAIApp
	if err := fieldfile.Load(path, fieldfile.ServeLLMApplication, appPath, &app); err != nil {
		return nil, err
	}
	p, err := app.Compile()
	if err != nil {
		return nil, fileError(path, fieldfile.ServeLLMApplication, err, llmAppSpelling)
	}
	return p, nil
}

// fileError names the file and its kind on the validation errors of a
// spec read from it, respelled as the file spells its keys. Other errors
// pass unchanged.
func fileError(path string, k fieldfile.Kind, err error, s field.Spelling) error {
	if len(field.Errors(err)) == 0 {
		return err
	}
	var ke *fieldfile.KindError
	if errors.As(err, &ke) {
		return err
	}
	return &fieldfile.KindError{File: path, Want: k, Err: field.Respell(err, s)}
}
