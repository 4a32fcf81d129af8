// Package gcsemu runs Google Cloud Storage for tests: the fake-gcs-server
// emulator (github.com/fsouza/fake-gcs-server/fakestorage), in process,
// over plain HTTP on an address the test chooses (the pod network's
// gateway, so that pods reach it as they would reach storage.googleapis.com;
// or loopback for a local Ray cluster).
//
// Google's clients find an emulator through the environment, each through
// its own variable, and then send no credentials (Env sets both):
//
//   - STORAGE_EMULATOR_HOST: the Python client (google-cloud-storage,
//     which Ray's runtime_env uses through smart_open for gs://
//     working_dir and py_modules) and the Go client
//     (cloud.google.com/go/storage, raytpu's uploads);
//   - CLOUD_STORAGE_EMULATOR_ENDPOINT: google-cloud-cpp, under pyarrow's
//     GcsFileSystem, which Ray Train uses for a gs:// storage_path.
//
// gcsemu is test infrastructure: only tests import it.
package gcsemu

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/fsouza/fake-gcs-server/fakestorage"
)

// The variables Google's clients read to reach an emulator.
const (
	// EnvHost is read by the Python and Go clients: host:port or a URL.
	EnvHost = "STORAGE_EMULATOR_HOST"
	// EnvEndpoint is read by google-cloud-cpp (pyarrow's GcsFileSystem): a URL.
	EnvEndpoint = "CLOUD_STORAGE_EMULATOR_ENDPOINT"
)

// Server is a running emulator.
type Server struct {
	fake *fakestorage.Server
	http *http.Server
	url  string
}

// Start serves an empty emulator on host (an IP address) at a free port;
// Stop ends it.
func Start(host string) (*Server, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return nil, fmt.Errorf("gcsemu: listening on %s: %w", host, err)
	}
	url := "http://" + ln.Addr().String()
	fake, err := fakestorage.NewServerWithOptions(fakestorage.Options{
		NoListener: true,
		Scheme:     "http",
		Host:       host,
		// Resumable uploads answer with this URL in their Location.
		ExternalURL: url,
		// Objects are read back at <url>/<bucket>/<object> too.
		PublicHost: ln.Addr().String(),
		Writer:     io.Discard,
	})
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("gcsemu: %w", err)
	}
	s := &Server{fake: fake, url: url, http: &http.Server{Handler: fake.HTTPHandler(), ReadHeaderTimeout: time.Minute}}
	go s.http.Serve(ln)
	return s, nil
}

// URL is the emulator's endpoint, http://host:port.
func (s *Server) URL() string { return s.url }

// Env is the environment that points Google's storage clients (Python,
// Go and C++, see the package doc) at the emulator, sorted by name.
func (s *Server) Env() [][2]string {
	return [][2]string{{EnvEndpoint, s.url}, {EnvHost, s.url}}
}

// CreateBucket makes an empty bucket.
func (s *Server) CreateBucket(name string) {
	s.fake.CreateBucketWithOpts(fakestorage.CreateBucketOpts{Name: name})
}

// Write stores an object, as a user's upload would.
func (s *Server) Write(bucket, object string, content []byte) {
	s.fake.CreateObject(fakestorage.Object{
		ObjectAttrs: fakestorage.ObjectAttrs{BucketName: bucket, Name: object, ContentType: "application/octet-stream"},
		Content:     content,
	})
}

// Read returns the content of an object.
func (s *Server) Read(bucket, object string) ([]byte, error) {
	o, err := s.fake.GetObject(bucket, object)
	if err != nil {
		return nil, fmt.Errorf("gcsemu: gs://%s/%s: %w", bucket, object, err)
	}
	return o.Content, nil
}

// ErrNotGS means a URI is not gs://<bucket>/<object>.
var ErrNotGS = errors.New("not a gs://<bucket>/<object> URI")

// ReadURI returns the content of the object gs://bucket/object.
func (s *Server) ReadURI(uri string) ([]byte, error) {
	bucket, object, err := Split(uri)
	if err != nil {
		return nil, err
	}
	return s.Read(bucket, object)
}

// Split splits gs://bucket/object.
func Split(uri string) (bucket, object string, err error) {
	rest, ok := strings.CutPrefix(uri, "gs://")
	bucket, object, _ = strings.Cut(rest, "/")
	if !ok || bucket == "" || object == "" {
		return "", "", fmt.Errorf("gcsemu: %q: %w", uri, ErrNotGS)
	}
	return bucket, object, nil
}

// Object is what List reports of one object.
type Object struct {
	Name       string
	Size       int64
	Generation int64
}

// List returns the objects of bucket whose names begin with prefix,
// sorted by name.
func (s *Server) List(bucket, prefix string) ([]Object, error) {
	attrs, _, err := s.fake.ListObjects(bucket, prefix, "", false)
	if err != nil {
		return nil, fmt.Errorf("gcsemu: listing gs://%s/%s: %w", bucket, prefix, err)
	}
	out := make([]Object, 0, len(attrs))
	for _, a := range attrs {
		out = append(out, Object{Name: a.Name, Size: a.Size, Generation: a.Generation})
	}
	slices.SortFunc(out, func(a, b Object) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Stop ends the emulator.
func (s *Server) Stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.http.Shutdown(ctx)
	s.fake.Stop()
	return err
}
