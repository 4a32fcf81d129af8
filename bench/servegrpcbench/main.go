// Command servegrpcbench drives the Go side of
// bench/servegrpcbench/vs-python.sh: it starts and stops a local Ray
// cluster whose nodes can import raytpu's generated gRPC Python, deploys a
// small Predictor application behind Serve's gRPC proxy, and times calls
// through package serve/client, printing one JSON object.
//
//	servegrpcbench -start-cluster state.json -python-path DIR   # prints the dashboard URL
//	servegrpcbench -address URL -deploy                         # prints the gRPC proxy's host:port
//	servegrpcbench -grpc HOST:PORT -n 2000 -c 16                # times the calls
//	servegrpcbench -grpc HOST:PORT -client grpc-go               # the same with no raytpu code
//	servegrpcbench -stop-cluster state.json
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"time"

	"github.com/raytpu/raytpu/internal/raycluster"
	"github.com/raytpu/raytpu/ray"
	"github.com/raytpu/raytpu/raybackend"
	"github.com/raytpu/raytpu/runtimeenv"
	"github.com/raytpu/raytpu/serve"
	"github.com/raytpu/raytpu/serve/servev1"
)

// App is the benchmark application's name.
const App = "bench"

// model doubles the tensor "x"; it is the whole server-side work.
const model = `from ray import serve
from raytpu.serve.v1 import tensor


@serve.deployment(max_ongoing_requests=256, ray_actor_options={"num_cpus": 0})
class Double:
    async def Predict(self, request):
        return tensor.response({"y": tensor.inputs(request)["x"] * 2})


app = Double.bind()
`

func main() {
	var (
		start  = flag.String("start-cluster", "", "start a head-only local cluster, write its state to this file, print its dashboard URL")
		pyPath = flag.String("python-path", "", "with -start-cluster: write servev1's Python here and put it on the nodes' PYTHONPATH")
		stop   = flag.String("stop-cluster", "", "stop the cluster saved in this state file")
		addr   = flag.String("address", "", "dashboard URL, with -deploy")
		deploy = flag.Bool("deploy", false, "start Serve with a gRPC proxy and deploy the benchmark application; print the proxy's host:port")
		target = flag.String("grpc", "", "time calls to the gRPC proxy at this host:port")
		n      = flag.Int("n", 2000, "timed calls")
		conc   = flag.Int("c", 16, "concurrent callers")
		warm   = flag.Int("warmup", 200, "untimed calls first")
		size   = flag.Int("size", 16, "float32 elements of x")
		prof   = flag.String("cpuprofile", "", "write a CPU profile of the timed calls here")
		kind   = flag.String("client", "raytpu", "with -grpc: raytpu (serve/client.NewGRPC), raytpu-fixed-windows (NewGRPC with 4/16 MiB windows through WithDialOptions) or grpc-go (grpc.NewClient with grpc-go's defaults and the metadata set by hand)")
		side   = flag.String("side", "", "the side's name in the output (default: go, or go-<client>)")
	)
	flag.Parse()
	if *prof != "" {
		f, err := os.Create(*prof)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "servegrpcbench:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	ctx := context.Background()
	var err error
	switch {
	case *start != "":
		err = startCluster(ctx, *start, *pyPath)
	case *stop != "":
		err = raycluster.StopState(*stop)
	case *deploy:
		err = deployApp(ctx, *addr)
	case *target != "":
		err = bench(ctx, benchConfig{target: *target, client: *kind, side: *side, n: *n, conc: *conc, warm: *warm, size: *size})
	default:
		flag.Usage()
		os.Exit(2)
	}
	if err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "servegrpcbench:", err)
		os.Exit(1)
	}
}

func startCluster(ctx context.Context, state, pyPath string) error {
	if pyPath == "" {
		return fmt.Errorf("-python-path is required: Serve's gRPC proxy must import servev1's Python")
	}
	if err := servev1.WritePython(pyPath); err != nil {
		return err
	}
	cfg := raycluster.Config{HeadCPUs: 2}
	cfg.AddPythonPath(pyPath)
	url, err := raycluster.StartDetached(ctx, cfg, state)
	if err != nil {
		return err
	}
	fmt.Println(url)
	return nil
}

func deployApp(ctx context.Context, address string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	rc, err := ray.NewClient(address)
	if err != nil {
		return err
	}
	u, err := url.Parse(address)
	if err != nil {
		return err
	}
	port, err := ensureServe(ctx, rc, u.Hostname())
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "servegrpcbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, "double.py"), []byte(model), 0o644); err != nil {
		return err
	}
	app := serve.Application{Name: App, RoutePrefix: "/" + App, ImportPath: "double:app", RuntimeEnv: runtimeenv.RuntimeEnv{WorkingDir: dir}}
	b, err := raybackend.New(rc)
	if err != nil {
		return err
	}
	if _, err := app.Run(ctx, b, nil); err != nil {
		return err
	}
	fmt.Println(net.JoinHostPort(u.Hostname(), strconv.Itoa(port)))
	return nil
}

// ensureServe starts Serve with a gRPC proxy serving Predictor on a free
// port, or, when Serve runs already, returns its gRPC proxy's port (Ray
// ignores new proxy options while Serve runs).
func ensureServe(ctx context.Context, rc *ray.Client, host string) (int, error) {
	d, err := rc.ServeApplications(ctx)
	if err != nil {
		return 0, err
	}
	if d.Running() {
		g := d.GRPCOptions
		if g == nil || len(g.GRPCServicerFunctions) == 0 {
			return 0, fmt.Errorf("serve runs without a gRPC proxy; restart it (serve shutdown) to benchmark")
		}
		if g.Port == 0 {
			return 9000, nil
		}
		return g.Port, nil
	}
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	raw, err := serve.GRPCOptions{Port: port, ServicerFunctions: []string{servev1.ServicerFunction}}.Compile()
	if err != nil {
		return 0, err
	}
	var opts ray.ServeGRPCOptions
	if err := json.Unmarshal(raw, &opts); err != nil {
		return 0, err
	}
	return port, rc.DeployServeApplications(ctx, ray.ServeDeployConfig{
		ProxyLocation: ray.ProxyHeadOnly, GRPCOptions: &opts, Applications: []json.RawMessage{},
	})
}
