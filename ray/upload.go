package ray

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// packagePath turns "gcs://_ray_pkg_x.zip" into "/api/packages/gcs/_ray_pkg_x.zip".
func packagePath(uri string) (string, error) {
	scheme, name, ok := strings.Cut(uri, "://")
	if !ok || scheme == "" || name == "" || strings.ContainsAny(name, "/?#") {
		return "", fmt.Errorf("ray: %w: bad package URI %q (want gcs://<name>.zip)", ErrInvalid, uri)
	}
	return "/api/packages/" + scheme + "/" + name, nil
}

// PackageExists reports whether the cluster holds the package. Like Ray's
// client, the check also pins the package in the GCS for a while so it is
// not collected before a job uses it.
func (c *Client) PackageExists(ctx context.Context, uri string) (bool, error) {
	p, err := packagePath(uri)
	if err != nil {
		return false, err
	}
	_, _, err = c.do(ctx, request{method: http.MethodGet, path: p, retry: true})
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, ErrNotFound):
		return false, nil
	}
	return false, err
}

// UploadPackage uploads pkg unless the cluster already has it (GET first,
// then PUT). It reports whether it uploaded. Both requests are retried:
// a package is named by its content, so a repeated PUT is harmless.
func (c *Client) UploadPackage(ctx context.Context, pkg *Package) (bool, error) {
	if pkg == nil {
		return false, fmt.Errorf("ray: UploadPackage: %w: nil package", ErrInvalid)
	}
	exists, err := c.PackageExists(ctx, pkg.URI)
	if err != nil {
		return false, err
	}
	if exists {
		c.logger.DebugContext(ctx, "ray: package already on the cluster", "uri", pkg.URI)
		return false, nil
	}
	return true, c.putPackage(ctx, pkg)
}

func (c *Client) putPackage(ctx context.Context, pkg *Package) error {
	p, err := packagePath(pkg.URI)
	if err != nil {
		return err
	}
	start := time.Now()
	_, _, err = c.do(ctx, request{method: http.MethodPut, path: p, body: pkg.Bytes, ctype: "application/zip", retry: true})
	if err == nil {
		c.logger.DebugContext(ctx, "ray: uploaded package", "uri", pkg.URI, "bytes", pkg.Size, "took", time.Since(start))
	}
	return err
}

// UploadDir makes dir's package available on the cluster and returns its
// URI: it hashes dir, asks whether the cluster has that package, and only
// if not zips it and uploads it, streaming the zip into the PUT as it is
// written (the zip is never held whole). uploaded reports whether it
// uploaded. A failed upload is retried like other package requests,
// zipping again.
func (c *Client) UploadDir(ctx context.Context, dir string, opts PackageOptions) (uri string, uploaded bool, err error) {
	uri, err = HashDir(dir, opts)
	if err != nil {
		return "", false, err
	}
	exists, err := c.PackageExists(ctx, uri)
	if err != nil {
		return "", false, err
	}
	if exists {
		return uri, false, nil
	}
	if _, err := c.uploadStreaming(ctx, uri, dir, opts); err != nil {
		return "", false, err
	}
	return uri, true, nil
}

// errUploadEnded stops a packaging goroutine whose upload has ended.
var errUploadEnded = errors.New("ray: upload ended")

// uploadStreaming zips dir straight into PUT /api/packages/... for uri.
func (c *Client) uploadStreaming(ctx context.Context, uri, dir string, opts PackageOptions) (*Package, error) {
	if err := opts.normalize(); err != nil {
		return nil, err
	}
	path, err := packagePath(uri)
	if err != nil {
		return nil, err
	}
	entries, err := walk(dir, opts)
	if err != nil {
		return nil, err
	}
	type result struct {
		pkg *Package
		err error
	}
	start := time.Now()
	for attempt := 1; ; attempt++ {
		pr, pw := io.Pipe()
		res := make(chan result, 1)
		go func() {
			pkg, err := writePackage(pw, dir, entries, opts)
			if err == nil && pkg.URI != uri {
				err = fmt.Errorf("ray: %s changed while it was being packaged (%s, then %s); try again", dir, uri, pkg.URI)
			}
			pw.CloseWithError(err) // nil: the reader sees EOF
			res <- result{pkg, err}
		}()
		_, err := c.once(ctx, request{method: http.MethodPut, path: path, stream: pr, ctype: "application/zip"})
		pr.CloseWithError(errUploadEnded)
		r := <-res
		if r.err != nil && !errors.Is(r.err, errUploadEnded) {
			// Packaging itself failed (size limit, unreadable file, the
			// directory changed): retrying would not help.
			return nil, r.err
		}
		if err == nil {
			if r.err != nil {
				return nil, fmt.Errorf("ray: upload of %s: answered before the package was sent", uri)
			}
			c.logger.DebugContext(ctx, "ray: uploaded package", "uri", uri, "bytes", r.pkg.Size, "took", time.Since(start))
			return r.pkg, nil
		}
		if attempt >= c.retry.MaxAttempts || !transient(err) || ctx.Err() != nil {
			return nil, err
		}
		wait := c.retry.backoff(attempt)
		c.logger.DebugContext(ctx, "ray: retrying package upload", "uri", uri, "attempt", attempt, "backoff", wait, "error", err.Error())
		if serr := c.sleep(ctx, wait); serr != nil {
			return nil, fmt.Errorf("%w (last error: %v)", serr, err)
		}
	}
}
