package raybackend_test

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/raytpu/raytpu/ray"
	"github.com/raytpu/raytpu/raybackend"
)

// Invalid options are refused by New with an error that names the option,
// the bad value and what is valid. No request is made.
func TestNewRefusesInvalidOptions(t *testing.T) {
	t.Parallel()
	client := unreachableClient(t)
	cases := []struct {
		name string
		opt  raybackend.Option
		says []string
	}{
		{"zero poll interval", raybackend.WithPollInterval(0), []string{"WithPollInterval(0s)", "must be positive", "1s"}},
		{"negative poll interval", raybackend.WithPollInterval(-time.Second), []string{"WithPollInterval(-1s)", "must be positive"}},
		{"nil logger", raybackend.WithLogger(nil), []string{"WithLogger(nil)"}},
		{"package size past GCS's limit", raybackend.WithPackageOptions(ray.PackageOptions{MaxSize: ray.GCSStorageMaxSize}),
			[]string{"WithPackageOptions", "MaxSize 536870912", "(0, 536870912)"}},
		{"negative package size", raybackend.WithPackageOptions(ray.PackageOptions{MaxSize: -1}), []string{"WithPackageOptions", "MaxSize -1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b, err := raybackend.New(client, c.opt)
			if err == nil || b != nil {
				t.Fatalf("New = %v, %v; want an error", b, err)
			}
			for _, s := range c.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("%q does not say %q", err, s)
				}
			}
		})
	}
	if _, err := raybackend.New(nil); err == nil {
		t.Error("New(nil) succeeded")
	}
	ok := []raybackend.Option{
		raybackend.WithPollInterval(time.Millisecond), raybackend.WithLogger(slog.New(slog.DiscardHandler)),
		raybackend.WithPackageOptions(ray.PackageOptions{MaxSize: 1 << 20, Excludes: []string{"*.ckpt"}}), nil,
	}
	if _, err := raybackend.New(client, ok...); err != nil {
		t.Errorf("New with valid options (and a nil one, skipped) = %v", err)
	}
}

// WithPackageOptions copies what it is given: changing the caller's
// options afterwards changes nothing in the backend.
func TestWithPackageOptionsCopies(t *testing.T) {
	t.Parallel()
	client := unreachableClient(t)
	o := ray.PackageOptions{MaxSize: -1}
	opt := raybackend.WithPackageOptions(o)
	o.MaxSize = 1 << 20 // the option holds its own copy: still invalid
	if _, err := raybackend.New(client, opt); err == nil {
		t.Error("the option saw a change the caller made after creating it")
	}
}

// unreachableClient is a dashboard client of a port where nothing
// listens: a request that gets sent fails with a connection error.
func unreachableClient(t *testing.T) *ray.Client {
	t.Helper()
	client, err := ray.NewClient("http://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// unreachable is a backend of unreachableClient: what it refuses, it
// refuses before sending anything.
func unreachable(t *testing.T) *raybackend.Backend {
	t.Helper()
	b, err := raybackend.New(unreachableClient(t))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
