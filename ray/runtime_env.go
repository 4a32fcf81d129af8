package ray

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/raytpu/raytpu/runtimeenv"
)

// PrepareRuntimeEnv returns a copy of env whose local WorkingDir and
// PyModules (directories or .py files) are uploaded (when the cluster lacks
// them) and replaced by their gcs:// URIs, as Ray's Python
// JobSubmissionClient does before it submits. For the working_dir,
// env.Excludes are added to opts.Excludes; py_modules get env.Excludes only,
// as in Ray.
func (c *Client) PrepareRuntimeEnv(ctx context.Context, env *runtimeenv.RuntimeEnv, opts PackageOptions) (*runtimeenv.RuntimeEnv, error) {
	out := env.Clone()
	if out == nil {
		return nil, nil
	}
	opts.Excludes = append(slices.Clone(opts.Excludes), env.Excludes...)
	if out.WorkingDir != "" && !isURI(out.WorkingDir) {
		uri, _, err := c.UploadDir(ctx, out.WorkingDir, opts)
		if err != nil {
			return nil, err
		}
		out.WorkingDir = uri
	}
	for i, m := range out.PyModules {
		if isURI(m) {
			continue
		}
		// As Ray's client: a directory is zipped under its own name, a .py
		// file alone; only runtime_env excludes apply (not DefaultExcludes
		// nor Extra).
		st, err := os.Stat(m)
		if err != nil {
			return nil, fmt.Errorf("ray: py_modules: %w", err)
		}
		mo := opts
		mo.Extra, mo.NoDefaultExcludes = nil, true
		mo.Excludes = slices.Clone(env.Excludes)
		if st.IsDir() {
			mo.includeParentDir = true
		} else if filepath.Ext(m) == ".py" {
			mo.allowFile = true
		} else {
			return nil, fmt.Errorf("ray: py_modules: %s is neither a directory nor a .py file (upload wheels yourself)", m)
		}
		uri, _, err := c.UploadDir(ctx, m, mo)
		if err != nil {
			return nil, err
		}
		out.PyModules[i] = uri
	}
	return out, nil
}
