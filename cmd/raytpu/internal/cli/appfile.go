package cli

import (
	"errors"

	"github.com/raytpu/raytpu/field"
	"github.com/raytpu/raytpu/field/fieldfile"
	"github.com/raytpu/raytpu/placement"
	"github.com/raytpu/raytpu/serve"
)

// appPath is the root of a Serve application's paths, as serve reports them.
var appPath = field.NewPath("app")

// appSpelling spells serve's paths as an application file does
// (accelerator_config, not acceleratorConfig).
var appSpelling = field.JSONSpelling(appPath.String(), serve.Application{})

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

// loadApplication reads and compiles a Serve application file.
func loadApplication(path string) (*placement.Plan, error) {
	app, err := readApplication(path)
	if err != nil {
		return nil, err
	}
	return compileApplication(path, app)
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
