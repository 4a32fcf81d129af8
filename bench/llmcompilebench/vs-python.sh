#!/usr/bin/env bash
# bench/llmcompilebench/vs-python.sh compares the time to build and check
# a Serve LLM application (serve/llm's typical one: two models on TPU
# slices, one with autoscaling and LoRA, an ingress of two replicas):
#   Go:     llm.OpenAIApp.Compile (validation, one slice group per replica,
#           config bytes), timed by bench/llmcompilebench, which first
#           checks that it compiles to the config in
#           serve/llm/testdata/typical.golden.json and hands that config to
#           the Python side;
#   Python: Ray 2.60's own checks of that config (serve/llm/testdata/raycheck.py,
#           what serve/llm's TestConfigsAreRays runs): (1) LLMConfig(**c)
#           of each model only, (2) the whole path a `serve deploy` of it
#           takes before a replica starts: ServeDeploySchema, LLMConfig,
#           build_openai_app and build_app (the controller's build step),
#           override_deployment_info; imports excluded.
# Both sides report the process's CPU time per build (user + system), and
# take turns, each of RUNS rounds timing Go, then Python, so that a slow
# spell of a shared machine falls on both sides of a round. It prints the
# median per-build times and the median, min and max over rounds of the
# ratio Python / Go.
#
# Environment: RUNS (default 5). Needs the LLM venv from
# scripts/setup-venv-llm.sh (make setup). No cluster is started.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
py="$repo/.venv-llm/bin/python"
[[ -x $py ]] || { echo "bench: $py missing: run scripts/setup-venv-llm.sh (or make setup)" >&2; exit 1; }
RUNS=${RUNS:-5}
export RAY_USAGE_STATS_ENABLED=0

work=$(mktemp -d /tmp/rtllmcompile.XXXXXX)
trap 'rm -rf "$work"' EXIT
(cd "$repo" && go build -o "$work/llmcompilebench" ./bench/llmcompilebench)
echo "bench: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2

cd "$repo"
# Ray's and vLLM's logs go to a file, shown if the Python side fails.
"$py" - "$RUNS" "$work/llmcompilebench" "$work/config.json" 2>"$work/python.log" <<'PY' || { tail -30 "$work/python.log" >&2; exit 1; }
import importlib.util, json, statistics, subprocess, sys, time

runs, gobench, cfgfile = int(sys.argv[1]), sys.argv[2], sys.argv[3]
out = sys.stdout
spec = importlib.util.spec_from_file_location("raycheck", "serve/llm/testdata/raycheck.py")
raycheck = importlib.util.module_from_spec(spec)
spec.loader.exec_module(raycheck)  # imports Ray and vLLM, outside the timing


def go_run():
    """One run of the Go side (it checks the golden config and writes it)."""
    res = subprocess.run([gobench, "-runs", "1", "-config-out", cfgfile], check=True, capture_output=True, text=True).stdout
    return json.loads(res)


go_first = go_run()
cfg = json.load(open(cfgfile))
verdict = raycheck.check(cfg)
assert verdict["stage"] == "ok", verdict  # Ray accepts what Go compiled


def llm_configs():
    for c in cfg["args"]["llm_configs"]:
        raycheck.LLMConfig(**c)


def deploy_path():
    r = raycheck.check(cfg)
    assert r["stage"] == "ok", r


def measure(fn):
    """One run: fn, after a warm-up, for at least a quarter second of CPU."""
    fn()
    n, wall, cpu = 0, time.perf_counter(), time.process_time()
    while time.process_time() - cpu < 0.25:
        fn()
        n += 1
    return {"ns_per_op": (time.perf_counter() - wall) / n * 1e9, "cpu_ns_per_op": (time.process_time() - cpu) / n * 1e9}


cases = (("LLMConfig(**c) of each model", llm_configs), ("LLMConfig + build_openai_app + deploy checks", deploy_path))
gos, pys = [], {name: [] for name, _ in cases}
for _ in range(runs):
    gos.append(go_run())
    for name, fn in cases:
        pys[name].append(measure(fn))


def med(rs, key):
    return statistics.median(r[key] for r in rs)


print(f"Serve LLM typical app (2 models on TPU slices, 3 slice groups), Ray {raycheck.ray.__version__}, vLLM {raycheck.vllm.__version__}, {runs} rounds", file=out)
print(f"  {'CPU time per build (wall in brackets), median':52} {'':>24} {'allocs':>7}", file=out)
gs = f"{med(gos, 'cpu_ns_per_op')/1000:.1f}µs ({med(gos, 'ns_per_op')/1000:.1f})"
print(f"  {'Go     llm.OpenAIApp.Compile':52} {gs:>24} {gos[0]['allocs_per_op']:7d}", file=out)
for name, _ in cases:
    rs = pys[name]
    ps = f"{med(rs, 'cpu_ns_per_op')/1000:.1f}µs ({med(rs, 'ns_per_op')/1000:.1f})"
    print(f"  {'Python ' + name:52} {ps:>24}", file=out)
print(f"  {'Python/Go, median (min-max) over rounds':52}", file=out)
for name, _ in cases:
    ratios = [p["cpu_ns_per_op"] / g["cpu_ns_per_op"] for p, g in zip(pys[name], gos)]
    col = f"{statistics.median(ratios):.0f}× ({min(ratios):.0f}-{max(ratios):.0f})"
    print(f"  {'  ' + name:52} {col:>24}", file=out)
PY
