package ray

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/raytpu/raytpu/runtimeenv/packaging"
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
	if err := c.check("PackageExists"); err != nil {
		return false, err
	}
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
	if err := c.check("UploadPackage"); err != nil {
		return false, err
	}
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
//
// Concurrent calls on one Client for the same directory and options share
// one hash, check and upload (they all report the one upload).
func (c *Client) UploadDir(ctx context.Context, dir string, opts PackageOptions) (uri string, uploaded bool, err error) {
	if err := c.check("UploadDir"); err != nil {
		return "", false, err
	}
	key, err := uploadKey(dir, opts)
	if err != nil {
		return "", false, err
	}
	type result struct {
		uri      string
		uploaded bool
	}
	v, err, shared := c.uploads.Do(key, func() (any, error) {
		uri, uploaded, err := c.uploadDir(ctx, dir, opts)
		return result{uri, uploaded}, err
	})
	if err != nil && shared && ctx.Err() == nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		// The call this one joined gave up (its context ended); this one
		// still wants the package.
		return c.uploadDir(ctx, dir, opts)
	}
	if err != nil {
		return "", false, err
	}
	r := v.(result)
	return r.uri, r.uploaded, nil
}

// uploadKey names what UploadDir would upload: the directory and every
// option that changes the package.
func uploadKey(dir string, opts PackageOptions) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("ray: package %s: %w", dir, err)
	}
	h := sha256.New()
	field := func(s string) { fmt.Fprintf(h, "%d:%s", len(s), s) }
	field(abs)
	fmt.Fprintf(h, "%d|%t|%t|%d|%t|%t|%t", len(opts.Excludes), opts.NoDefaultExcludes, opts.IgnoreGitignore,
		opts.MaxSize, opts.Store, opts.includeParentDir, opts.allowFile)
	for _, e := range opts.Excludes {
		field(e)
	}
	for _, name := range slices.Sorted(maps.Keys(opts.Extra)) {
		field(name)
		sum := sha256.Sum256(opts.Extra[name])
		h.Write(sum[:])
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func (c *Client) uploadDir(ctx context.Context, dir string, opts PackageOptions) (uri string, uploaded bool, err error) {
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

// UploadProgress is how far one package upload is, as UploadDir reports
// it to the function WithUploadProgress put in its context.
type UploadProgress struct {
	// URI is the package being uploaded.
	URI string
	// Attempt counts the PUTs of this upload from 1; a retried PUT zips
	// and sends again from zero.
	Attempt int
	// Packed is how many bytes of file content are in the zip sent so far
	// (a file counts once it is whole in the zip), of Total, the size of
	// every file of the package.
	Packed, Total int64
	// Sent is how many bytes of the zip the PUT has sent (compressed:
	// usually less than Packed).
	Sent int64
	// Done is set on the last report of a PUT the cluster accepted.
	Done bool
}

type uploadProgressKey struct{}

// WithUploadProgress returns a copy of ctx with which UploadDir (and
// PrepareRuntimeEnv, through it) calls fn as the zip of a package is sent:
// once when a PUT starts, then as files enter the zip, and once when the
// cluster has accepted it. Nothing is reported for a package the cluster
// already has, nor to a call that joined a concurrent UploadDir of the
// same directory. fn is called from the goroutine writing the zip; it
// must be quick. Like net/http/httptrace, the hook rides on the context
// so that callers in between need not carry it.
func WithUploadProgress(ctx context.Context, fn func(UploadProgress)) context.Context {
	return context.WithValue(ctx, uploadProgressKey{}, fn)
}

func uploadProgressOf(ctx context.Context) func(UploadProgress) {
	fn, _ := ctx.Value(uploadProgressKey{}).(func(UploadProgress))
	return fn
}

// countingReader counts what was read through it.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// errUploadEnded stops a packaging goroutine whose upload has ended.
var errUploadEnded = errors.New("ray: upload ended")

// uploadStreaming zips dir straight into PUT /api/packages/... for uri.
// A failed PUT is retried (zipping again); a failure of packaging itself
// (size limit, unreadable file, the directory changed) is not.
func (c *Client) uploadStreaming(ctx context.Context, uri, dir string, opts PackageOptions) (*Package, error) {
	if err := opts.normalize(); err != nil {
		return nil, err
	}
	path, err := packagePath(uri)
	if err != nil {
		return nil, err
	}
	tree, err := walk(dir, opts)
	if err != nil {
		return nil, err
	}
	defer tree.Close()
	total := tree.Size()
	report := uploadProgressOf(ctx)
	start := time.Now()
	var pkg *Package
	attempt := 0
	var sent *countingReader
	_, err = c.withRetry(ctx, c.retry.MaxAttempts, "package upload", func() error {
		attempt++
		pr, pw := io.Pipe()
		sent = &countingReader{r: pr}
		var written func(int64)
		if report != nil {
			var packedBytes int64
			at := attempt
			report(UploadProgress{URI: uri, Attempt: at, Total: total})
			written = func(n int64) {
				packedBytes += n
				report(UploadProgress{URI: uri, Attempt: at, Packed: packedBytes, Total: total, Sent: sent.n.Load()})
			}
		}
		var perr error
		packed := make(chan struct{})
		go func() {
			defer close(packed)
			var z *packaging.Zip
			z, perr = tree.WriteZip(pw, written)
			switch {
			case perr != nil:
				perr = packageError(perr)
			case packaging.URI(z.Hash) != uri:
				perr = fmt.Errorf("ray: %s changed while it was being packaged (%s, then %s); try again", dir, uri, packaging.URI(z.Hash))
			default:
				pkg = &Package{URI: uri, Hash: z.Hash, Size: z.Size, Files: z.Files}
			}
			pw.CloseWithError(perr) // nil: the reader sees EOF
		}()
		_, err := c.once(ctx, request{method: http.MethodPut, path: path, stream: sent, ctype: "application/zip"})
		pr.CloseWithError(errUploadEnded)
		<-packed
		switch {
		case perr != nil && !errors.Is(perr, errUploadEnded):
			return perr // not transient: ends the attempts
		case err == nil && perr != nil:
			return fmt.Errorf("ray: upload of %s: answered before the package was sent", uri)
		}
		return err
	}, slog.String("uri", uri))
	if err != nil {
		return nil, err
	}
	if report != nil {
		report(UploadProgress{URI: uri, Attempt: attempt, Packed: total, Total: total, Sent: sent.n.Load(), Done: true})
	}
	c.logger.DebugContext(ctx, "ray: uploaded package", "uri", uri, "bytes", pkg.Size, "took", time.Since(start))
	return pkg, nil
}
