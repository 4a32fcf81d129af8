#!/usr/bin/env bash
# bench-serve-compile-vs-python.sh compares the time to build and validate a
# typical Serve application config (a CPU router with autoscaling and an LLM
# deployment whose two replicas each own a v4 2x2x2 slice):
#   Go:     serve.Application.Compile (validation, slice placement, config
#           bytes), from `go test -bench BenchmarkCompile ./serve`;
#   Python: (1) ServeDeploySchema only, (2) the same config (serve/testdata/typical-config.golden.json) built
#           and validated with Ray's own classes: ServeDeploySchema
#           .model_validate (what PUT checks), override_deployment_info (what
#           the controller checks when it applies the config: autoscaling
#           bounds, placement options, route prefix) and model_dump, imports
#           excluded. These are the checks Compile makes ahead of time.
# It prints the per-build times and the ratios (Python / Go).
#
# Environment: BENCHTIME (go test -benchtime, default 2s), LOOPS (Python
# builds per timing run, default 2000). Needs the venv from
# scripts/setup-venv.sh.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
py="$repo/.venv/bin/python"
[[ -x $py ]] || { echo "bench: $py missing: run scripts/setup-venv.sh" >&2; exit 1; }
BENCHTIME=${BENCHTIME:-2s}
LOOPS=${LOOPS:-500}

cd "$repo"
go_ns=$(go test ./serve -run '^$' -bench '^BenchmarkCompile$' -benchtime "$BENCHTIME" -count 3 |
	awk '/^BenchmarkCompile/ { print $3 }' | sort -n | head -1)
[[ -n $go_ns ]] || { echo "bench: no Go result" >&2; exit 1; }

py_out=$("$py" - "$repo/serve/testdata/typical-config.golden.json" "$LOOPS" <<'PY'
import json, logging, sys, timeit, warnings
warnings.simplefilter("ignore")
logging.getLogger("ray.serve").setLevel(logging.ERROR)
from ray.serve._private.application_state import override_deployment_info
from ray.serve._private.config import DeploymentConfig, ReplicaConfig
from ray.serve._private.deployment_info import DeploymentInfo
from ray.serve.schema import ServeDeploySchema

cfg = json.load(open(sys.argv[1]))
loops = int(sys.argv[2])

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

for f, n in ((schema_only, loops * 4), (build, max(loops // 10, 10))):
    f()
    best = min(timeit.repeat(f, number=n, repeat=3))
    print(int(best / n * 1e9))
PY
)

py_schema_ns=$(sed -n 1p <<<"$py_out")
py_ns=$(sed -n 2p <<<"$py_out")

printf 'typical Serve app (2 deployments, one with a v4 2x2x2 slice per replica)\n'
printf '  Go   serve.Application.Compile           %10d ns/op\n' "$go_ns"
printf '  Python ServeDeploySchema only (PUT)     %10d ns/op  (%.1fx Go)\n' "$py_schema_ns" "$(awk -v g="$go_ns" -v p="$py_schema_ns" 'BEGIN { print p / g }')"
printf '  Python schema + deploy-step checks      %10d ns/op  (%.1fx Go)\n' "$py_ns" "$(awk -v g="$go_ns" -v p="$py_ns" 'BEGIN { print p / g }')"
