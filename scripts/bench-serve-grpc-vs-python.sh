#!/usr/bin/env bash
# bench-serve-grpc-vs-python.sh calls one running Serve application through
# Serve's gRPC proxy with raytpu's Go client (serve/client + servev1) and
# with a Python grpcio client (the same generated Predictor code), at the
# same concurrency, and prints side by side: requests/s, and client CPU
# seconds (user + system, getrusage of the client process) per 1,000
# requests, with the ratios. Python runs twice: grpc.aio (C coroutines on
# one channel) and the blocking stub (C threads on one channel); Go runs
# with the default GOMAXPROCS and with GOMAXPROCS=1 (fewer idle-thread
# wake-ups for a client that mostly waits on the network).
#
# Environment: N (timed calls per side, default 3000), C (concurrency, 16),
# SIZE (float32 elements per request, 16), ROUNDS (alternating rounds, 2;
# the best round of each side is shown), ADDRESS (use a running dashboard
# instead of starting a cluster; its nodes must have servev1's Python on
# PYTHONPATH). Needs the venv from scripts/setup-venv.sh.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
py="$repo/.venv/bin/python"
[[ -x $py ]] || { echo "bench: $py missing: run scripts/setup-venv.sh" >&2; exit 1; }
N=${N:-3000}
C=${C:-16}
SIZE=${SIZE:-16}
ROUNDS=${ROUNDS:-2}
export RAY_USAGE_STATS_ENABLED=0

work=$(mktemp -d /tmp/rtgrpcbench.XXXXXX)
bin="$work/servegrpcbench"
state="$work/cluster.json"
pypath="$work/py"
cleanup() {
	if [[ -f $state ]]; then "$bin" -stop-cluster "$state" || true; fi
	rm -rf "$work"
}
trap cleanup EXIT

(cd "$repo" && go build -o "$bin" ./internal/bench/servegrpcbench)
if [[ -z ${ADDRESS:-} ]]; then
	echo "bench: starting a local Ray cluster..." >&2
	ADDRESS=$(cd "$repo" && "$bin" -start-cluster "$state" -python-path "$pypath")
else
	mkdir -p "$pypath" && (cd "$repo" && go run ./examples/serve --write-python "$pypath" >/dev/null)
fi
echo "bench: dashboard $ADDRESS; deploying the application..." >&2
TARGET=$("$bin" -address "$ADDRESS" -deploy)
echo "bench: gRPC proxy $TARGET; $(nproc) cores; N=$N C=$C SIZE=$SIZE" >&2

python_client='
import asyncio, json, resource, sys, threading, time
import grpc
import numpy as np
from raytpu.serve.v1 import predictor_pb2, predictor_pb2_grpc, tensor
mode, target, n, c, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
req = predictor_pb2.PredictRequest(inputs={"x": tensor.from_numpy(np.arange(size, dtype=np.float32))})
md = (("application", "bench"),)
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
def check(resp):
    if len(resp.outputs["y"].raw) != 4 * size:
        raise RuntimeError("bad answer %r" % resp)

async def aio_main():
    async with grpc.aio.insecure_channel(target) as ch:
        stub = predictor_pb2_grpc.PredictorStub(ch)
        async def run(total):
            left = [total]
            async def worker():
                while left[0] > 0:
                    left[0] -= 1
                    check(await stub.Predict(req, metadata=md))
            await asyncio.gather(*[worker() for _ in range(c)])
        await run(200)
        c0, t0 = cpu(), time.perf_counter()
        await run(n)
        return time.perf_counter() - t0, cpu() - c0

def threads_main():
    ch = grpc.insecure_channel(target)
    stub = predictor_pb2_grpc.PredictorStub(ch)
    def run(total):
        lock, left = threading.Lock(), [total]
        def worker():
            while True:
                with lock:
                    if left[0] <= 0:
                        return
                    left[0] -= 1
                check(stub.Predict(req, metadata=md))
        ts = [threading.Thread(target=worker) for _ in range(c)]
        for t in ts: t.start()
        for t in ts: t.join()
    run(200)
    c0, t0 = cpu(), time.perf_counter()
    run(n)
    out = time.perf_counter() - t0, cpu() - c0
    ch.close()
    return out

wall, used = asyncio.run(aio_main()) if mode == "aio" else threads_main()
print(json.dumps({"side": "python-" + mode, "requests": n, "concurrency": c, "seconds": wall,
                  "rps": n / wall, "cpu_seconds": used, "cpu_s_per_1000": used / n * 1000}))
'
pyside() { PYTHONPATH="$pypath" "$py" -c "$python_client" "$1" "$TARGET" "$N" "$C" "$SIZE"; }
field() { "$py" -c 'import json, sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"; }

# Alternate the sides so that neither always runs on a warmer server; keep
# each side's best round (highest requests/s).
declare -A best
keep() { # side json
	local cur=${best[$1]:-}
	if [[ -z $cur ]] || "$py" -c 'import json,sys; sys.exit(0 if json.loads(sys.argv[1])["rps"] > json.loads(sys.argv[2])["rps"] else 1)' "$2" "$cur"; then
		best[$1]=$2
	fi
}
for r in $(seq 1 "$ROUNDS"); do
	g=$("$bin" -grpc "$TARGET" -n "$N" -c "$C" -size "$SIZE"); echo "round $r go:             $g"; keep go "$g"
	g1=$(GOMAXPROCS=1 "$bin" -grpc "$TARGET" -n "$N" -c "$C" -size "$SIZE" | sed 's/"side":"go"/"side":"go-gomaxprocs1"/'); echo "round $r go GOMAXPROCS=1: $g1"; keep go1 "$g1"
	a=$(pyside aio); echo "round $r python-aio:     $a"; keep aio "$a"
	t=$(pyside threads); echo "round $r python-threads: $t"; keep threads "$t"
done

ratio() { "$py" -c 'import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); print("%.2f" % (a / b) if b else "inf")' "$1" "$2"; }
echo
echo "== gRPC Predict through Serve's proxy: $N calls at concurrency $C, best of $ROUNDS rounds"
printf '%-16s %12s %22s\n' client "requests/s" "client CPU s / 1000 req"
for s in go go1 aio threads; do
	printf '%-16s %12.0f %22.3f\n' "$(field "${best[$s]}" side)" "$(field "${best[$s]}" rps)" "$(field "${best[$s]}" cpu_s_per_1000)"
done
for gs in go go1; do
	for s in aio threads; do
		printf '%-14s vs python-%-8s throughput go/python %s   CPU python/go %s\n' "$(field "${best[$gs]}" side)" "$s" \
			"$(ratio "$(field "${best[$gs]}" rps)" "$(field "${best[$s]}" rps)")" \
			"$(ratio "$(field "${best[$s]}" cpu_s_per_1000)" "$(field "${best[$gs]}" cpu_s_per_1000)")"
	done
done
echo "goal: throughput go/python >= 1.00, CPU python/go >= 3.00"
