package ray

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/raytpu/raytpu/runtimeenv"
)

// maxConcurrentUploads bounds how many of one runtime_env's packages
// (working_dir and py_modules) are hashed and uploaded at once; each
// already uses PackageOptions.Workers cores.
const maxConcurrentUploads = 4

// PrepareRuntimeEnv returns a copy of env whose local WorkingDir and
// PyModules (directories or .py files) are uploaded (when the cluster lacks
// them) and replaced by their gcs:// URIs, as Ray's Python
// JobSubmissionClient does before it submits. For the working_dir,
// env.Excludes are added to opts.Excludes; py_modules get env.Excludes only,
// as in Ray. The packages are uploaded concurrently; the first failure
// cancels the others and is returned. Concurrent calls on one Client that
// need the same package upload it once (see UploadDir).
func (c *Client) PrepareRuntimeEnv(ctx context.Context, env *runtimeenv.RuntimeEnv, opts PackageOptions) (*runtimeenv.RuntimeEnv, error) {
	if err := c.check("PrepareRuntimeEnv"); err != nil {
		return nil, err
	}
	out := env.Clone()
	if out == nil {
		return nil, nil
	}
	opts.Excludes = append(slices.Clone(opts.Excludes), env.Excludes...)
	// As Ray's client: a py_module directory is zipped under its own name,
	// a .py file alone; only runtime_env excludes apply to them (not
	// DefaultExcludes nor Extra). Every module is checked before any upload.
	modOpts := make([]PackageOptions, len(out.PyModules))
	for i, m := range out.PyModules {
		if isURI(m) {
			continue
		}
		var err error
		if modOpts[i], err = pyModuleOptions(m, opts, env.Excludes); err != nil {
			return nil, err
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(maxConcurrentUploads)
	if out.WorkingDir != "" && !isURI(out.WorkingDir) {
		g.Go(func() error {
			uri, _, err := c.UploadDir(gctx, out.WorkingDir, opts)
			out.WorkingDir = uri
			return err
		})
	}
	for i, m := range out.PyModules {
		if isURI(m) {
			continue
		}
		g.Go(func() error {
			uri, _, err := c.UploadDir(gctx, m, modOpts[i])
			out.PyModules[i] = uri
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// pyModuleOptions returns the package options for py_module m.
func pyModuleOptions(m string, opts PackageOptions, excludes []string) (PackageOptions, error) {
	st, err := os.Stat(m)
	if err != nil {
		return opts, fmt.Errorf("ray: py_modules: %w", err)
	}
	mo := opts
	mo.Extra, mo.NoDefaultExcludes = nil, true
	mo.Excludes = slices.Clone(excludes)
	switch {
	case st.IsDir():
		mo.includeParentDir = true
	case filepath.Ext(m) == ".py":
		mo.allowFile = true
	default:
		return opts, fmt.Errorf("ray: py_modules: %s is neither a directory nor a .py file (upload wheels yourself)", m)
	}
	return mo, nil
}
