#!/usr/bin/env bash
# bench/servecompilebench/vs-python.sh compares the time to build and validate a
# typical Serve application config (a CPU router with autoscaling and an LLM
# deployment whose two replicas each own a v4 2x2x2 slice):
#   Go:     serve.Application.Compile (validation, slice placement, config
#           bytes), timed by bench/servecompilebench, which first
#           checks that it compiles to serve/testdata/typical-config.golden.json
#           (every compile resolves its slice shape from the TPU catalog:
#           serve keeps nothing between compiles);
#   Python: (1) ServeDeploySchema only, (2) the same config (that golden
#           file) built and validated with Ray's own classes:
#           ServeDeploySchema.model_validate (what PUT checks),
#           override_deployment_info (what the controller checks when it
#           applies the config: autoscaling bounds, placement options, route
#           prefix) and model_dump, imports excluded. These are the checks
#           Compile makes ahead of time.
# Both sides report the process's CPU time per build (user + system, garbage
# collection included), which other work on a shared machine disturbs far
# less than wall time; wall time is shown in brackets. The sides take
# turns: each of RUNS rounds times Go, then Python, back to back, so that a
# slow spell of a shared machine falls on both sides of a round rather
# than on one side. It prints the median per-build times and the median,
# min and max over rounds of the ratio Python / Go.
#
# Environment: RUNS (default 5). Needs the venv from scripts/setup-venv.sh.
# No cluster is started.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
py="$repo/.venv/bin/python"
[[ -x $py ]] || { echo "bench: $py missing: run scripts/setup-venv.sh" >&2; exit 1; }
RUNS=${RUNS:-5}
export RAY_USAGE_STATS_ENABLED=0
golden="$repo/serve/testdata/typical-config.golden.json"

work=$(mktemp -d /tmp/rtservecompile.XXXXXX)
trap 'rm -rf "$work"' EXIT
(cd "$repo" && go build -o "$work/servecompilebench" ./bench/servecompilebench)
echo "bench: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2

"$py" - "$golden" "$RUNS" "$work/servecompilebench" <<'PY'
import json, logging, statistics, subprocess, sys, time, warnings
warnings.simplefilter("ignore")
logging.getLogger("ray.serve").setLevel(logging.ERROR)
from ray.serve._private.application_state import override_deployment_info
from ray.serve._private.config import DeploymentConfig, ReplicaConfig
from ray.serve._private.deployment_info import DeploymentInfo
from ray.serve.schema import ServeDeploySchema

golden, runs, gobench = sys.argv[1], int(sys.argv[2]), sys.argv[3]
cfg = json.load(open(golden))

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
    """One run: fn in batches for at least a quarter second of CPU."""
    for _ in range(batch):
        fn()  # warm up
    n, wall, cpu = 0, time.perf_counter(), time.process_time()
    while time.process_time() - cpu < 0.25:
        for _ in range(batch):
            fn()
        n += batch
    return {"ns_per_op": (time.perf_counter() - wall) / n * 1e9, "cpu_ns_per_op": (time.process_time() - cpu) / n * 1e9}


def go_run(*flags):
    """One run of the Go side (it checks the golden config first)."""
    out = subprocess.run([gobench, "-runs", "1", "-golden", golden, *flags], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


go_cases = (("serve.Application.Compile", ()),)
cases = (("ServeDeploySchema only (PUT)", schema_only, 100), ("schema + deploy-step checks", build, 2))
gos, pys = {name: [] for name, _ in go_cases}, {name: [] for name, _, _ in cases}
for _ in range(runs):
    for name, flags in go_cases:
        gos[name].append(go_run(*flags))
    for name, fn, batch in cases:
        pys[name].append(measure(fn, batch))


def med(rs, key):
    return statistics.median(r[key] for r in rs)


print("typical Serve app (2 deployments, one with a v4 2x2x2 slice per replica), %d rounds" % runs)
print(f"  {'CPU time per build (wall in brackets), median':46} {'':>22} {'allocs':>7}")
for name, _ in go_cases:
    gs = f"{med(gos[name], 'cpu_ns_per_op')/1000:.2f}µs ({med(gos[name], 'ns_per_op')/1000:.2f})"
    print(f"  {'Go     ' + name:46} {gs:>22} {gos[name][0]['allocs_per_op']:7d}")
for name, _, _ in cases:
    rs = pys[name]
    ps = f"{med(rs, 'cpu_ns_per_op')/1000:.2f}µs ({med(rs, 'ns_per_op')/1000:.2f})"
    print(f"  {'Python ' + name:46} {ps:>22}")
print(f"  {'Python/Go, median (min-max) over rounds':46}")
gname = go_cases[0][0]
for name, _, _ in cases:
    ratios = [p["cpu_ns_per_op"] / g["cpu_ns_per_op"] for p, g in zip(pys[name], gos[gname])]
    col = f"{statistics.median(ratios):.1f}× ({min(ratios):.1f}-{max(ratios):.1f})"
    print(f"  {'  ' + name:46} {col:>22}")
PY
