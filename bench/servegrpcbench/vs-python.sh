#!/usr/bin/env bash
# bench/servegrpcbench/vs-python.sh calls one running Serve application through
# Serve's gRPC proxy with raytpu's Go client (serve/client + servev1) and
# with a Python grpcio client (the same generated Predictor code), at the
# same concurrency, and prints side by side: requests/s, and client CPU
# seconds (user + system, getrusage of the client process) per 1,000
# requests, with the ratios.
#
# Sides: go (serve/client.NewGRPC as it comes: grpc-go's transport, Go's
# net package and grpc-go's flow control, with raytpu's interceptors);
# go1 (the same at GOMAXPROCS=1, a program's choice for a client that
# mostly waits; the library never sets it); go-windows (NewGRPC with fixed
# 4 MiB stream / 16 MiB connection windows passed through WithDialOptions:
# no bandwidth-delay-product PINGs; try it with a large SIZE); grpc-go
# (grpc.NewClient with grpc-go's defaults and the metadata set on the ctx
# by hand: no raytpu code, the floor a Go program starts from; its gap to
# go is raytpu's own per-call cost, the interceptor); python-aio
# (grpc.aio, C coroutines on one channel) and python-threads (the blocking
# stub, C threads on one channel).
#
# Environment: N (timed calls per side, default 3000), C (concurrency, 16),
# SIZE (float32 elements per request, 16), ROUNDS (rounds, 3; each runs
# every side once, in turn, so that no side always meets a warmer server;
# the table shows the median and the min over rounds), SIDES (a subset,
# space separated, default all), ADDRESS (use a running dashboard instead
# of starting a cluster; its nodes must have servev1's Python on
# PYTHONPATH). Needs the venv from scripts/setup-venv.sh.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
py="$repo/.venv/bin/python"
[[ -x $py ]] || { echo "bench: $py missing: run scripts/setup-venv.sh" >&2; exit 1; }
N=${N:-3000}
C=${C:-16}
SIZE=${SIZE:-16}
ROUNDS=${ROUNDS:-3}
SIDES=${SIDES:-go go1 windows grpc-go aio threads}
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

(cd "$repo" && go build -o "$bin" ./bench/servegrpcbench)
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

runs="$work/runs.jsonl"
: >"$runs"
run_side() { # side
	case $1 in
	go) "$bin" -grpc "$TARGET" -n "$N" -c "$C" -size "$SIZE" ;;
	go1) GOMAXPROCS=1 "$bin" -grpc "$TARGET" -n "$N" -c "$C" -size "$SIZE" -side go-gomaxprocs1 ;;
	windows) "$bin" -grpc "$TARGET" -n "$N" -c "$C" -size "$SIZE" -client raytpu-fixed-windows -side go-windows ;;
	grpc-go) "$bin" -grpc "$TARGET" -n "$N" -c "$C" -size "$SIZE" -client grpc-go ;;
	aio) pyside aio ;;
	threads) pyside threads ;;
	*) echo "bench: SIDES: unknown side $1 (want go go1 windows grpc-go aio threads)" >&2; return 1 ;;
	esac
}
for r in $(seq 1 "$ROUNDS"); do
	for s in $SIDES; do
		j=$(run_side "$s")
		printf 'round %d %-26s %s\n' "$r" "$s:" "$j"
		echo "$j" >>"$runs"
	done
done

echo
echo "== gRPC Predict through Serve's proxy: $N calls at concurrency $C, $SIZE float32, $ROUNDS rounds; $(nproc) cores"
"$py" - "$runs" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
sides = list(dict.fromkeys(r["side"] for r in rows))
by = {s: [r for r in rows if r["side"] == s] for s in sides}
med = lambda s, k: statistics.median(r[k] for r in by[s])
low = lambda s, k: min(r[k] for r in by[s])
print("%-26s %14s %14s %26s" % ("client", "req/s median", "req/s min", "CPU s/1000 req median (min)"))
for s in sides:
    print("%-26s %14.0f %14.0f %18.3f (%.3f)" % (s, med(s, "rps"), low(s, "rps"), med(s, "cpu_s_per_1000"), low(s, "cpu_s_per_1000")))
print()
for g in [s for s in sides if s.startswith("go")]:
    for p in [s for s in sides if s.startswith("python")]:
        print("%-26s vs %-15s throughput go/python %.2f   CPU python/go %.2f (medians)" % (
            g, p, med(g, "rps") / med(p, "rps"), med(p, "cpu_s_per_1000") / med(g, "cpu_s_per_1000")))
print("goal: throughput go/python >= 1.00, CPU python/go >= 3.00")
PY
