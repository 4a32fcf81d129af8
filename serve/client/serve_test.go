package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/raytpu/raytpu/backend"
	"github.com/raytpu/raytpu/internal/raycluster"
	"github.com/raytpu/raytpu/internal/testinfra/raytest"
	"github.com/raytpu/raytpu/ray"
	"github.com/raytpu/raytpu/raybackend"
	"github.com/raytpu/raytpu/runtimeenv"
	"github.com/raytpu/raytpu/serve"
	"github.com/raytpu/raytpu/serve/client"
	"github.com/raytpu/raytpu/serve/servev1"
	"github.com/raytpu/raytpu/sim"
)

// cluster is the package's small cluster, the head and one CPU node, with
// servev1's generated Python on every node's PYTHONPATH (Serve's gRPC
// proxy imports it outside any runtime_env). The first test that needs
// Ray starts it; tests that need none (httptest servers, in-process gRPC)
// run without it.
var cluster = &raytest.Shared{}

func TestMain(m *testing.M) {
	py, err := os.MkdirTemp("", "raytpu-servev1-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := servev1.WritePython(py); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	spec, err := sim.ParseSpec("cpu:1")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cluster.Config = raycluster.Config{Nodes: raycluster.NodesFor(spec, 1)}
	cluster.Config.AddPythonPath(py)
	code := m.Run()
	if err := cluster.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stop local Ray cluster:", err)
	}
	os.RemoveAll(py)
	os.Exit(code)
}

// requestTimeout is Serve's request_timeout_s for both proxies.
const requestTimeout = 4.0

// proxies are the running Serve's proxy addresses.
type proxies struct {
	http string // base URL
	grpc string // host:port
}

var (
	setupOnce sync.Once
	setup     proxies
	setupErr  error
)

// twoApps starts Serve with both proxies on free ports and deploys the
// scale model twice, as "double" (factor 2, route /double) and "tenfold"
// (factor 10, route /tenfold), once for the package.
func twoApps(t *testing.T) proxies {
	t.Helper()
	dashboard := cluster.Get(t).DashboardURL
	setupOnce.Do(func() { setup, setupErr = deployTwoApps(dashboard) })
	if setupErr != nil {
		t.Fatal(setupErr)
	}
	return setup
}

func deployTwoApps(dashboard string) (proxies, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rc, err := ray.NewClient(dashboard)
	if err != nil {
		return proxies{}, err
	}
	u, err := url.Parse(dashboard)
	if err != nil {
		return proxies{}, err
	}
	ip := u.Hostname()
	httpPort, grpcPort := freePort(ip), freePort(ip)
	grpcRaw, err := serve.GRPCOptions{Port: grpcPort, ServicerFunctions: []string{servev1.ServicerFunction},
		RequestTimeoutS: new(requestTimeout)}.Compile()
	if err != nil {
		return proxies{}, err
	}
	var grpcOpts ray.ServeGRPCOptions
	if err := json.Unmarshal(grpcRaw, &grpcOpts); err != nil {
		return proxies{}, err
	}
	timeout := requestTimeout
	err = rc.DeployServeApplications(ctx, ray.ServeDeployConfig{
		ProxyLocation: ray.ProxyHeadOnly,
		HTTPOptions:   &ray.ServeHTTPOptions{Host: ip, Port: httpPort, RequestTimeoutS: &timeout},
		GRPCOptions:   &grpcOpts,
		Applications:  []json.RawMessage{},
	})
	if err != nil {
		return proxies{}, fmt.Errorf("starting Serve: %w", err)
	}
	b, err := raybackend.New(rc)
	if err != nil {
		return proxies{}, err
	}
	for _, app := range []struct {
		name   string
		factor float64
	}{{"double", 2}, {"tenfold", 10}} {
		a := serve.Application{
			Name: app.name, RoutePrefix: "/" + app.name, ImportPath: "scale_model:build",
			RuntimeEnv: runtimeenv.RuntimeEnv{WorkingDir: "testdata"},
			Args:       map[string]any{"factor": app.factor},
		}
		if _, err := a.Run(ctx, b, &backend.WaitOptions{}); err != nil {
			return proxies{}, fmt.Errorf("deploying %s: %w", app.name, err)
		}
	}
	return proxies{http: "http://" + net.JoinHostPort(ip, strconv.Itoa(httpPort)), grpc: net.JoinHostPort(ip, strconv.Itoa(grpcPort))}, nil
}

func freePort(ip string) int {
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		panic(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

type scaled struct {
	Y      []float64 `json:"y"`
	Factor float64   `json:"factor"`
}

func TestHTTPOnRealServe(t *testing.T) {
	p := twoApps(t)
	c, err := client.NewHTTP(p.http)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		route string
		want  string
	}{{"/double", "[2 4 6] 2"}, {"/tenfold", "[10 20 30] 10"}} {
		var out scaled
		if err := c.Post(t.Context(), tc.route, map[string]any{"x": []float64{1, 2, 3}}, &out); err != nil {
			t.Fatalf("POST %s: %v", tc.route, err)
		}
		if got := fmt.Sprint(out.Y, " ", out.Factor); got != tc.want {
			t.Errorf("POST %s = %s, want %s", tc.route, got, tc.want)
		}
	}

	t.Run("unknown route is ErrNotFound with Ray's body", func(t *testing.T) {
		err := c.Post(t.Context(), "/nosuchapp", map[string]any{"x": []float64{1}}, nil)
		var he *client.HTTPError
		if !errors.As(err, &he) || he.StatusCode != 404 || !errors.Is(err, client.ErrNotFound) || he.Body == "" {
			t.Fatalf("err = %v, want a 404 *HTTPError with Ray's body that is ErrNotFound", err)
		}
		t.Logf("Ray: %s", he.Body)
	})
	t.Run("replica error is ErrInternal", func(t *testing.T) {
		err := c.Post(t.Context(), "/double", map[string]any{"x": []float64{1}, "fail": true}, nil)
		var he *client.HTTPError
		if !errors.As(err, &he) || he.StatusCode != 500 || !errors.Is(err, client.ErrInternal) {
			t.Fatalf("err = %v, want a 500 *HTTPError that is ErrInternal", err)
		}
	})
	t.Run("caller's deadline", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
		defer cancel()
		start := time.Now()
		err := c.Post(ctx, "/double", map[string]any{"x": []float64{1}, "sleep": 3}, nil)
		if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 2*time.Second {
			t.Fatalf("err = %v after %v, want context.DeadlineExceeded soon after 300ms", err, time.Since(start))
		}
	})
	t.Run("Serve's request timeout is ErrTimeout", func(t *testing.T) {
		err := c.Post(t.Context(), "/double", map[string]any{"x": []float64{1}, "sleep": requestTimeout + 3}, nil)
		var he *client.HTTPError
		if !errors.As(err, &he) || he.StatusCode != 408 || !errors.Is(err, client.ErrTimeout) {
			t.Fatalf("err = %v, want a 408 *HTTPError that is ErrTimeout", err)
		}
		t.Logf("Ray: %s", he.Body)
	})
}

func predictReq(t *testing.T, x []float32, sleep float32) *servev1.PredictRequest {
	t.Helper()
	xt, err := servev1.Float32Tensor(x)
	if err != nil {
		t.Fatal(err)
	}
	in := map[string]*servev1.Tensor{"x": xt}
	if sleep > 0 {
		in["sleep"], _ = servev1.Float32Tensor([]float32{sleep}, []int64{}...)
	}
	return &servev1.PredictRequest{Inputs: in}
}

// With two applications deployed, the "application" metadata alone picks
// the one that answers: the same stub, the same request, two factors.
func TestGRPCRoutesByApplication(t *testing.T) {
	p := twoApps(t)
	conn, err := client.NewGRPC(p.grpc, client.WithApplication("double"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	stub := servev1.NewPredictorClient(conn)
	req := predictReq(t, []float32{1, 2, 3}, 0)
	for _, tc := range []struct {
		name string
		opts []grpc.CallOption
		want string
	}{
		{"connection default", nil, "[2 4 6] [2]"},
		{"call option", []grpc.CallOption{client.Application("tenfold")}, "[10 20 30] [10]"},
		{"call option back", []grpc.CallOption{client.Application("double"), client.RequestID("raytpu-test-1")}, "[2 4 6] [2]"},
	} {
		resp, err := stub.Predict(t.Context(), req, tc.opts...)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		y, err1 := resp.Outputs["y"].Float32s()
		f, err2 := resp.Outputs["factor"].Float32s()
		if err := errors.Join(err1, err2); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := fmt.Sprint(y, " ", f); got != tc.want {
			t.Errorf("%s: y, factor = %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestGRPCErrorsOnRealServe(t *testing.T) {
	p := twoApps(t)
	bare, err := client.NewGRPC(p.grpc) // no default application
	if err != nil {
		t.Fatal(err)
	}
	defer bare.Close()
	stub := servev1.NewPredictorClient(bare)
	req := predictReq(t, []float32{1}, 0)

	t.Run("no application metadata", func(t *testing.T) {
		_, err := stub.Predict(t.Context(), req)
		if !errors.Is(err, client.ErrNotFound) || status.Code(err) != codes.NotFound {
			t.Fatalf("err = %v, want NOT_FOUND (two applications, none named)", err)
		}
	})
	t.Run("unknown application", func(t *testing.T) {
		_, err := stub.Predict(t.Context(), req, client.Application("nosuchapp"))
		var ge *client.GRPCError
		if !errors.As(err, &ge) || !errors.Is(err, client.ErrNotFound) || ge.Application != "nosuchapp" {
			t.Fatalf("err = %v, want a NOT_FOUND *GRPCError naming the application", err)
		}
		t.Logf("Ray: %s", ge.Status.Message())
	})
	t.Run("caller's deadline", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
		defer cancel()
		_, err := stub.Predict(ctx, predictReq(t, []float32{1}, 3), client.Application("double"))
		if !errors.Is(err, client.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want DEADLINE_EXCEEDED that is ErrTimeout and context.DeadlineExceeded", err)
		}
	})
	t.Run("Serve's request timeout", func(t *testing.T) {
		_, err := stub.Predict(t.Context(), predictReq(t, []float32{1}, requestTimeout+3), client.Application("tenfold"))
		var ge *client.GRPCError
		if !errors.As(err, &ge) || !errors.Is(err, client.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want Serve's DEADLINE_EXCEEDED, not the caller's", err)
		}
		t.Logf("Ray: %s", ge.Status.Message())
	})
}
