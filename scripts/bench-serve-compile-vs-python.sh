#!/usr/bin/env bash
# bench-serve-compile-vs-python.sh compares the time to build and validate a
# typical Serve application config (a CPU router with autoscaling and an LLM
# deployment whose two replicas each own a v4 2x2x2 slice):
#   Go:     serve.Application.Compile (validation, slice placement, config
#           bytes), timed by internal/bench/servecompilebench, which first
#           checks that it compiles to serve/testdata/typical-config.golden.json;
#   Python: (1) ServeDeploySchema only, (2) the same config (that golden
#           file) built and validated with Ray's own classes:
#           ServeDeploySchema.model_validate (what PUT checks),
#           override_deployment_info (what the controller checks when it
#           applies the config: autoscaling bounds, placement options, route
#           prefix) and model_dump, imports excluded. These are the checks
#           Compile makes ahead of time.
# Both sides report the process's CPU time per build (user + system, garbage
# collection included), which other work on a shared machine disturbs far
# less than wall time; wall time is shown in brackets. Each is the median
# of RUNS runs. It prints the per-build times and the ratios (Python / Go).
#
# Environment: RUNS (default 5). Needs the venv from scripts/setup-venv.sh.
# No cluster is started.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
py="$repo/.venv/bin/python"
[[ -x $py ]] || { echo "bench: $py missing: run scripts/setup-venv.sh" >&2; exit 1; }
RUNS=${RUNS:-5}
export RAY_USAGE_STATS_ENABLED=0
golden="$repo/serve/testdata/typical-config.golden.json"

work=$(mktemp -d /tmp/rtservecompile.XXXXXX)
trap 'rm -rf "$work"' EXIT
(cd "$repo" && go build -o "$work/servecompilebench" ./internal/bench/servecompilebench)
echo "bench: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2

"$work/servecompilebench" -runs "$RUNS" -golden "$golden" >"$work/go.jsonl"

"$py" - "$golden" "$RUNS" >"$work/py.jsonl" <<'PY'
import json, logging, sys, time, warnings
warnings.simplefilter("ignore")
logging.getLogger("ray.serve").setLevel(logging.ERROR)
from ray.serve._private.application_state import override_deployment_info
from ray.serve._private.config import DeploymentConfig, ReplicaConfig
from ray.serve._private.deployment_info import DeploymentInfo
from ray.serve.schema import ServeDeploySchema

cfg = json.load(open(sys.argv[1]))
runs = int(sys.argv[2])

# The deployments in code, as the controller holds them before it applies
# the config (built once, outside the timing).
infos = {
    d["name"]: DeploymentInfo(
        deployment_config=DeploymentConfig(),
        replica_config=ReplicaConfig.create("module:Deployment"),
        start_time_ms=0,
        deployer_job_id="bench",
        route_prefix="/",
    )
    for d in cfg["deployments"]
}

def schema_only():
    s = ServeDeploySchema.model_validate({"applications": [cfg]})
    return s.applications[0].model_dump(exclude_unset=True)

def build():
    s = ServeDeploySchema.model_validate({"applications": [cfg]})
    app = s.applications[0]
    override_deployment_info(infos, app)
    return app.model_dump(exclude_unset=True)

# The built config must be the one Go compiles.
assert schema_only()["name"] == cfg["name"] and len(build()["deployments"]) == len(cfg["deployments"])


def measure(fn, batch):
    for _ in range(batch):
        fn()  # warm up
    n, wall, cpu = 0, time.perf_counter(), time.process_time()
    while time.process_time() - cpu < 0.25:
        for _ in range(batch):
            fn()
        n += batch
    return (time.perf_counter() - wall) / n * 1e9, (time.process_time() - cpu) / n * 1e9


for name, fn, batch in (("ServeDeploySchema only (PUT)", schema_only, 100), ("schema + deploy-step checks", build, 2)):
    rs = sorted((measure(fn, batch) for _ in range(runs)), key=lambda r: r[1])
    wall, cpu = rs[len(rs) // 2]
    print(json.dumps({"case": name, "ns_per_op": wall, "cpu_ns_per_op": cpu}))
PY

"$py" - "$work/go.jsonl" "$work/py.jsonl" <<'PY'
import json, sys
go = json.loads(open(sys.argv[1]).readline())
py = [json.loads(l) for l in open(sys.argv[2])]
print("typical Serve app (2 deployments, one with a v4 2x2x2 slice per replica)")
print(f"  {'CPU time per build (wall in brackets)':44} {'':>22} {'allocs':>7} {'Python/Go':>10}")
gs = f"{go['cpu_ns_per_op']/1000:.2f}µs ({go['ns_per_op']/1000:.2f})"
print(f"  {'Go     serve.Application.Compile':44} {gs:>22} {go['allocs_per_op']:7d} {'':>10}")
for p in py:
    ps = f"{p['cpu_ns_per_op']/1000:.2f}µs ({p['ns_per_op']/1000:.2f})"
    ratio = f"{p['cpu_ns_per_op'] / go['cpu_ns_per_op']:.1f}×"
    print(f"  {'Python ' + p['case']:44} {ps:>22} {'':>7} {ratio:>10}")
PY
